package plan

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/stock"
)

// This file is what production orders need of materials, as the plan
// tells stock: what a launch needs (reserved in its transaction), what an
// order still needs (RemainingNeeds), and the items and orders that
// requirements are counted for.

// MaterialSteps are the route steps whose work uses materials up: the
// cutting step (the route's first part-scope step) a part's board, edge
// banding (the second) its edges' bands, assembly (the first item-scope
// step) a unit's fittings; 0 when the route has no such step.
type MaterialSteps struct {
	Cut, Band, Assemble int
}

// MaterialSteps are the order's route steps that use materials up, as
// its route had them at its launch.
func (o ProdOrder) MaterialSteps() MaterialSteps {
	return MaterialSteps{Cut: o.CutSeq, Band: o.BandSeq, Assemble: o.AssembleSeq}
}

// MaterialStepsOf finds the material steps of a route.
func MaterialStepsOf(route catalog.Route) MaterialSteps {
	var part, item []int
	for _, st := range route.Operations {
		switch st.Scope {
		case catalog.ScopePart:
			if !slices.Contains(part, st.Seq) {
				part = append(part, st.Seq)
			}
		case catalog.ScopeItem:
			if !slices.Contains(item, st.Seq) {
				item = append(item, st.Seq)
			}
		}
	}
	slices.Sort(part)
	slices.Sort(item)
	var m MaterialSteps
	if len(part) > 0 {
		m.Cut = part[0]
	}
	if len(part) > 1 {
		m.Band = part[1]
	}
	if len(item) > 0 {
		m.Assemble = item[0]
	}
	return m
}

// Shape is the part as stock counts its materials.
func (p Part) Shape() stock.PartShape {
	return stock.PartShape{Board: p.Board, LengthMM: p.LengthMM, WidthMM: p.WidthMM, Grain: p.Grain, Edges: p.Edges}
}

// launchNeeds sets the board need of each of the launch's parts that is
// still to be cut (its share of what the optimiser lays them out on) and
// returns what the launch needs of each material: those boards, the bands
// of the parts still to be banded, the fittings of the units still to be
// assembled. Parts carried over from an order closed short have some
// steps done already (the launch has no operation for them) and need
// nothing for those steps.
func (s *Service) launchNeeds(ctx context.Context, tx *gorm.DB, x *exploded, backlog []BacklogItem, products map[string]catalog.Product, steps MaterialSteps, overhang int) ([]stock.Move, error) {
	toCut, toBand := map[int]bool{}, map[int]bool{}
	assemble := map[unitKey]bool{}
	for k, op := range x.ops {
		switch p := x.opPart[k]; {
		case p >= 0 && op.Seq == steps.Cut:
			toCut[p] = true
		case p >= 0 && op.Seq == steps.Band:
			toBand[p] = true
		case p < 0 && op.Seq == steps.Assemble:
			assemble[unitKey{op.ItemID, op.Unit}] = true
		}
	}
	var cut []int
	var shapes []stock.PartShape
	for i := range x.parts {
		x.parts[i].BoardNeed = 0
		if toCut[i] {
			cut = append(cut, i)
			shapes = append(shapes, x.parts[i].Shape())
		}
	}
	shares, err := s.stock.BoardShares(ctx, tx, shapes)
	if err != nil {
		return nil, err
	}
	var needs []stock.Move
	for j, i := range cut {
		x.parts[i].BoardNeed = shares[j]
		needs = append(needs, stock.Move{Code: x.parts[i].Board, Qty: shares[j]})
	}
	for i := range x.parts {
		if toBand[i] {
			needs = append(needs, stock.BandMetres(x.parts[i].Shape(), overhang)...)
		}
	}
	for _, b := range backlog {
		for _, f := range products[b.SKU].Fittings {
			for u := 1; u <= b.Qty; u++ {
				if assemble[unitKey{b.ItemID, u}] {
					needs = append(needs, stock.Move{Code: f.Code, Qty: float64(f.Qty)})
				}
			}
		}
	}
	return needs, nil
}

// RemainingNeeds is what the production order still needs of each
// material, from what is stored of it: the board needs of its live parts
// not yet cut, the bands of those not yet banded, the fittings of its
// units not yet assembled. Stock reserves exactly this for a live order.
func RemainingNeeds(ctx context.Context, db *gorm.DB, o ProdOrder) ([]stock.Move, error) {
	var ops []Operation
	if err := db.WithContext(ctx).Select("id, item_id, unit, part_id, seq, scope, status").Where("prod_order_id = ?", o.ID).
		Find(&ops).Error; err != nil {
		return nil, err
	}
	steps := o.MaterialSteps()
	toCut, toBand := map[int64]bool{}, map[int64]bool{}
	assemble := map[unitKey]bool{}
	for _, op := range ops {
		if op.Status == OpDone {
			continue
		}
		switch {
		case op.PartID != nil && op.Seq == steps.Cut:
			toCut[*op.PartID] = true
		case op.PartID != nil && op.Seq == steps.Band:
			toBand[*op.PartID] = true
		case op.PartID == nil && op.Seq == steps.Assemble:
			assemble[unitKey{op.ItemID, op.Unit}] = true
		}
	}
	var parts []Part
	if err := db.WithContext(ctx).Where("prod_order_id = ? AND status = ?", o.ID, PartLive).Order("id").Find(&parts).Error; err != nil {
		return nil, err
	}
	var needs []stock.Move
	for _, p := range parts {
		if toCut[p.ID] {
			needs = append(needs, stock.Move{Code: p.Board, Qty: p.BoardNeed})
		}
		if toBand[p.ID] {
			needs = append(needs, stock.BandMetres(p.Shape(), o.EdgeOverhangMM)...)
		}
	}
	fittings, err := unitFittings(ctx, db, o)
	if err != nil {
		return nil, err
	}
	for k := range assemble {
		needs = append(needs, fittings[k.item]...)
	}
	return needs, nil
}

// unitFittings returns, per item of the order, the fittings one of its
// units needs.
func unitFittings(ctx context.Context, db *gorm.DB, o ProdOrder) (map[int64][]stock.Move, error) {
	var fs []Fitting
	if err := db.WithContext(ctx).Where("prod_order_id = ?", o.ID).Order("item_id, code").Find(&fs).Error; err != nil {
		return nil, err
	}
	qty := map[int64]int{}
	for _, it := range o.Items {
		qty[it.ItemID] = it.Qty
	}
	out := map[int64][]stock.Move{}
	for _, f := range fs {
		if n := qty[f.ItemID]; n > 0 {
			out[f.ItemID] = append(out[f.ItemID], stock.Move{Code: f.Code, Qty: float64(f.Qty / n)})
		}
	}
	return out, nil
}

// UnitFittings returns what one unit of each item of the order needs of
// fittings, as its launch stored them.
func UnitFittings(ctx context.Context, db *gorm.DB, o ProdOrder) (map[int64][]stock.Move, error) {
	return unitFittings(ctx, db, o)
}

// RequirementsScope resolves what requirements are counted for: with ids,
// those production orders and, with a period of due dates (from and to,
// inclusive), the backlog's items due then; with a period alone, the live
// production orders with an item due then and the backlog's items due
// then. EINVALID naming prod_orders for unknown orders, from when neither
// is given, to when the period is backwards or over a year.
func (s *Service) RequirementsScope(ctx context.Context, ids []int64, from, to database.Date) (orders []int64, backlog stock.ItemSource, err error) {
	period := !from.IsZero() || !to.IsZero()
	switch {
	case len(ids) == 0 && !period:
		return nil, nil, apperr.Invalid("invalid query", apperr.Field("from", "give prod_orders, or a period of due dates: from and to"))
	case period && (from.IsZero() || to.IsZero()):
		return nil, nil, apperr.Invalid("invalid query", apperr.Field("to", "a period needs both from and to"))
	case period && to.Before(from.Time):
		return nil, nil, apperr.Invalid("invalid query", apperr.Field("to", "must not be before from"))
	case period && to.Sub(from.Time) > 366*24*time.Hour:
		return nil, nil, apperr.Invalid("invalid query", apperr.Field("to", "the period may be a year at most"))
	}
	db := s.db.WithContext(ctx)
	if len(ids) > 0 {
		ids = slices.Clone(ids)
		slices.Sort(ids)
		ids = slices.Compact(ids)
		var found []int64
		if err := db.Model(&ProdOrder{}).Where("id IN ?", ids).Pluck("id", &found).Error; err != nil {
			return nil, nil, err
		}
		var unknown []string
		for _, id := range ids {
			if !slices.Contains(found, id) {
				unknown = append(unknown, strconv.FormatInt(id, 10))
			}
		}
		if len(unknown) > 0 {
			return nil, nil, apperr.Invalid("invalid query", apperr.Field("prod_orders", "no production order has the id %s", strings.Join(unknown, ", ")))
		}
		orders = ids
	} else {
		err = db.Model(&ProdItem{}).
			Joins("JOIN plan_prod_orders ON plan_prod_orders.id = plan_prod_order_items.prod_order_id").
			Where("plan_prod_orders.status IN ? AND NOT plan_prod_order_items.released", []string{StatusLaunched, StatusInProgress}).
			Where("plan_prod_order_items.due_date >= ? AND plan_prod_order_items.due_date <= ?", from, to).
			Distinct().Order("plan_prod_order_items.prod_order_id").Pluck("plan_prod_order_items.prod_order_id", &orders).Error
		if err != nil {
			return nil, nil, err
		}
	}
	backlog = stock.Items(nil)
	if period {
		backlog = s.backlog(func(q *gorm.DB) *gorm.DB { return q.Where("due_date >= ? AND due_date <= ?", from, to) })
	}
	return orders, backlog, nil
}

// BacklogItems streams every item waiting in the backlog, for what it
// needs.
func (s *Service) BacklogItems() stock.ItemSource { return s.backlog(nil) }

// backlogBatch is how many backlog items are read at once for what they
// need.
const backlogBatch = 1000

// backlog streams the backlog's items that where selects (nil: all), a
// batch at a time in item order, reading only what their needs are
// counted from.
func (s *Service) backlog(where func(*gorm.DB) *gorm.DB) stock.ItemSource {
	return func(ctx context.Context, fn func([]stock.Item) error) error {
		var after int64
		options := optionsCache{}
		for {
			q := s.db.WithContext(ctx).Model(&BacklogItem{}).Select("item_id", "sku", "qty", "options").Where("item_id > ?", after)
			if where != nil {
				q = where(q)
			}
			items, err := options.read(q.Order("item_id").Limit(backlogBatch))
			if err != nil {
				return err
			}
			if len(items) == 0 {
				return nil
			}
			if err := fn(items); err != nil {
				return err
			}
			if len(items) < backlogBatch {
				return nil
			}
			after = items[len(items)-1].ItemID
		}
	}
}

// optionsCache is the decor options of backlog items parsed once per text
// as stored, with their memo key: tens of thousands of items waiting share
// a few dozen.
type optionsCache map[string]parsedOptions

type parsedOptions struct {
	options catalog.Options
	key     string
}

// maxOptionsCache bounds the cache: it starts again when full.
const maxOptionsCache = 4096

// read reads item_id, sku, qty and options rows into items.
func (c optionsCache) read(q *gorm.DB) ([]stock.Item, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	items := make([]stock.Item, 0, backlogBatch)
	for rows.Next() {
		var it stock.Item
		var text sql.NullString
		if err := rows.Scan(&it.ItemID, &it.SKU, &it.Qty, &text); err != nil {
			return nil, err
		}
		p, ok := c[text.String]
		if !ok {
			if text.Valid {
				if err := p.options.Scan(text.String); err != nil {
					return nil, err
				}
			}
			if len(c) >= maxOptionsCache {
				clear(c)
			}
			p.key = "options:" + text.String
			c[text.String] = p
		}
		it.Options, it.OptionsKey = p.options, p.key
		items = append(items, it)
	}
	return items, rows.Err()
}

// UncutArea returns, per board code, the area in m² of the live parts of
// the production orders that are not yet cut.
func (s *Service) UncutArea(ctx context.Context, ids []int64) (map[string]float64, error) {
	out := map[string]float64{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		Board string
		Area  float64
	}
	err := database.Scan(s.db.WithContext(ctx).Model(&Part{}).Select("board, sum(length_mm * width_mm) / 1000000.0 AS area").
		Where("prod_order_id IN ? AND status = ?", ids, PartLive).
		Where("NOT EXISTS (SELECT 1 FROM plan_operations o WHERE o.part_id = plan_parts.id AND o.status = ?)", OpDone).Group("board"), &rows)
	for _, r := range rows {
		out[r.Board] = r.Area
	}
	return out, err
}
