// Package floor is the shop floor: what happens to the physical parts and
// units of the production orders the plan launches. Scans through route
// steps, quantity reports, operations started and completed, scrap and the
// re-cuts that replace it, sheets of cutting plans reported cut, units
// made, and production orders closed short with nothing made lost. Every
// way of reporting work goes through one function that completes
// operations and writes their events (complete.go).
//
// The parts, units and operations are the plan's tables (plan_parts,
// plan_units, plan_operations), built by a launch; the floor moves their
// state. It reads and writes the production order through package plan's
// functions, and books what its work physically uses in stock, in the
// same transaction as the work.
package floor

import (
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/stock"
)

// Service runs the shop floor.
type Service struct {
	db *gorm.DB
	// stock books what the floor's work physically uses.
	stock *stock.Service
	// scrapReasons are the reasons the factory keeps for scrap (FLOOR_SCRAP_REASONS).
	scrapReasons []ScrapReason
}

// NewService returns the shop floor's service over db, booking what its
// work uses in st.
func NewService(db *gorm.DB, st *stock.Service) *Service { return &Service{db: db, stock: st} }
