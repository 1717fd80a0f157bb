package sales

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// SubscriberProduction is the name of the subscriber that follows production.
const SubscriberProduction = "sales.production"

// ItemWrittenOff is an item none of which will be made: its production order
// was closed short with the rest written off before a unit of it was made.
const ItemWrittenOff = "written_off"

// RegisterEvents declares the sales module's event types (internal/contracts,
// sales.go) and its subscriber "sales.production", which follows the plan's
// prod_order.* events.
func (s *Service) RegisterEvents(r *events.Registrar) {
	r.Declare(contracts.OrderReceived, contracts.OrderCancelled, contracts.OrderStatusChanged, contracts.OrderShipped, contracts.OrderChanged,
		contracts.OrderReady, contracts.OrderItemsWrittenOff, contracts.OrderShopConflict, contracts.OrderAttentionCleared,
		contracts.IntakeRejected, contracts.IntakeResolved, contracts.IntakeDismissed, contracts.IntakeEdited)
	r.Subscribe(events.Subscriber{
		Name: SubscriberProduction,
		Types: events.Names(contracts.ProdOrderLaunched, contracts.ProdOrderStarted, contracts.ProdOrderCompleted, contracts.ProdOrderCancelled,
			contracts.ProdOrderItemsReleased, contracts.ProdOrderClosed, contracts.ProdOrderRescheduled, contracts.UnitMade),
		Description: "Follows production: items become in_production, done or new again, or written off when a production order is closed short; a unit made counts for its item at once (made_qty, shippable); orders in_production, ready (also again after a partial shipment, once the rest is made) or received again, with the ETA of their launched items (also when a re-plan moves it); writes order.status_changed.",
		HandleTx:    followProduction,
	})
}

// MaxCancelReason is the longest reason for a cancellation, in characters.
const MaxCancelReason = 1000

// CancelOrder cancels a received order for the reason given (required, free
// text, shown on the order as cancel_reason) and writes order.cancelled and
// order.status_changed, both with the reason. It returns EINVALID naming
// reason when it is empty or too long, ENOTFOUND for an unknown order and
// ECONFLICT when the order is past received.
func (s *Service) CancelOrder(ctx context.Context, id int64, reason string) (Order, error) {
	reason = strings.TrimSpace(reason)
	if f := requiredReason(reason, MaxCancelReason); len(f) > 0 {
		return Order{}, apperr.Invalid("the cancellation is not valid", f...)
	}
	var o Order
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		if err := lockOrder(ctx, tx, id); err != nil {
			return err
		}
		cancelled, err := markCancelled(ctx, tx, id, reason)
		if err != nil {
			return err
		}
		if o, err = order(ctx, tx, id); err != nil {
			return err
		}
		if !cancelled {
			return refuseCancel(o)
		}
		items := make([]int64, len(o.Items))
		for i, it := range o.Items {
			items[i] = it.ID
		}
		v, err := advanceVersion(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := events.Add(ctx, tx, contracts.OrderCancelled.New(id, contracts.OrderCancelledPayload{OrderID: id, Items: items, Reason: reason, Version: v})); err != nil {
			return err
		}
		// One cancellation is one version: its order.status_changed, which
		// the shop is told of, carries the version order.cancelled made, so
		// that the shop sees no version it was never told about.
		if err := writeStatusChanged(ctx, tx, o, StatusReceived, v); err != nil {
			return err
		}
		o, err = order(ctx, tx, id)
		return err
	})
	return o, err
}

// refuseCancel is the conflict of cancelling an order that is past received:
// it names the items production has taken up, as its events told sales.
func refuseCancel(o Order) error {
	var launched []string
	for _, it := range o.Items {
		if it.Status == ItemInProduction || it.Status == ItemDone {
			s := fmt.Sprintf("%d (%s", it.ID, it.Status)
			if it.ProdOrderID != nil {
				s += fmt.Sprintf(", production order %d", *it.ProdOrderID)
			}
			launched = append(launched, s+")")
		}
	}
	if len(launched) > 0 {
		return apperr.Conflict("order %d is %s: production has taken up its items %s; only a received order can be cancelled",
			o.ID, o.Status, strings.Join(launched, ", "))
	}
	return apperr.Conflict("order %d is %s; only a received order can be cancelled", o.ID, o.Status)
}

// statusChanged advances the order's version and writes
// order.status_changed for o, now in its new state (with the reason when
// it is cancelled).
func statusChanged(ctx context.Context, tx *gorm.DB, o Order, previous string) error {
	v, err := advanceVersion(ctx, tx, o.ID)
	if err != nil {
		return err
	}
	return writeStatusChanged(ctx, tx, o, previous, v)
}

// writeStatusChanged writes order.status_changed for o at version v, which
// the caller's change has already made.
func writeStatusChanged(ctx context.Context, tx *gorm.DB, o Order, previous string, v int64) error {
	p := contracts.OrderStatusChangedPayload{OrderID: o.ID, Status: o.Status, PreviousStatus: previous, ETA: o.ETA.String(), SyncID: o.SyncID, Version: v}
	if o.Status == StatusCancelled {
		p.Reason = o.CancelReason
	}
	return events.Add(ctx, tx, contracts.OrderStatusChanged.New(o.ID, p))
}

// followProduction runs in the dispatcher's transaction: the items' and
// orders' new states, their events and the record of the delivery commit
// together. Production orders are objects of their own, so the events of two
// of them may arrive in either order; an item follows only the production
// order it was last launched in.
func followProduction(ctx context.Context, tx *gorm.DB, ev events.Event) error {
	switch ev.Type {
	case contracts.ProdOrderClosed.Name():
		return followClose(ctx, tx, ev)
	case contracts.UnitMade.Name():
		return followUnitMade(ctx, tx, ev)
	}
	var p contracts.ProdOrderPayload
	var eta database.Date
	var remaining []int64 // prod_order.items_released: the items it still makes
	switch ev.Type {
	case contracts.ProdOrderItemsReleased.Name():
		r, err := contracts.ProdOrderItemsReleased.Decode(ev)
		if err != nil {
			return err
		}
		if eta, err = database.ParseDate(r.ETA); err != nil {
			return fmt.Errorf("sales: %s eta: %w", ev.Type, err)
		}
		p, remaining = contracts.ProdOrderPayload{ProdOrderID: r.ProdOrderID, Items: r.Items}, r.Remaining
	case contracts.ProdOrderRescheduled.Name():
		r, err := contracts.ProdOrderRescheduled.Decode(ev)
		if err != nil {
			return err
		}
		if eta, err = database.ParseDate(r.ETA); err != nil {
			return fmt.Errorf("sales: %s eta: %w", ev.Type, err)
		}
		p = contracts.ProdOrderPayload{ProdOrderID: r.ProdOrderID, Items: r.Items}
	case contracts.ProdOrderLaunched.Name():
		l, err := contracts.ProdOrderLaunched.Decode(ev)
		if err != nil {
			return err
		}
		if eta, err = database.ParseDate(l.ETA); err != nil {
			return fmt.Errorf("sales: %s eta: %w", ev.Type, err)
		}
		p = contracts.ProdOrderPayload{ProdOrderID: l.ProdOrderID, Items: l.Items}
	default:
		if err := ev.Decode(&p); err != nil {
			return fmt.Errorf("sales: %s payload: %w", ev.Type, err)
		}
	}
	if len(p.Items) == 0 {
		return nil
	}
	if err := lockOrdersOf(ctx, tx, append(slices.Clone(p.Items), remaining...)); err != nil {
		return err
	}
	// The quantities and production order move; the items' states follow
	// from them (settleItems).
	var err error
	switch ev.Type {
	case contracts.ProdOrderLaunched.Name():
		err = itemsLaunched(ctx, tx, p.Items, p.ProdOrderID, eta)
	case contracts.ProdOrderRescheduled.Name():
		err = itemsRescheduled(ctx, tx, p.Items, p.ProdOrderID, eta)
	case contracts.ProdOrderStarted.Name():
		err = itemsStarted(ctx, tx, p.Items, p.ProdOrderID)
	case contracts.ProdOrderCompleted.Name():
		err = itemsCompleted(ctx, tx, p.Items, p.ProdOrderID)
	case contracts.ProdOrderCancelled.Name(), contracts.ProdOrderItemsReleased.Name():
		err = itemsReleased(ctx, tx, p.Items, p.ProdOrderID)
		if err == nil && len(remaining) > 0 {
			err = itemsRescheduledAny(ctx, tx, remaining, p.ProdOrderID, eta)
		}
	default:
		return nil
	}
	if err != nil {
		return err
	}
	if err := settleItems(ctx, tx, p.Items); err != nil {
		return err
	}
	return followOrdersOf(ctx, tx, append(slices.Clone(p.Items), remaining...), ev.Type == contracts.ProdOrderCompleted.Name())
}

// followOrdersOf lets the orders of the items follow their items; made
// says production has just made some of them (see followItemsMade).
func followOrdersOf(ctx context.Context, tx *gorm.DB, items []int64, made bool) error {
	orderIDs, err := ordersOfItems(ctx, tx, items)
	if err != nil {
		return err
	}
	for _, id := range orderIDs {
		if err := followItemsMade(ctx, tx, id, made); err != nil {
			return err
		}
	}
	return nil
}

// followUnitMade follows one unit made: its item counts it at once
// (made_qty, up to what is wanted of it), so that it can ship whatever the
// rest of its production order does, and is done once every unit wanted is
// made; its order follows.
func followUnitMade(ctx context.Context, tx *gorm.DB, ev events.Event) error {
	u, err := contracts.UnitMade.Decode(ev)
	if err != nil {
		return err
	}
	if err := lockOrdersOf(ctx, tx, []int64{u.ItemID}); err != nil {
		return err
	}
	if err := countUnitMade(ctx, tx, u.ItemID, u.ProdOrderID); err != nil {
		return err
	}
	if err := settleItems(ctx, tx, []int64{u.ItemID}); err != nil {
		return err
	}
	return followOrdersOf(ctx, tx, []int64{u.ItemID}, true)
}

// followClose follows a production order closed short: each item adds the
// units made and written off to its counts; an item with units back in the
// planning backlog is new again (no ETA, no production order) for them; one
// with none back is done when any of it is made, written off otherwise.
func followClose(ctx context.Context, tx *gorm.DB, ev events.Event) error {
	c, err := contracts.ProdOrderClosed.Decode(ev)
	if err != nil {
		return err
	}
	if len(c.Quantities) == 0 {
		return nil
	}
	items := make([]int64, len(c.Quantities))
	for i, q := range c.Quantities {
		items[i] = q.ItemID
	}
	if err := lockOrdersOf(ctx, tx, items); err != nil {
		return err
	}
	for _, q := range c.Quantities {
		// What is made stays made and what shipped stays shipped: the item's
		// state follows its quantities (settleItems), never back past them.
		if err := addClosed(ctx, tx, c.ProdOrderID, q); err != nil {
			return err
		}
	}
	if err := settleItems(ctx, tx, items); err != nil {
		return err
	}
	if err := followOrdersOf(ctx, tx, items, true); err != nil {
		return err
	}
	return writtenOff(ctx, tx, c)
}

// followItems derives an order's state and ETA from its items and, when
// either changed, stores them and writes order.status_changed. A cancelled
// or shipped order keeps its state. Written-off items count as finished: an
// order whose other items are all made is ready, one partially shipped with
// the rest shipped is shipped, and one with every item written off, of which
// nothing will ever be made, is cancelled.
func followItems(ctx context.Context, tx *gorm.DB, id int64) error {
	return followItemsMade(ctx, tx, id, false)
}

// followItemsMade is followItems; made says production has just made some
// of the order's items: a partially shipped order whose items are all made
// (or shipped, or written off) is ready again, and the shop hears of it.
func followItemsMade(ctx context.Context, tx *gorm.DB, id int64, made bool) error {
	// Its callers hold the order's lock (lockOrder, lockOrdersOf): a
	// manager's cancellation committing between this read and the update
	// below would otherwise be overwritten.
	o, err := order(ctx, tx, id)
	if apperr.Code(err) == apperr.ENOTFOUND { // not ours to follow
		return nil
	}
	if err != nil {
		return err
	}
	if o.Status == StatusCancelled || o.Status == StatusShipped {
		return nil // final: nothing moves it back
	}
	why := byProduction
	if made {
		why = byMade
	}
	var eta database.Date
	for _, it := range o.Items {
		if st := itemStatus(it); (st == ItemDone || st == ItemInProduction) && it.ETA.After(eta.Time) {
			eta = it.ETA
		}
	}
	status, reason := orderStatus(o, why)
	ready := readyToShip(o.Items) && status != StatusCancelled
	if status == o.Status && eta.String() == o.ETA.String() && ready == o.ReadyToShip {
		return nil
	}
	if err := setOrderState(ctx, tx, id, status, eta, reason, ready); err != nil {
		return err
	}
	previous, previousETA, wasReady := o.Status, o.ETA.String(), o.ReadyToShip
	o.Status, o.ETA, o.CancelReason, o.ReadyToShip = status, eta, reason, ready
	// No longer ready in the same state (an item back in production) is a
	// change of the order too: journalled, its version moved.
	if status != previous || eta.String() != previousETA || (wasReady && !ready) {
		if err := statusChanged(ctx, tx, o, previous); err != nil {
			return err
		}
	}
	if ready && !wasReady {
		return orderReady(ctx, tx, o)
	}
	return nil
}
