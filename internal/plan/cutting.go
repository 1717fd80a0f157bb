package plan

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// MaxCuttingListOrders is the most production orders one cutting list sums.
const MaxCuttingListOrders = 100

// CuttingList is the parts to cut for production orders, by material and
// thickness: what a panel-saw optimiser imports. Identical parts (same name,
// size and edging) are summed, across items and orders, with where each
// comes from.
type CuttingList struct {
	ProdOrders []int64       `json:"prod_orders"`
	Materials  []CutMaterial `json:"materials"`
}

// CutMaterial is the parts of one material and thickness.
type CutMaterial struct {
	Material    string `json:"material"`
	ThicknessMM int    `json:"thickness_mm"`
	// Qty is the number of physical parts; AreaM2 their area in m².
	Qty    int       `json:"qty"`
	AreaM2 float64   `json:"area_m2"`
	Parts  []CutPart `json:"parts"`
}

// CutPart is identical parts, summed, longest first.
type CutPart struct {
	Name     string      `json:"name"`
	LengthMM int         `json:"length_mm"`
	WidthMM  int         `json:"width_mm"`
	Edging   string      `json:"edging"`
	Qty      int         `json:"qty"`
	Origins  []CutOrigin `json:"origins"`
}

// CutOrigin is how many of a part one unit of a sales-order item needs.
type CutOrigin struct {
	ProdOrderID int64  `json:"prod_order_id"`
	OrderID     int64  `json:"order_id"` // the sales order
	ItemID      int64  `json:"item_id"`
	SKU         string `json:"sku"`
	Unit        int    `json:"unit"` // 1 to the item's quantity
	Qty         int    `json:"qty"`
}

// String is the origin as a label: "PO 3 · order 12 item 53 (SKU) unit 1 × 2".
func (o CutOrigin) String() string {
	return fmt.Sprintf("PO %d · order %d item %d (%s) unit %d × %d", o.ProdOrderID, o.OrderID, o.ItemID, o.SKU, o.Unit, o.Qty)
}

// Label is the part's origins as one text, for a list a saw imports.
func (p CutPart) Label() string {
	ss := make([]string, len(p.Origins))
	for i, o := range p.Origins {
		ss[i] = o.String()
	}
	return strings.Join(ss, "; ")
}

// CuttingList returns the cutting list of one production order, or ENOTFOUND.
func (s *Service) CuttingList(ctx context.Context, id int64) (CuttingList, error) {
	if _, err := prodOrder(ctx, s.db, id, false); err != nil {
		return CuttingList{}, err
	}
	return s.cuttingList(ctx, []int64{id})
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
	var found []int64
	if err := s.db.WithContext(ctx).Model(&ProdOrder{}).Where("id IN ?", ids).Pluck("id", &found).Error; err != nil {
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
	return s.cuttingList(ctx, ids)
}

func (s *Service) cuttingList(ctx context.Context, ids []int64) (CuttingList, error) {
	var rows []struct {
		ProdOrderID int64
		ItemID      int64
		Unit        int
		Name        string
		Material    string
		ThicknessMM int
		LengthMM    int
		WidthMM     int
		Edging      string
		N           int
	}
	err := s.db.WithContext(ctx).Model(&Part{}).
		Select("prod_order_id, item_id, unit, name, material, thickness_mm, length_mm, width_mm, edging, count(*) AS n").
		Where("prod_order_id IN ?", ids).
		Group("prod_order_id, item_id, unit, name, material, thickness_mm, length_mm, width_mm, edging").
		Scan(&rows).Error
	if err != nil {
		return CuttingList{}, err
	}
	var items []ProdItem
	if err := s.db.WithContext(ctx).Where("prod_order_id IN ?", ids).Find(&items).Error; err != nil {
		return CuttingList{}, err
	}
	type itemKey struct{ order, item int64 }
	itemOf := map[itemKey]ProdItem{}
	for _, it := range items {
		itemOf[itemKey{it.ProdOrderID, it.ItemID}] = it
	}

	type materialKey struct {
		material  string
		thickness int
	}
	type partKey struct {
		name          string
		length, width int
		edging        string
	}
	materials := map[materialKey]*CutMaterial{}
	parts := map[materialKey]map[partKey]*CutPart{}
	for _, r := range rows {
		mk := materialKey{r.Material, r.ThicknessMM}
		m := materials[mk]
		if m == nil {
			m = &CutMaterial{Material: r.Material, ThicknessMM: r.ThicknessMM}
			materials[mk] = m
			parts[mk] = map[partKey]*CutPart{}
		}
		m.Qty += r.N
		m.AreaM2 += float64(r.N) * float64(r.LengthMM) * float64(r.WidthMM) / 1e6
		pk := partKey{r.Name, r.LengthMM, r.WidthMM, r.Edging}
		p := parts[mk][pk]
		if p == nil {
			p = &CutPart{Name: r.Name, LengthMM: r.LengthMM, WidthMM: r.WidthMM, Edging: r.Edging}
			parts[mk][pk] = p
		}
		p.Qty += r.N
		it := itemOf[itemKey{r.ProdOrderID, r.ItemID}]
		p.Origins = append(p.Origins, CutOrigin{ProdOrderID: r.ProdOrderID, OrderID: it.OrderID, ItemID: r.ItemID, SKU: it.SKU, Unit: r.Unit, Qty: r.N})
	}

	list := CuttingList{ProdOrders: ids, Materials: []CutMaterial{}}
	for mk, m := range materials {
		for _, p := range parts[mk] {
			slices.SortFunc(p.Origins, func(a, b CutOrigin) int {
				return cmp.Or(cmp.Compare(a.ProdOrderID, b.ProdOrderID), cmp.Compare(a.ItemID, b.ItemID), cmp.Compare(a.Unit, b.Unit))
			})
			m.Parts = append(m.Parts, *p)
		}
		slices.SortFunc(m.Parts, func(a, b CutPart) int {
			return cmp.Or(cmp.Compare(b.LengthMM, a.LengthMM), cmp.Compare(b.WidthMM, a.WidthMM), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Edging, b.Edging))
		})
		m.AreaM2 = float64(int64(m.AreaM2*1000+0.5)) / 1000
		list.Materials = append(list.Materials, *m)
	}
	slices.SortFunc(list.Materials, func(a, b CutMaterial) int {
		return cmp.Or(cmp.Compare(a.Material, b.Material), cmp.Compare(a.ThicknessMM, b.ThicknessMM))
	})
	return list, nil
}
