package plan

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// Fitting is a fitting a production order's item needs: its product's
// quantity per unit times the item's units, as the catalog said at launch.
type Fitting struct {
	ProdOrderID int64  `json:"prod_order_id" gorm:"primaryKey;autoIncrement:false"`
	ItemID      int64  `json:"item_id" gorm:"primaryKey;autoIncrement:false"`
	Code        string `json:"code" gorm:"primaryKey"`
	Name        string `json:"name"`
	Qty         int    `json:"qty"`
}

// TableName is the plan module's fittings table.
func (Fitting) TableName() string { return "plan_fittings" }

// cutFromBoards resolves, for each physical part of a launch, the board it
// is cut from (its line's board, or the board its item chose for the line's
// decor slot, or the slot's default), with the board's name and decor, the
// line's grain, and each side's edge band (a "match" resolved to the
// board's matching band). It returns EINVALID naming the item whose part
// cannot be banded as its product says (the catalog changed since).
func cutFromBoards(ctx context.Context, tx *gorm.DB, parts []Part, backlog []BacklogItem, products map[string]catalog.Product) error {
	all, err := catalog.AllMaterials(ctx, tx)
	if err != nil {
		return err
	}
	type lineKey struct {
		item int64
		seq  int
	}
	type resolved struct {
		board catalog.Material
		known bool
		line  catalog.Part
		edges catalog.Edges
	}
	index := map[int64]int{}
	for i, b := range backlog {
		index[b.ItemID] = i
	}
	cache := map[lineKey]resolved{}
	for i := range parts {
		p := &parts[i]
		k := lineKey{p.ItemID, p.Seq}
		r, ok := cache[k]
		if !ok {
			at := index[p.ItemID]
			b := backlog[at]
			product := products[b.SKU]
			for _, l := range product.Parts {
				if l.Seq == p.Seq {
					r.line = l
				}
			}
			code := r.line.Board
			if r.line.Slot != "" {
				code = product.BoardFor(r.line.Slot, b.Options)
			}
			r.board, r.known = all[input.CodeKey(code)]
			if !r.known {
				r.board = catalog.Material{Code: code, Name: r.line.Material}
			}
			sides := []*string{&r.edges.L1, &r.edges.L2, &r.edges.W1, &r.edges.W2}
			for n, side := range r.line.Edges.Sides() {
				if side.Band == "" || !r.known {
					continue
				}
				band, err := catalog.EdgeBand(side.Band, r.board, all)
				if err != nil {
					return apperr.Invalid("an item's part cannot be banded as its product says", apperr.Field(fmt.Sprintf("items[%d]", at),
						"%s, part %q, side %s: %s; correct the product", b.SKU, r.line.Name, side.Side, err))
				}
				*sides[n] = band.Code
			}
			cache[k] = r
		}
		p.Board, p.Decor, p.Grain, p.Edges = r.board.Code, r.board.Decor, r.line.Grain, r.edges
		if r.known {
			p.Material = r.board.Name
		}
		if p.Grain == "" || (r.known && !r.board.Grain) {
			p.Grain = catalog.GrainNone // a board without grain turns any way
		}
	}
	return nil
}

// saveFittings stores the fittings the launched items need.
func saveFittings(ctx context.Context, tx *gorm.DB, prodOrderID int64, backlog []BacklogItem, products map[string]catalog.Product) error {
	var codes []string
	for _, b := range backlog {
		for _, f := range products[b.SKU].Fittings {
			codes = append(codes, f.Code)
		}
	}
	if len(codes) == 0 {
		return nil
	}
	known, err := catalog.MaterialsByCode(ctx, tx, codes)
	if err != nil {
		return err
	}
	var rows []Fitting
	for _, b := range backlog {
		for _, f := range products[b.SKU].Fittings {
			rows = append(rows, Fitting{ProdOrderID: prodOrderID, ItemID: b.ItemID, Code: f.Code, Name: known[input.CodeKey(f.Code)].Name, Qty: f.Qty * b.Qty})
		}
	}
	return tx.WithContext(ctx).CreateInBatches(&rows, insertBatch).Error
}
