package contracts

import "github.com/tsekh/tsekh/internal/events"

// The sales module's event types that keep the shop in step with its orders
// and the office told of what it refused.
var (
	OrderReady = events.Declare[OrderReadyPayload]("order.ready", "sales", "sales_orders",
		"Everything left to ship of a sales order is made: written when the order becomes ready, and again when the rest of a partially shipped order is made.")
	OrderItemsWrittenOff = events.Declare[OrderItemsWrittenOffPayload]("order.items_written_off", "sales", "sales_orders",
		"Units of a sales order's items will not be made: their production order was closed short with the rest written off, for the planner's reason.")
	OrderShopConflict = events.Declare[OrderShopConflictPayload]("order.shop_conflict", "sales", "sales_orders",
		"A shop delivery built on an older tsekh version changed fields the office had changed since; with SHOP_CONFLICTS=shop the rest was applied (order.changed) and the order flagged for a manager, the office's values kept.")

	IntakeRejected = events.Declare[IntakeRejectedPayload]("intake.rejected", "sales", "sales_intake_rejections",
		"An authentic shop delivery or a CRM row was refused for its content (unknown SKU, items in production, a conflict, invalid fields) and kept in the intake inbox, with every reason; also when a retry or a later delivery is refused again.")
	IntakeResolved = events.Declare[IntakeResolvedPayload]("intake.resolved", "sales", "sales_intake_rejections",
		"A kept rejection was applied: by a manager's retry or by a later delivery of the same order; it names the order.")
	IntakeDismissed = events.Declare[IntakeDismissedPayload]("intake.dismissed", "sales", "sales_intake_rejections",
		"A manager dismissed a kept rejection, with a reason.")
	IntakeEdited = events.Declare[IntakeEditedPayload]("intake.edited", "sales", "sales_intake_rejections",
		"A manager corrected the body a kept rejection holds (a SKU, a decor, a quantity, the customer's contacts) before applying it; the event's actor is who, its changes what.")
)

// IntakeEditedPayload is the payload of intake.edited.
type IntakeEditedPayload struct {
	RejectionID int64        `json:"rejection_id" jsonschema_description:"the kept rejection"`
	Source      string       `json:"source" jsonschema:"enum=shop,enum=crm" jsonschema_description:"the shop's webhook or the CRM import"`
	SyncID      *string      `json:"sync_id,omitempty" jsonschema_description:"shop: \"shop-\" + the shop's order id"`
	CRMOrderID  *CRMOrderID  `json:"crm_order_id,omitempty" jsonschema:"minLength=1,maxLength=64" jsonschema_description:"CRM: the row's order id"`
	Changes     []BodyChange `json:"changes" jsonschema_description:"every value of the body that changed, by its path"`
}

// BodyChange is one value of a kept body changed by a manager.
type BodyChange struct {
	Field  string `json:"field" jsonschema_description:"the value's path in the body: customer.phone, items[0].sku, items[1].options.корпус"`
	Before string `json:"before" jsonschema_description:"its value before, as JSON text (a string without its quotes); empty when it was not there"`
	After  string `json:"after" jsonschema_description:"its value after, likewise; empty when it is gone"`
}

// ItemQty is a quantity of one item of a sales order.
type ItemQty struct {
	ItemID int64  `json:"item_id" jsonschema_description:"the sales-order item"`
	SKU    string `json:"sku" jsonschema_description:"the product's SKU"`
	Qty    int    `json:"qty" jsonschema:"minimum=0" jsonschema_description:"units"`
}

// OrderReadyPayload is the payload of order.ready.
type OrderReadyPayload struct {
	OrderID int64     `json:"order_id" jsonschema_description:"the sales order"`
	SyncID  *string   `json:"sync_id,omitempty" jsonschema_description:"shop orders: \"shop-\" + the shop's order id"`
	Status  string    `json:"status" jsonschema:"enum=ready,enum=partially_shipped" jsonschema_description:"the order's state: ready, or partially_shipped when part of it has left already"`
	Partial bool      `json:"partial" jsonschema_description:"true when part of the order has shipped before: the rest is ready"`
	Items   []ItemQty `json:"items" jsonschema_description:"what is left to ship, made, per item"`
	Version int64     `json:"version" jsonschema_description:"the order's tsekh version after the event"`
	ETA     string    `json:"eta,omitempty" jsonschema:"format=date" jsonschema_description:"the latest ETA of the order's launched items, once any is launched"`
}

// OrderItemsWrittenOffPayload is the payload of order.items_written_off.
type OrderItemsWrittenOffPayload struct {
	OrderID     int64     `json:"order_id" jsonschema_description:"the sales order"`
	SyncID      *string   `json:"sync_id,omitempty" jsonschema_description:"shop orders: \"shop-\" + the shop's order id"`
	Status      string    `json:"status" jsonschema:"enum=received,enum=in_production,enum=ready,enum=partially_shipped,enum=shipped,enum=cancelled" jsonschema_description:"the order's state after the write-off"`
	ProdOrderID int64     `json:"prod_order_id" jsonschema_description:"the production order closed short"`
	Reason      string    `json:"reason" jsonschema_description:"why the planner closed it"`
	Items       []ItemQty `json:"items" jsonschema_description:"the units written off now, per item"`
	Version     int64     `json:"version" jsonschema_description:"the order's tsekh version after the event"`
	ETA         string    `json:"eta,omitempty" jsonschema:"format=date" jsonschema_description:"the latest ETA of the order's launched items, once any is launched"`
}

// OrderShopConflictPayload is the payload of order.shop_conflict.
type OrderShopConflictPayload struct {
	OrderID       int64             `json:"order_id" jsonschema_description:"the sales order"`
	SyncID        *string           `json:"sync_id,omitempty" jsonschema_description:"\"shop-\" + the shop's order id"`
	Status        string            `json:"status" jsonschema:"enum=received,enum=in_production,enum=ready,enum=partially_shipped,enum=shipped,enum=cancelled" jsonschema_description:"the order's state"`
	TsekhVersion  int64             `json:"tsekh_version" jsonschema:"minimum=0" jsonschema_description:"the tsekh version the delivery was built on (0: none sent)"`
	ShopVersion   *int64            `json:"shop_version,omitempty" jsonschema_description:"the delivery's own version, when sent"`
	ShopUpdatedAt string            `json:"shop_updated_at,omitempty" jsonschema_description:"the delivery's updated_at, as sent"`
	Fields        []RejectionReason `json:"fields" jsonschema_description:"the fields the delivery would have changed that the office changed since: kept as the office set them"`
	Version       int64             `json:"version" jsonschema_description:"the order's tsekh version after the event"`
	ETA           string            `json:"eta,omitempty" jsonschema:"format=date" jsonschema_description:"the latest ETA of the order's launched items, once any is launched"`
}

// RejectionReason is one reason a delivery or row was refused: the field at
// fault (as the delivery names it, e.g. items[1].sku; empty for the whole)
// and what is wrong with it.
type RejectionReason struct {
	Field   string `json:"field" jsonschema_description:"the field at fault, as the delivery names it (items[1].sku); empty for the delivery as a whole"`
	Message string `json:"message" jsonschema_description:"what is wrong"`
}

// IntakeRejectedPayload is the payload of intake.rejected.
type IntakeRejectedPayload struct {
	RejectionID int64             `json:"rejection_id" jsonschema_description:"the kept rejection"`
	Source      string            `json:"source" jsonschema:"enum=shop,enum=crm" jsonschema_description:"the shop's webhook or the CRM import"`
	SyncID      *string           `json:"sync_id,omitempty" jsonschema_description:"shop: \"shop-\" + the shop's order id"`
	CRMOrderID  *CRMOrderID       `json:"crm_order_id,omitempty" jsonschema:"minLength=1,maxLength=64" jsonschema_description:"CRM: the row's order id, text (a whole number in events written before ids were text)"`
	Kinds       []string          `json:"kinds" jsonschema:"enum=unknown_sku,enum=unknown_decor,enum=in_production,enum=conflict,enum=invalid" jsonschema_description:"the kinds of reason"`
	Reasons     []RejectionReason `json:"reasons" jsonschema_description:"every reason, at once"`
	Detail      string            `json:"detail" jsonschema_description:"the refusal as the sender was told"`
	By          string            `json:"by" jsonschema:"enum=delivery,enum=retry" jsonschema_description:"delivery: the shop or the CRM sent it; retry: a manager's retry was refused again"`
	Deliveries  int               `json:"deliveries" jsonschema:"minimum=1" jsonschema_description:"how many refused deliveries of it the rejection has seen"`
}

// IntakeResolvedPayload is the payload of intake.resolved.
type IntakeResolvedPayload struct {
	RejectionID int64  `json:"rejection_id" jsonschema_description:"the kept rejection"`
	Source      string `json:"source" jsonschema:"enum=shop,enum=crm" jsonschema_description:"the shop's webhook or the CRM import"`
	OrderID     int64  `json:"order_id" jsonschema_description:"the sales order it made or found"`
	Outcome     string `json:"outcome" jsonschema:"enum=created,enum=repeated,enum=changed,enum=stale" jsonschema_description:"what became of the delivery: a new order, the order as it was, a change, or older than what was applied"`
	By          string `json:"by" jsonschema:"enum=retry,enum=delivery" jsonschema_description:"retry: a manager's retry; delivery: a later delivery of the same order"`
}

// IntakeDismissedPayload is the payload of intake.dismissed.
type IntakeDismissedPayload struct {
	RejectionID int64  `json:"rejection_id" jsonschema_description:"the kept rejection"`
	Source      string `json:"source" jsonschema:"enum=shop,enum=crm" jsonschema_description:"the shop's webhook or the CRM import"`
	Reason      string `json:"reason" jsonschema_description:"why the manager dismissed it"`
}

// OrderAttentionCleared is written when a manager has looked at an order
// flagged by a merged shop delivery.
var OrderAttentionCleared = events.Declare[OrderAttentionClearedPayload]("order.attention_cleared", "sales", "sales_orders",
	"A manager cleared an order's attention note (a shop delivery merged around the office's changes), having looked at it.")

// OrderAttentionClearedPayload is the payload of order.attention_cleared.
type OrderAttentionClearedPayload struct {
	OrderID   int64  `json:"order_id" jsonschema_description:"the sales order"`
	Attention string `json:"attention" jsonschema_description:"the note cleared"`
	Version   int64  `json:"version" jsonschema_description:"the order's tsekh version, unchanged by clearing the note (the shop is not told of it)"`
}
