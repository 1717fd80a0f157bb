package floor

import (
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
)

// RegisterEvents declares the shop floor's event types (internal/contracts,
// floor.go): work reported on production orders, units made, parts
// scrapped and cut again, orders started, completed and closed short.
func (s *Service) RegisterEvents(r *events.Registrar) {
	r.Declare(contracts.ProdOrderStarted, contracts.ProdOrderCompleted, contracts.ProdOrderProgressReported, contracts.ProdOrderClosed,
		contracts.OperationStarted, contracts.OperationCompleted, contracts.UnitMade, contracts.PartScrapped, contracts.PartRecut)
}
