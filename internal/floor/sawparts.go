package floor

import (
	"context"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/stock"
)

// This file is what the cutting plans need of the shop floor: the physical
// parts of production orders that the saw has not cut yet, the sheets a
// plan lays them out on, and a sheet reported cut, through the route's
// cutting step (its first part-scope step) in the caller's transaction.

// MaxSawOrders is the most production orders one cutting plan takes.
const MaxSawOrders = MaxCuttingListOrders

// SawPart is one physical part waiting for the saw.
type SawPart struct {
	ID          int64  `json:"id"`
	Code        string `json:"code"` // the part's printable code, as its label carries it
	ProdOrderID int64  `json:"prod_order_id"`
	ItemID      int64  `json:"item_id"`
	Unit        int    `json:"unit"`
	Name        string `json:"name"`
	Board       string `json:"board"`
	Decor       string `json:"decor"`
	ThicknessMM int    `json:"thickness_mm"`
	LengthMM    int    `json:"length_mm"`
	WidthMM     int    `json:"width_mm"`
	Grain       string `json:"grain"`
}

// PartsToCut returns the physical parts of the production orders whose
// cutting step is not done, in order and part id order. It returns
// EINVALID naming prod_orders (empty, too many, repeated) or
// prod_orders[i] for an order that does not exist, is cancelled, done or
// closed, or has nothing left to cut.
func (s *Service) PartsToCut(ctx context.Context, ids []int64) ([]SawPart, error) {
	bad := func(field, format string, args ...any) error {
		return apperr.Invalid("the production orders cannot be planned for cutting", apperr.Field(field, format, args...))
	}
	switch {
	case len(ids) == 0:
		return nil, bad("prod_orders", "list at least one production order")
	case len(ids) > MaxSawOrders:
		return nil, bad("prod_orders", "list at most %d production orders", MaxSawOrders)
	}
	var out []SawPart
	db := s.db.WithContext(ctx)
	for i, id := range ids {
		field := fmt.Sprintf("prod_orders[%d]", i)
		if slices.Index(ids, id) < i {
			return nil, bad(field, "production order %d is listed twice", id)
		}
		o, err := plan.LoadOrder(ctx, db, id, false)
		if apperr.Code(err) == apperr.ENOTFOUND {
			return nil, bad(field, "production order %d does not exist", id)
		}
		if err != nil {
			return nil, err
		}
		if o.Status == plan.StatusCancelled || o.Status == plan.StatusDone || o.Status == plan.StatusClosed {
			return nil, bad(field, "%s is %s: nothing of it is cut any more", o.Describe(), o.Status)
		}
		ops, err := orderOperations(ctx, db, id)
		if err != nil {
			return nil, err
		}
		step := o.MaterialSteps().Cut
		var uncut []int64
		for _, op := range ops {
			if op.Seq == step && op.PartID != nil && op.Status != plan.OpDone {
				uncut = append(uncut, *op.PartID)
			}
		}
		if len(uncut) == 0 {
			return nil, bad(field, "%s has no part left to cut", o.Describe())
		}
		parts, err := liveParts(ctx, db, uncut)
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			out = append(out, SawPart{ID: p.ID, Code: p.Code, ProdOrderID: id, ItemID: p.ItemID, Unit: p.Unit, Name: p.Name, Board: p.Board, Decor: p.Decor,
				ThicknessMM: p.ThicknessMM, LengthMM: p.LengthMM, WidthMM: p.WidthMM, Grain: p.Grain})
		}
	}
	return out, nil
}

// SawState is where a live part stands with the saw: whether it still
// waits for it (its production order live, its cutting step not done), and
// the cutting plan's sheet that lays it out last, if any.
type SawState struct {
	Waits       bool
	SheetPlanID *int64
	SheetN      *int
}

// SawStates returns the saw state of each of the parts that is live (a
// part scrapped, or released with its item, is absent): a cutting plan
// with a part absent, cut on another plan's sheet or laid out by a newer
// plan is stale for it.
func (s *Service) SawStates(ctx context.Context, partIDs []int64) (map[int64]SawState, error) {
	return sawStates(ctx, s.db, partIDs)
}

func sawStates(ctx context.Context, db *gorm.DB, partIDs []int64) (map[int64]SawState, error) {
	out := map[int64]SawState{}
	db = db.WithContext(ctx)
	steps := map[int64]int{}
	live := map[int64]bool{}
	err := database.InBatches(partIDs, func(b []int64) error {
		parts, err := liveParts(ctx, db, b)
		if err != nil {
			return err
		}
		for _, p := range parts {
			if _, ok := steps[p.ProdOrderID]; !ok {
				o, err := plan.LoadOrder(ctx, db, p.ProdOrderID, false)
				if err != nil {
					return err
				}
				live[o.ID] = o.Status == plan.StatusLaunched || o.Status == plan.StatusInProgress
				ms, err := materialSteps(ctx, db, o.ID)
				if err != nil {
					return err
				}
				steps[o.ID] = ms.Cut
			}
			out[p.ID] = SawState{SheetPlanID: p.SheetPlanID, SheetN: p.SheetN}
		}
		ops, err := openStepsOfParts(ctx, db, b)
		if err != nil {
			return err
		}
		for _, op := range ops {
			st, ok := out[*op.PartID]
			if ok && live[op.ProdOrderID] && op.Seq == steps[op.ProdOrderID] {
				st.Waits = true
				out[*op.PartID] = st
			}
		}
		return nil
	})
	return out, err
}

// Assignment lays a part out on sheet N of a cutting plan, where it needs
// Share of a new sheet of its board (nothing on an offcut).
type Assignment struct {
	PartID int64
	N      int
	Share  float64
}

// AssignSheetsTx records, in tx, that cutting plan planID lays the parts
// out (the newest plan that lays a part out is the one its cut takes to
// the saw), and sets each part's board need to its share of its sheet:
// stock reserves the difference for its production order. It returns
// ECONFLICT naming the part's code when it no longer waits for the saw.
func (s *Service) AssignSheetsTx(ctx context.Context, tx *gorm.DB, planID int64, as []Assignment) error {
	ids := make([]int64, len(as))
	for i, a := range as {
		ids[i] = a.PartID
	}
	parts, err := partsByID(ctx, tx, ids)
	if err != nil {
		return err
	}
	byID := map[int64]plan.Part{}
	for _, p := range parts {
		byID[p.ID] = p
	}
	states, err := sawStates(ctx, tx, ids)
	if err != nil {
		return err
	}
	bookings := map[int64]*stock.Booking{}
	var orders []int64
	for _, a := range as {
		p, ok := byID[a.PartID]
		if !ok || !states[a.PartID].Waits {
			code := p.Code
			if !ok {
				code = fmt.Sprintf("#%d", a.PartID)
			}
			return apperr.Conflict("part %s no longer waits for the saw (cut, scrapped, released or its order closed meanwhile): lay the plan out again", code)
		}
		if err := layOut(ctx, tx, p.ID, stock.SheetRef{PlanID: planID, N: a.N}, a.Share); err != nil {
			return err
		}
		b := bookings[p.ProdOrderID]
		if b == nil {
			b = &stock.Booking{ProdOrderID: p.ProdOrderID, Source: stock.Source{What: stock.ForCuttingPlan, Plan: &planID}}
			bookings[p.ProdOrderID] = b
			orders = append(orders, p.ProdOrderID)
		}
		b.Needs = append(b.Needs, stock.Move{Code: p.Board, Qty: a.Share - p.BoardNeed})
	}
	slices.Sort(orders)
	bs := make([]stock.Booking, len(orders))
	for i, o := range orders {
		bs[i] = *bookings[o]
	}
	return s.stock.BookTx(ctx, tx, bs...)
}

// CutSheetTx reports, in tx, sheet n of cutting plan planID cut, with the
// parts it lays out: the sheet goes to the saw (stock uses it up, once,
// keeping its offcuts), and each of its parts that still waits for the saw
// completes the cutting step (complete; the parts cut already, by a scan
// on this plan, scrapped or no longer wanted are left as they are), with
// one prod_order.progress_reported per production order, marked sheet_cut.
// It returns ECONFLICT naming the part's code when a newer cutting plan
// lays one of them out (this plan is stale for it).
func (s *Service) CutSheetTx(ctx context.Context, tx *gorm.DB, planID int64, n int, partIDs []int64) error {
	parts, err := partsByID(ctx, tx, partIDs)
	if err != nil {
		return err
	}
	var orders []int64
	byOrder := map[int64][]plan.Part{}
	for _, p := range parts {
		if p.SheetPlanID != nil && *p.SheetPlanID != planID {
			return apperr.Conflict("part %s is laid out by cutting plan %d now, not by plan %d: cut the sheets of that plan", p.Code, *p.SheetPlanID, planID)
		}
		if _, ok := byOrder[p.ProdOrderID]; !ok {
			orders = append(orders, p.ProdOrderID)
		}
		byOrder[p.ProdOrderID] = append(byOrder[p.ProdOrderID], p)
	}
	slices.Sort(orders)
	if len(orders) == 0 {
		return nil
	}
	// The orders' rows first, in id order, as a scan locks its order's
	// before stock's levels.
	locked := make(map[int64]plan.ProdOrder, len(orders))
	for _, id := range orders {
		o, err := plan.LoadOrder(ctx, tx, id, true)
		if err != nil {
			return err
		}
		locked[id] = o
	}
	// The sheet goes to the saw first, in one document naming its parts
	// (nothing when a scan of one of them took it there already); each
	// order's parts then release what they needed of it.
	sheet := stock.SheetRef{PlanID: planID, N: n}
	took := stock.Booking{ProdOrderID: orders[0], Source: stock.Source{What: stock.ForCut}, Sheets: []stock.SheetRef{sheet}}
	states, err := sawStates(ctx, tx, partIDs)
	if err != nil {
		return err
	}
	for _, p := range parts {
		st, live := states[p.ID]
		onIt := st.SheetPlanID != nil && *st.SheetPlanID == planID && st.SheetN != nil && *st.SheetN == n
		if live && (onIt || (st.SheetPlanID == nil && st.Waits)) {
			took.Source.Parts = append(took.Source.Parts, p.Code) // cut on it, now or by a scan before
		}
	}
	if err := s.stock.BookTx(ctx, tx, took); err != nil {
		return err
	}
	for _, id := range orders {
		o := locked[id]
		if o.Status != plan.StatusLaunched && o.Status != plan.StatusInProgress {
			continue
		}
		steps, err := materialSteps(ctx, tx, id)
		if err != nil {
			return err
		}
		ids := make([]int64, 0, len(byOrder[id]))
		for _, p := range byOrder[id] {
			if p.Status == plan.PartLive {
				ids = append(ids, p.ID)
			}
		}
		ops, err := openOperationsOfParts(ctx, tx, ids, steps.Cut)
		if err != nil {
			return err
		}
		if len(ops) == 0 {
			continue
		}
		// A part the plan laid out before parts had their sheet is on it all the same.
		var legacy []int64
		for _, op := range ops {
			if i := slices.IndexFunc(byOrder[id], func(p plan.Part) bool { return p.ID == *op.PartID }); i >= 0 && byOrder[id][i].SheetPlanID == nil {
				legacy = append(legacy, *op.PartID)
			}
		}
		if err := placeOnSheet(ctx, tx, legacy, sheet); err != nil {
			return err
		}
		if err := s.complete(ctx, tx, &o, ops); err != nil {
			return err
		}
		after, err := stepOperations(ctx, tx, id, steps.Cut)
		if err != nil {
			return err
		}
		now := stepOf(after, steps.Cut)
		payload := contracts.ProdOrderProgressPayload{ProdOrderID: id, Items: o.ItemIDs(), Seq: steps.Cut, Operation: now.name, Scope: now.scope,
			Qty: len(ops), Done: now.done, Total: now.total, SheetCut: true}
		if err := events.Add(ctx, tx, contracts.ProdOrderProgressReported.New(id, payload)); err != nil {
			return err
		}
	}
	return nil
}
