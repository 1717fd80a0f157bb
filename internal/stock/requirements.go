package stock

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// Item is a sales-order item waiting for production, as the planning
// backlog holds it: what its requirements are counted from.
type Item struct {
	ItemID  int64
	SKU     string
	Qty     int
	Options catalog.Options
	// OptionsKey, when not "", stands for Options in the memo of what
	// items need: the same text for the same options (their stored JSON),
	// so that tens of thousands of items waiting need not encode theirs.
	OptionsKey string
}

// Requirement is what production needs of one material: boards in sheets
// (fractions of a sheet included: pooled across orders, rounded up once,
// in Sheets, for buying), edge bands in metres, fittings in pieces.
type Requirement struct {
	Code  string `json:"code" example:"LDSP16-SONOMA"`
	Kind  string `json:"kind" enums:"board,band,fitting" example:"board"`
	Name  string `json:"name" example:"ЛДСП 16 мм Дуб сонома"`
	Decor string `json:"decor" example:"Дуб сонома"`
	Unit  string `json:"unit" enums:"sheet,m,pcs" example:"sheet"`
	// Qty is the whole need: Launched + Backlog.
	Qty float64 `json:"qty" example:"8.4"`
	// Launched is what the production orders selected still need (what
	// stock reserves for them: for boards, the sheets their cutting plans
	// lay their uncut parts on, or the optimiser's estimate of them);
	// Backlog what the backlog's items selected need, estimated the same
	// way.
	Launched float64 `json:"launched" example:"6.2"`
	Backlog  float64 `json:"backlog" example:"2.2"`
	// Consumed is what the production orders selected used up already.
	Consumed float64 `json:"consumed" example:"3"`
	// Sheets is Qty in whole sheets, for a board: what to buy for it.
	Sheets *int `json:"sheets,omitempty" extensions:"x-nullable" example:"9"`
	// AreaM2 is, for a board, the area of the parts its need is for.
	AreaM2 float64 `json:"area_m2" example:"9.6"`
}

// Requirements is what production orders or a period of due dates need.
type Requirements struct {
	ProdOrders   []int64       `json:"prod_orders"`
	BacklogItems []int64       `json:"backlog_items"`
	From         string        `json:"from,omitempty" format:"date"`
	To           string        `json:"to,omitempty" format:"date"`
	Materials    []Requirement `json:"materials"`
}

// Requirements sums what the production orders still need (their stock
// needs, as reserved) and what the backlog's items need, per material.
// launchedArea is, per board code, the area of the orders' parts not yet
// cut (the plan's to tell).
func (s *Service) Requirements(ctx context.Context, orders []int64, backlog ItemSource, launchedArea map[string]float64) (Requirements, error) {
	r := Requirements{ProdOrders: orders, BacklogItems: []int64{}, Materials: []Requirement{}}
	if r.ProdOrders == nil {
		r.ProdOrders = []int64{}
	}
	all, err := catalog.AllMaterials(ctx, s.db)
	if err != nil {
		return r, err
	}
	out := map[string]*Requirement{}
	get := func(code string) *Requirement {
		key := input.CodeKey(code)
		if q, ok := out[key]; ok {
			return q
		}
		m, ok := all[key]
		if !ok {
			m = catalog.Material{Code: code, Kind: catalog.KindBoard, Unit: catalog.UnitSheet}
		}
		q := &Requirement{Code: m.Code, Kind: m.Kind, Name: m.Name, Decor: m.Decor, Unit: m.Unit}
		out[key] = q
		return q
	}
	needs, err := s.NeedsOf(ctx, s.db, orders)
	if err != nil {
		return r, err
	}
	for _, ns := range needs {
		for _, n := range ns {
			if n.Needed < epsilon && n.Consumed < epsilon {
				continue
			}
			q := get(n.Code)
			q.Launched += n.Needed
			q.Consumed += n.Consumed
		}
	}
	for code, a := range launchedArea {
		if a > 0 {
			get(code).AreaM2 += a
		}
	}
	items := s.newItemCounter(s.db, all)
	err = backlog(ctx, func(batch []Item) error {
		for _, it := range batch {
			r.BacklogItems = append(r.BacklogItems, it.ItemID)
		}
		return items.add(ctx, batch)
	})
	if err != nil {
		return r, err
	}
	counted := items.counted()
	for _, m := range counted.needs {
		get(m.Code).Backlog += m.Qty
	}
	for code, a := range counted.area {
		get(code).AreaM2 += a
	}
	for _, q := range out {
		q.Launched, q.Backlog, q.Consumed = shown(q.Unit, q.Launched), shown(q.Unit, q.Backlog), shown(q.Unit, q.Consumed)
		q.Qty = shown(q.Unit, q.Launched+q.Backlog)
		if q.Kind == catalog.KindBoard {
			n := wholeUp(q.Qty)
			q.Sheets = &n
		}
		q.AreaM2 = math.Round(q.AreaM2*1000) / 1000
		r.Materials = append(r.Materials, *q)
	}
	slices.SortFunc(r.Materials, func(x, y Requirement) int {
		return cmp.Or(cmp.Compare(kindOrder(x.Kind), kindOrder(y.Kind)), cmp.Compare(x.Code, y.Code))
	})
	return r, nil
}

func kindOrder(k string) int { return slices.Index(catalog.MaterialKinds, k) }

// wholeUp rounds a quantity up to a whole number, leaving the dust of
// floating-point sums alone.
func wholeUp(v float64) int { return int(math.Ceil(v - 1e-6)) }

// ShortageLine is what to buy of one material: what the backlog needs
// beyond what is available (launched work's needs are reserved already),
// brought up to the reorder point.
type ShortageLine struct {
	Level
	// Backlog is what the items waiting in the backlog need.
	Backlog float64 `json:"backlog" example:"4"`
	// ToBuy = Backlog + ReorderPoint - Available, rounded up once: to whole
	// sheets and pieces, metres to the centimetre; only materials with
	// something to buy are listed.
	ToBuy float64 `json:"to_buy" example:"7"`
	// Negative flags a material whose on hand is below nothing: the floor
	// used more than was booked in; TakenBy are the production orders whose
	// consumption took it below nothing since it last was at nothing or
	// more, with how much each took beyond what was there.
	Negative bool      `json:"negative" example:"false"`
	TakenBy  []TakenBy `json:"taken_by"`
}

// Shortages returns what to buy, per material, given the items waiting in
// the backlog: every material whose available stock, less what the backlog
// needs, falls below its reorder point.
func (s *Service) Shortages(ctx context.Context, backlog ItemSource) ([]ShortageLine, error) {
	var ms []catalog.Material
	if err := s.db.WithContext(ctx).Order("id").Find(&ms).Error; err != nil {
		return nil, err
	}
	all := make(map[string]catalog.Material, len(ms))
	for _, m := range ms {
		all[input.CodeKey(m.Code)] = m
	}
	items := s.newItemCounter(s.db, all)
	if err := backlog(ctx, func(batch []Item) error { return items.add(ctx, batch) }); err != nil {
		return nil, err
	}
	counted := items.counted()
	var lvs []level
	if err := s.db.WithContext(ctx).Find(&lvs).Error; err != nil {
		return nil, err
	}
	by := map[string]level{}
	for _, l := range lvs {
		by[l.Code] = l
	}
	taken, err := openOverdraws(ctx, s.db)
	if err != nil {
		return nil, err
	}
	out := []ShortageLine{}
	for _, m := range ms {
		lv := by[m.Code]
		need := clean(qtyOf(counted.needs, m.Code))
		available := lv.OnHand - lv.Reserved
		buy := need + m.ReorderPoint - available
		if m.Unit != catalog.UnitMetre {
			buy = math.Ceil(buy - epsilon)
		} else {
			buy = math.Ceil(buy*100-epsilon) / 100
		}
		if buy <= epsilon || (m.ReorderPoint == 0 && need < epsilon && available >= -epsilon) {
			continue
		}
		line := ShortageLine{Level: levelOf(m, lv), Backlog: shown(m.Unit, need), ToBuy: clean(buy), Negative: lv.OnHand < -epsilon,
			TakenBy: []TakenBy{}}
		if line.Negative {
			line.TakenBy = append(line.TakenBy, taken[m.Code]...)
		}
		out = append(out, line)
	}
	return out, nil
}
