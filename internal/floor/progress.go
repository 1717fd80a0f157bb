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
	"github.com/tsekh/tsekh/internal/platform/database"
)

// This file is the shop floor's report in quantities and the route order
// that every report, by quantity or by operation, keeps.
//
// Route order: an operation may be completed only when the operations before
// it in the route on the same physical part are done and, for an item-scope
// operation (assembly, packing), every operation of its unit before it is
// done: the same predecessors the schedule plans with (explode).

// MaxReportMinutes bounds the minutes a report may say were spent: a month
// of round-the-clock work.
const MaxReportMinutes = 31 * 24 * 60

// Report is the input of ReportProgress.
type Report struct {
	Seq     int      // the route step
	Qty     int      // parts (part-scope step) or units (item-scope step) done
	Scrap   int      // parts spoilt at the step, to be made again from the first step
	Minutes *float64 // the minutes spent, when said
	// Unit, when given, reports only on that unit (n of its item's
	// quantity) and ItemID which item's, needed when several items of the
	// order have a unit n.
	Unit   int
	ItemID int64
}

// ProgressReport is the result of ReportProgress: the step's figures after
// the report, and the production order as it is now.
type ProgressReport struct {
	Seq   int    `json:"seq"`
	Name  string `json:"name"`
	Scope string `json:"scope" enums:"part,item"`
	// Done is how many of the step's parts (or units) are done, of Total.
	Done  int `json:"done"`
	Total int `json:"total"`
	// Ready is how many more may be reported now: through the step before, not done at this one.
	Ready     int            `json:"ready"`
	ProdOrder plan.ProdOrder `json:"prod_order"`
}

func (in Report) validate() error {
	var fields []apperr.FieldError
	if in.Seq <= 0 {
		fields = append(fields, apperr.Field("seq", "must be the positive seq of a step of the order's route"))
	}
	if in.Qty < 0 || in.Qty > plan.MaxLaunchOps {
		fields = append(fields, apperr.Field("qty", "must be from 0 to %d", plan.MaxLaunchOps))
	}
	if in.Scrap < 0 || in.Scrap > plan.MaxLaunchOps {
		fields = append(fields, apperr.Field("scrap", "must be from 0 to %d", plan.MaxLaunchOps))
	}
	if in.Qty == 0 && in.Scrap == 0 && in.Qty >= 0 && in.Scrap >= 0 {
		fields = append(fields, apperr.Field("qty", "qty or scrap must be at least 1"))
	}
	if in.Unit < 0 {
		fields = append(fields, apperr.Field("unit", "must be a unit number from 1"))
	}
	if in.ItemID < 0 || (in.ItemID > 0 && in.Unit == 0) {
		fields = append(fields, apperr.Field("item_id", "must be a positive item id, given with unit"))
	}
	if in.Minutes != nil && (*in.Minutes < 0 || *in.Minutes > MaxReportMinutes) {
		fields = append(fields, apperr.Field("minutes", "must be from 0 to %d", MaxReportMinutes))
	}
	if len(fields) > 0 {
		return apperr.Invalid("the report is not valid", fields...)
	}
	return nil
}

// ReportProgress completes Qty parts (or units) of route step Seq of the
// production order and sends Scrap parts of it back to be made again, in one
// transaction with a prod_order.progress_reported event. The operations
// completed are those ready at the step (through the step before), those in
// progress first; the parts scrapped are taken from the ready ones left, and
// every operation of theirs becomes pending again. The first report moves the
// order to in_progress (prod_order.started), the one that leaves nothing to
// do to done (prod_order.completed).
//
// It returns EINVALID for a bad report, a step the route does not have,
// scrap at an item-scope step, or more than the step has left; ECONFLICT
// when the order is cancelled, done or closed, or the report is ahead of the step
// before (more than are ready); ENOTFOUND for an unknown order.
func (s *Service) ReportProgress(ctx context.Context, orderID int64, in Report) (ProgressReport, error) {
	if err := in.validate(); err != nil {
		return ProgressReport{}, err
	}
	var out ProgressReport
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		o, err := plan.LoadOrder(ctx, tx, orderID, true)
		if err != nil {
			return err
		}
		if o.Status == plan.StatusCancelled || o.Status == plan.StatusDone || o.Status == plan.StatusClosed {
			return apperr.Conflict("%s is %s: no progress can be reported on it", o.Describe(), o.Status)
		}
		var ops []plan.Operation
		if err := tx.Where("prod_order_id = ?", orderID).Order("id").Find(&ops).Error; err != nil {
			return err
		}
		st := stepOf(ops, in.Seq)
		if st.total == 0 {
			return apperr.Invalid("the report is not valid", apperr.Field("seq", "route %q of %s has no step %d; its steps are %s",
				o.Route.Name, o.Describe(), in.Seq, seqsText(ops)))
		}
		if in.Scrap > 0 && st.scope != catalog.ScopePart {
			return apperr.Invalid("the report is not valid", apperr.Field("scrap", "step %d (%s) is done per unit: scrap is counted in parts, at a part-scope step", in.Seq, st.name))
		}
		left := st.total - st.done
		if in.Qty+in.Scrap > left {
			return apperr.Invalid("the report is more than remains", apperr.Field("qty",
				"step %d (%s) has %d of %d %s left to do; qty %d and scrap %d make %d", in.Seq, st.name, left, st.total, st.unit(), in.Qty, in.Scrap, in.Qty+in.Scrap))
		}
		ready := readyAt(ops, in.Seq)
		if in.Unit > 0 {
			if ready, err = ofUnit(ops, ready, in); err != nil {
				return err
			}
		}
		if in.Qty+in.Scrap > len(ready) {
			return apperr.Conflict("step %d (%s) would get ahead of the steps before it: %d %s are through them and not done at this step; qty %d and scrap %d make %d",
				in.Seq, st.name, len(ready), st.unit(), in.Qty, in.Scrap, in.Qty+in.Scrap)
		}
		done, scrapped := ready[:in.Qty], ready[in.Qty:in.Qty+in.Scrap]
		if err := completeOps(ctx, tx, done); err != nil {
			return err
		}
		if err := remake(tx, orderID, ops, scrapped); err != nil {
			return err
		}
		if err := s.unitsMade(ctx, tx, o, nil); err != nil {
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
		if err := tx.Where("prod_order_id = ?", orderID).Order("id").Find(&after).Error; err != nil {
			return err
		}
		now := stepOf(after, in.Seq)
		out = ProgressReport{Seq: in.Seq, Name: now.name, Scope: now.scope, Done: now.done, Total: now.total, Ready: len(readyAt(after, in.Seq))}
		payload := contracts.ProdOrderProgressPayload{ProdOrderID: orderID, Items: o.ItemIDs(), Seq: in.Seq, Operation: now.name, Scope: now.scope,
			Qty: in.Qty, Scrap: in.Scrap, Minutes: in.Minutes, Done: now.done, Total: now.total}
		if err := events.Add(ctx, tx, contracts.ProdOrderProgressReported.New(orderID, payload)); err != nil {
			return err
		}
		out.ProdOrder, err = plan.LoadOrder(ctx, tx, orderID, false)
		return err
	})
	return out, err
}

// step is what a route step of a production order stands at.
type step struct {
	name, scope string
	done, total int
}

func (st step) unit() string {
	if st.scope == catalog.ScopePart {
		return "parts"
	}
	return "units"
}

func stepOf(ops []plan.Operation, seq int) step {
	var st step
	for _, op := range ops {
		if op.Seq != seq {
			continue
		}
		st.name, st.scope = op.Name, op.Scope
		st.total++
		if op.Status == plan.OpDone {
			st.done++
		}
	}
	return st
}

func seqsText(ops []plan.Operation) string {
	var seqs []int
	for _, op := range ops {
		if !slices.Contains(seqs, op.Seq) {
			seqs = append(seqs, op.Seq)
		}
	}
	slices.Sort(seqs)
	return fmt.Sprint(seqs)
}

// unitKey names one unit of one item.
type unitKey struct {
	item int64
	unit int
}

// readyAt returns the operations of step seq that are not done and whose
// predecessors are all done, those in progress first, then in id order.
func readyAt(ops []plan.Operation, seq int) []plan.Operation {
	byUnit := map[unitKey][]plan.Operation{}
	for _, op := range ops {
		k := unitKey{op.ItemID, op.Unit}
		byUnit[k] = append(byUnit[k], op)
	}
	var ready []plan.Operation
	for _, op := range ops {
		if op.Seq != seq || op.Status == plan.OpDone {
			continue
		}
		if !slices.ContainsFunc(byUnit[unitKey{op.ItemID, op.Unit}], func(p plan.Operation) bool { return p.Status != plan.OpDone && p.Precedes(op) }) {
			ready = append(ready, op)
		}
	}
	slices.SortStableFunc(ready, func(a, b plan.Operation) int {
		ia, ib := a.Status == plan.OpInProgress, b.Status == plan.OpInProgress
		switch {
		case ia && !ib:
			return -1
		case ib && !ia:
			return 1
		}
		return 0
	})
	return ready
}

// idBatch is the ids per UPDATE … WHERE id IN.
const idBatch = 500

func idsOf(ops []plan.Operation) []int64 {
	ids := make([]int64, len(ops))
	for i, op := range ops {
		ids[i] = op.ID
	}
	return ids
}

func inBatches(ids []int64, fn func([]int64) error) error {
	for len(ids) > 0 {
		n := min(len(ids), idBatch)
		if err := fn(ids[:n]); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// completeOps marks the operations done, started now when they were
// pending, by the caller's user.
func completeOps(ctx context.Context, tx *gorm.DB, ops []plan.Operation) error {
	now := gorm.Expr(database.Now(tx))
	set := map[string]any{"status": plan.OpDone, "completed_at": now}
	if a, ok := events.ActorFrom(ctx); ok {
		set["completed_by_id"], set["completed_by"] = a.ID, a.Name
	}
	return inBatches(idsOf(ops), func(ids []int64) error {
		if err := tx.Model(&plan.Operation{}).Where("id IN ? AND status = ?", ids, plan.OpPending).Update("started_at", now).Error; err != nil {
			return err
		}
		return tx.Model(&plan.Operation{}).Where("id IN ?", ids).Updates(set).Error
	})
}

// remake sends the scrapped operations' parts back to the first step: every
// operation on those parts becomes pending again.
func remake(tx *gorm.DB, orderID int64, ops, scrapped []plan.Operation) error {
	if len(scrapped) == 0 {
		return nil
	}
	var parts []int64
	for _, op := range scrapped {
		parts = append(parts, *op.PartID)
	}
	return inBatches(parts, func(ids []int64) error {
		return tx.Model(&plan.Operation{}).Where("prod_order_id = ? AND part_id IN ?", orderID, ids).
			Updates(map[string]any{"status": plan.OpPending, "started_at": nil, "completed_at": nil}).Error
	})
}

// completeIfDone moves an order in progress with every operation done to done.
func (s *Service) completeIfDone(ctx context.Context, tx *gorm.DB, o plan.ProdOrder) error {
	var left []int64
	if err := tx.Model(&plan.Operation{}).Where("prod_order_id = ? AND status <> ?", o.ID, plan.OpDone).Limit(1).Pluck("id", &left).Error; err != nil {
		return err
	}
	if len(left) > 0 {
		return nil
	}
	return plan.MoveOrderTx(ctx, tx, o, plan.StatusInProgress, plan.StatusDone, "completed_at", contracts.ProdOrderCompleted)
}

// checkRouteOrder refuses to complete an operation before its predecessors
// in the route are done (ECONFLICT naming the first one not done).
func checkRouteOrder(ctx context.Context, tx *gorm.DB, op plan.Operation) error {
	var unit []plan.Operation
	err := tx.WithContext(ctx).Where("prod_order_id = ? AND item_id = ? AND unit = ? AND seq < ? AND status <> ?",
		op.ProdOrderID, op.ItemID, op.Unit, op.Seq, plan.OpDone).Order("seq, id").Find(&unit).Error
	if err != nil {
		return err
	}
	for _, p := range unit {
		if p.Precedes(op) {
			return apperr.Conflict("operation %d (step %d, %s) comes after operation %d (step %d, %s), which is %s: the route's order is kept",
				op.ID, op.Seq, op.Name, p.ID, p.Seq, p.Name, p.Status)
		}
	}
	return nil
}

// ofUnit keeps of the ready operations those of the unit the report names,
// or says why it names none: EINVALID naming unit (or item_id) when the
// order has no such unit, or several items have a unit of that number and
// item_id does not say which.
func ofUnit(ops, ready []plan.Operation, in Report) ([]plan.Operation, error) {
	var items []int64
	for _, op := range ops {
		if op.Unit == in.Unit && (in.ItemID == 0 || op.ItemID == in.ItemID) && !slices.Contains(items, op.ItemID) {
			items = append(items, op.ItemID)
		}
	}
	switch {
	case len(items) == 0 && in.ItemID > 0:
		return nil, apperr.Invalid("the report is not valid", apperr.Field("item_id", "the production order has no unit %d of item %d", in.Unit, in.ItemID))
	case len(items) == 0:
		return nil, apperr.Invalid("the report is not valid", apperr.Field("unit", "the production order has no unit %d", in.Unit))
	case len(items) > 1:
		return nil, apperr.Invalid("the report is not valid", apperr.Field("item_id", "items %v each have a unit %d: say which with item_id", items, in.Unit))
	}
	var out []plan.Operation
	for _, op := range ready {
		if op.Unit == in.Unit && op.ItemID == items[0] {
			out = append(out, op)
		}
	}
	return out, nil
}
