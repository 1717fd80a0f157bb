package catalog

import (
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
)

// RegisterEvents declares the catalog module's event types
// (internal/contracts, catalog.go); it subscribes to none.
func (s *Service) RegisterEvents(r *events.Registrar) {
	r.Declare(contracts.WorkCenterCreated, contracts.WorkCenterUpdated, contracts.RouteCreated, contracts.RouteUpdated,
		contracts.ProductCreated, contracts.ProductUpdated, contracts.MaterialCreated, contracts.MaterialUpdated)
}

func workCenterPayload(wc WorkCenter) contracts.WorkCenterPayload {
	return contracts.WorkCenterPayload{WorkCenterID: wc.ID, Code: wc.Code, Name: wc.Name, CapacityMinPerDay: wc.CapacityMinPerDay, ShiftStart: wc.ShiftStart,
		Weekdays: append([]int{}, wc.Calendar.Weekdays...), Holidays: append([]string{}, wc.Calendar.Holidays...)}
}

func routePayload(r Route) contracts.RoutePayload {
	part, item := r.OpsByScope()
	return contracts.RoutePayload{RouteID: r.ID, Name: r.Name, Kind: r.Kind, Operations: len(r.Operations),
		PartOperations: part, ItemOperations: item}
}

func productPayload(p Product) contracts.ProductPayload {
	return contracts.ProductPayload{ProductID: p.ID, SKU: p.SKU, Name: p.Name, Kind: p.Kind, RouteID: p.RouteID,
		Parts: len(p.Parts), PartsPerUnit: p.PartsPerUnit()}
}
