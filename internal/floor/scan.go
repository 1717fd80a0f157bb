package floor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// Scan is the input of ScanCode: a part's or unit's code read at a route
// step.
type Scan struct {
	Code string
	Step int // the route step (seq) the scan reports done
	// ProdOrderID, when given, is the production order the station works
	// on: a code of another order's part is refused.
	ProdOrderID int64
}

// ScanResult is what a scan did: the operation it completed (or found
// completed already, Repeated), and what that made of its unit and order.
type ScanResult struct {
	Code string `json:"code" example:"P12-5"`
	// Kind is part for a part's code, unit for a unit's.
	Kind string `json:"kind" enums:"part,unit"`
	// Repeated is true when the step was done already: the same scan twice
	// is one report, and nothing changed.
	Repeated    bool           `json:"repeated"`
	ProdOrderID int64          `json:"prod_order_id"`
	Operation   plan.Operation `json:"operation"`
	// NextSeq is the part's (or unit's) next step not done; null when none is left.
	NextSeq *int `json:"next_seq" extensions:"x-nullable"`
	// UnitMade is true when the unit is made (every operation of it done).
	UnitMade bool `json:"unit_made"`
	// Status is the production order's state after the scan.
	Status string `json:"prod_order_status" enums:"launched,in_progress,done,cancelled,closed"`
}

func (in *Scan) validate() error {
	in.Code = normalCode(in.Code)
	var fields []apperr.FieldError
	switch {
	case in.Code == "":
		fields = append(fields, apperr.Field("code", "is required: the code on the part's or unit's label"))
	case len(in.Code) > plan.MaxCode:
		fields = append(fields, apperr.Field("code", "must be at most %d characters", plan.MaxCode))
	}
	if in.Step <= 0 {
		fields = append(fields, apperr.Field("step", "must be the positive seq of a step of the route"))
	}
	if in.ProdOrderID < 0 {
		fields = append(fields, apperr.Field("prod_order_id", "must be a positive production order id"))
	}
	if len(fields) > 0 {
		return apperr.Invalid("the scan is not valid", fields...)
	}
	return nil
}

// scanned is what a code names: a part, or a unit.
type scanned struct {
	part *plan.Part
	unit *plan.Unit
}

func (x scanned) orderID() int64 {
	if x.part != nil {
		return x.part.ProdOrderID
	}
	return x.unit.ProdOrderID
}

// findCode returns the part or unit with the code, or EINVALID naming code.
func findCode(ctx context.Context, tx *gorm.DB, code string) (scanned, error) {
	part, err := partByCode(ctx, tx, code)
	if err != nil || part != nil {
		return scanned{part: part}, err
	}
	unit, err := unitByCode(ctx, tx, code)
	if err != nil || unit != nil {
		return scanned{unit: unit}, err
	}
	return scanned{}, apperr.Invalid("unknown code", apperr.Field("code", "no part or unit has the code %q", code))
}

// ScanCode reports the part or unit with the code through the route step:
// its operation at the step is completed (from pending or in progress) by
// the caller, through the one path every completion takes (operation.completed
// naming the code, the order started or done, the unit made). The same scan
// again is one report: the answer says Repeated and nothing changes, also
// for scans of one code at the same instant (the order's row is locked).
//
// It returns EINVALID naming code for an unknown code or one of another
// production order than ProdOrderID, naming step for a step the route has
// not, a unit's code at a part-scope step or a part's at a unit-scope one;
// ECONFLICT naming the step it is at when a step before it is not done, when
// the part was scrapped, or when its production order is cancelled, closed
// or done.
func (s *Service) ScanCode(ctx context.Context, in Scan) (ScanResult, error) {
	if err := in.validate(); err != nil {
		return ScanResult{}, err
	}
	var out ScanResult
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		x, err := findCode(ctx, tx, in.Code)
		if err != nil {
			return err
		}
		if in.ProdOrderID > 0 && x.orderID() != in.ProdOrderID {
			return apperr.Invalid("the code is of another production order", apperr.Field("code",
				"%s is of production order %d, not of production order %d", in.Code, x.orderID(), in.ProdOrderID))
		}
		o, err := plan.LockOrder(ctx, tx, x.orderID())
		if err != nil {
			return err
		}
		op, err := scanOperation(ctx, tx, x, in)
		if err != nil {
			return err
		}
		out = ScanResult{Code: in.Code, Kind: "part", ProdOrderID: o.ID, Status: o.Status}
		if x.unit != nil {
			out.Kind = "unit"
		}
		if op.Status == plan.OpDone {
			out.Repeated = true
			return s.scanResult(ctx, tx, x, op.ID, &out)
		}
		if x.part != nil && x.part.Status == plan.PartScrapped {
			return apperr.Conflict("part %s was scrapped at step %d: scan its re-cut", in.Code, deref(x.part.ScrapSeq))
		}
		if o.Status != plan.StatusLaunched && o.Status != plan.StatusInProgress {
			return apperr.Conflict("%s is %s: nothing can be reported on it", o.Describe(), o.Status)
		}
		if err := scanRouteOrder(ctx, tx, x, op); err != nil {
			return err
		}
		if err := s.complete(ctx, tx, &o, []plan.Operation{op}); err != nil {
			return err
		}
		return s.scanResult(ctx, tx, x, op.ID, &out)
	})
	return out, err
}

// deref is what p points to, or T's zero value when p is nil.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// scanOperation returns the operation of the scanned part or unit at the
// step, or the EINVALID naming step that says why there is none.
func scanOperation(ctx context.Context, tx *gorm.DB, x scanned, in Scan) (plan.Operation, error) {
	var op *plan.Operation
	var err error
	if x.part != nil {
		op, err = partOperationAt(ctx, tx, x.part.ID, in.Step)
	} else {
		op, err = unitOperationAt(ctx, tx, *x.unit, in.Step)
	}
	if err != nil || op != nil {
		return deref(op), err
	}
	steps, err := routeSteps(ctx, tx, x.orderID())
	if err != nil {
		return plan.Operation{}, err
	}
	var names []string
	for _, st := range steps {
		names = append(names, fmt.Sprintf("%d %s (%s)", st.Seq, st.Name, st.Scope))
		if st.Seq != in.Step {
			continue
		}
		switch {
		case x.part != nil && st.Scope == catalog.ScopeItem:
			return plan.Operation{}, apperr.Invalid("the scan is not valid", apperr.Field("step",
				"step %d (%s) is done per unit: scan the unit's code, not the part's %s", st.Seq, st.Name, in.Code))
		case x.unit != nil && st.Scope == catalog.ScopePart:
			return plan.Operation{}, apperr.Invalid("the scan is not valid", apperr.Field("step",
				"step %d (%s) is done per part: scan each part's code, not the unit's %s", st.Seq, st.Name, in.Code))
		}
		if x.part != nil && x.part.Status == plan.PartScrapped {
			return plan.Operation{}, apperr.Conflict("part %s was scrapped at step %d: scan its re-cut", in.Code, deref(x.part.ScrapSeq))
		}
		return plan.Operation{}, apperr.Conflict("%s has nothing left to do at step %d (%s): its production order was closed short", in.Code, st.Seq, st.Name)
	}
	return plan.Operation{}, apperr.Invalid("the scan is not valid", apperr.Field("step",
		"the route of production order %d has no step %d; its steps are %s", x.orderID(), in.Step, strings.Join(names, ", ")))
}

// scanRouteOrder refuses (ECONFLICT, naming the step it is at) a scan ahead
// of the route: a part's steps before this one not done, or for a unit, any
// of its operations before the step.
func scanRouteOrder(ctx context.Context, tx *gorm.DB, x scanned, op plan.Operation) error {
	before, err := openOperationsBefore(ctx, tx, op)
	if err != nil {
		return err
	}
	before = slices.DeleteFunc(before, func(p plan.Operation) bool { return !p.Precedes(op) })
	if len(before) == 0 {
		return nil
	}
	at := before[0]
	if x.part != nil {
		return apperr.Conflict("part %s is at step %d (%s), which is %s: it cannot be reported through step %d (%s) before",
			x.part.Code, at.Seq, at.Name, at.Status, op.Seq, op.Name)
	}
	if at.PartID == nil {
		return apperr.Conflict("unit %s is at step %d (%s), which is %s: it cannot be reported through step %d (%s) before",
			x.unit.Code, at.Seq, at.Name, at.Status, op.Seq, op.Name)
	}
	ids := []int64{}
	for _, p := range before {
		if p.Seq == at.Seq && p.PartID != nil {
			ids = append(ids, *p.PartID)
		}
	}
	codes, err := partCodes(ctx, tx, ids, 10)
	if err != nil {
		return err
	}
	return apperr.Conflict("unit %s is at step %d (%s): %d of its parts are not through it (%s): it cannot be reported through step %d (%s) before",
		x.unit.Code, at.Seq, at.Name, len(ids), strings.Join(codes, ", "), op.Seq, op.Name)
}

// scanResult fills out with the operation as it is now, the next step of
// the part or unit, whether the unit is made and the order's state.
func (s *Service) scanResult(ctx context.Context, tx *gorm.DB, x scanned, opID int64, out *ScanResult) error {
	op, err := operationByID(ctx, tx, opID)
	if err != nil {
		return err
	}
	out.Operation = op
	var partID *int64
	if x.part != nil {
		partID = &x.part.ID
	}
	if seq, ok, err := nextOpenStep(ctx, tx, op, partID); err != nil {
		return err
	} else if ok {
		out.NextSeq = &seq
	}
	if out.UnitMade, err = unitIsMade(ctx, tx, op.ProdOrderID, op.ItemID, op.Unit); err != nil {
		return err
	}
	status, err := orderStatus(ctx, tx, op.ProdOrderID)
	if status != "" {
		out.Status = status
	}
	return err
}
