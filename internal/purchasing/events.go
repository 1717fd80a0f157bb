package purchasing

import (
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
)

// RegisterEvents declares the purchasing module's event types
// (internal/contracts, purchasing.go); it subscribes to none.
func (s *Service) RegisterEvents(r *events.Registrar) {
	r.Declare(contracts.SupplierCreated, contracts.SupplierUpdated, contracts.PurchaseOrderCreated, contracts.PurchaseOrderChanged,
		contracts.PurchaseOrderOrdered, contracts.PurchaseOrderReceived, contracts.PurchaseOrderCancelled)
}
