package floor

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/cutting"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/stock"
)

// MaxCuttingListOrders is the most production orders one cutting list sums.
const MaxCuttingListOrders = 200

// CuttingList is what the saw and the edgebander need for production
// orders: the parts by board (code, decor, thickness), the edge-band metres
// per band, and the fittings per production order.
type CuttingList struct {
	ProdOrders []int64 `json:"prod_orders"`
	// Materials are the parts by board, in board code order.
	Materials []CutMaterial `json:"materials"`
	// Bands are the edge-band metres per band: each banded side's length
	// plus EdgeOverhangMM, for every part.
	Bands          []CutBand    `json:"bands"`
	EdgeOverhangMM int          `json:"edge_overhang_mm" example:"30"`
	Fittings       []CutFitting `json:"fittings"`
}

// CutMaterial is the parts cut from one board.
type CutMaterial struct {
	// Board is the board's code, Decor its decor, Material its name.
	Board       string `json:"board" example:"LDSP16-SONOMA"`
	Decor       string `json:"decor" example:"Дуб сонома"`
	Material    string `json:"material" example:"ЛДСП 16 мм Дуб сонома"`
	ThicknessMM int    `json:"thickness_mm" example:"16"`
	// Qty is the number of physical parts; AreaM2 their area in m².
	Qty    int     `json:"qty"`
	AreaM2 float64 `json:"area_m2"`
	// Sheets estimates the sheets needed: what the cutting optimiser's
	// quick first layouts of the parts take (as stock estimates them
	// before a cutting plan), rounded up; 0 for a board without formats.
	Sheets int       `json:"sheets"`
	Parts  []CutPart `json:"parts"`
}

// CutPart is identical parts (name, size, grain, edges), summed, longest
// first.
type CutPart struct {
	Name     string        `json:"name"`
	LengthMM int           `json:"length_mm"`
	WidthMM  int           `json:"width_mm"`
	Grain    string        `json:"grain" enums:"length,width,none"`
	Edges    catalog.Edges `json:"edges"`
	Edging   string        `json:"edging"`
	Qty      int           `json:"qty"`
	// Where summarises where the parts go, by sales order: "№5 ×4, №9 ×2".
	Where   string      `json:"where" example:"№5 ×4, №9 ×2"`
	Origins []CutOrigin `json:"origins"`
}

// CutOrigin is how many of a part one sales-order item needs.
type CutOrigin struct {
	ProdOrderID int64  `json:"prod_order_id"`
	OrderID     int64  `json:"order_id"` // the sales order
	ItemID      int64  `json:"item_id"`
	SKU         string `json:"sku"`
	Qty         int    `json:"qty"`
}

// CutBand is the edge band one band code needs.
type CutBand struct {
	Band        string  `json:"band" example:"PVC2-SONOMA"`
	Name        string  `json:"name" example:"Кромка ПВХ 2×19 Дуб сонома"`
	Decor       string  `json:"decor" example:"Дуб сонома"`
	ThicknessMM float64 `json:"thickness_mm" example:"2"`
	WidthMM     int     `json:"width_mm" example:"19"`
	// Sides is the number of banded sides; Metres their band, with the overhang.
	Sides  int     `json:"sides"`
	Metres float64 `json:"metres" example:"12.4"`
}

// CutFitting is the fittings one production order needs of one code.
type CutFitting struct {
	ProdOrderID int64  `json:"prod_order_id"`
	Code        string `json:"code" example:"HINGE-110"`
	Name        string `json:"name" example:"Петля накладная 110°"`
	Qty         int    `json:"qty"`
}

// Label is the part's origins as one text, for a list a saw imports.
func (p CutPart) Label() string { return p.Where }

// CuttingList returns the cutting list of one production order, or ENOTFOUND.
func (s *Service) CuttingList(ctx context.Context, id int64) (CuttingList, error) {
	if _, err := plan.LoadOrder(ctx, s.db, id, false); err != nil {
		return CuttingList{}, err
	}
	return s.cuttingList(ctx, s.db, []int64{id})
}

// CuttingListOf returns the cutting list of several production orders,
// summed; EINVALID naming field ids when none is given, more than
// MaxCuttingListOrders are, or some do not exist.
func (s *Service) CuttingListOf(ctx context.Context, ids []int64) (CuttingList, error) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	switch {
	case len(ids) == 0:
		return CuttingList{}, apperr.Invalid("invalid query", apperr.Field("ids", "is required: production order ids separated by commas"))
	case len(ids) > MaxCuttingListOrders:
		return CuttingList{}, apperr.Invalid("invalid query", apperr.Field("ids", "may name at most %d production orders", MaxCuttingListOrders))
	}
	found, err := existingOrders(ctx, s.db, ids)
	if err != nil {
		return CuttingList{}, err
	}
	if len(found) < len(ids) {
		var missing []string
		for _, id := range ids {
			if !slices.Contains(found, id) {
				missing = append(missing, fmt.Sprint(id))
			}
		}
		return CuttingList{}, apperr.Invalid("unknown production orders", apperr.Field("ids", "no production order has the id %s", strings.Join(missing, ", ")))
	}
	return s.cuttingList(ctx, s.db, ids)
}

// partRow is identical physical parts of one item, as the database sums them.
type partRow struct {
	ProdOrderID int64
	ItemID      int64
	Name        string
	Material    string
	Board       string
	Decor       string
	ThicknessMM int
	LengthMM    int
	WidthMM     int
	Grain       string
	EdgeL1      string
	EdgeL2      string
	EdgeW1      string
	EdgeW2      string
	Edging      string
	N           int
}

func (r partRow) edges() catalog.Edges {
	return catalog.Edges{L1: r.EdgeL1, L2: r.EdgeL2, W1: r.EdgeW1, W2: r.EdgeW2}
}

// bandMetres adds the band of each banded side of n parts to metres (and
// their count to sides), per band code: each side's length plus overhang.
func bandMetres(r partRow, overhang int, metres map[string]float64, sides map[string]int) {
	for _, side := range r.edges().Sides() {
		if side.Band == "" {
			continue
		}
		length := r.LengthMM
		if side.Side == "w1" || side.Side == "w2" {
			length = r.WidthMM
		}
		metres[side.Band] += float64(r.N) * float64(length+overhang) / 1000
		sides[side.Band] += r.N
	}
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

func (s *Service) cuttingList(ctx context.Context, db *gorm.DB, ids []int64) (CuttingList, error) {
	// The live parts: a scrapped part is not cut again, its re-cut is.
	rows, err := partRows(ctx, db, ids, "status = ?", plan.PartLive)
	if err != nil {
		return CuttingList{}, err
	}
	items, err := itemsOfOrders(ctx, db, ids)
	if err != nil {
		return CuttingList{}, err
	}
	type itemKey struct{ order, item int64 }
	itemOf := map[itemKey]plan.ProdItem{}
	for _, it := range items {
		itemOf[itemKey{it.ProdOrderID, it.ItemID}] = it
	}
	materials, err := catalog.AllMaterials(ctx, db)
	if err != nil {
		return CuttingList{}, err
	}

	type materialKey struct {
		board, decor, material string
		thickness              int
	}
	type partKey struct {
		name          string
		length, width int
		grain         string
		edges         catalog.Edges
		edging        string
	}
	groups := map[materialKey]*CutMaterial{}
	parts := map[materialKey]map[partKey]*CutPart{}
	metres, sides := map[string]float64{}, map[string]int{}
	overhang := s.stock.EdgeOverhang()
	for _, r := range rows {
		mk := materialKey{r.Board, r.Decor, r.Material, r.ThicknessMM}
		m := groups[mk]
		if m == nil {
			m = &CutMaterial{Board: r.Board, Decor: r.Decor, Material: r.Material, ThicknessMM: r.ThicknessMM}
			groups[mk] = m
			parts[mk] = map[partKey]*CutPart{}
		}
		m.Qty += r.N
		m.AreaM2 += float64(r.N) * float64(r.LengthMM) * float64(r.WidthMM) / 1e6
		pk := partKey{r.Name, r.LengthMM, r.WidthMM, r.Grain, r.edges(), r.Edging}
		p := parts[mk][pk]
		if p == nil {
			p = &CutPart{Name: r.Name, LengthMM: r.LengthMM, WidthMM: r.WidthMM, Grain: r.Grain, Edges: r.edges(), Edging: r.Edging}
			parts[mk][pk] = p
		}
		p.Qty += r.N
		it := itemOf[itemKey{r.ProdOrderID, r.ItemID}]
		p.Origins = append(p.Origins, CutOrigin{ProdOrderID: r.ProdOrderID, OrderID: it.OrderID, ItemID: r.ItemID, SKU: it.SKU, Qty: r.N})
		bandMetres(r, overhang, metres, sides)
	}

	list := CuttingList{ProdOrders: ids, Materials: []CutMaterial{}, Bands: []CutBand{}, EdgeOverhangMM: overhang, Fittings: []CutFitting{}}
	for mk, m := range groups {
		for _, p := range parts[mk] {
			p.Origins = mergeOrigins(p.Origins)
			p.Where = where(p.Origins)
			m.Parts = append(m.Parts, *p)
		}
		slices.SortFunc(m.Parts, func(a, b CutPart) int {
			return cmp.Or(cmp.Compare(b.LengthMM, a.LengthMM), cmp.Compare(b.WidthMM, a.WidthMM), cmp.Compare(a.Name, b.Name),
				cmp.Compare(a.Edging, b.Edging), cmp.Compare(a.Grain, b.Grain), cmp.Compare(fmt.Sprint(a.Edges), fmt.Sprint(b.Edges)))
		})
		if m.Sheets, err = s.estimateSheets(ctx, db, m.Board, m.Parts); err != nil {
			return CuttingList{}, err
		}
		m.AreaM2 = round(m.AreaM2, 3)
		list.Materials = append(list.Materials, *m)
	}
	slices.SortFunc(list.Materials, func(a, b CutMaterial) int {
		return cmp.Or(cmp.Compare(a.Board, b.Board), cmp.Compare(a.Material, b.Material), cmp.Compare(a.ThicknessMM, b.ThicknessMM), cmp.Compare(a.Decor, b.Decor))
	})
	for code, v := range metres {
		b := materials[input.CodeKey(code)]
		list.Bands = append(list.Bands, CutBand{Band: code, Name: b.Name, Decor: b.Decor, ThicknessMM: b.ThicknessMM, WidthMM: b.WidthMM,
			Sides: sides[code], Metres: round(v, 2)})
	}
	slices.SortFunc(list.Bands, func(a, b CutBand) int { return cmp.Compare(a.Band, b.Band) })
	list.Fittings, err = fittingsOfOrders(ctx, db, ids)
	return list, err
}

// estimateSheets is how many sheets of the board the parts take, as stock
// estimates them from their shapes.
func (s *Service) estimateSheets(ctx context.Context, db *gorm.DB, board string, parts []CutPart) (int, error) {
	var shapes []stock.PartShape
	for _, p := range parts {
		for range p.Qty {
			shapes = append(shapes, stock.PartShape{Board: board, LengthMM: p.LengthMM, WidthMM: p.WidthMM, Grain: p.Grain})
		}
	}
	if len(shapes) == 0 || len(shapes) > cutting.MaxParts {
		return 0, nil
	}
	shares, err := s.stock.BoardShares(ctx, db, shapes)
	total := 0.0
	for _, v := range shares {
		total += v
	}
	return int(math.Ceil(total - 1e-6)), err
}

// mergeOrigins sums the origins of one item (they come one per identical
// part line) and orders them by production order and item.
func mergeOrigins(os []CutOrigin) []CutOrigin {
	slices.SortFunc(os, func(a, b CutOrigin) int {
		return cmp.Or(cmp.Compare(a.ProdOrderID, b.ProdOrderID), cmp.Compare(a.ItemID, b.ItemID))
	})
	out := os[:0]
	for _, o := range os {
		if n := len(out); n > 0 && out[n-1].ProdOrderID == o.ProdOrderID && out[n-1].ItemID == o.ItemID {
			out[n-1].Qty += o.Qty
			continue
		}
		out = append(out, o)
	}
	return out
}

// where summarises origins by sales order: "№5 ×4, №9 ×2".
func where(os []CutOrigin) string {
	var orders []int64
	qty := map[int64]int{}
	for _, o := range os {
		if _, ok := qty[o.OrderID]; !ok {
			orders = append(orders, o.OrderID)
		}
		qty[o.OrderID] += o.Qty
	}
	slices.Sort(orders)
	out := make([]string, len(orders))
	for i, id := range orders {
		out[i] = fmt.Sprintf("№%d ×%d", id, qty[id])
	}
	return strings.Join(out, ", ")
}
