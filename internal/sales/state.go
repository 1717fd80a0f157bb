package sales

import (
	"context"

	"gorm.io/gorm"
)

// This file decides states from quantities, in one place each: an item's
// from what was ordered, made, shipped and written off of it and whether a
// production order makes it (itemStatus); an order's from its items
// (orderStatus). Whatever moved the quantities (production, a shipment, a
// production order closed short), the states follow from them, so that
// nothing shipped ever goes back.

// itemStatus is the state of an item with these quantities:
//   - written_off: none of it is wanted any more (all written off);
//   - shipped: everything wanted of it shipped;
//   - done: everything wanted of it made (some may have shipped);
//   - in_production: a production order makes it;
//   - new: it waits for production.
func itemStatus(it Item) string {
	wanted := it.Qty - it.WrittenOffQty
	switch {
	case wanted <= 0:
		return ItemWrittenOff
	case it.ShippedQty >= wanted:
		return ItemShipped
	case it.MadeQty >= wanted:
		return ItemDone
	case it.ProdOrderID != nil:
		return ItemInProduction
	}
	return ItemNew
}

// settleItems stores the state itemStatus gives each of the items whose
// quantities or production order changed, in tx.
func settleItems(ctx context.Context, tx *gorm.DB, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	items, err := itemsByID(ctx, tx, ids)
	if err != nil {
		return err
	}
	for _, it := range items {
		if s := itemStatus(it); s != it.Status {
			if err := setItemStatus(ctx, tx, it.ID, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// Why an order's state is decided again.
type cause int

const (
	byProduction cause = iota // production moved its items
	byMade                    // production has just made some of its items
	byShipment                // a shipment left
)

// orderStatus decides the order's state from its items (their states as
// itemStatus gives them), and the reason it is cancelled when it is: a
// cancelled order stays cancelled; one whose every item was written off is
// cancelled; once something shipped, it is shipped when everything wanted
// shipped, ready again when production has just made the rest (the shop
// hears of it), partially shipped otherwise; before, ready when everything
// wanted is made, in production once production took any of it up, and
// received until then.
func orderStatus(o Order, why cause) (string, string) {
	if o.Status == StatusCancelled {
		return StatusCancelled, o.CancelReason
	}
	n := len(o.Items)
	done, writtenOff, shipped, launched, anyShipped := 0, 0, 0, 0, false
	for _, it := range o.Items {
		anyShipped = anyShipped || it.ShippedQty > 0
		switch itemStatus(it) {
		case ItemDone:
			done++
			launched++
		case ItemInProduction:
			launched++
		case ItemWrittenOff:
			writtenOff++
		case ItemShipped:
			shipped++
		}
	}
	switch {
	case n > 0 && writtenOff == n:
		reason := o.CancelReason
		if reason == "" {
			reason = "every item was written off: its production was closed short"
		}
		return StatusCancelled, reason
	case anyShipped && shipped+writtenOff == n:
		return StatusShipped, o.CancelReason
	case anyShipped && why == byMade && done > 0 && done+shipped+writtenOff == n:
		return StatusReady, o.CancelReason
	case anyShipped && o.Status == StatusReady && why != byShipment && done+shipped+writtenOff == n:
		return StatusReady, o.CancelReason
	case anyShipped:
		return StatusPartiallyShipped, o.CancelReason
	case n > 0 && done+writtenOff == n:
		return StatusReady, o.CancelReason
	case launched > 0:
		return StatusInProduction, o.CancelReason
	}
	return StatusReceived, o.CancelReason
}
