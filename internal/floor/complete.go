package floor

import (
	"context"
	"slices"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/stock"
)

// This file is the one way work is completed on the floor, whatever
// reported it: a scan, an operation completed by its id, a report in
// quantities, a cutting plan's sheet reported cut. Each of them checks what
// it must (the route's order, what is ready) and hands the operations to
// complete.

// complete completes the operations of order o (its row locked by the
// caller) from pending or in progress, in tx:
//   - each is done, stamped with the database clock (started too, when it
//     was pending) and with who did it, and operation.completed is written
//     for it, naming its part's or unit's code;
//   - the order starts when it was launched (prod_order.started);
//   - stock books what the work physically used (useMaterials);
//   - a unit whose last operation this was is made (unit.made), and the
//     order is done when nothing is left (prod_order.completed), releasing
//     what it still had reserved.
//
// It returns ECONFLICT when an operation was completed at the same time.
func (s *Service) complete(ctx context.Context, tx *gorm.DB, o *plan.ProdOrder, ops []plan.Operation) error {
	if len(ops) == 0 {
		return nil
	}
	var by *events.Actor
	if a, ok := events.ActorFrom(ctx); ok {
		by = &a
	}
	err := database.InBatches(idsOf(ops), func(ids []int64) error {
		n, err := markDone(ctx, tx, ids, by)
		if err == nil && n != int64(len(ids)) {
			err = apperr.Conflict("an operation of %s was completed at the same time; read it again", o.Describe())
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := operationEvents(ctx, tx, ops, contracts.OperationCompleted); err != nil {
		return err
	}
	if err := s.startOrder(ctx, tx, o); err != nil {
		return err
	}
	if err := s.useMaterials(ctx, tx, *o, ops); err != nil {
		return err
	}
	units := map[unitKey]bool{}
	for _, op := range ops {
		units[unitKey{op.ItemID, op.Unit}] = true
	}
	if err := s.unitsMade(ctx, tx, *o, units); err != nil {
		return err
	}
	return s.completeIfDone(ctx, tx, o)
}

// startOrder moves a launched order in progress (prod_order.started).
func (s *Service) startOrder(ctx context.Context, tx *gorm.DB, o *plan.ProdOrder) error {
	if o.Status != plan.StatusLaunched {
		return nil
	}
	if err := plan.MoveOrderTx(ctx, tx, *o, plan.StatusLaunched, plan.StatusInProgress, "started_at", contracts.ProdOrderStarted); err != nil {
		return err
	}
	o.Status = plan.StatusInProgress
	return nil
}

// completeIfDone moves an order in progress with every operation done to
// done (prod_order.completed) and releases what it still had reserved.
func (s *Service) completeIfDone(ctx context.Context, tx *gorm.DB, o *plan.ProdOrder) error {
	left, err := hasOpenOperations(ctx, tx, o.ID)
	if err != nil {
		return err
	}
	if left || o.Status != plan.StatusInProgress {
		return nil
	}
	if err := plan.MoveOrderTx(ctx, tx, *o, plan.StatusInProgress, plan.StatusDone, "completed_at", contracts.ProdOrderCompleted); err != nil {
		return err
	}
	o.Status = plan.StatusDone
	return s.stock.ReleaseOrderTx(ctx, tx, o.ID, stock.ForCompleted)
}

// operationEvents writes ev (operation.started or .completed) for each
// operation, naming its step and its part's or unit's code.
func operationEvents(ctx context.Context, tx *gorm.DB, ops []plan.Operation, ev events.Contract[contracts.OperationPayload]) error {
	var partIDs []int64
	orders := map[int64]bool{}
	for _, op := range ops {
		if op.PartID != nil {
			partIDs = append(partIDs, *op.PartID)
		} else {
			orders[op.ProdOrderID] = true
		}
	}
	ps, err := partsByID(ctx, tx, partIDs)
	if err != nil {
		return err
	}
	parts := make(map[int64]plan.Part, len(ps))
	for _, p := range ps {
		parts[p.ID] = p
	}
	units := map[int64]map[unitKey]string{}
	for id := range orders {
		if units[id], err = unitCodes(ctx, tx, id); err != nil {
			return err
		}
	}
	for _, op := range ops {
		p := contracts.OperationPayload{ProdOrderID: op.ProdOrderID, OperationID: op.ID, Seq: op.Seq, Operation: op.Name, Scope: op.Scope,
			WorkCenterID: op.WorkCenterID, ItemID: op.ItemID, Unit: op.Unit, PartID: op.PartID}
		if op.PartID != nil {
			p.Part, p.Code = parts[*op.PartID].Name, parts[*op.PartID].Code
		} else {
			p.Code = units[op.ProdOrderID][unitKey{op.ItemID, op.Unit}]
		}
		if err := events.Add(ctx, tx, ev.New(op.ProdOrderID, p)); err != nil {
			return err
		}
	}
	return nil
}

// useMaterials books in stock what the completed operations physically
// used, one stock document per kind of work, naming its parts or units:
//   - a part cut uses its board: the cutting plan's sheet it lies on, whole,
//     the first time one of the sheet's parts is cut (its offcuts are kept
//     then); its own area otherwise. Its board need is released;
//   - a part banded uses each banded side's band (its length plus the
//     order's overhang); the same leaves its need;
//   - a unit assembled uses its fittings; the same leaves its need.
func (s *Service) useMaterials(ctx context.Context, tx *gorm.DB, o plan.ProdOrder, ops []plan.Operation) error {
	steps, err := materialSteps(ctx, tx, o.ID)
	if err != nil {
		return err
	}
	var cut, banded []int64
	var assembled []unitKey
	for _, op := range ops {
		switch {
		case op.PartID != nil && op.Seq == steps.Cut:
			cut = append(cut, *op.PartID)
		case op.PartID != nil && op.Seq == steps.Band:
			banded = append(banded, *op.PartID)
		case op.PartID == nil && op.Seq == steps.Assemble && steps.Assemble > 0:
			assembled = append(assembled, unitKey{op.ItemID, op.Unit})
		}
	}
	var bs []stock.Booking
	if len(cut) > 0 {
		parts, err := partsByID(ctx, tx, cut)
		if err != nil {
			return err
		}
		b, others, err := s.cutBooking(ctx, tx, o.ID, parts, stock.ForCut)
		if err != nil {
			return err
		}
		bs = append(append(bs, b), others...)
	}
	if len(banded) > 0 {
		parts, err := partsByID(ctx, tx, banded)
		if err != nil {
			return err
		}
		b := stock.Booking{ProdOrderID: o.ID, Source: stock.Source{What: stock.ForBanded}}
		for _, p := range parts {
			b.Source.Parts = append(b.Source.Parts, p.Code)
			for _, m := range stock.BandMetres(p.Shape(), o.EdgeOverhangMM) {
				b.Consumed = append(b.Consumed, m)
				b.Needs = append(b.Needs, stock.Move{Code: m.Code, Qty: -m.Qty})
			}
		}
		bs = append(bs, b)
	}
	if len(assembled) > 0 {
		fittings, err := plan.UnitFittings(ctx, tx, o)
		if err != nil {
			return err
		}
		codes, err := unitCodes(ctx, tx, o.ID)
		if err != nil {
			return err
		}
		b := stock.Booking{ProdOrderID: o.ID, Source: stock.Source{What: stock.ForAssembled}}
		for _, u := range assembled {
			b.Source.Units = append(b.Source.Units, codes[u])
			for _, m := range fittings[u.item] {
				b.Consumed = append(b.Consumed, m)
				b.Needs = append(b.Needs, stock.Move{Code: m.Code, Qty: -m.Qty})
			}
		}
		bs = append(bs, b)
	}
	return s.stock.BookTx(ctx, tx, bs...)
}

// cutBooking is what cutting the parts (of one production order) uses: the
// sheets they lie on, or their own area of their boards; and what they
// needed of their boards, released. A sheet taken to the saw holds every
// part laid out on it, so the parts of any order that lie on it need
// nothing more of their board either: theirs is released too, in a
// booking of their own order's (others).
func (s *Service) cutBooking(ctx context.Context, tx *gorm.DB, orderID int64, parts []plan.Part, what string) (b stock.Booking, others []stock.Booking, err error) {
	b = stock.Booking{ProdOrderID: orderID, Source: stock.Source{What: what}}
	var codes []string
	for _, p := range parts {
		codes = append(codes, p.Board)
	}
	boards, err := catalog.MaterialsByCode(ctx, tx, codes)
	if err != nil {
		return b, nil, err
	}
	ids := make([]int64, len(parts))
	var sheets []stock.SheetRef
	for i, p := range parts {
		ids[i] = p.ID
		b.Source.Parts = append(b.Source.Parts, p.Code)
		if p.SheetPlanID != nil && p.SheetN != nil {
			ref := stock.SheetRef{PlanID: *p.SheetPlanID, N: *p.SheetN}
			b.Sheets = append(b.Sheets, ref)
			if !slices.Contains(sheets, ref) {
				sheets = append(sheets, ref)
			}
		} else if board, ok := boards[input.CodeKey(p.Board)]; ok {
			b.Consumed = append(b.Consumed, stock.Move{Code: board.Code,
				Qty: stock.SheetsOfArea(board, float64(p.LengthMM)*float64(p.WidthMM)/1e6)})
		}
	}
	needs, err := takeBoardNeeds(ctx, tx, ids, sheets)
	if err != nil {
		return b, nil, err
	}
	byOrder := map[int64]int{}
	for _, n := range needs {
		if n.ProdOrderID == orderID {
			b.Needs = append(b.Needs, stock.Move{Code: n.Board, Qty: -n.BoardNeed})
			continue
		}
		i, ok := byOrder[n.ProdOrderID]
		if !ok {
			i = len(others)
			byOrder[n.ProdOrderID] = i
			src := stock.Source{What: stock.ForCut}
			if n.SheetPlanID != nil && n.SheetN != nil {
				src.Sheet = &contracts.StockSheet{PlanID: *n.SheetPlanID, N: *n.SheetN}
			}
			others = append(others, stock.Booking{ProdOrderID: n.ProdOrderID, Source: src})
		}
		others[i].Source.Parts = append(others[i].Source.Parts, n.Code)
		others[i].Needs = append(others[i].Needs, stock.Move{Code: n.Board, Qty: -n.BoardNeed})
	}
	return b, others, nil
}

// partNeed is what a part still needed of its board.
type partNeed struct {
	ID, ProdOrderID int64
	Code, Board     string
	BoardNeed       float64
	SheetPlanID     *int64
	SheetN          *int
}

// takeBoardNeeds sets to nothing what the parts ids, and the live parts
// lying on the sheets, still need of their boards, and returns what they
// needed (those that needed something). The rows are read locked, in id
// order, so that two reports that reach the same part (a scan of one
// order's part taking a sheet another order's parts lie on, and a scan of
// one of those) release its need once, whichever commits first.
func takeBoardNeeds(ctx context.Context, tx *gorm.DB, ids []int64, sheets []stock.SheetRef) ([]partNeed, error) {
	var out []partNeed
	add := func(rows []partNeed) {
		for _, r := range rows {
			if !slices.ContainsFunc(out, func(o partNeed) bool { return o.ID == r.ID }) {
				out = append(out, r)
			}
		}
	}
	err := database.InBatches(ids, func(b []int64) error {
		rows, err := lockNeedsOfParts(ctx, tx, b)
		add(rows)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, sh := range sheets {
		rows, err := lockNeedsOnSheet(ctx, tx, sh)
		if err != nil {
			return nil, err
		}
		add(rows)
	}
	taken := make([]int64, len(out))
	for i, n := range out {
		taken[i] = n.ID
	}
	return out, database.InBatches(taken, func(b []int64) error { return clearBoardNeeds(ctx, tx, b) })
}
