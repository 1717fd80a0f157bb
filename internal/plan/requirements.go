package plan

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// Requirement is what production needs of one material: boards in whole
// sheets (the parts' area ÷ the board's largest usable format, rounded up,
// until cutting plans exist), edge bands in metres (each banded side plus
// the overhang), fittings in pieces.
type Requirement struct {
	Code  string `json:"code" example:"LDSP16-SONOMA"`
	Kind  string `json:"kind" enums:"board,band,fitting" example:"board"`
	Name  string `json:"name" example:"ЛДСП 16 мм Дуб сонома"`
	Decor string `json:"decor" example:"Дуб сонома"`
	Unit  string `json:"unit" enums:"sheet,m,pcs" example:"sheet"`
	// Qty is the whole need: Launched + Backlog (for boards, the sheets of
	// their summed area).
	Qty float64 `json:"qty" example:"3"`
	// Launched is what the launched production orders selected need (not
	// yet cut); Backlog what the backlog's items selected need.
	Launched float64 `json:"launched" example:"2"`
	Backlog  float64 `json:"backlog" example:"1"`
	// AreaM2 is the boards' parts' area.
	AreaM2 float64 `json:"area_m2" example:"9.6"`
	// PlannedSheets: the new sheets cutting plans take for the launched
	// parts they lay out (Launched and Qty count them, the area estimate
	// the rest); absent where no plan lays out any.
	PlannedSheets *int `json:"planned_sheets,omitempty" example:"2" extensions:"x-nullable"`
}

// Requirements is what production orders or a period of due dates need.
type Requirements struct {
	ProdOrders   []int64       `json:"prod_orders"`
	BacklogItems []int64       `json:"backlog_items"`
	From         string        `json:"from,omitempty" format:"date"`
	To           string        `json:"to,omitempty" format:"date"`
	Materials    []Requirement `json:"materials"`
}

// Requirements returns what production needs: with ids, everything those
// production orders need (their parts, bands and fittings); with a period
// of due dates (from and to, inclusive), the backlog's items due then and,
// unless ids are given, the launched, live production orders with an item
// due then (their parts not yet cut, the fittings of those not completed).
// EINVALID naming prod_orders when too many or unknown ones are named,
// from when neither is given, to when the period is backwards or over a
// year.
func (s *Service) Requirements(ctx context.Context, ids []int64, from, to database.Date) (Requirements, error) {
	period := !from.IsZero() || !to.IsZero()
	switch {
	case len(ids) == 0 && !period:
		return Requirements{}, apperr.Invalid("invalid query", apperr.Field("from", "give prod_orders, or a period of due dates: from and to"))
	case period && (from.IsZero() || to.IsZero()):
		return Requirements{}, apperr.Invalid("invalid query", apperr.Field("to", "a period needs both from and to"))
	case period && to.Before(from.Time):
		return Requirements{}, apperr.Invalid("invalid query", apperr.Field("to", "must not be before from"))
	case period && to.Sub(from.Time) > 366*24*time.Hour:
		return Requirements{}, apperr.Invalid("invalid query", apperr.Field("to", "the period may be a year at most"))
	}
	var backlog []BacklogItem
	if period {
		if err := s.db.WithContext(ctx).Where("due_date >= ? AND due_date <= ?", from, to).Order("item_id").Find(&backlog).Error; err != nil {
			return Requirements{}, err
		}
	}
	var r Requirements
	var err error
	if len(ids) > 0 {
		if _, err := s.CuttingListOf(ctx, ids); err != nil {
			if e := apperr.As(err); e != nil {
				for i := range e.Fields {
					e.Fields[i].Field = "prod_orders"
				}
			}
			return Requirements{}, err
		}
		ids = slices.Clone(ids)
		slices.Sort(ids)
		ids = slices.Compact(ids)
		r, err = s.liveAndBacklog(ctx, s.db, ids, backlog, false)
	} else {
		var live []int64
		err = s.db.WithContext(ctx).Model(&ProdItem{}).
			Joins("JOIN plan_prod_orders ON plan_prod_orders.id = plan_prod_order_items.prod_order_id").
			Where("plan_prod_orders.status IN ? AND NOT plan_prod_order_items.released", []string{StatusLaunched, StatusInProgress}).
			Where("plan_prod_order_items.due_date >= ? AND plan_prod_order_items.due_date <= ?", from, to).
			Distinct().Order("plan_prod_order_items.prod_order_id").Pluck("plan_prod_order_items.prod_order_id", &live).Error
		if err != nil {
			return Requirements{}, err
		}
		r, err = s.liveAndBacklog(ctx, s.db, live, backlog, true)
	}
	if period {
		r.From, r.To = from.String(), to.String()
	}
	return r, err
}

// BacklogRequirements returns what every item waiting in the backlog needs.
func (s *Service) BacklogRequirements(ctx context.Context) (Requirements, error) {
	var backlog []BacklogItem
	if err := s.db.WithContext(ctx).Order("item_id").Find(&backlog).Error; err != nil {
		return Requirements{}, err
	}
	return s.liveAndBacklog(ctx, s.db, nil, backlog, true)
}

// liveAndBacklog sums the needs of the production orders (only what is
// not yet cut, and the fittings of the live ones, when uncut) and of the
// backlog items.
func (s *Service) liveAndBacklog(ctx context.Context, db *gorm.DB, ids []int64, backlog []BacklogItem, uncut bool) (Requirements, error) {
	r := Requirements{ProdOrders: ids, BacklogItems: []int64{}}
	if r.ProdOrders == nil {
		r.ProdOrders = []int64{}
	}
	var rows []partRow
	fittings := map[string]int{}
	if len(ids) > 0 {
		var err error
		if uncut { // not yet cut: no operation of the part is done
			rows, err = partRows(ctx, db, ids, "NOT EXISTS (SELECT 1 FROM plan_operations o WHERE o.part_id = plan_parts.id AND o.status = ?)", OpDone)
		} else {
			rows, err = partRows(ctx, db, ids, "")
		}
		if err != nil {
			return r, err
		}
		if fittings, err = fittingsOf(ctx, db, ids, uncut); err != nil {
			return r, err
		}
	}
	bRows, bFittings, err := backlogRows(ctx, db, backlog)
	if err != nil {
		return r, err
	}
	for _, b := range backlog {
		r.BacklogItems = append(r.BacklogItems, b.ItemID)
	}
	r.Materials, err = s.requirements(ctx, db, rows, fittings, bRows, bFittings)
	if err != nil || len(ids) == 0 || s.plannedSheets == nil {
		return r, err
	}
	planned, err := s.plannedSheets(ctx, ids)
	if err != nil {
		return r, err
	}
	all, err := catalog.AllMaterials(ctx, db)
	if err != nil {
		return r, err
	}
	launched := map[string]float64{}
	for code, a := range s.needsOf(rows, nil).area {
		launched[strings.ToLower(code)] += a
	}
	for i, m := range r.Materials {
		p, ok := planned[strings.ToLower(m.Code)]
		if !ok || m.Kind != catalog.KindBoard {
			continue
		}
		// the plan's sheets for the parts it lays out, the area estimate
		// for the rest
		board := all[strings.ToLower(m.Code)]
		rest := math.Max(launched[strings.ToLower(m.Code)]-p.AreaM2, 0)
		m.Launched = float64(p.Sheets) + sheets(rest, board)
		m.Qty = float64(p.Sheets) + sheets(math.Max(m.AreaM2-p.AreaM2, 0), board)
		m.PlannedSheets = &p.Sheets
		r.Materials[i] = m
	}
	return r, nil
}

// PlannedBoard is what cutting plans say of one board for some production
// orders: the new sheets their uncut sheets take, and the parts' area they
// lay out.
type PlannedBoard struct {
	Sheets int
	AreaM2 float64
}

// PlannedSheets returns, per board code in lower case, what the cutting
// plans of the production orders lay out of their uncut parts.
type PlannedSheets func(ctx context.Context, prodOrders []int64) (map[string]PlannedBoard, error)

// SetPlannedSheets makes requirements of launched production orders count
// boards in the sheets their cutting plans take, where a plan lays their
// parts out, and by the area estimate otherwise. Call it before the
// service is used.
func (s *Service) SetPlannedSheets(f PlannedSheets) { s.plannedSheets = f }

// fittingsOf sums the production orders' fittings per code; live only
// leaves out those of completed, cancelled and closed orders.
func fittingsOf(ctx context.Context, db *gorm.DB, ids []int64, live bool) (map[string]int, error) {
	var rows []struct {
		Code string
		Qty  int
	}
	q := db.WithContext(ctx).Model(&Fitting{}).Select("code, sum(qty) AS qty").Where("prod_order_id IN ?", ids)
	if live {
		q = q.Where("prod_order_id IN (SELECT id FROM plan_prod_orders WHERE status IN ?)", []string{StatusLaunched, StatusInProgress})
	}
	if err := database.Scan(q.Group("code"), &rows); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Code] += r.Qty
	}
	return out, nil
}

// backlogRows explodes backlog items as a launch would, without storing
// anything: their part lines (by the boards their options choose) and
// fittings.
func backlogRows(ctx context.Context, db *gorm.DB, backlog []BacklogItem) ([]partRow, map[string]int, error) {
	fittings := map[string]int{}
	if len(backlog) == 0 {
		return nil, fittings, nil
	}
	skus := make([]string, 0, len(backlog))
	for _, b := range backlog {
		skus = append(skus, b.SKU)
	}
	products, err := catalog.ProductSpecs(ctx, db, skus)
	if err != nil {
		return nil, nil, err
	}
	all, err := catalog.AllMaterials(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	var rows []partRow
	for _, b := range backlog {
		p, ok := products[b.SKU]
		if !ok {
			continue
		}
		for _, line := range p.Parts {
			code := line.Board
			if line.Slot != "" {
				code = p.BoardFor(line.Slot, b.Options)
			}
			board, known := all[strings.ToLower(code)]
			r := partRow{ItemID: b.ItemID, Name: line.Name, Board: code, LengthMM: line.LengthMM, WidthMM: line.WidthMM, N: line.Qty * b.Qty}
			if known {
				r.Board, r.Decor, r.Material = board.Code, board.Decor, board.Name
				sides := []*string{&r.EdgeL1, &r.EdgeL2, &r.EdgeW1, &r.EdgeW2}
				for k, side := range line.Edges.Sides() {
					if side.Band == "" {
						continue
					}
					if band, err := catalog.EdgeBand(side.Band, board, all); err == nil {
						*sides[k] = band.Code
					}
				}
			}
			rows = append(rows, r)
		}
		for _, f := range p.Fittings {
			fittings[f.Code] += f.Qty * b.Qty
		}
	}
	return rows, fittings, nil
}

// needs sums part rows and fittings per material code: boards by area,
// bands in metres, fittings in pieces.
type needs struct {
	area   map[string]float64
	metres map[string]float64
	pieces map[string]float64
}

func (s *Service) needsOf(rows []partRow, fittings map[string]int) needs {
	n := needs{area: map[string]float64{}, metres: map[string]float64{}, pieces: map[string]float64{}}
	sides := map[string]int{}
	for _, r := range rows {
		if r.Board != "" {
			n.area[r.Board] += float64(r.N) * float64(r.LengthMM) * float64(r.WidthMM) / 1e6
		}
		bandMetres(r, s.EdgeOverhang(), n.metres, sides)
	}
	for code, q := range fittings {
		n.pieces[code] += float64(q)
	}
	return n
}

// sheets is how many sheets of the board the area needs.
func sheets(area float64, board catalog.Material) float64 {
	u := board.UsableAreaM2()
	if u <= 0 || area <= 0 {
		return 0
	}
	return math.Ceil(area/u - 1e-9)
}

func (s *Service) requirements(ctx context.Context, db *gorm.DB, launched []partRow, lf map[string]int, backlog []partRow, bf map[string]int) ([]Requirement, error) {
	all, err := catalog.AllMaterials(ctx, db)
	if err != nil {
		return nil, err
	}
	a, b := s.needsOf(launched, lf), s.needsOf(backlog, bf)
	out := map[string]*Requirement{}
	get := func(code string) *Requirement {
		key := strings.ToLower(code)
		if r, ok := out[key]; ok {
			return r
		}
		m, ok := all[key]
		if !ok {
			m = catalog.Material{Code: code, Kind: catalog.KindBoard, Unit: catalog.UnitSheet}
		}
		r := &Requirement{Code: m.Code, Kind: m.Kind, Name: m.Name, Decor: m.Decor, Unit: m.Unit}
		out[key] = r
		return r
	}
	for code, v := range a.area {
		r := get(code)
		r.AreaM2 += v
		r.Launched = sheets(v, all[strings.ToLower(code)])
	}
	for code, v := range b.area {
		r := get(code)
		r.AreaM2 += v
		r.Backlog = sheets(v, all[strings.ToLower(code)])
	}
	for code, v := range a.metres {
		get(code).Launched += v
	}
	for code, v := range b.metres {
		get(code).Backlog += v
	}
	for code, v := range a.pieces {
		get(code).Launched += v
	}
	for code, v := range b.pieces {
		get(code).Backlog += v
	}
	list := make([]Requirement, 0, len(out))
	for key, r := range out {
		if r.Kind == catalog.KindBoard {
			r.Qty = sheets(r.AreaM2, all[key])
		} else {
			r.Launched, r.Backlog = round(r.Launched, 2), round(r.Backlog, 2)
			r.Qty = round(r.Launched+r.Backlog, 2)
		}
		r.AreaM2 = round(r.AreaM2, 3)
		list = append(list, *r)
	}
	slices.SortFunc(list, func(x, y Requirement) int {
		return cmp.Or(cmp.Compare(kindOrder(x.Kind), kindOrder(y.Kind)), cmp.Compare(x.Code, y.Code))
	})
	return list, nil
}

func kindOrder(k string) int { return slices.Index(catalog.MaterialKinds, k) }

// launchNeeds is what a launch needs of each material, and the route step
// that uses it up: boards for the parts still to be cut in it, bands for
// those still to be banded, fittings for the units still to be assembled.
// Parts taken over from a production order closed short have some steps
// done already (the launch has no operation for them), and need nothing
// for those steps: the reservation is what the order will really use.
func (s *Service) launchNeeds(ctx context.Context, tx *gorm.DB, x *exploded, backlog []BacklogItem, products map[string]catalog.Product, route catalog.Route) ([]contracts.MaterialNeed, error) {
	perUnit := map[int64]map[string]int{}
	for _, b := range backlog {
		for _, f := range products[b.SKU].Fittings {
			if perUnit[b.ItemID] == nil {
				perUnit[b.ItemID] = map[string]int{}
			}
			perUnit[b.ItemID][f.Code] += f.Qty
		}
	}
	return s.needsAlong(ctx, tx, x, perUnit, route)
}

// needsAlong is what the parts and operations of x need of each material
// along the route (see launchNeeds), given the fittings of a unit of each
// item.
func (s *Service) needsAlong(ctx context.Context, tx *gorm.DB, x *exploded, perUnit map[int64]map[string]int, route catalog.Route) ([]contracts.MaterialNeed, error) {
	var partSteps, itemSteps []int
	for _, op := range route.Operations {
		if op.Scope == catalog.ScopePart {
			partSteps = append(partSteps, op.Seq)
		} else {
			itemSteps = append(itemSteps, op.Seq)
		}
	}
	last := 0
	if n := len(route.Operations); n > 0 {
		last = route.Operations[n-1].Seq
	}
	cut, band, assembly := last, last, last
	if len(partSteps) > 0 {
		cut, band = partSteps[0], partSteps[0]
	}
	if len(partSteps) > 1 {
		band = partSteps[1]
	}
	if len(itemSteps) > 0 {
		assembly = itemSteps[0]
	}
	toCut, toBand := x.partsAt(cut), x.partsAt(band)
	rows := make([]partRow, 0, len(toCut)+len(toBand))
	for _, p := range toCut {
		rows = append(rows, partRow{Board: p.Board, LengthMM: p.LengthMM, WidthMM: p.WidthMM, N: 1})
	}
	for _, p := range toBand {
		rows = append(rows, partRow{LengthMM: p.LengthMM, WidthMM: p.WidthMM, EdgeL1: p.Edges.L1, EdgeL2: p.Edges.L2, EdgeW1: p.Edges.W1, EdgeW2: p.Edges.W2, N: 1})
	}
	fittings := map[string]int{}
	for item, fs := range perUnit {
		units := x.unitsAt(item, assembly)
		for code, qty := range fs {
			fittings[code] += qty * units
		}
	}
	reqs, err := s.requirements(ctx, tx, rows, fittings, nil, nil)
	if err != nil {
		return nil, err
	}
	total := func(step int) int {
		if slices.Contains(itemSteps, step) {
			return x.unitsAt(0, step)
		}
		return len(x.partsAt(step))
	}
	out := make([]contracts.MaterialNeed, 0, len(reqs))
	for _, r := range reqs {
		if r.Qty <= 0 || r.Unit == "" {
			continue
		}
		step := cut
		switch r.Kind {
		case catalog.KindBand:
			step = band
		case catalog.KindFitting:
			step = assembly
		}
		out = append(out, contracts.MaterialNeed{Code: r.Code, Kind: r.Kind, Qty: r.Qty, Step: step, Total: total(step)})
	}
	return out, nil
}

// partsAt returns the launch's parts that have an operation of route step
// seq in it (a part carried over with that step done has none).
func (x *exploded) partsAt(seq int) []Part {
	var out []Part
	for k, op := range x.ops {
		if p := x.opPart[k]; p >= 0 && op.Seq == seq {
			out = append(out, x.parts[p])
		}
	}
	return out
}

// unitsAt counts the units (of item, or of every item when item is 0) that
// have an item-scope operation of route step seq in the launch.
func (x *exploded) unitsAt(item int64, seq int) int {
	n := 0
	for k, op := range x.ops {
		if x.opPart[k] < 0 && op.Seq == seq && (item == 0 || op.ItemID == item) {
			n++
		}
	}
	return n
}

// orderNeeds is what the production order still needs of each material,
// counted from its parts, operations and fittings as they are stored, the
// way its launch counted it (launchNeeds): after items left it, what its
// reservations are to come down to. The route is the catalogue's, or, when
// it is gone, the steps the order's operations go through.
func (s *Service) orderNeeds(ctx context.Context, tx *gorm.DB, o ProdOrder) ([]contracts.MaterialNeed, error) {
	var x exploded
	if err := tx.WithContext(ctx).Where("prod_order_id = ?", o.ID).Order("id").Find(&x.parts).Error; err != nil {
		return nil, err
	}
	err := tx.WithContext(ctx).Select("id, item_id, unit, part_id, seq, scope").Where("prod_order_id = ?", o.ID).Order("id").Find(&x.ops).Error
	if err != nil {
		return nil, err
	}
	index := make(map[int64]int, len(x.parts))
	for i, p := range x.parts {
		index[p.ID] = i
	}
	x.opPart = make([]int, len(x.ops))
	for k, op := range x.ops {
		x.opPart[k] = -1
		if op.PartID != nil {
			if i, ok := index[*op.PartID]; ok {
				x.opPart[k] = i
			}
		}
	}
	route, err := catalog.RouteByID(ctx, tx, o.Route.ID)
	if apperr.Code(err) == apperr.ENOTFOUND {
		route, err = catalog.Route{ID: o.Route.ID, Name: o.Route.Name}, nil
		seen := map[int]bool{}
		for _, op := range x.ops {
			if !seen[op.Seq] {
				seen[op.Seq] = true
				route.Operations = append(route.Operations, catalog.Operation{Seq: op.Seq, Scope: op.Scope})
			}
		}
		slices.SortFunc(route.Operations, func(a, b catalog.Operation) int { return cmp.Compare(a.Seq, b.Seq) })
	}
	if err != nil {
		return nil, err
	}
	qty := map[int64]int{}
	for _, it := range o.Items {
		qty[it.ItemID] = it.Qty
	}
	var fittings []Fitting
	if err := tx.WithContext(ctx).Where("prod_order_id = ?", o.ID).Find(&fittings).Error; err != nil {
		return nil, err
	}
	perUnit := map[int64]map[string]int{}
	for _, f := range fittings {
		if n := qty[f.ItemID]; n > 0 {
			if perUnit[f.ItemID] == nil {
				perUnit[f.ItemID] = map[string]int{}
			}
			perUnit[f.ItemID][f.Code] += f.Qty / n
		}
	}
	return s.needsAlong(ctx, tx, &x, perUnit, route)
}
