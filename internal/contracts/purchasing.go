package contracts

import "github.com/tsekh/tsekh/internal/events"

// The purchasing module's event types: suppliers and their terms, purchase
// orders through their states, and the receipts delivered against them.
var (
	SupplierCreated = events.Declare[SupplierPayload]("supplier.created", "purchasing", "purchasing_suppliers",
		"A supplier was added, with its terms per material (its code, price, lead time, minimum order and pack).")
	SupplierUpdated = events.Declare[SupplierPayload]("supplier.updated", "purchasing", "purchasing_suppliers",
		"A supplier's name, contacts or terms per material changed.")

	PurchaseOrderCreated = events.Declare[PurchaseOrderPayload]("purchase_order.created", "purchasing", "purchasing_orders",
		"A purchase order was drafted: its supplier and lines (materials, quantities, expected dates), by hand or from a proposal.")
	PurchaseOrderChanged = events.Declare[PurchaseOrderPayload]("purchase_order.changed", "purchasing", "purchasing_orders",
		"A draft purchase order's lines or note changed.")
	PurchaseOrderOrdered = events.Declare[PurchaseOrderPayload]("purchase_order.ordered", "purchasing", "purchasing_orders",
		"A purchase order was sent to its supplier: its lines are expected on their dates, and the plan counts on them.")
	PurchaseOrderReceived = events.Declare[PurchaseOrderPayload]("purchase_order.received", "purchasing", "purchasing_orders",
		"A delivery was received against the purchase order (document_id, the stock receipt; received, what it brought per line, over_reason when beyond what was ordered); status partially_received or received.")
	PurchaseOrderCancelled = events.Declare[PurchaseOrderPayload]("purchase_order.cancelled", "purchasing", "purchasing_orders",
		"A purchase order was cancelled with a reason: what is still due of it is expected no more.")
)

// SupplierPayload is the payload of supplier.created and .updated: the
// supplier as it now is.
type SupplierPayload struct {
	SupplierID int64           `json:"supplier_id" jsonschema_description:"the supplier"`
	Name       string          `json:"name"`
	Materials  []SupplierTerms `json:"materials" jsonschema_description:"its terms per material"`
}

// SupplierTerms are what a supplier sells a material on.
type SupplierTerms struct {
	Code         string  `json:"code" jsonschema_description:"the material's code in the catalogue"`
	SupplierCode string  `json:"supplier_code" jsonschema_description:"the supplier's own article"`
	Price        float64 `json:"price" jsonschema_description:"per unit of the material"`
	LeadDays     int     `json:"lead_days" jsonschema_description:"working days from order to delivery"`
	MinQty       float64 `json:"min_qty" jsonschema_description:"the least it takes an order for"`
	PackQty      float64 `json:"pack_qty" jsonschema_description:"what it sells in (sheets a pack, metres a roll); 0: any quantity"`
}

// PurchaseOrderPayload is the payload of the purchase_order.* events.
type PurchaseOrderPayload struct {
	PurchaseOrderID int64               `json:"purchase_order_id" jsonschema_description:"the purchase order"`
	SupplierID      int64               `json:"supplier_id" jsonschema_description:"its supplier"`
	Status          string              `json:"status" jsonschema:"enum=draft,enum=ordered,enum=partially_received,enum=received,enum=cancelled" jsonschema_description:"its state after the change"`
	Lines           []PurchaseOrderLine `json:"lines" jsonschema_description:"its lines after the change"`
	Reason          string              `json:"reason,omitempty" jsonschema_description:"purchase_order.cancelled: why"`
	DocumentID      *int64              `json:"document_id,omitempty" jsonschema_description:"purchase_order.received: the stock receipt"`
	Received        []PurchaseReceipt   `json:"received,omitempty" jsonschema_description:"purchase_order.received: what the delivery brought per line"`
}

// PurchaseOrderLine is a line of a purchase order.
type PurchaseOrderLine struct {
	LineID     int64   `json:"line_id" jsonschema_description:"the line"`
	Code       string  `json:"code" jsonschema_description:"the material's code"`
	Qty        float64 `json:"qty" jsonschema_description:"ordered, in the material's unit"`
	Received   float64 `json:"received" jsonschema_description:"received of it so far"`
	ExpectedOn string  `json:"expected_on" jsonschema:"format=date" jsonschema_description:"when it is expected"`
}

// PurchaseReceipt is what one delivery brought of a purchase order's line.
type PurchaseReceipt struct {
	LineID     int64   `json:"line_id" jsonschema_description:"the line"`
	Code       string  `json:"code" jsonschema_description:"the material's code"`
	Qty        float64 `json:"qty" jsonschema_description:"received with this delivery"`
	OverReason string  `json:"over_reason,omitempty" jsonschema_description:"why more than was still due was taken"`
}
