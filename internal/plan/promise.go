package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/purchasing"
	"github.com/tsekh/tsekh/internal/stock"
)

// This file is available to promise: the day a backlog item, or an SKU
// not ordered yet, could be ready if launched now. Each is planned alone,
// as a launch would plan it (its parts, operations and material needs,
// along its product's route, without the units earlier orders left), after
// every live production order, on the work centres' free capacity, and
// its steps that use materials up wait for them as the live orders' do,
// after the needs of every live order. Nothing is written.

// Promise is the day something could be ready if launched now, and the
// materials it would wait for.
type Promise struct {
	ReadyOn database.Date `json:"ready_on" swaggertype:"string" format:"date" example:"2026-12-15"`
	HeldBy  HeldList      `json:"held_by"`
}

// promiser holds what promises share: the live work's load on the work
// centres, and what the live orders still need of each material against
// what is on hand and on order.
type promiser struct {
	s         *Service
	today     time.Time
	wcs       map[int64]catalog.WorkCenter
	problem   Problem
	cum       map[string]float64
	onHand    map[string]float64
	incoming  map[string][]purchasing.Incoming
	lead      map[string]int
	materials map[string]catalog.Material
	routes    map[int64]catalog.Route
	done      map[string]*Promise // by the item's SKU, quantity and options
}

func (s *Service) newPromiser(ctx context.Context, tx *gorm.DB) (*promiser, error) {
	now, err := s.clockIn(ctx, tx)
	if err != nil {
		return nil, err
	}
	p := &promiser{s: s, today: now.Today, routes: map[int64]catalog.Route{}, done: map[string]*Promise{}, cum: map[string]float64{}}
	if p.wcs, err = catalog.AllWorkCenters(ctx, tx); err != nil {
		return nil, err
	}
	if p.problem, err = s.problem(ctx, tx, now, p.wcs, "1 = 1"); err != nil {
		return nil, err
	}
	var live []int64
	if err := tx.WithContext(ctx).Model(&ProdOrder{}).Where("status IN ?", []string{StatusLaunched, StatusInProgress}).Pluck("id", &live).Error; err != nil {
		return nil, err
	}
	needs, err := s.stock.NeedsOf(ctx, tx, live)
	if err != nil {
		return nil, err
	}
	for _, ns := range needs {
		for _, n := range ns {
			p.cum[n.Code] += n.Needed
		}
	}
	if p.onHand, err = stock.OnHandTx(ctx, tx); err != nil {
		return nil, err
	}
	if p.incoming, err = purchasing.IncomingTx(ctx, tx); err != nil {
		return nil, err
	}
	if p.lead, err = purchasing.LeadDaysTx(ctx, tx); err != nil {
		return nil, err
	}
	all, err := catalog.AllMaterials(ctx, tx)
	if err != nil {
		return nil, err
	}
	p.materials = make(map[string]catalog.Material, len(all))
	for _, m := range all {
		p.materials[input.CodeKey(m.Code)] = m
	}
	return p, nil
}

// promise plans the item alone; nil when it cannot be planned (its
// product, route or work centres no longer allow it).
func (p *promiser) promise(ctx context.Context, tx *gorm.DB, b BacklogItem, products map[string]catalog.Product) (*Promise, error) {
	key := fmt.Sprintf("%s|%d|%v", b.SKU, b.Qty, b.Options)
	if pr, ok := p.done[key]; ok {
		return pr, nil
	}
	pr, err := p.plan(ctx, tx, b, products)
	if apperr.Code(err) != apperr.EINTERNAL {
		err = nil // what no launch could plan has no promise
	}
	p.done[key] = pr
	return pr, err
}

func (p *promiser) plan(ctx context.Context, tx *gorm.DB, b BacklogItem, products map[string]catalog.Product) (*Promise, error) {
	prod, ok := products[b.SKU]
	if !ok {
		return nil, apperr.NotFound("no product %s", b.SKU)
	}
	route, ok := p.routes[prod.RouteID]
	if !ok {
		var err error
		if route, err = catalog.RouteByID(ctx, tx, prod.RouteID); err != nil {
			return nil, err
		}
		p.routes[prod.RouteID] = route
	}
	if len(route.Operations) == 0 || route.Kind != prod.Kind {
		return nil, apperr.Invalid("no route")
	}
	backlog := []BacklogItem{b}
	x := explode(backlog, products, route)
	if err := cutFromBoards(ctx, tx, x.parts, backlog, products); err != nil {
		return nil, err
	}
	steps := MaterialStepsOf(route)
	needs, err := p.s.launchNeeds(ctx, tx, &x, backlog, products, steps, p.s.stock.EdgeOverhang())
	if err != nil {
		return nil, err
	}
	hold := p.holdOf(needs)
	hold.applyTo(x.tasks, x.seqs(), steps)
	problem := p.problem
	lead := len(problem.Tasks)
	problem.Tasks = slices.Clone(problem.Tasks)
	for _, t := range x.tasks {
		t.After = slices.Clone(t.After)
		for i := range t.After {
			t.After[i] += lead
		}
		problem.Tasks = append(problem.Tasks, t)
	}
	plan, err := Schedule(problem)
	if err != nil {
		return nil, scheduleError(err, p.wcs)
	}
	ready := p.today
	for _, sl := range plan.Slots[lead:] {
		if sl.End.Day.After(ready) {
			ready = sl.End.Day
		}
	}
	return &Promise{ReadyOn: database.DateOf(ready), HeldBy: hold.held}, nil
}

// holdOf is when the steps using materials up could start, the needs
// coming after every live order's.
func (p *promiser) holdOf(needs []stock.Move) orderHold {
	h := orderHold{notBefore: map[string]time.Time{}, held: HeldList{}}
	sum := map[string]float64{}
	var codes []string
	for _, n := range needs {
		if _, ok := sum[n.Code]; !ok {
			codes = append(codes, n.Code)
		}
		sum[n.Code] += n.Qty
	}
	slices.Sort(codes)
	for _, code := range codes {
		need := sum[code]
		if need <= stockEpsilon {
			continue
		}
		day, known := availableOn(p.today, p.onHand[code], p.incoming[code], p.cum[code]+need)
		if !known {
			if l, ok := p.lead[code]; ok {
				day, known = purchasing.AddWorkingDays(p.today, l, nil, nil), true
			}
		}
		if known && !day.After(p.today) {
			continue
		}
		held := Held{Code: code, Needed: stock.Round6(need)}
		if known {
			d := database.DateOf(day)
			held.AvailableOn = &d
			kind := p.materials[input.CodeKey(code)].Kind
			if day.After(h.notBefore[kind]) {
				h.notBefore[kind] = day
			}
		}
		h.held = append(h.held, held)
	}
	return h
}

// Promises returns, for each backlog item, the day it could be ready if
// launched now (nil for one no launch could plan); read in one
// transaction.
func (s *Service) Promises(ctx context.Context, items []BacklogItem) ([]*Promise, error) {
	out := make([]*Promise, len(items))
	if len(items) == 0 {
		return out, nil
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		p, err := s.newPromiser(ctx, tx)
		if err != nil {
			return err
		}
		skus := make([]string, len(items))
		for i, it := range items {
			skus[i] = it.SKU
		}
		products, err := catalog.ProductSpecs(ctx, tx, skus)
		if err != nil {
			return err
		}
		for i, it := range items {
			if out[i], err = p.promise(ctx, tx, it, products); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// MaxQuoteQty is the most units a quote asks for.
const MaxQuoteQty = 1000

// Quote returns the day qty units of the SKU, with the decor options
// chosen ({"корпус": "Дуб сонома"}, by the board's decor or code), could be
// ready if ordered and launched now, and what they would wait for. EINVALID
// naming sku for no such product, qty out of 1..MaxQuoteQty, options.<slot>
// for a choice the product does not allow, and sku when its route cannot
// make it.
func (s *Service) Quote(ctx context.Context, sku string, qty int, options map[string]string) (Promise, error) {
	var out Promise
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		products, err := catalog.ProductSpecs(ctx, tx, []string{sku})
		if err != nil {
			return err
		}
		var fields []apperr.FieldError
		prod, ok := products[sku]
		if !ok {
			fields = append(fields, apperr.Field("sku", "no product has the SKU %q", sku))
		}
		if qty < 1 || qty > MaxQuoteQty {
			fields = append(fields, apperr.Field("qty", "must be from 1 to %d", MaxQuoteQty))
		}
		chosen := catalog.Options{}
		if ok && len(options) > 0 {
			all, err := catalog.AllMaterials(ctx, tx)
			if err != nil {
				return err
			}
			for _, slot := range slices.Sorted(mapKeys(options)) {
				code, err := prod.ResolveOption(strings.TrimSpace(slot), strings.TrimSpace(options[slot]), all)
				if err != nil {
					fields = append(fields, apperr.Field("options."+slot, "%s", err))
					continue
				}
				for _, sl := range prod.Slots {
					if strings.EqualFold(sl.Name, strings.TrimSpace(slot)) {
						chosen[sl.Name] = code
					}
				}
			}
		}
		if len(fields) > 0 {
			return apperr.Invalid("the quote is not valid", fields...)
		}
		p, err := s.newPromiser(ctx, tx)
		if err != nil {
			return err
		}
		pr, err := p.plan(ctx, tx, BacklogItem{ItemID: -1, SKU: sku, Qty: qty, Options: chosen}, products)
		if apperr.Code(err) == apperr.EINVALID {
			return apperr.Invalid("the quote cannot be planned", apperr.Field("sku", "%s", apperr.As(err).Message))
		}
		if err != nil {
			return err
		}
		out = *pr
		return nil
	})
	return out, err
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
