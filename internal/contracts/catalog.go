package contracts

import "github.com/tsekh/tsekh/internal/events"

// The catalog module's event types, about work centres, route templates and
// products.
var (
	WorkCenterCreated = events.Declare[WorkCenterPayload]("work_center.created", "catalog", "catalog_work_centers",
		"A work centre was created.")
	WorkCenterUpdated = events.Declare[WorkCenterPayload]("work_center.updated", "catalog", "catalog_work_centers",
		"A work centre's capacity, calendar or name changed.")
	RouteCreated = events.Declare[RoutePayload]("route.created", "catalog", "catalog_routes",
		"A route template was created.")
	RouteUpdated = events.Declare[RoutePayload]("route.updated", "catalog", "catalog_routes",
		"A route template's operations changed.")
	ProductCreated = events.Declare[ProductPayload]("product.created", "catalog", "catalog_products",
		"A product was created.")
	ProductUpdated = events.Declare[ProductPayload]("product.updated", "catalog", "catalog_products",
		"A product's route or parts changed.")
)

// WorkCenterPayload is the payload of work_center.created and .updated: the
// work centre as it now is.
type WorkCenterPayload struct {
	WorkCenterID      int64    `json:"work_center_id" jsonschema_description:"the work centre"`
	Code              string   `json:"code"`
	Name              string   `json:"name"`
	CapacityMinPerDay int      `json:"capacity_min_per_day" jsonschema_description:"working minutes per day"`
	ShiftStart        string   `json:"shift_start,omitempty" jsonschema:"pattern=^([01][0-9]|2[0-3]):[0-5][0-9]$" jsonschema_description:"when its day's capacity starts, HH:MM in the factory's time zone"`
	Weekdays          []int    `json:"weekdays" jsonschema_description:"its working ISO weekdays, 1 = Monday … 7 = Sunday"`
	Holidays          []string `json:"holidays" jsonschema:"format=date" jsonschema_description:"its days off"`
}

// RoutePayload is the payload of route.created and .updated.
type RoutePayload struct {
	RouteID        int64  `json:"route_id" jsonschema_description:"the route template"`
	Name           string `json:"name"`
	Kind           string `json:"kind" jsonschema:"enum=case,enum=upholstered" jsonschema_description:"the kind of product it makes"`
	Operations     int    `json:"operations" jsonschema_description:"the number of its operations"`
	PartOperations int    `json:"part_operations" jsonschema_description:"operations done once per physical part"`
	ItemOperations int    `json:"item_operations" jsonschema_description:"operations done once per unit"`
}

// ProductPayload is the payload of product.created and .updated.
type ProductPayload struct {
	ProductID    int64  `json:"product_id" jsonschema_description:"the product"`
	SKU          string `json:"sku"`
	Name         string `json:"name"`
	Kind         string `json:"kind" jsonschema:"enum=case,enum=upholstered"`
	RouteID      int64  `json:"route_id" jsonschema_description:"its default route"`
	Parts        int    `json:"parts" jsonschema_description:"the lines of its parts specification"`
	PartsPerUnit int    `json:"parts_per_unit" jsonschema_description:"physical parts in one unit"`
}
