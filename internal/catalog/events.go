package catalog

import "github.com/tsekh/tsekh/internal/events"

// Event types of the catalog module.
const (
	EventWorkCenterCreated = "work_center.created"
	EventWorkCenterUpdated = "work_center.updated"
	EventRouteCreated      = "route.created"
	EventRouteUpdated      = "route.updated"
	EventProductCreated    = "product.created"
	EventProductUpdated    = "product.updated"
)

// EventTypes describes the catalog module's events.
func EventTypes() []events.Type {
	obj := func(idField string) map[string]any {
		return map[string]any{"type": "object", "required": []string{idField, "name"}, "properties": map[string]any{
			idField: map[string]any{"type": "integer"}, "name": map[string]any{"type": "string"}}}
	}
	return []events.Type{
		{Type: EventWorkCenterCreated, Owner: "catalog", AggregateType: "catalog_work_centers", Description: "A work centre was created.", Schema: obj("work_center_id")},
		{Type: EventWorkCenterUpdated, Owner: "catalog", AggregateType: "catalog_work_centers", Description: "A work centre's capacity, calendar or name changed.", Schema: obj("work_center_id")},
		{Type: EventRouteCreated, Owner: "catalog", AggregateType: "catalog_routes", Description: "A route template was created.", Schema: obj("route_id")},
		{Type: EventRouteUpdated, Owner: "catalog", AggregateType: "catalog_routes", Description: "A route template's operations changed.", Schema: obj("route_id")},
		{Type: EventProductCreated, Owner: "catalog", AggregateType: "catalog_products", Description: "A product was created.", Schema: obj("product_id")},
		{Type: EventProductUpdated, Owner: "catalog", AggregateType: "catalog_products", Description: "A product's route or parts changed.", Schema: obj("product_id")},
	}
}
