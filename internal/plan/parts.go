package plan

import (
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
)

// This file is the identity of what the shop floor handles: every physical
// part and every unit has a short printable code from launch, unique in the
// database, that its label carries and a scan names.
//
//	part      P<production order>-<n>     P12-5   (n: 1 to the order's parts)
//	unit      U<production order>-<n>     U12-2   (n: 1 to the order's units)
//	re-cut    <the part's code>.<g>       P12-5.1 (g: its generation of re-cuts)

// MaxCode bounds a code as a client sends it, in characters.
const MaxCode = 40

func partCode(order int64, n int) string { return fmt.Sprintf("P%d-%d", order, n) }
func unitCode(order int64, n int) string { return fmt.Sprintf("U%d-%d", order, n) }

// Unit is one unit of an item in a production order (unit n of its
// quantity), with its code and when it was made: every operation of it
// done.
type Unit struct {
	ID          int64      `json:"-" gorm:"primaryKey"`
	Code        string     `json:"code" example:"U12-1"`
	ProdOrderID int64      `json:"prod_order_id"`
	ItemID      int64      `json:"item_id"`
	Unit        int        `json:"unit"`
	MadeAt      *time.Time `json:"made_at" extensions:"x-nullable" format:"date-time"`
	// ClosedBack: its order was closed short before it was made and it
	// went back to the backlog with its parts; CarriedTo is the production
	// order that took them over.
	ClosedBack bool   `json:"closed_back"`
	CarriedTo  *int64 `json:"carried_to" extensions:"x-nullable"`
}

// TableName is the plan module's unit table.
func (Unit) TableName() string { return "plan_units" }

// createUnits writes the units of a production order being launched, in
// the order their operations come, numbered from 1.
func createUnits(tx *gorm.DB, orderID int64, _ []Part, ops []Operation) error {
	seen := map[unitKey]bool{}
	var units []Unit
	for _, op := range ops {
		k := unitKey{op.ItemID, op.Unit}
		if seen[k] {
			continue
		}
		seen[k] = true
		units = append(units, Unit{Code: unitCode(orderID, len(units)+1), ProdOrderID: orderID, ItemID: op.ItemID, Unit: op.Unit})
	}
	if len(units) == 0 {
		return nil
	}
	return tx.Omit("ID", "MadeAt", "CarriedTo").CreateInBatches(&units, insertBatch).Error
}

// Board is what a part is cut from and edged with, as labels and the
// re-cut list show it. It is read from the part's columns in one place
// (boardOf), so that the part's board fields can grow without touching
// those who show them.
type Board struct {
	// Code is the board of the materials catalogue the part is cut from
	// ("" for a part launched before materials existed), Decor its decor.
	Code        string `json:"board" example:"LDSP16-SONOMA"`
	Material    string `json:"material"`
	ThicknessMM int    `json:"thickness_mm"`
	Decor       string `json:"decor"`
	Grain       string `json:"grain" enums:"length,width,none"`
	// Edges are each side's edge band code ("" for none); Edging the
	// product line's text.
	Edges  catalog.Edges `json:"edges"`
	Edging string        `json:"edging"`
}

// CutFrom is the board the part is cut from and edged with.
func (p Part) CutFrom() Board {
	return Board{Code: p.Board, Material: p.Material, ThicknessMM: p.ThicknessMM, Decor: p.Decor, Grain: p.Grain, Edges: p.Edges, Edging: p.Edging}
}

// Label is the board as a label or a list shows it: its code and decor,
// or the material's text for a part launched before materials existed.
func (b Board) Label() string {
	name := b.Material
	if b.Code != "" {
		name = b.Code
	}
	if b.Decor != "" {
		name += ", " + b.Decor
	}
	return name
}

// EdgesText is the part's edge bands, each with the sides it goes on
// ("PVC2-SONOMA l1 l2, PVC04-SONOMA w1"), or the product line's text when no
// band is named.
func (b Board) EdgesText() string {
	var bands []string
	sides := map[string][]string{}
	for _, sd := range b.Edges.Sides() {
		if sd.Band == "" {
			continue
		}
		if _, ok := sides[sd.Band]; !ok {
			bands = append(bands, sd.Band)
		}
		sides[sd.Band] = append(sides[sd.Band], sd.Side)
	}
	if len(bands) == 0 {
		return b.Edging
	}
	out := make([]string, len(bands))
	for i, band := range bands {
		out[i] = band + " " + strings.Join(sides[band], " ")
	}
	return strings.Join(out, ", ")
}
