package floor

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/stock"
)

// MaxCloseReason bounds the reason given for closing an order short, in characters.
const MaxCloseReason = 1000

// Close is the input of CloseProdOrder.
type Close struct {
	Reason string // why: required, free text
	Rest   string // the units not made: contracts.RestBacklog or contracts.RestWriteOff
}

func (in *Close) validate() error {
	in.Reason = strings.TrimSpace(in.Reason)
	var fields []apperr.FieldError
	if in.Reason == "" {
		fields = append(fields, apperr.Field("reason", "is required: say why the order is closed short"))
	} else {
		fields = append(fields, input.Note("reason", in.Reason, MaxCloseReason)...)
	}
	switch in.Rest {
	case contracts.RestBacklog, contracts.RestWriteOff:
	case "":
		fields = append(fields, apperr.Field("rest", "is required: %q (the units not made go back to the planning backlog) or %q (they are written off)",
			contracts.RestBacklog, contracts.RestWriteOff))
	default:
		fields = append(fields, apperr.Field("rest", "must be %q or %q", contracts.RestBacklog, contracts.RestWriteOff))
	}
	if len(fields) > 0 {
		return apperr.Invalid("the close is not valid", fields...)
	}
	return nil
}

// CloseProdOrder closes short a production order on which work has started,
// in one transaction with a prod_order.closed event:
//   - a unit of an item is made when every operation of the unit is done;
//     made units stay made, with their parts and operations;
//   - the operations not done are dropped, so they no longer load the work
//     centres;
//   - of each item, the units not made go back to the planning backlog (rest
//     "backlog"; the backlog's row is the item with the units left) or are
//     written off (rest "write_off"); an item whose sales order was cancelled
//     is never returned: its units not made are written off;
//   - nothing made is lost: a unit not made that goes back to the backlog
//     keeps its parts and the steps done on them (closed_back), and the
//     next launch of its item takes them over and does only the rest;
//   - the items are released (they may be launched again), the order is
//     closed with the reason, the rest, who and when, and no longer needs
//     the planner's attention.
//
// It returns EINVALID without a reason or with a rest other than "backlog"
// or "write_off"; ENOTFOUND for an unknown order; ECONFLICT when no work has
// started on it (it is cancelled instead, see CancelProdOrder) or it is
// done, cancelled or closed already.
func (s *Service) CloseProdOrder(ctx context.Context, id int64, in Close) (plan.ProdOrder, error) {
	if err := in.validate(); err != nil {
		return plan.ProdOrder{}, err
	}
	var o plan.ProdOrder
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		var err error
		o, err = plan.LoadOrder(ctx, tx, id, true)
		if err != nil {
			return err
		}
		switch o.Status {
		case plan.StatusInProgress:
		case plan.StatusLaunched:
			return apperr.Conflict("no work has started on %s: cancel it instead (POST /api/v1/production-orders/%d/cancel), which puts its items back in the backlog whole", o.Describe(), o.ID)
		default:
			return apperr.Conflict("%s is %s; only an order on which work has started and is not done can be closed", o.Describe(), o.Status)
		}
		ops, err := orderOperations(ctx, tx, id)
		if err != nil {
			return err
		}
		made := madeUnits(ops)
		reported, err := unitsMadeByItem(ctx, tx, id)
		if err != nil {
			return err
		}
		cancelled, err := plan.CancelledOrders(ctx, tx, o)
		if err != nil {
			return err
		}
		payload := contracts.ProdOrderClosedPayload{ProdOrderID: id, Items: o.ItemIDs(), Reason: in.Reason, Rest: in.Rest,
			Quantities: make([]contracts.ClosedQuantities, len(o.Items))}
		for i, it := range o.Items {
			q := contracts.ClosedQuantities{ItemID: it.ItemID, OrderID: it.OrderID, Qty: it.Qty, Made: min(made[it.ItemID], it.Qty)}
			q.MadeReported = min(reported[it.ItemID], q.Made)
			// What is left is counted against what the sales order wants
			// now (a change after the launch may have moved it); an item
			// removed from its order, or of a cancelled order, is never
			// returned.
			rest := max(it.OrderedNow()-q.Made, 0)
			if in.Rest == contracts.RestBacklog && !slices.Contains(cancelled, it.OrderID) && !it.Removed {
				q.Returned = rest
			} else {
				q.WrittenOff = rest
			}
			payload.Quantities[i] = q
			if err := releaseItem(ctx, tx, id, q); err != nil {
				return err
			}
		}
		returned := map[int64]int{}
		for _, q := range payload.Quantities {
			returned[q.ItemID] = q.Returned
		}
		if err := closeBack(ctx, tx, id, ops, returned); err != nil {
			return err
		}
		steps, err := materialSteps(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := dropOpenOperations(ctx, tx, id); err != nil {
			return err
		}
		// It needs nothing more: what it still had reserved is released, and
		// a part carried on to a later launch is counted there; a live part
		// not cut lies on no sheet any more (one cut, or scrapped, keeps the
		// sheet it was cut from).
		if err := releaseParts(ctx, tx, id, steps.Cut); err != nil {
			return err
		}
		if err := s.stock.ReleaseOrderTx(ctx, tx, id, stock.ForClosed); err != nil {
			return err
		}
		if err := plan.ReturnToBacklogTx(ctx, tx, o, returned); err != nil {
			return err
		}
		var by *events.Actor
		if a, ok := events.ActorFrom(ctx); ok {
			by = &a
		}
		closed, err := markClosed(ctx, tx, id, in, by)
		if err != nil {
			return err
		}
		if !closed {
			return apperr.Conflict("%s changed at the same time; read it again", o.Describe())
		}
		if err := events.Add(ctx, tx, contracts.ProdOrderClosed.New(id, payload)); err != nil {
			return err
		}
		o, err = s.orderNow(ctx, tx, id)
		return err
	})
	return o, err
}

// madeUnits counts, per item, the units every operation of which is done.
func madeUnits(ops []plan.Operation) map[int64]int {
	open := map[unitKey]bool{}
	for _, op := range ops {
		k := unitKey{op.ItemID, op.Unit}
		open[k] = open[k] || op.Status != plan.OpDone
	}
	made := map[int64]int{}
	for k, notDone := range open {
		if !notDone {
			made[k.item]++
		}
	}
	return made
}

// closeBack marks, of each item of order o being closed short, the units
// that go back to the backlog (returned of them, those furthest on first),
// so that a launch of the item takes over their parts.
func closeBack(ctx context.Context, tx *gorm.DB, orderID int64, ops []plan.Operation, returned map[int64]int) error {
	doneOf := map[unitKey]int{}
	for _, op := range ops {
		if op.Status == plan.OpDone {
			doneOf[unitKey{op.ItemID, op.Unit}]++
		}
	}
	units, err := unitsNotMade(ctx, tx, orderID)
	if err != nil {
		return err
	}
	slices.SortStableFunc(units, func(a, b plan.Unit) int {
		if c := cmp.Compare(a.ItemID, b.ItemID); c != 0 {
			return c
		}
		return doneOf[unitKey{b.ItemID, b.Unit}] - doneOf[unitKey{a.ItemID, a.Unit}]
	})
	returned = maps.Clone(returned)
	var back []int64
	for _, u := range units {
		if k := (unitKey{u.ItemID, u.Unit}); returned[u.ItemID] > 0 && doneOf[k] > 0 {
			back = append(back, u.ID)
			returned[u.ItemID]--
		}
	}
	if len(back) == 0 {
		return nil
	}
	return markClosedBack(ctx, tx, back)
}
