package floor

import (
	"context"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// This file is what the cutting plans need of the plan module: the physical
// parts of production orders that the saw has not cut yet, and the report
// that a sheet's parts are cut, through the route's cutting step (its first
// part-scope step) in the caller's transaction.

// MaxSawOrders is the most production orders one cutting plan takes.
const MaxSawOrders = plan.MaxCuttingListOrders

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

// cuttingStep is the route's cutting step among the order's operations:
// the first part-scope step; 0 when it has none.
func cuttingStep(ops []plan.Operation) int {
	step := 0
	for _, op := range ops {
		if op.Scope == catalog.ScopePart && (step == 0 || op.Seq < step) {
			step = op.Seq
		}
	}
	return step
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
		var ops []plan.Operation
		if err := db.Where("prod_order_id = ?", id).Order("id").Find(&ops).Error; err != nil {
			return nil, err
		}
		step := cuttingStep(ops)
		var uncut []int64
		for _, op := range ops {
			if op.Seq == step && op.PartID != nil && op.Status != plan.OpDone {
				uncut = append(uncut, *op.PartID)
			}
		}
		if len(uncut) == 0 {
			return nil, bad(field, "%s has no part left to cut", o.Describe())
		}
		var parts []plan.Part
		if err := inBatches(uncut, func(b []int64) error {
			var ps []plan.Part
			err := db.Where("id IN ?", b).Find(&ps).Error
			parts = append(parts, ps...)
			return err
		}); err != nil {
			return nil, err
		}
		slices.SortFunc(parts, func(a, b plan.Part) int { return int(a.ID - b.ID) })
		for _, p := range parts {
			out = append(out, SawPart{ID: p.ID, Code: p.Code, ProdOrderID: id, ItemID: p.ItemID, Unit: p.Unit, Name: p.Name, Board: p.Board, Decor: p.Decor,
				ThicknessMM: p.ThicknessMM, LengthMM: p.LengthMM, WidthMM: p.WidthMM, Grain: p.Grain})
		}
	}
	return out, nil
}

// UncutParts returns which of the parts are still waiting for the saw (their
// production order live and their cutting step not done): a cutting plan
// whose parts are no longer all there is stale.
func (s *Service) UncutParts(ctx context.Context, partIDs []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	db := s.db.WithContext(ctx)
	err := inBatches(partIDs, func(b []int64) error {
		var ops []plan.Operation
		err := db.Where("part_id IN ?", b).Order("id").Find(&ops).Error
		if err != nil {
			return err
		}
		byOrder := map[int64][]plan.Operation{}
		for _, op := range ops {
			byOrder[op.ProdOrderID] = append(byOrder[op.ProdOrderID], op)
		}
		for id, ops := range byOrder {
			o, err := plan.LoadOrder(ctx, db, id, false)
			if err != nil {
				return err
			}
			if o.Status == plan.StatusCancelled || o.Status == plan.StatusDone || o.Status == plan.StatusClosed {
				continue
			}
			step := cuttingStep(ops)
			for _, op := range ops {
				if op.Seq == step && op.Status != plan.OpDone {
					out[*op.PartID] = true
				}
			}
		}
		return nil
	})
	return out, err
}

// CompleteCuttingTx reports the parts cut, in the caller's transaction:
// each part's cutting-step operation is completed as a progress report of
// that step would complete it (the order starts, and is done when nothing is
// left), with one prod_order.progress_reported per production order, marked
// sheet_cut (the parts are a cutting plan's sheet, whose board stock uses up
// from cutting_plan.sheet_cut, not by the area estimate). It
// returns ECONFLICT for a part already cut or whose order is cancelled,
// done or closed, ENOTFOUND for a part that does not exist.
func (s *Service) CompleteCuttingTx(ctx context.Context, tx *gorm.DB, partIDs []int64) error {
	var ops []plan.Operation
	if err := inBatches(partIDs, func(b []int64) error {
		var os []plan.Operation
		err := tx.WithContext(ctx).Where("part_id IN ?", b).Order("id").Find(&os).Error
		ops = append(ops, os...)
		return err
	}); err != nil {
		return err
	}
	byOrder := map[int64][]int64{}
	seen := map[int64]bool{}
	for _, op := range ops {
		if !seen[*op.PartID] {
			seen[*op.PartID] = true
			byOrder[op.ProdOrderID] = append(byOrder[op.ProdOrderID], *op.PartID)
		}
	}
	for _, id := range partIDs {
		if !seen[id] {
			return apperr.NotFound("part %d does not exist", id)
		}
	}
	orders := make([]int64, 0, len(byOrder))
	for id := range byOrder {
		orders = append(orders, id)
	}
	slices.Sort(orders)
	for _, orderID := range orders {
		o, err := plan.LoadOrder(ctx, tx, orderID, true)
		if err != nil {
			return err
		}
		if o.Status == plan.StatusCancelled || o.Status == plan.StatusDone || o.Status == plan.StatusClosed {
			return apperr.Conflict("%s is %s: its parts cannot be reported cut", o.Describe(), o.Status)
		}
		var all []plan.Operation
		if err := tx.WithContext(ctx).Where("prod_order_id = ?", orderID).Order("id").Find(&all).Error; err != nil {
			return err
		}
		step := cuttingStep(all)
		want := map[int64]bool{}
		for _, p := range byOrder[orderID] {
			want[p] = true
		}
		var done []plan.Operation
		for _, op := range all {
			if op.Seq != step || op.PartID == nil || !want[*op.PartID] {
				continue
			}
			if op.Status == plan.OpDone {
				return apperr.Conflict("part %d of %s is cut already", *op.PartID, o.Describe())
			}
			done = append(done, op)
		}
		if err := completeOps(ctx, tx, done); err != nil {
			return err
		}
		if o.Status == plan.StatusLaunched {
			if err := plan.MoveOrderTx(ctx, tx, o, plan.StatusLaunched, plan.StatusInProgress, "started_at", contracts.ProdOrderStarted); err != nil {
				return err
			}
			o.Status = plan.StatusInProgress
		}
		if err := s.completeIfDone(ctx, tx, o); err != nil {
			return err
		}
		var after []plan.Operation
		if err := tx.WithContext(ctx).Where("prod_order_id = ?", orderID).Order("id").Find(&after).Error; err != nil {
			return err
		}
		now := stepOf(after, step)
		payload := contracts.ProdOrderProgressPayload{ProdOrderID: orderID, Items: o.ItemIDs(), Seq: step, Operation: now.name, Scope: now.scope,
			Qty: len(done), Done: now.done, Total: now.total, SheetCut: true}
		if err := events.Add(ctx, tx, contracts.ProdOrderProgressReported.New(orderID, payload)); err != nil {
			return err
		}
	}
	return nil
}
