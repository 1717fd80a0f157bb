package contracts

import "github.com/tsekh/tsekh/internal/events"

// The plan module's event types, about production orders.
var (
	ProdOrderLaunched = events.Declare[ProdOrderLaunchedPayload]("prod_order.launched", "plan", "plan_prod_orders",
		"A production order was launched for sales-order items along a route, exploded into parts and operations, with its ETA.")
	ProdOrderStarted = events.Declare[ProdOrderPayload]("prod_order.started", "plan", "plan_prod_orders",
		"The first operation of a production order was started: the order is in progress.")
	ProdOrderCompleted = events.Declare[ProdOrderPayload]("prod_order.completed", "plan", "plan_prod_orders",
		"The last operation of a production order was completed: its items are made.")
	ProdOrderCancelled = events.Declare[ProdOrderPayload]("prod_order.cancelled", "plan", "plan_prod_orders",
		"A production order was cancelled before any work started; its items are back in the planning backlog.")
)

// ProdOrderLaunchedPayload is the payload of prod_order.launched, as the
// old system wrote it.
type ProdOrderLaunchedPayload struct {
	ProdOrderID int64   `json:"prod_order_id" jsonschema_description:"the production order"`
	Items       []int64 `json:"items" jsonschema_description:"the sales-order items it makes"`
	Route       string  `json:"route" jsonschema_description:"the route's name"`
	PartsCount  int     `json:"parts_count" jsonschema_description:"physical parts: the sum of part qty × item qty"`
	OpsCount    int     `json:"ops_count" jsonschema_description:"parts_count × part-scope operations + units × item-scope operations"`
	ETA         string  `json:"eta" jsonschema:"format=date" jsonschema_description:"the day the last operation is planned to end"`
}

// ProdOrderPayload is the payload of prod_order.started, .completed and
// .cancelled.
type ProdOrderPayload struct {
	ProdOrderID int64   `json:"prod_order_id" jsonschema_description:"the production order"`
	Items       []int64 `json:"items" jsonschema_description:"the sales-order items it makes"`
}
