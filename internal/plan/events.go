package plan

import "github.com/tsekh/tsekh/internal/events"

// Event types of the plan module.
const (
	EventProdOrderLaunched  = "prod_order.launched"
	EventProdOrderStarted   = "prod_order.started"
	EventProdOrderCompleted = "prod_order.completed"
	EventProdOrderCancelled = "prod_order.cancelled"
)

// AggregateType is the table production-order events are about.
const AggregateType = "plan_prod_orders"

// EventTypes describes the plan module's events.
func EventTypes() []events.Type {
	ids := map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "description": "sales-order item ids"}
	idsOnly := map[string]any{"type": "object", "required": []string{"prod_order_id", "items"}, "properties": map[string]any{
		"prod_order_id": map[string]any{"type": "integer"}, "items": ids}}
	return []events.Type{
		{Type: EventProdOrderLaunched, Owner: "plan", AggregateType: AggregateType,
			Description: "A production order was launched for sales-order items along a route, exploded into parts and operations, with its ETA.",
			Schema: map[string]any{"type": "object", "required": []string{"prod_order_id", "items", "route", "parts_count", "ops_count", "eta"},
				"properties": map[string]any{
					"prod_order_id": map[string]any{"type": "integer"},
					"items":         ids,
					"route":         map[string]any{"type": "string", "description": "the route's name"},
					"parts_count":   map[string]any{"type": "integer", "description": "physical parts: Σ part qty × item qty"},
					"ops_count":     map[string]any{"type": "integer", "description": "parts_count × part-scope operations + units × item-scope operations"},
					"eta":           map[string]any{"type": "string", "format": "date"},
				}}},
		{Type: EventProdOrderStarted, Owner: "plan", AggregateType: AggregateType,
			Description: "The first operation of a production order was started: the order is in progress.", Schema: idsOnly},
		{Type: EventProdOrderCompleted, Owner: "plan", AggregateType: AggregateType,
			Description: "The last operation of a production order was completed: its items are made.", Schema: idsOnly},
		{Type: EventProdOrderCancelled, Owner: "plan", AggregateType: AggregateType,
			Description: "A production order was cancelled before any work started; its items are back in the planning backlog.", Schema: idsOnly},
	}
}
