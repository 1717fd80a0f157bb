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
	CRMOrderID *CRMOrderID         `json:"crm_order_id,omitempty" jsonschema:"minLength=1,maxLength=64" jsonschema_description:"CRM orders: the CRM's order id, text (a whole number in events written before ids were text)"`
	DueDate    string              `json:"due_date,omitempty" jsonschema:"format=date" jsonschema_description:"the day the customer wants it"`
	Customer   string              `json:"customer,omitempty" jsonschema_description:"the customer's name (absent from events written before it was carried)"`
	Items      []OrderReceivedItem `json:"items" jsonschema_description:"the order's items"`
	Version    int64               `json:"version,omitempty" jsonschema_description:"the order's tsekh version after the event (1 for a new order; absent from events written before it was carried)"`
}

// OrderReceivedItem is one item of a received order.
type OrderReceivedItem struct {
	ItemID int64  `json:"item_id" jsonschema_description:"the sales-order item"`
	SKU    string `json:"sku" jsonschema_description:"the product's SKU"`
	Qty    int    `json:"qty" jsonschema:"minimum=1" jsonschema_description:"units ordered"`
	Note   string `json:"note,omitempty" jsonschema_description:"the customer's note on the item, when there is one"`
	// Options are the item's choices of board per decor slot of its
	// product, by board code ({"корпус": "LDSP16-SONOMA"}); absent when it
	// chose none (each slot's default).
	Options map[string]string `json:"options,omitempty" jsonschema_description:"the item's choice of board (by code) per decor slot of its product; absent: each slot's default"`
}

// OrderCancelledPayload is the payload of order.cancelled.
type OrderCancelledPayload struct {
	OrderID int64   `json:"order_id" jsonschema_description:"the sales order"`
	Items   []int64 `json:"items" jsonschema_description:"the order's item ids"`
	Reason  string  `json:"reason,omitempty" jsonschema_description:"why the order was cancelled, as the manager gave it (absent from events written before it was required)"`
	Version int64   `json:"version,omitempty" jsonschema_description:"the order's tsekh version after the event"`
}

// OrderStatusChangedPayload is the payload of order.status_changed.
type OrderStatusChangedPayload struct {
	OrderID        int64   `json:"order_id" jsonschema_description:"the sales order"`
	Status         string  `json:"status" jsonschema:"enum=received,enum=in_production,enum=ready,enum=partially_shipped,enum=shipped,enum=cancelled" jsonschema_description:"the order's new state"`
	PreviousStatus string  `json:"previous_status" jsonschema:"enum=received,enum=in_production,enum=ready,enum=partially_shipped,enum=shipped,enum=cancelled" jsonschema_description:"its state before"`
	ETA            string  `json:"eta,omitempty" jsonschema:"format=date" jsonschema_description:"the latest ETA of the order's launched items, once any is launched"`
	SyncID         *string `json:"sync_id,omitempty" jsonschema_description:"shop orders: \"shop-\" + the shop's order id"`
	Reason         string  `json:"reason,omitempty" jsonschema_description:"cancelled: why (the manager's reason, or the write-off that left nothing to make)"`
	Version        int64   `json:"version,omitempty" jsonschema_description:"the order's tsekh version after the event"`
}

// OrderShippedPayload is the payload of order.shipped.
type OrderShippedPayload struct {
	OrderID        int64    `json:"order_id" jsonschema_description:"the sales order"`
	Status         string   `json:"status" jsonschema:"enum=partially_shipped,enum=shipped" jsonschema_description:"the order's state after the shipment"`
	PreviousStatus string   `json:"previous_status" jsonschema:"enum=in_production,enum=ready,enum=partially_shipped" jsonschema_description:"its state before"`
	SyncID         *string  `json:"sync_id,omitempty" jsonschema_description:"shop orders: \"shop-\" + the shop's order id"`
	Shipment       Shipment `json:"shipment" jsonschema_description:"what left the factory"`
	Version        int64    `json:"version,omitempty" jsonschema_description:"the order's tsekh version after the event"`
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

// OrderChanged is written for every change of an order that alters
// something: a manager's PATCH, the shop's newer re-delivery, a CRM row that
// differs. The plan's backlog follows it.
var OrderChanged = events.Declare[OrderChangedPayload]("order.changed", "sales", "sales_orders",
	"A sales order changed (a manager's PATCH, the shop's newer re-delivery, a CRM row that differs): what changed, before and after, per field and per item.")

// OrderChangedPayload is the payload of order.changed.
type OrderChangedPayload struct {
	OrderID    int64         `json:"order_id" jsonschema_description:"the sales order"`
	Via        string        `json:"via" jsonschema:"enum=patch,enum=shop,enum=crm" jsonschema_description:"how the change came: PATCH /api/v1/orders/{id}, the shop's webhook or the CRM import"`
	SyncID     *string       `json:"sync_id,omitempty" jsonschema_description:"shop orders: \"shop-\" + the shop's order id"`
	CRMOrderID *CRMOrderID   `json:"crm_order_id,omitempty" jsonschema:"minLength=1,maxLength=64" jsonschema_description:"CRM orders: the CRM's order id, text (a whole number in events written before ids were text)"`
	DueDate    string        `json:"due_date,omitempty" jsonschema:"format=date" jsonschema_description:"the order's due date after the change, changed or not; absent when it has none"`
	Fields     []FieldChange `json:"fields" jsonschema_description:"the order's own fields that changed"`
	Items      []ItemChange  `json:"items" jsonschema_description:"the items added, removed or changed"`
	Status     string        `json:"status,omitempty" jsonschema:"enum=received,enum=in_production,enum=ready,enum=partially_shipped,enum=shipped,enum=cancelled" jsonschema_description:"the order's state when it changed"`
	Version    int64         `json:"version,omitempty" jsonschema_description:"the order's tsekh version after the change"`
	ETA        string        `json:"eta,omitempty" jsonschema:"format=date" jsonschema_description:"the order's ETA when it changed, once any item is launched"`
}

// FieldChange is one field that changed, with its value before and after
// ("" when it had or has none).
type FieldChange struct {
	Field  string `json:"field" jsonschema:"enum=customer.name,enum=customer.phone,enum=customer.email,enum=due_date,enum=note,enum=delivery_address,enum=delivery_date,enum=currency,enum=total,enum=unit_price,enum=line_total,enum=options" jsonschema_description:"the field"`
	Before string `json:"before" jsonschema_description:"its value before; dates as YYYY-MM-DD, amounts as decimal text, an item's options as a JSON object of board codes by decor slot"`
	After  string `json:"after" jsonschema_description:"its value after"`
}

// ItemChange is one item added, removed or changed.
type ItemChange struct {
	ItemID int64         `json:"item_id" jsonschema_description:"the sales-order item"`
	SKU    string        `json:"sku" jsonschema_description:"the product's SKU"`
	Change string        `json:"change" jsonschema:"enum=added,enum=removed,enum=changed" jsonschema_description:"added: a new item; removed: the item is no longer ordered; changed: its quantity or other fields changed"`
	Qty    *QtyChange    `json:"qty,omitempty" jsonschema_description:"its quantity before and after, when it changed (added: before 0; removed: after 0)"`
	Fields []FieldChange `json:"fields,omitempty" jsonschema_description:"its other fields that changed: note, unit_price, line_total, options (its choices of board per decor slot)"`
}

// QtyChange is an item's quantity before and after a change.
type QtyChange struct {
	Before int `json:"before" jsonschema:"minimum=0" jsonschema_description:"units ordered before"`
	After  int `json:"after" jsonschema:"minimum=0" jsonschema_description:"units ordered after"`
}
