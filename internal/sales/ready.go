package sales

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// requiredReason checks a required free-text reason (a cancellation's, a
// dismissal's): not blank, within max characters, no control characters
// but tabs and line breaks.
func requiredReason(reason string, max int) []apperr.FieldError {
	if strings.TrimSpace(reason) == "" {
		return []apperr.FieldError{apperr.Field("reason", "is required: say why")}
	}
	return input.Note("reason", reason, max)
}

// readyToShip tells whether everything left to ship of an order with these
// items is made: no item waits for production, and something made is left
// to ship.
func readyToShip(items []Item) bool {
	left := false
	for _, it := range items {
		switch it.Status {
		case ItemDone:
			if it.ShippedQty < it.Qty-it.WrittenOffQty {
				left = true
			}
		case ItemShipped, ItemWrittenOff:
		default:
			return false
		}
	}
	return left
}

// orderReady advances the order's version and writes order.ready with what
// is left to ship: o has just become ready to ship, first or again after a
// partial shipment.
func orderReady(ctx context.Context, tx *gorm.DB, o Order) error {
	v, err := advanceVersion(ctx, tx, o.ID)
	if err != nil {
		return err
	}
	p := contracts.OrderReadyPayload{OrderID: o.ID, SyncID: o.SyncID, Status: o.Status, Partial: len(o.Shipments) > 0, Items: []contracts.ItemQty{}, Version: v, ETA: o.ETA.String()}
	for _, it := range o.Items {
		if left := it.Qty - it.WrittenOffQty - it.ShippedQty; it.Status == ItemDone && left > 0 {
			p.Items = append(p.Items, contracts.ItemQty{ItemID: it.ID, SKU: it.SKU, Qty: left})
		}
	}
	return events.Add(ctx, tx, contracts.OrderReady.New(o.ID, p))
}

// writtenOff writes, for each order of a production order closed short with
// units written off, order.items_written_off with the planner's reason, so
// that the shop hears why they will not come.
func writtenOff(ctx context.Context, tx *gorm.DB, c contracts.ProdOrderClosedPayload) error {
	byOrder := map[int64][]contracts.ItemQty{}
	var orders []int64
	for _, q := range c.Quantities {
		if q.WrittenOff <= 0 {
			continue
		}
		if _, ok := byOrder[q.OrderID]; !ok {
			orders = append(orders, q.OrderID)
		}
		byOrder[q.OrderID] = append(byOrder[q.OrderID], contracts.ItemQty{ItemID: q.ItemID, Qty: q.WrittenOff})
	}
	for _, id := range orders {
		o, err := order(ctx, tx, id)
		if apperr.Code(err) == apperr.ENOTFOUND {
			continue
		}
		if err != nil {
			return err
		}
		items := byOrder[id]
		for i := range items {
			items[i].SKU = itemSKU(o, items[i].ItemID)
		}
		v, err := advanceVersion(ctx, tx, id)
		if err != nil {
			return err
		}
		err = events.Add(ctx, tx, contracts.OrderItemsWrittenOff.New(id, contracts.OrderItemsWrittenOffPayload{
			OrderID: id, SyncID: o.SyncID, Status: o.Status, ProdOrderID: c.ProdOrderID, Reason: c.Reason, Items: items, Version: v, ETA: o.ETA.String()}))
		if err != nil {
			return err
		}
	}
	return nil
}
