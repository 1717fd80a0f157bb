package contracts

import (
	"time"

	"github.com/tsekh/tsekh/internal/events"
)

// The sales module's event types, about sales orders.
var (
	OrderReceived = events.Declare[OrderReceivedPayload]("order.received", "sales", "sales_orders",
		"A sales order was received (manually, from the shop webhook or from the CRM).")
	OrderCancelled = events.Declare[OrderCancelledPayload]("order.cancelled", "sales", "sales_orders",
		"A received sales order was cancelled; its items are no longer to be made.")
	OrderStatusChanged = events.Declare[OrderStatusChangedPayload]("order.status_changed", "sales", "sales_orders",
		"A sales order's state or ETA changed (cancelled; following production: in_production, ready, back to received; shipped: partially_shipped, shipped).")
	OrderShipped = events.Declare[OrderShippedPayload]("order.shipped", "sales", "sales_orders",
		"A shipment left the factory: quantities of an order's made items, with carrier and tracking; the order is partially_shipped or shipped.")
)

// OrderReceivedPayload is the payload of order.received. The first fields
// are the old system's, in its order.
type OrderReceivedPayload struct {
	OrderID    int64               `json:"order_id" jsonschema_description:"the sales order"`
	Lines      int                 `json:"lines" jsonschema:"minimum=1" jsonschema_description:"the number of the order's items"`
	Source     string              `json:"source" jsonschema:"enum=shop,enum=crm,enum=manual" jsonschema_description:"how the order came in"`
	SyncID     *string             `json:"sync_id,omitempty" jsonschema_description:"shop orders: \"shop-\" + the shop's order id"`
	CRMOrderID *int64              `json:"crm_order_id,omitempty" jsonschema_description:"CRM orders: the CRM's order number"`
	DueDate    string              `json:"due_date,omitempty" jsonschema:"format=date" jsonschema_description:"the day the customer wants it"`
	Customer   string              `json:"customer,omitempty" jsonschema_description:"the customer's name (absent from events written before it was carried)"`
	Items      []OrderReceivedItem `json:"items" jsonschema_description:"the order's items"`
}

// OrderReceivedItem is one item of a received order.
type OrderReceivedItem struct {
	ItemID int64  `json:"item_id" jsonschema_description:"the sales-order item"`
	SKU    string `json:"sku" jsonschema_description:"the product's SKU"`
	Qty    int    `json:"qty" jsonschema:"minimum=1" jsonschema_description:"units ordered"`
	Note   string `json:"note,omitempty" jsonschema_description:"the customer's note on the item, when there is one"`
}

// OrderCancelledPayload is the payload of order.cancelled.
type OrderCancelledPayload struct {
	OrderID int64   `json:"order_id" jsonschema_description:"the sales order"`
	Items   []int64 `json:"items" jsonschema_description:"the order's item ids"`
}

// OrderStatusChangedPayload is the payload of order.status_changed.
type OrderStatusChangedPayload struct {
	OrderID        int64   `json:"order_id" jsonschema_description:"the sales order"`
	Status         string  `json:"status" jsonschema:"enum=received,enum=in_production,enum=ready,enum=partially_shipped,enum=shipped,enum=cancelled" jsonschema_description:"the order's new state"`
	PreviousStatus string  `json:"previous_status" jsonschema:"enum=received,enum=in_production,enum=ready,enum=partially_shipped,enum=shipped,enum=cancelled" jsonschema_description:"its state before"`
	ETA            string  `json:"eta,omitempty" jsonschema:"format=date" jsonschema_description:"the latest ETA of the order's launched items, once any is launched"`
	SyncID         *string `json:"sync_id,omitempty" jsonschema_description:"shop orders: \"shop-\" + the shop's order id"`
}

// OrderShippedPayload is the payload of order.shipped.
type OrderShippedPayload struct {
	OrderID        int64    `json:"order_id" jsonschema_description:"the sales order"`
	Status         string   `json:"status" jsonschema:"enum=partially_shipped,enum=shipped" jsonschema_description:"the order's state after the shipment"`
	PreviousStatus string   `json:"previous_status" jsonschema:"enum=in_production,enum=ready,enum=partially_shipped" jsonschema_description:"its state before"`
	SyncID         *string  `json:"sync_id,omitempty" jsonschema_description:"shop orders: \"shop-\" + the shop's order id"`
	Shipment       Shipment `json:"shipment" jsonschema_description:"what left the factory"`
}

// Shipment is what left the factory at once.
type Shipment struct {
	ShipmentID int64         `json:"shipment_id" jsonschema_description:"the shipment"`
	Carrier    string        `json:"carrier" jsonschema_description:"who carries it; empty when not given"`
	Tracking   string        `json:"tracking" jsonschema_description:"the carrier's tracking number; empty when not given"`
	ShippedAt  time.Time     `json:"shipped_at" jsonschema_description:"when it left"`
	Items      []ShippedItem `json:"items" jsonschema_description:"the quantities of the order's items in it"`
}

// ShippedItem is a quantity of one item in a shipment.
type ShippedItem struct {
	ItemID int64  `json:"item_id" jsonschema_description:"the sales-order item"`
	SKU    string `json:"sku" jsonschema_description:"the product's SKU"`
	Qty    int    `json:"qty" jsonschema:"minimum=1" jsonschema_description:"units shipped"`
}
