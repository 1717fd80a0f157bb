package sales

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// The states shipping adds: an order of which some, not all, has shipped,
// and an item that has shipped whole.
const (
	StatusPartiallyShipped = "partially_shipped"
	ItemShipped            = "shipped"
)

// Limits of a shipment's text.
const (
	MaxCarrier  = 100
	MaxTracking = 100
)

// Shipment is what left the factory at once: quantities of an order's items,
// with the carrier and its tracking number.
type Shipment struct {
	ID        int64          `json:"id" gorm:"primaryKey"`
	OrderID   int64          `json:"-"`
	Carrier   string         `json:"carrier"`
	Tracking  string         `json:"tracking"`
	ShippedAt time.Time      `json:"shipped_at" format:"date-time"`
	Items     []ShipmentItem `json:"items" gorm:"foreignKey:ShipmentID"`
	CreatedAt time.Time      `json:"created_at" gorm:"->" format:"date-time"`
}

// TableName is the sales module's shipment table.
func (Shipment) TableName() string { return "sales_shipments" }

// ShipmentItem is a quantity of one item in a shipment.
type ShipmentItem struct {
	ShipmentID int64  `json:"-" gorm:"primaryKey;autoIncrement:false"`
	ItemID     int64  `json:"item_id" gorm:"primaryKey;autoIncrement:false"`
	SKU        string `json:"sku" gorm:"column:sku"`
	Qty        int    `json:"qty"`
}

// TableName is the sales module's shipment line table.
func (ShipmentItem) TableName() string { return "sales_shipment_items" }

// NewShipment is the input of Ship.
type NewShipment struct {
	Items     []ShipLine
	Carrier   string
	Tracking  string
	ShippedAt time.Time // zero: now, by the database clock
}

// ShipLine is a quantity of one item to ship.
type ShipLine struct {
	ItemID int64
	Qty    int
}

// validate checks a shipment's own fields.
func (in *NewShipment) validate() error {
	var fields []apperr.FieldError
	fields = append(fields, input.Line("carrier", in.Carrier, MaxCarrier)...)
	fields = append(fields, input.Line("tracking", in.Tracking, MaxTracking)...)
	switch {
	case len(in.Items) == 0:
		fields = append(fields, apperr.Field("items", "must list at least one item"))
	case len(in.Items) > MaxItems:
		fields = append(fields, apperr.Field("items", "must list at most %d items", MaxItems))
	}
	for i, l := range in.Items {
		switch {
		case l.ItemID <= 0:
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d].item_id", i), "must be a positive item id"))
		case slices.ContainsFunc(in.Items[:i], func(o ShipLine) bool { return o.ItemID == l.ItemID }):
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d].item_id", i), "repeats item %d", l.ItemID))
		}
		if l.Qty < 1 {
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d].qty", i), "must be a whole number from 1"))
		}
	}
	if len(fields) > 0 {
		return apperr.Invalid("the shipment is not valid", fields...)
	}
	return nil
}

// Ship records a shipment of an order's made items and writes order.shipped
// and, when the order's state changes, order.status_changed. The order
// becomes shipped once every item has shipped whole (what was made of it,
// when the rest was written off) or was written off, partially_shipped
// before. It returns ENOTFOUND for an unknown order, ECONFLICT when the order
// is not in production, ready or partially shipped, and EINVALID naming the
// line at fault: an item not of the order or not made yet, or more than is
// left of it to ship.
func (s *Service) Ship(ctx context.Context, orderID int64, in NewShipment) (Order, error) {
	if err := in.validate(); err != nil {
		return Order{}, err
	}
	var o Order
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		// The order, then its items: the package's lock order.
		if err := lockOrder(ctx, tx, orderID); err != nil {
			return err
		}
		var err error
		if o, err = order(ctx, tx, orderID); err != nil {
			return err
		}
		switch o.Status {
		case StatusInProduction, StatusReady, StatusPartiallyShipped:
		default:
			return apperr.Conflict("order %d is %s; only its made items ship, once production has made them", orderID, o.Status)
		}
		lines, err := shipLines(o, in.Items)
		if err != nil {
			return err
		}
		id, err := insertShipment(ctx, tx, orderID, in.Carrier, in.Tracking, in.ShippedAt)
		if err != nil {
			return err
		}
		for i := range lines {
			lines[i].ShipmentID = id
			shipped, err := addShipped(ctx, tx, lines[i].ItemID, lines[i].Qty)
			if err != nil {
				return err
			}
			if !shipped {
				return apperr.Conflict("item %d was shipped at the same time; read the order again", lines[i].ItemID)
			}
		}
		if err := insertShipmentItems(ctx, tx, lines); err != nil {
			return err
		}
		ids := make([]int64, len(lines))
		for i, l := range lines {
			ids[i] = l.ItemID
		}
		if err := settleItems(ctx, tx, ids); err != nil {
			return err
		}
		if o, err = order(ctx, tx, orderID); err != nil {
			return err
		}
		previous := o.Status
		status, _ := orderStatus(o, byShipment)
		// Still ready when what is left is made; not once all has shipped.
		ready := status != StatusShipped && readyToShip(o.Items)
		if status != previous || ready != o.ReadyToShip {
			if err := setShipState(ctx, tx, orderID, status, ready); err != nil {
				return err
			}
		}
		if o, err = order(ctx, tx, orderID); err != nil {
			return err
		}
		sh := o.Shipments[len(o.Shipments)-1]
		shipped := make([]contracts.ShippedItem, len(sh.Items))
		for i, it := range sh.Items {
			shipped[i] = contracts.ShippedItem{ItemID: it.ItemID, SKU: it.SKU, Qty: it.Qty}
		}
		v, err := advanceVersion(ctx, tx, orderID)
		if err != nil {
			return err
		}
		err = events.Add(ctx, tx, contracts.OrderShipped.New(orderID, contracts.OrderShippedPayload{
			OrderID: orderID, Status: status, PreviousStatus: previous, SyncID: o.SyncID, Version: v,
			Shipment: contracts.Shipment{ShipmentID: id, Carrier: sh.Carrier, Tracking: sh.Tracking, ShippedAt: sh.ShippedAt.UTC(), Items: shipped}}))
		if err != nil {
			return err
		}
		if status != previous {
			if err := statusChanged(ctx, tx, o, previous); err != nil {
				return err
			}
		}
		o, err = order(ctx, tx, orderID)
		return err
	})
	return o, err
}

// shipLines checks the lines against the order's items: each must be an item
// of the order, made (done, or shipped in part), and no more than is left of
// it to ship.
func shipLines(o Order, in []ShipLine) ([]ShipmentItem, error) {
	var fields []apperr.FieldError
	out := make([]ShipmentItem, 0, len(in))
	for i, l := range in {
		j := slices.IndexFunc(o.Items, func(it Item) bool { return it.ID == l.ItemID })
		if j < 0 {
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d].item_id", i), "order %d has no item %d", o.ID, l.ItemID))
			continue
		}
		it := o.Items[j]
		left := it.Qty - it.WrittenOffQty - it.ShippedQty
		// Units made while the rest of their production order runs on ship
		// at once: what is made and not yet shipped.
		made := min(it.MadeQty, it.Qty-it.WrittenOffQty) - it.ShippedQty
		switch {
		case it.Status == ItemShipped:
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d].item_id", i), "item %d has shipped whole already (%d)", it.ID, it.ShippedQty))
		case it.Status == ItemInProduction && made > 0 && l.Qty > made:
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d].qty", i), "must be at most %d: item %d has %d made of %d and %d shipped already; the rest is in production",
				made, it.ID, it.MadeQty, it.Qty, it.ShippedQty))
		case it.Status == ItemInProduction && made > 0:
			out = append(out, ShipmentItem{ItemID: it.ID, SKU: it.SKU, Qty: l.Qty})
		case it.Status != ItemDone:
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d].item_id", i), "item %d is %s: only what production has made ships", it.ID, it.Status))
		case l.Qty > left && it.WrittenOffQty > 0:
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d].qty", i), "must be at most %d: item %d has %d ordered, %d written off and %d shipped already",
				left, it.ID, it.Qty, it.WrittenOffQty, it.ShippedQty))
		case l.Qty > left:
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d].qty", i), "must be at most %d: item %d has %d ordered and %d shipped already", left, it.ID, it.Qty, it.ShippedQty))
		default:
			out = append(out, ShipmentItem{ItemID: it.ID, SKU: it.SKU, Qty: l.Qty})
		}
	}
	if len(fields) > 0 {
		return nil, apperr.Invalid("the shipment is not valid", fields...)
	}
	return out, nil
}
