package floor

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// Part states on the shop floor, over its part-scope steps.
const (
	StatePending    = "pending"     // no step started
	StateInProgress = "in_progress" // some steps done or started
	StateDone       = "done"        // through every part-scope step
	StateScrapped   = "scrapped"    // spoilt; see its re-cut
)

// Part is a physical part as the shop floor sees it: its code, its
// unit's, where it comes from, its state and each of its route steps with
// who did it and when.
type Part struct {
	plan.Part

	UnitCode string `json:"unit_code" example:"U12-1"`
	OrderID  int64  `json:"order_id"` // the sales order
	SKU      string `json:"sku"`
	Customer string `json:"customer"`
	// State is pending, in_progress or done over its part-scope steps, or scrapped.
	State string `json:"state" enums:"pending,in_progress,done,scrapped"`
	// AtSeq is the first of its steps not done (null when through them all, or scrapped).
	AtSeq *int `json:"at_seq" extensions:"x-nullable"`
	// RecutCode is the code of the part cut again in its place, once scrapped.
	RecutCode *string    `json:"recut_code" extensions:"x-nullable"`
	Steps     []PartStep `json:"steps"`
}

// PartStep is a route step of a part: its operation, its state, and who
// completed it when.
type PartStep struct {
	Seq           int        `json:"seq"`
	Name          string     `json:"name"`
	OperationID   int64      `json:"operation_id"`
	Status        string     `json:"status" enums:"pending,in_progress,done"`
	StartedAt     *time.Time `json:"started_at" extensions:"x-nullable" format:"date-time"`
	CompletedAt   *time.Time `json:"completed_at" extensions:"x-nullable" format:"date-time"`
	CompletedByID *int64     `json:"completed_by_id" extensions:"x-nullable"`
	CompletedBy   *string    `json:"completed_by" extensions:"x-nullable"`
}

// PartFilter selects the parts of a production order; zero fields do not filter.
type PartFilter struct {
	Step  int    // with State: parts whose operation at this step is in that state; alone: parts that have the step
	State string // pending, in_progress, done or scrapped
	Unit  int    // unit n of its item
}

// Parts returns a page of the physical parts of the production order
// selected by f, in id order, with their steps. It returns ENOTFOUND for an
// unknown order, EINVALID for a step its route has not at part scope, a
// state that does not exist, or a unit below 1.
func (s *Service) Parts(ctx context.Context, orderID int64, pr page.Request, f PartFilter) ([]Part, string, error) {
	if err := pr.Unsorted(); err != nil {
		return nil, "", err
	}
	db := s.db.WithContext(ctx)
	o, err := plan.LoadOrder(ctx, db, orderID, false)
	if err != nil {
		return nil, "", err
	}
	var fields []apperr.FieldError
	switch f.State {
	case "", StatePending, StateInProgress, StateDone, StateScrapped:
	default:
		fields = append(fields, apperr.Field("state", "must be pending, in_progress, done or scrapped"))
	}
	if f.Unit < 0 {
		fields = append(fields, apperr.Field("unit", "must be a unit number from 1"))
	}
	if f.Step < 0 {
		fields = append(fields, apperr.Field("step", "must be the positive seq of a part-scope step of the order's route"))
	}
	if len(fields) > 0 {
		return nil, "", apperr.Invalid("invalid query", fields...)
	}
	if f.Step > 0 {
		scope, err := stepScope(ctx, db, orderID, f.Step)
		if err != nil {
			return nil, "", err
		}
		if scope != catalog.ScopePart {
			return nil, "", apperr.Invalid("invalid query", apperr.Field("step", "route %q of production order %d has no part-scope step %d", o.Route.Name, orderID, f.Step))
		}
	}
	parts, err := partsPage(ctx, db, orderID, pr, f)
	if err != nil {
		return nil, "", err
	}
	parts, next := page.Next(parts, pr.Limit, func(p plan.Part) int64 { return p.ID })
	out, err := floorParts(ctx, db, o, parts)
	return out, next, err
}

// floorParts describes the parts of order o for the shop floor.
func floorParts(ctx context.Context, db *gorm.DB, o plan.ProdOrder, parts []plan.Part) ([]Part, error) {
	out := make([]Part, len(parts))
	if len(parts) == 0 {
		return out, nil
	}
	ids := make([]int64, len(parts))
	for i, p := range parts {
		ids[i] = p.ID
	}
	ops, err := operationsOfParts(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	byPart := map[int64][]plan.Operation{}
	for _, op := range ops {
		byPart[*op.PartID] = append(byPart[*op.PartID], op)
	}
	codes, err := unitCodes(ctx, db, o.ID)
	if err != nil {
		return nil, err
	}
	recutOf, err := recutsOf(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	items := map[int64]plan.ProdItem{}
	for _, it := range o.Items {
		items[it.ItemID] = it
	}
	for i, p := range parts {
		it := items[p.ItemID]
		fp := Part{Part: p, UnitCode: codes[unitKey{p.ItemID, p.Unit}], OrderID: it.OrderID, SKU: it.SKU, Customer: it.Customer,
			Steps: []PartStep{}}
		if c, ok := recutOf[p.ID]; ok {
			fp.RecutCode = &c
		}
		done, started := 0, 0
		for _, op := range byPart[p.ID] {
			fp.Steps = append(fp.Steps, PartStep{Seq: op.Seq, Name: op.Name, OperationID: op.ID, Status: op.Status,
				StartedAt: op.StartedAt, CompletedAt: op.CompletedAt, CompletedByID: op.CompletedByID, CompletedBy: op.CompletedBy})
			switch op.Status {
			case plan.OpDone:
				done++
			case plan.OpInProgress:
				started++
			}
			if op.Status != plan.OpDone && fp.AtSeq == nil {
				seq := op.Seq
				fp.AtSeq = &seq
			}
		}
		switch {
		case p.Status == plan.PartScrapped:
			fp.State, fp.AtSeq = StateScrapped, nil
		case done == len(fp.Steps):
			fp.State = StateDone
		case done+started == 0:
			fp.State = StatePending
		default:
			fp.State = StateInProgress
		}
		out[i] = fp
	}
	return out, nil
}
