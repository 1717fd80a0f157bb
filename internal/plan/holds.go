package plan

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/purchasing"
	"github.com/tsekh/tsekh/internal/stock"
)

// This file is materials in the schedule. No operation that uses a
// material up (cutting a board, banding a band, assembling with fittings)
// is planned before the material is available to its production order:
// the live orders take, in plan order (priority, then launch), what is on
// hand and then what open purchase orders bring, by their expected dates
// (a date passed counts as today); an order whose need is covered only by
// a later delivery waits for it, and one whose need no purchase order
// covers waits for the shortest lead time of a supplier selling the
// material, counted from today in working days (Monday to Friday). A
// material no supplier sells and nothing covers holds nothing back: the
// order says so (held_by, available_on null), the schedule cannot know.

// Held is a material that holds a production order back.
type Held struct {
	Code string `json:"code" example:"LDSP16-SONOMA"`
	// Needed is what the order still needs of it.
	Needed float64 `json:"needed" example:"1.6"`
	// AvailableOn is the day it is available to the order; null when
	// nothing covers it and no supplier sells it.
	AvailableOn *database.Date `json:"available_on" swaggertype:"string" format:"date" extensions:"x-nullable" example:"2026-12-10"`
}

// HeldList is a production order's held_by, stored as a JSON array.
type HeldList []Held

// Value implements driver.Valuer.
func (l HeldList) Value() (driver.Value, error) {
	if l == nil {
		return "[]", nil
	}
	b, err := json.Marshal(l)
	return string(b), err
}

// Scan implements sql.Scanner.
func (l *HeldList) Scan(src any) error {
	switch v := src.(type) {
	case string:
		return json.Unmarshal([]byte(v), l)
	case []byte:
		return json.Unmarshal(v, l)
	case nil:
		*l = HeldList{}
		return nil
	}
	return fmt.Errorf("plan: cannot scan held_by from %T", src)
}

// orderNeeds is a production order's place in the plan and what it still
// needs, for an order whose needs stock does not hold yet (a launch).
type orderNeeds struct {
	id       int64
	priority int
	needs    []stock.Move
}

// orderHold is when a production order's steps that use materials up may
// start (per material kind) and the materials holding it back.
type orderHold struct {
	notBefore map[string]time.Time
	held      HeldList
}

// applyTo sets NotBefore on the tasks of the order's operations (tasks[i]
// is the operation of route step seqs[i]) at its steps that use materials
// up.
func (h orderHold) applyTo(tasks []Task, seqs []int, steps MaterialSteps) {
	if len(h.notBefore) == 0 {
		return
	}
	for i, seq := range seqs {
		var kind string
		switch {
		case seq == steps.Cut && steps.Cut != 0:
			kind = catalog.KindBoard
		case seq == steps.Band && steps.Band != 0:
			kind = catalog.KindBand
		case seq == steps.Assemble && steps.Assemble != 0:
			kind = catalog.KindFitting
		default:
			continue
		}
		if d, ok := h.notBefore[kind]; ok {
			tasks[i].NotBefore = d
		}
	}
}

// materialHolds returns, per live production order (and extra, when
// given, in its place: a launch whose needs are not booked yet), when its
// material-using steps may start and what holds it back, from today.
func (s *Service) materialHolds(ctx context.Context, tx *gorm.DB, today time.Time, extra *orderNeeds) (map[int64]orderHold, error) {
	var live []struct {
		ID       int64
		Priority int
	}
	err := tx.WithContext(ctx).Model(&ProdOrder{}).Where("status IN ?", []string{StatusLaunched, StatusInProgress}).
		Order("priority DESC, id").Find(&live).Error
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(live))
	for i, o := range live {
		ids[i] = o.ID
	}
	booked, err := s.stock.NeedsOf(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	order := make([]orderNeeds, 0, len(live)+1)
	for _, o := range live {
		on := orderNeeds{id: o.ID, priority: o.Priority}
		for _, n := range booked[o.ID] {
			on.needs = append(on.needs, stock.Move{Code: n.Code, Qty: n.Needed})
		}
		order = append(order, on)
	}
	if extra != nil {
		at := slices.IndexFunc(order, func(o orderNeeds) bool {
			return o.priority < extra.priority || (o.priority == extra.priority && o.id > extra.id)
		})
		if at < 0 {
			at = len(order)
		}
		order = slices.Insert(order, at, *extra)
	}
	onHand, err := stock.OnHandTx(ctx, tx)
	if err != nil {
		return nil, err
	}
	incoming, err := purchasing.IncomingTx(ctx, tx)
	if err != nil {
		return nil, err
	}
	lead, err := purchasing.LeadDaysTx(ctx, tx)
	if err != nil {
		return nil, err
	}
	var codes []string
	for _, o := range order {
		for _, n := range o.needs {
			codes = append(codes, n.Code)
		}
	}
	materials, err := catalog.MaterialsByCode(ctx, tx, codes)
	if err != nil {
		return nil, err
	}
	cum := map[string]float64{}
	out := make(map[int64]orderHold, len(order))
	for _, o := range order {
		h := orderHold{notBefore: map[string]time.Time{}, held: HeldList{}}
		for _, n := range o.needs {
			if n.Qty <= stockEpsilon {
				continue
			}
			cum[n.Code] += n.Qty
			day, known := availableOn(today, onHand[n.Code], incoming[n.Code], cum[n.Code])
			if !known {
				if l, ok := lead[n.Code]; ok {
					day, known = purchasing.AddWorkingDays(today, l, nil, nil), true
				}
			}
			if known && !day.After(today) {
				continue
			}
			held := Held{Code: n.Code, Needed: math.Round(n.Qty*1e6) / 1e6}
			if known {
				d := database.DateOf(day)
				held.AvailableOn = &d
				kind := materials[input.CodeKey(n.Code)].Kind
				if day.After(h.notBefore[kind]) {
					h.notBefore[kind] = day
				}
			}
			h.held = append(h.held, held)
		}
		slices.SortFunc(h.held, func(a, b Held) int { return cmpString(a.Code, b.Code) })
		out[o.id] = h
	}
	return out, nil
}

// stockEpsilon is below any quantity stock tells apart.
const stockEpsilon = 1e-6

// availableOn is the first day on which what is on hand and what arrives
// by then covers need (the live orders' cumulative need up to this one's):
// today when on hand covers it, a delivery's day (today for one overdue)
// when it does; false when nothing does.
func availableOn(today time.Time, onHand float64, in []purchasing.Incoming, need float64) (time.Time, bool) {
	have := onHand
	if have >= need-stockEpsilon {
		return today, true
	}
	for _, d := range in {
		have += d.Qty
		if have >= need-stockEpsilon {
			if d.Day.Before(today) {
				return today, true
			}
			return d.Day, true
		}
	}
	return time.Time{}, false
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sameHeld(a, b HeldList) bool {
	return slices.EqualFunc(a, b, func(x, y Held) bool {
		return x.Code == y.Code && x.Needed == y.Needed && (x.AvailableOn == nil) == (y.AvailableOn == nil) &&
			(x.AvailableOn == nil || x.AvailableOn.String() == y.AvailableOn.String())
	})
}
