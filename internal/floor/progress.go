package floor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
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
	Seq int // the route step
	Qty int // parts (part-scope step) or units (item-scope step) done
	// Scrap is how many parts were spoilt at the step; ScrapParts names
	// them, each with its reason: scrap names its parts, so that the part
	// spoilt is the one scrapped and cut again.
	Scrap      int
	ScrapParts []ScrapLine
	Minutes    *float64 // the minutes spent, when said
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

// ScrapLine is a part a report scraps: its code, the reason (one of the
// factory's) and free text.
type ScrapLine struct {
	Code   string
	Reason string
	Note   string
}

func (s *Service) validateReport(in *Report) error {
	if in.Scrap == 0 {
		in.Scrap = len(in.ScrapParts)
	}
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
	switch {
	case in.Scrap < 0 || in.Scrap > plan.MaxLaunchOps:
	case in.Scrap > 0 && len(in.ScrapParts) == 0:
		fields = append(fields, apperr.Field("scrap", "name the parts spoilt: scrap_parts [{\"code\", \"reason\"}], one per part (the codes on their labels), or report each with POST /api/v1/floor/scrap"))
	case in.Scrap > 0 && len(in.ScrapParts) != in.Scrap:
		fields = append(fields, apperr.Field("scrap", "says %d parts but scrap_parts names %d: give one line per part spoilt", in.Scrap, len(in.ScrapParts)))
	}
	reasons := s.ScrapReasons()
	for i := range in.ScrapParts {
		l := &in.ScrapParts[i]
		at := func(f string) string { return fmt.Sprintf("scrap_parts[%d].%s", i, f) }
		l.Code, l.Reason, l.Note = normalCode(l.Code), strings.TrimSpace(l.Reason), strings.TrimSpace(l.Note)
		switch {
		case l.Code == "":
			fields = append(fields, apperr.Field(at("code"), "is required: the code on the part's label"))
		case len(l.Code) > plan.MaxCode:
			fields = append(fields, apperr.Field(at("code"), "must be at most %d characters", plan.MaxCode))
		case slices.ContainsFunc(in.ScrapParts[:i], func(o ScrapLine) bool { return o.Code == l.Code }):
			fields = append(fields, apperr.Field(at("code"), "repeats %s: a part is scrapped once", l.Code))
		}
		switch {
		case l.Reason == "":
			fields = append(fields, apperr.Field(at("reason"), "is required: one of %s", strings.Join(reasons, ", ")))
		case !slices.Contains(reasons, l.Reason):
			fields = append(fields, apperr.Field(at("reason"), "must be one of %s (FLOOR_SCRAP_REASONS); say more in note", strings.Join(reasons, ", ")))
		}
		fields = append(fields, input.Note(at("note"), l.Note, MaxScrapNote)...)
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
// production order and scraps the parts ScrapParts names at it, in one
// transaction with a prod_order.progress_reported event. Each part scrapped
// is scrapped as ScrapPart does (kept, scrapped, with its reason; a re-cut
// in its place). The operations completed are those ready at the step
// (through the step before), those in progress first, through the one
// completion every report takes (complete). The first report moves the
// order to in_progress (prod_order.started), the one that leaves nothing to
// do to done (prod_order.completed).
//
// It returns EINVALID for a bad report, a step the route does not have,
// scrap at an item-scope step, or more than the step has left; ECONFLICT
// when the order is cancelled, done or closed, or the report is ahead of the step
// before (more than are ready); ENOTFOUND for an unknown order.
func (s *Service) ReportProgress(ctx context.Context, orderID int64, in Report) (ProgressReport, error) {
	if err := s.validateReport(&in); err != nil {
		return ProgressReport{}, err
	}
	var out ProgressReport
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		o, err := plan.LoadOrder(ctx, tx, orderID, true)
		if err != nil {
			return err
		}
		if o.Status == plan.StatusCancelled || o.Status == plan.StatusDone || o.Status == plan.StatusClosed {
			return apperr.Conflict("%s is %s: no progress can be reported on it", o.Describe(), o.Status)
		}
		ops, err := orderOperations(ctx, tx, orderID)
		if err != nil {
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
		recuts, err := s.reportScrap(ctx, tx, &o, in, ready)
		if err != nil {
			return err
		}
		if len(recuts) > 0 { // what is ready without the parts scrapped and their re-cuts
			if ops, err = orderOperations(ctx, tx, orderID); err != nil {
				return err
			}
			if ready = readyAt(ops, in.Seq); in.Unit > 0 {
				if ready, err = ofUnit(ops, ready, in); err != nil {
					return err
				}
			}
			ready = slices.DeleteFunc(ready, func(op plan.Operation) bool { return op.PartID != nil && slices.Contains(recuts, *op.PartID) })
		}
		if in.Qty > len(ready) {
			return apperr.Conflict("step %d (%s) would get ahead of the steps before it: %d %s are through them and not done at this step besides the parts scrapped; qty is %d",
				in.Seq, st.name, len(ready), st.unit(), in.Qty)
		}
		if err := s.complete(ctx, tx, &o, ready[:in.Qty]); err != nil {
			return err
		}
		after, err := orderOperations(ctx, tx, orderID)
		if err != nil {
			return err
		}
		now := stepOf(after, in.Seq)
		out = ProgressReport{Seq: in.Seq, Name: now.name, Scope: now.scope, Done: now.done, Total: now.total, Ready: len(readyAt(after, in.Seq))}
		payload := contracts.ProdOrderProgressPayload{ProdOrderID: orderID, Items: o.ItemIDs(), Seq: in.Seq, Operation: now.name, Scope: now.scope,
			Qty: in.Qty, Scrap: in.Scrap, Minutes: in.Minutes, Done: now.done, Total: now.total}
		if err := events.Add(ctx, tx, contracts.ProdOrderProgressReported.New(orderID, payload)); err != nil {
			return err
		}
		out.ProdOrder, err = s.orderNow(ctx, tx, orderID)
		return err
	})
	return out, err
}

// reportScrap scraps the parts the report names at its step, each as
// ScrapPart would, and returns the ids of their re-cuts: each must be a
// part of the order ready at the step (through the steps before it, not
// done at it); EINVALID naming scrap_parts[i].code otherwise.
func (s *Service) reportScrap(ctx context.Context, tx *gorm.DB, o *plan.ProdOrder, in Report, ready []plan.Operation) ([]int64, error) {
	var recuts []int64
	for i, l := range in.ScrapParts {
		field := fmt.Sprintf("scrap_parts[%d].code", i)
		x, err := findCode(ctx, tx, l.Code)
		if apperr.Code(err) == apperr.EINVALID {
			return nil, apperr.Invalid("the report is not valid", apperr.Field(field, "no part has the code %q", l.Code))
		}
		if err != nil {
			return nil, err
		}
		switch {
		case x.part == nil:
			return nil, apperr.Invalid("the report is not valid", apperr.Field(field, "%s is a unit's code: scrap names parts", l.Code))
		case x.part.ProdOrderID != o.ID:
			return nil, apperr.Invalid("the report is not valid", apperr.Field(field, "%s is a part of production order %d, not of production order %d", l.Code, x.part.ProdOrderID, o.ID))
		case !slices.ContainsFunc(ready, func(op plan.Operation) bool { return op.PartID != nil && *op.PartID == x.part.ID }):
			return nil, apperr.Invalid("the report is not valid", apperr.Field(field, "part %s is not at step %d: only a part through the steps before it and not done at it can be spoilt there", l.Code, in.Seq))
		}
		r, err := s.scrapAt(ctx, tx, o, x.part.ID, in.Seq, l.Reason, l.Note, fmt.Sprintf("scrap_parts[%d].", i))
		if err != nil {
			return nil, err
		}
		recuts = append(recuts, r.Recut.ID)
	}
	return recuts, nil
}

// orderNow is the production order as it is now in tx, with what it is
// short of.
func (s *Service) orderNow(ctx context.Context, tx *gorm.DB, id int64) (plan.ProdOrder, error) {
	o, err := plan.LoadOrder(ctx, tx, id, false)
	if err != nil {
		return o, err
	}
	os := []plan.ProdOrder{o}
	err = plan.FillShort(ctx, tx, s.stock, os)
	return os[0], err
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

func idsOf(ops []plan.Operation) []int64 {
	ids := make([]int64, len(ops))
	for i, op := range ops {
		ids[i] = op.ID
	}
	return ids
}

// checkRouteOrder refuses to complete an operation before its predecessors
// in the route are done (ECONFLICT naming the first one not done).
func checkRouteOrder(ctx context.Context, tx *gorm.DB, op plan.Operation) error {
	unit, err := openOperationsBefore(ctx, tx, op)
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
