package contracts

import "github.com/tsekh/tsekh/internal/events"

// The plan module's event types, about production orders.
var (
	ProdOrderLaunched = events.Declare[ProdOrderLaunchedPayload]("prod_order.launched", "plan", "plan_prod_orders",
		"A production order was launched for sales-order items along a route, exploded into parts and operations, with its ETA.")
	ProdOrderStarted = events.Declare[ProdOrderPayload]("prod_order.started", "floor", "plan_prod_orders",
		"The first operation of a production order was started: the order is in progress.")
	ProdOrderCompleted = events.Declare[ProdOrderPayload]("prod_order.completed", "floor", "plan_prod_orders",
		"The last operation of a production order was completed: its items are made.")
	ProdOrderCancelled = events.Declare[ProdOrderPayload]("prod_order.cancelled", "plan", "plan_prod_orders",
		"A production order was cancelled before any work started; its items are back in the planning backlog (unless their sales order was cancelled).")
	ProdOrderItemsReleased = events.Declare[ProdOrderItemsReleasedPayload]("prod_order.items_released", "plan", "plan_prod_orders",
		"Items of a cancelled sales order left a production order on which no work had started; its other items stay, with its parts and operations counts, ETA and what it still needs of each material recomputed.")
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
	// Materials are what it needed of the materials catalogue, as events
	// written before stock booked a launch's needs in the launch's own
	// transaction said; stock.reserved says it now.
	Materials []MaterialNeed `json:"materials,omitempty" jsonschema_description:"absent: stock.reserved, written in the launch's transaction, says what it needs of each material; events of older versions carried it here"`
	// CarriedUnits and CarriedParts are what it took over from production
	// orders closed short (their done steps are not done again, and not in
	// ops_count).
	CarriedUnits int `json:"carried_units,omitempty" jsonschema:"minimum=0" jsonschema_description:"units not made of orders closed short whose parts it took over"`
	CarriedParts int `json:"carried_parts,omitempty" jsonschema:"minimum=0" jsonschema_description:"their parts it took over, with the steps done on them"`
}

// MaterialNeed is what a production order needs of one material: boards in
// whole sheets (estimated from the parts' area and the board's usable
// format), edge bands in metres, fittings in pieces; used up as the route
// step Step is reported done (Total parts or units in all).
type MaterialNeed struct {
	Code  string  `json:"code" jsonschema_description:"the material's code"`
	Kind  string  `json:"kind" jsonschema:"enum=board,enum=band,enum=fitting"`
	Qty   float64 `json:"qty" jsonschema:"minimum=0" jsonschema_description:"sheets, metres or pieces"`
	Step  int     `json:"step" jsonschema_description:"the route step that uses it up: cutting (the first part step) for boards, banding (the second) for bands, assembly (the first item step) for fittings"`
	Total int     `json:"total" jsonschema:"minimum=0" jsonschema_description:"the parts (or units) that step is done on"`
}

// ProdOrderPayload is the payload of prod_order.started, .completed and
// .cancelled.
type ProdOrderPayload struct {
	ProdOrderID int64   `json:"prod_order_id" jsonschema_description:"the production order"`
	Items       []int64 `json:"items" jsonschema_description:"the sales-order items it makes"`
}

// ProdOrderProgressReported is written for every report of the shop floor in
// quantities (POST /api/v1/production-orders/{id}/progress).
var ProdOrderProgressReported = events.Declare[ProdOrderProgressPayload]("prod_order.progress_reported", "floor", "plan_prod_orders",
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
	// SheetCut: the parts were cut as a cutting plan's sheet, which uses
	// up its board (cutting_plan.sheet_cut); stock consumes no board by
	// the area estimate for this report.
	SheetCut bool `json:"sheet_cut,omitempty" jsonschema_description:"the parts were cut as a cutting plan's sheet, which itself uses up the board (cutting_plan.sheet_cut)"`
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
	// Materials are what it still needs of each material (absent: stock
	// books it in the same transaction, stock.released), counted as its
	// launch counted them (prod_order.launched): what its reservations
	// come down to. Absent (nil) from events written before it was; an
	// empty list when it needs nothing.
	Materials *[]MaterialNeed `json:"materials,omitempty" jsonschema_description:"what it still needs of each material, and the route step that uses it up, counted as at launch (absent from events written before it was)"`
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
var ProdOrderClosed = events.Declare[ProdOrderClosedPayload]("prod_order.closed", "floor", "plan_prod_orders",
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
	// MadeReported is how many of Made unit.made has reported already:
	// sales adds only the rest (absent in events written before unit.made).
	MadeReported int `json:"made_reported,omitempty" jsonschema:"minimum=0" jsonschema_description:"of made, the units unit.made reported already (sales counted them then)"`
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

// ProdOrderPriorityChanged is written when a planner changes a production
// order's priority (PATCH /api/v1/production-orders/{id}); the re-plan that
// gives it its new place is journalled beside it as plan.replanned.
var ProdOrderPriorityChanged = events.Declare[ProdOrderPriorityChangedPayload]("prod_order.priority_changed", "plan", "plan_prod_orders",
	"A planner changed a production order's priority (higher first); the plan was re-planned at once for it to take its new place (plan.replanned, reason priority).")

// ProdOrderPriorityChangedPayload is the payload of prod_order.priority_changed.
type ProdOrderPriorityChangedPayload struct {
	ProdOrderID      int64   `json:"prod_order_id" jsonschema_description:"the production order"`
	Items            []int64 `json:"items" jsonschema_description:"the sales-order items it makes"`
	Priority         int     `json:"priority" jsonschema:"minimum=-100,maximum=100" jsonschema_description:"its priority now: higher first"`
	PreviousPriority int     `json:"previous_priority" jsonschema:"minimum=-100,maximum=100" jsonschema_description:"its priority before"`
}

// OperationStarted and OperationCompleted are written for each operation the
// shop floor starts or completes on its own (POST
// /api/v1/production-orders/{id}/operations/{op_id}/start and /complete),
// beside the production order's prod_order.started and .completed when it
// is its first or last.
var (
	OperationStarted = events.Declare[OperationPayload]("operation.started", "floor", "plan_prod_orders",
		"The shop floor started one operation of a production order: a route step on one physical part (part scope) or on one unit (item scope).")
	OperationCompleted = events.Declare[OperationPayload]("operation.completed", "floor", "plan_prod_orders",
		"The shop floor completed one operation of a production order: a route step on one physical part (part scope) or on one unit (item scope).")
)

// OperationPayload is the payload of operation.started and .completed.
type OperationPayload struct {
	ProdOrderID  int64  `json:"prod_order_id" jsonschema_description:"the production order"`
	OperationID  int64  `json:"operation_id" jsonschema_description:"the operation"`
	Seq          int    `json:"seq" jsonschema_description:"the route step"`
	Operation    string `json:"operation" jsonschema_description:"the step's name"`
	Scope        string `json:"scope" jsonschema:"enum=part,enum=item" jsonschema_description:"part: done on one physical part; item: on one unit"`
	WorkCenterID int64  `json:"work_center_id" jsonschema_description:"the work centre it is done on"`
	ItemID       int64  `json:"item_id" jsonschema_description:"the sales-order item"`
	Unit         int    `json:"unit" jsonschema:"minimum=1" jsonschema_description:"which unit of the item (1 to its quantity)"`
	PartID       *int64 `json:"part_id,omitempty" jsonschema_description:"the physical part, for a part-scope step"`
	Part         string `json:"part,omitempty" jsonschema_description:"the part's name, for a part-scope step"`
	Code         string `json:"code,omitempty" jsonschema_description:"the code of the part (part scope) or of the unit (item scope), as its label carries it"`
}

// PlanReplanned is written once for every re-plan, also when nothing
// moved: POST /api/v1/plan/replan, and the re-plans a change of priority,
// a purchase order and a work centre's new hours make. It is about the re-plan itself (plan_replans), which
// belongs to no one production order.
var PlanReplanned = events.Declare[PlanReplannedPayload]("plan.replanned", "plan", "plan_replans",
	"The unfinished production orders were placed again from a moment, in priority and launch order, on the work centres' capacity, shifts and calendars and what the shop floor had done; lists every order whose ETA or planned ETA moved (none, when nothing did). Orders whose promised ETA moved also get prod_order.rescheduled.")

// Why a re-plan ran.
const (
	ReplanRequested = "replan"    // POST /api/v1/plan/replan
	ReplanPriority  = "priority"  // a production order's priority changed
	ReplanMaterials = "materials" // a purchase order was sent, received or cancelled: materials come at other dates
	ReplanCapacity  = "capacity"  // a work centre's capacity, shift or calendar changed
)

// PlanReplannedPayload is the payload of plan.replanned.
type PlanReplannedPayload struct {
	ReplanID    int64         `json:"replan_id" jsonschema_description:"the re-plan"`
	Reason      string        `json:"reason" jsonschema:"enum=replan,enum=priority,enum=materials,enum=capacity" jsonschema_description:"replan: asked for (POST /api/v1/plan/replan); priority: a production order's priority changed; materials: a purchase order was sent, received or cancelled (the plan.materials subscriber); capacity: a work centre's capacity, shift or calendar changed (the plan.capacity subscriber)"`
	ProdOrderID int64         `json:"prod_order_id,omitempty" jsonschema_description:"the production order whose priority changed, for reason priority"`
	From        string        `json:"from" jsonschema:"format=date-time" jsonschema_description:"the moment it planned from, in the factory's time zone"`
	Replanned   int           `json:"replanned" jsonschema:"minimum=0" jsonschema_description:"the unfinished production orders placed again"`
	Moved       []ReplanMoved `json:"moved" jsonschema_description:"those whose ETA or planned ETA moved, in plan order"`
}

// ReplanMoved is a production order a re-plan moved.
type ReplanMoved struct {
	ProdOrderID      int64  `json:"prod_order_id" jsonschema_description:"the production order"`
	ETABefore        string `json:"eta_before" jsonschema:"format=date" jsonschema_description:"its promised ETA before"`
	ETAAfter         string `json:"eta_after" jsonschema:"format=date" jsonschema_description:"its promised ETA now (kept when a planner gave it)"`
	PlannedETABefore string `json:"planned_eta_before" jsonschema:"format=date" jsonschema_description:"the day its last operation was planned to end"`
	PlannedETAAfter  string `json:"planned_eta_after" jsonschema:"format=date" jsonschema_description:"the day its last operation is now planned to end"`
}

// The shop floor by physical part: a unit made, a part scrapped with its
// reason, and the part cut again in its place. Each is about the production
// order (plan_prod_orders), so that it reaches subscribers in order with
// the order's other events.
var (
	UnitMade = events.Declare[UnitMadePayload]("unit.made", "floor", "plan_prod_orders",
		"Every operation of one unit of a sales-order item was done: the unit is made, whatever the rest of its production order does; sales count it for the item at once (made_qty), so that it can ship.")
	PartScrapped = events.Declare[PartScrappedPayload]("part.scrapped", "floor", "plan_prod_orders",
		"The shop floor scrapped one physical part, named by its code, at a route step, with a reason of the factory's list and free text; the part is kept, scrapped, and a re-cut takes its place (part.recut).")
	PartRecut = events.Declare[PartRecutPayload]("part.recut", "floor", "plan_prod_orders",
		"A part was created to be cut again in place of a scrapped one: a new code, linked to the old, through every part-scope step of the route again; it is on the saw's re-cut list and in the next cutting list.")
)

// UnitMadePayload is the payload of unit.made.
type UnitMadePayload struct {
	ProdOrderID int64  `json:"prod_order_id" jsonschema_description:"the production order"`
	ItemID      int64  `json:"item_id" jsonschema_description:"the sales-order item"`
	OrderID     int64  `json:"order_id" jsonschema_description:"its sales order"`
	SKU         string `json:"sku" jsonschema_description:"the item's SKU"`
	Unit        int    `json:"unit" jsonschema:"minimum=1" jsonschema_description:"which unit of the item (1 to its quantity)"`
	Code        string `json:"code" jsonschema_description:"the unit's code"`
	Made        int    `json:"made" jsonschema:"minimum=1" jsonschema_description:"the item's units made in this production order, this one included"`
}

// PartScrappedPayload is the payload of part.scrapped.
type PartScrappedPayload struct {
	ProdOrderID int64  `json:"prod_order_id" jsonschema_description:"the production order"`
	PartID      int64  `json:"part_id" jsonschema_description:"the scrapped part"`
	Code        string `json:"code" jsonschema_description:"its code"`
	Part        string `json:"part" jsonschema_description:"its name"`
	ItemID      int64  `json:"item_id" jsonschema_description:"the sales-order item"`
	Unit        int    `json:"unit" jsonschema:"minimum=1" jsonschema_description:"which unit of the item"`
	Seq         int    `json:"seq" jsonschema_description:"the route step it was spoilt at"`
	Operation   string `json:"operation" jsonschema_description:"the step's name"`
	Reason      string `json:"reason" jsonschema_description:"one of the factory's scrap reasons (FLOOR_SCRAP_REASONS)"`
	Note        string `json:"note,omitempty" jsonschema_description:"free text"`
	RecutID     int64  `json:"recut_id" jsonschema_description:"the part cut again in its place"`
	RecutCode   string `json:"recut_code" jsonschema_description:"the re-cut's code"`
}

// PartRecutPayload is the payload of part.recut.
type PartRecutPayload struct {
	ProdOrderID int64  `json:"prod_order_id" jsonschema_description:"the production order"`
	PartID      int64  `json:"part_id" jsonschema_description:"the new part"`
	Code        string `json:"code" jsonschema_description:"its code"`
	RecutOf     int64  `json:"recut_of" jsonschema_description:"the scrapped part it replaces"`
	RecutOfCode string `json:"recut_of_code" jsonschema_description:"that part's code"`
	Part        string `json:"part" jsonschema_description:"its name"`
	Material    string `json:"material" jsonschema_description:"the board it is cut from"`
	ThicknessMM int    `json:"thickness_mm" jsonschema_description:"the board's thickness"`
	LengthMM    int    `json:"length_mm" jsonschema_description:"its length"`
	WidthMM     int    `json:"width_mm" jsonschema_description:"its width"`
	Operations  int    `json:"operations" jsonschema:"minimum=0" jsonschema_description:"the operations it has to go through"`
}
