package stock

import (
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
)

// RegisterEvents declares the stock module's event types. Stock runs no
// subscriber: the modules whose facts move stock book them in their own
// transactions (BookTx), so that stock is never behind what happened.
func (s *Service) RegisterEvents(r *events.Registrar) {
	r.Declare(contracts.StockReceived, contracts.StockCounted, contracts.StockReserved, contracts.StockConsumed, contracts.StockReleased,
		contracts.StockWrittenOff)
}
