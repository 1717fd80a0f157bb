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
		"A production order was cancelled before any work started; its items are back in the planning backlog (unless their sales order was cancelled).")
	ProdOrderItemsReleased = events.Declare[ProdOrderItemsReleasedPayload]("prod_order.items_released", "plan", "plan_prod_orders",
		"Items of a cancelled sales order left a production order on which no work had started; its other items stay, with its parts and operations counts and ETA recomputed.")
	ProdOrderNeedsAttention = events.Declare[ProdOrderNeedsAttentionPayload]("prod_order.needs_attention", "plan", "plan_prod_orders",
		"A production order is flagged for the planner (needs_attention, with the reason) and kept as it is: a sales order was cancelled whose items it makes and work on it had started, or a sales order changed items it makes after they were launched.")
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

// ProdOrderProgressReported is written for every report of the shop floor in
// quantities (POST /api/v1/production-orders/{id}/progress).
var ProdOrderProgressReported = events.Declare[ProdOrderProgressPayload]("prod_order.progress_reported", "plan", "plan_prod_orders",
	"The shop floor reported a quantity of one route step of a production order done, and parts scrapped at it (to be made again from the first step).")

// ProdOrderProgressPayload is the payload of prod_order.progress_reported.
type ProdOrderProgressPayload struct {
	ProdOrderID int64    `json:"prod_order_id" jsonschema_description:"the production order"`
	Items       []int64  `json:"items" jsonschema_description:"the sales-order items it makes"`
	Seq         int      `json:"seq" jsonschema_description:"the route step"`
	Operation   string   `json:"operation" jsonschema_description:"the step's name"`
	Scope       string   `json:"scope" jsonschema:"enum=part,enum=item" jsonschema_description:"part: counted in physical parts; item: in units"`
	Qty         int      `json:"qty" jsonschema:"minimum=0" jsonschema_description:"parts (or units, at an item-scope step) completed by this report"`
	Scrap       int      `json:"scrap" jsonschema:"minimum=0" jsonschema_description:"parts scrapped at the step by this report, to be made again"`
	Minutes     *float64 `json:"minutes,omitempty" jsonschema:"minimum=0" jsonschema_description:"the minutes spent, when reported"`
	Done        int      `json:"done" jsonschema:"minimum=0" jsonschema_description:"the step's parts (or units) done after the report"`
	Total       int      `json:"total" jsonschema:"minimum=0" jsonschema_description:"the step's parts (or units) in all"`
}

// ProdOrderItemsReleasedPayload is the payload of prod_order.items_released.
type ProdOrderItemsReleasedPayload struct {
	ProdOrderID int64   `json:"prod_order_id" jsonschema_description:"the production order"`
	OrderID     int64   `json:"order_id" jsonschema_description:"the cancelled sales order"`
	Items       []int64 `json:"items" jsonschema_description:"the sales-order items that left it"`
	Remaining   []int64 `json:"remaining" jsonschema_description:"the sales-order items it still makes"`
	PartsCount  int     `json:"parts_count" jsonschema_description:"its physical parts now"`
	OpsCount    int     `json:"ops_count" jsonschema_description:"its operations now"`
	ETA         string  `json:"eta" jsonschema:"format=date" jsonschema_description:"its ETA now: the end of its last operation left, unless a planner gave one"`
}

// ProdOrderNeedsAttentionPayload is the payload of prod_order.needs_attention.
type ProdOrderNeedsAttentionPayload struct {
	ProdOrderID int64   `json:"prod_order_id" jsonschema_description:"the production order"`
	OrderID     int64   `json:"order_id" jsonschema_description:"the sales order cancelled or changed"`
	Items       []int64 `json:"items" jsonschema_description:"that order's items in the production order"`
	Status      string  `json:"status" jsonschema:"enum=launched,enum=in_progress,enum=done" jsonschema_description:"the production order's state"`
	Reason      string  `json:"reason" jsonschema_description:"why the planner should look at it"`
}

// ProdOrderClosed is written when a planner closes a production order short
// (POST /api/v1/production-orders/{id}/close).
var ProdOrderClosed = events.Declare[ProdOrderClosedPayload]("prod_order.closed", "plan", "plan_prod_orders",
	"A production order on which work had started was closed short, with a reason: the units made stay made; of each item the rest went back to the planning backlog or was written off, as the planner said (an item of a cancelled sales order is never returned).")

// Ways to deal with what a closed production order leaves unmade.
const (
	RestBacklog  = "backlog"
	RestWriteOff = "write_off"
)

// ProdOrderClosedPayload is the payload of prod_order.closed.
type ProdOrderClosedPayload struct {
	ProdOrderID int64              `json:"prod_order_id" jsonschema_description:"the production order"`
	Items       []int64            `json:"items" jsonschema_description:"the sales-order items it made"`
	Reason      string             `json:"reason" jsonschema_description:"why the planner closed it"`
	Rest        string             `json:"rest" jsonschema:"enum=backlog,enum=write_off" jsonschema_description:"what the planner said to do with the units not made"`
	Quantities  []ClosedQuantities `json:"quantities" jsonschema_description:"per item, what became of its units"`
}

// ClosedQuantities is what became of one item's units when its production
// order was closed: made + returned + written_off = qty.
type ClosedQuantities struct {
	ItemID     int64 `json:"item_id" jsonschema_description:"the sales-order item"`
	OrderID    int64 `json:"order_id" jsonschema_description:"its sales order"`
	Qty        int   `json:"qty" jsonschema:"minimum=1" jsonschema_description:"units the production order was to make"`
	Made       int   `json:"made" jsonschema:"minimum=0" jsonschema_description:"units made: every operation of the unit done"`
	Returned   int   `json:"returned" jsonschema:"minimum=0" jsonschema_description:"units back in the planning backlog, to be launched again"`
	WrittenOff int   `json:"written_off" jsonschema:"minimum=0" jsonschema_description:"units written off: not to be made"`
}

// ProdOrderRescheduled is written when a re-plan moves a production order's
// promised ETA: POST /api/v1/plan/replan, a change of priority, or a launch
// of higher priority that goes ahead of it.
var ProdOrderRescheduled = events.Declare[ProdOrderRescheduledPayload]("prod_order.rescheduled", "plan", "plan_prod_orders",
	"A re-plan moved a production order's ETA (after capacity, calendar, progress or priority changes); sales follow it and the shop hears of it as order.status_changed.")

// ProdOrderRescheduledPayload is the payload of prod_order.rescheduled.
type ProdOrderRescheduledPayload struct {
	ProdOrderID int64   `json:"prod_order_id" jsonschema_description:"the production order"`
	Items       []int64 `json:"items" jsonschema_description:"the sales-order items it makes"`
	ETA         string  `json:"eta" jsonschema:"format=date" jsonschema_description:"its ETA now"`
	PreviousETA string  `json:"previous_eta" jsonschema:"format=date" jsonschema_description:"its ETA before the re-plan"`
	PlannedETA  string  `json:"planned_eta" jsonschema:"format=date" jsonschema_description:"the day its last operation is now planned to end"`
	Priority    int     `json:"priority" jsonschema:"minimum=-100,maximum=100" jsonschema_description:"its priority: higher first"`
}
