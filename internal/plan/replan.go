package plan

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan/schedblob"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// This file is re-planning: the unfinished operations of live production
// orders placed again from now, in priority order (higher first) and then
// launch order, on the capacity, shifts and calendars the work centres have
// now. Operations done stay as they are; one in progress is planned whole.

// Rescheduled is a production order whose plan a re-plan moved.
type Rescheduled struct {
	ProdOrderID int64 `json:"prod_order_id"`
	Priority    int   `json:"priority"`
	// ETABefore and ETAAfter are the promised ETA before and after; they
	// differ only when the schedule computed it (not eta_given).
	ETABefore database.Date `json:"eta_before" swaggertype:"string" format:"date"`
	ETAAfter  database.Date `json:"eta_after" swaggertype:"string" format:"date"`
	// PlannedETABefore and PlannedETAAfter are the day its last operation
	// was and is now planned to end.
	PlannedETABefore database.Date `json:"planned_eta_before" swaggertype:"string" format:"date"`
	PlannedETAAfter  database.Date `json:"planned_eta_after" swaggertype:"string" format:"date"`
	// ETAGiven: a planner gave the ETA at launch; it is kept.
	ETAGiven bool `json:"eta_given"`
}

// ReplanSummary is what a re-plan did.
type ReplanSummary struct {
	// ID is the re-plan's, which its plan.replanned event is about
	// (plan_replans).
	ID int64 `json:"id"`
	// From is the moment it planned from, in the factory's time zone.
	From time.Time `json:"from" format:"date-time"`
	// Replanned is the number of unfinished production orders placed again.
	Replanned int `json:"replanned"`
	// Moved are those whose ETA or planned ETA moved, in plan order (priority, then launch).
	Moved []Rescheduled `json:"moved"`
}

// Replan re-plans every unfinished (launched or in-progress) production
// order from now, in priority order and then launch order, on the work
// centres' capacity, shifts and calendars as they are now and what the shop
// floor has done. An order's planned ETA becomes the end of its last
// operation; its promised ETA follows unless a planner gave it at launch
// (eta_given), and every order whose promised ETA moved gets a
// prod_order.rescheduled event, which sales follow (order.status_changed,
// and so the shop's callback). The re-plan itself is journalled once, as
// plan.replanned naming who asked for it and what moved, also when nothing
// did. It runs under the lock launches take, so a launch or a progress
// report at the same time waits for it or it for them.
//
// It returns EINVALID, changing nothing, when a work centre the orders need
// has no working day within three years (the error names it).
func (s *Service) Replan(ctx context.Context) (ReplanSummary, error) {
	var out ReplanSummary
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		out, err = s.replanJournalled(ctx, tx, contracts.ReplanRequested, 0, scope{where: "1 = 1"}, scope{})
		return err
	})
	return out, err
}

// replanJournalled re-plans the live orders that moving selects (all of
// them: "1 = 1"; see replanFrom) and journals it: a row of plan_replans and
// its plan.replanned event, with the reason and, for a change of priority,
// the production order whose priority changed.
func (s *Service) replanJournalled(ctx context.Context, tx *gorm.DB, reason string, prodOrderID int64, moving, tail scope) (ReplanSummary, error) {
	out, err := s.replanFrom(ctx, tx, moving, tail)
	if err != nil {
		return out, err
	}
	var by *int64
	if prodOrderID != 0 {
		by = &prodOrderID
	}
	err = database.Scan(tx.Raw("INSERT INTO plan_replans (reason, prod_order_id, planned_from, replanned, moved) VALUES (?, ?, ?, ?, ?) RETURNING id",
		reason, by, database.TimeArg(tx, out.From), out.Replanned, len(out.Moved)), &out.ID)
	if err != nil {
		return out, err
	}
	moved := make([]contracts.ReplanMoved, len(out.Moved))
	for i, m := range out.Moved {
		moved[i] = contracts.ReplanMoved{ProdOrderID: m.ProdOrderID, ETABefore: m.ETABefore.String(), ETAAfter: m.ETAAfter.String(),
			PlannedETABefore: m.PlannedETABefore.String(), PlannedETAAfter: m.PlannedETAAfter.String()}
	}
	return out, events.Add(ctx, tx, contracts.PlanReplanned.New(out.ID, contracts.PlanReplannedPayload{ReplanID: out.ID, Reason: reason,
		ProdOrderID: prodOrderID, From: out.From.UTC().Format(fromLayout), Replanned: out.Replanned, Moved: moved}))
}

// fromLayout is RFC 3339 in UTC with milliseconds, as every time tsekh shows.
const fromLayout = "2006-01-02T15:04:05.000Z"

// replanFrom re-plans, under the plan lock and from now, the live orders
// that moving selects on the load of the others; with a tail, as
// replanSettling does.
func (s *Service) replanFrom(ctx context.Context, tx *gorm.DB, moving, tail scope) (ReplanSummary, error) {
	if err := lockPlan(tx); err != nil {
		return ReplanSummary{}, err
	}
	now, err := s.clockIn(ctx, tx)
	if err != nil {
		return ReplanSummary{}, err
	}
	centers, err := catalog.AllWorkCenters(ctx, tx)
	if err != nil {
		return ReplanSummary{}, err
	}
	if tail.where != "" {
		return s.replanSettling(ctx, tx, now, centers, moving, tail)
	}
	return s.replan(ctx, tx, now, centers, nil, moving.where, moving.args...)
}

// behindInPlan is the condition on plan_prod_orders that selects order id
// and every order behind it in the plan when it has the priority given:
// those of lower priority, and those of that priority launched after it
// (the plan's order is priority, higher first, then launch).
func behindInPlan(priority int, id int64) (string, []any) {
	return "(plan_prod_orders.priority < ? OR (plan_prod_orders.priority = ? AND plan_prod_orders.id >= ?))", []any{priority, priority, id}
}

// PriorityChange is the result of SetPriority: the order as it is now and
// the re-plan the change made.
type PriorityChange struct {
	ProdOrder ProdOrder     `json:"prod_order"`
	Replan    ReplanSummary `json:"replan"`
}

// SetPriority changes the priority of a launched or in-progress production
// order, writing prod_order.priority_changed when it differs, and re-plans
// the order and every order behind it at its old place or its new one
// (as Replan does them, journalled as plan.replanned with reason priority)
// so that it takes its new place; the orders ahead keep theirs, and so do
// those behind both places when the orders between them, placed again,
// use the work centres' days up as before (they would land where they
// are). It returns
// EINVALID for a priority out of range or a work centre with no working day
// (nothing changes then), ENOTFOUND for an unknown order, ECONFLICT for one
// that is done or cancelled.
func (s *Service) SetPriority(ctx context.Context, id int64, priority int) (PriorityChange, error) {
	if priority < MinPriority || priority > MaxPriority {
		return PriorityChange{}, apperr.Invalid("the change is not valid", apperr.Field("priority", "must be from %d to %d (higher first)", MinPriority, MaxPriority))
	}
	var out PriorityChange
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockPlan(tx); err != nil {
			return err
		}
		o, err := prodOrder(ctx, tx, id, false)
		if err != nil {
			return err
		}
		// Only the order and those behind it in the plan, at its old place
		// or its new one (whichever comes first), can move: the orders
		// ahead of both keep their slots, and the rest is planned again on
		// their load, exactly as a re-plan of everything would place it.
		// Their rows are locked first, in id order as the re-plan takes
		// them, so that no one locking several of them waits in a circle.
		behind, behindArgs := behindInPlan(max(priority, o.Priority), id)
		if _, err := lockLive(ctx, tx, behind, behindArgs...); err != nil {
			return err
		}
		if o, err = prodOrder(ctx, tx, id, true); err != nil {
			return err
		}
		if o.Status != StatusLaunched && o.Status != StatusInProgress {
			return apperr.Conflict("%s is %s: only a launched or in-progress order has a place in the plan", describe(o), o.Status)
		}
		if priority != o.Priority {
			if err := tx.Model(&ProdOrder{}).Where("id = ?", id).Update("priority", priority).Error; err != nil {
				return err
			}
			err := events.Add(ctx, tx, contracts.ProdOrderPriorityChanged.New(id, contracts.ProdOrderPriorityChangedPayload{
				ProdOrderID: id, Items: o.ItemIDs(), Priority: priority, PreviousPriority: o.Priority}))
			if err != nil {
				return err
			}
		}
		// The orders between its two places move; those behind both
		// (the tail) only when the load ahead of them does not settle as
		// it was (replanSettling).
		behind, behindArgs = behindInPlan(max(priority, o.Priority), id)
		tail := scope{where: "(plan_prod_orders.priority < ? OR (plan_prod_orders.priority = ? AND plan_prod_orders.id > ?))",
			args: []any{min(priority, o.Priority), min(priority, o.Priority), id}}
		between := scope{where: "(" + behind + ") AND NOT " + tail.where, args: append(behindArgs, tail.args...)}
		if out.Replan, err = s.replanJournalled(ctx, tx, contracts.ReplanPriority, id, between, tail); err != nil {
			return err
		}
		out.ProdOrder, err = prodOrder(ctx, tx, id, false)
		if err != nil {
			return err
		}
		os := []ProdOrder{out.ProdOrder}
		err = s.fillShort(ctx, tx, os)
		out.ProdOrder = os[0]
		return err
	})
	return out, err
}

// lockPlan takes the lock that serialises whatever places work in the plan
// (launches, re-plans), on PostgreSQL; SQLite runs one writer at a time.
// What runs under it reads the whole live load (database.BigReads).
func lockPlan(tx *gorm.DB) error {
	if err := database.LockKey(tx, launchLock); err != nil {
		return err
	}
	return database.BigReads(tx)
}

// replan places again, in priority and then launch order, the unfinished
// operations of the live production orders that the condition on
// plan_prod_orders (with its args) selects, on the load of the live orders
// it does not select, and stores their slots and ETAs, writing
// prod_order.rescheduled for each order whose promised ETA moved. The caller
// holds the plan lock; the orders moved are locked here, in id order, so that
// a progress report waits for the re-plan or the re-plan for it.
func (s *Service) replan(ctx context.Context, tx *gorm.DB, now clock, wcs map[int64]catalog.WorkCenter, extra *orderNeeds, moving string,
	args ...any) (ReplanSummary, error) {
	out := ReplanSummary{From: now.Now, Moved: []Rescheduled{}}
	ids, err := lockLive(ctx, tx, moving, args...)
	if err != nil || len(ids) == 0 {
		return out, err
	}
	notMoving := "NOT (plan_prod_orders.status IN ? AND (" + moving + "))"
	r, err := s.workOut(ctx, tx, now, wcs, extra, ids, notMoving, append([]any{liveStatuses}, args...)...)
	if err != nil {
		return out, err
	}
	if s.planned != nil {
		s.planned()
	}
	return out, r.store(ctx, tx, &out)
}

// replanSettling re-plans the live orders that head selects and, behind
// all of them, those that tail selects (each condition on plan_prod_orders
// with its args), as replan re-plans both; but the tail's orders are
// placed, a batch at a time in plan order, only until the load (each work
// centre's days used up to their minutes) is what it was before them:
// from there on each would land where it is, as a re-plan of them at the
// same moment would place it, and they are neither read nor written. A
// change of priority moves the orders between the order's old place and
// its new one; those behind both stay when the load behind the others
// settles as it was. The caller holds the tail's rows locked.
func (s *Service) replanSettling(ctx context.Context, tx *gorm.DB, now clock, wcs map[int64]catalog.WorkCenter, head scope, tail scope) (ReplanSummary, error) {
	both := "(" + head.where + ") OR (" + tail.where + ")"
	bothArgs := append(slices.Clone(head.args), tail.args...)
	out := ReplanSummary{From: now.Now, Moved: []Rescheduled{}}
	ids, err := lockLive(ctx, tx, head.where, head.args...)
	if err != nil {
		return out, err
	}
	notMoving := "NOT (plan_prod_orders.status IN ? AND (" + both + "))"
	r, err := s.startReplan(ctx, tx, now, wcs, nil, notMoving, append([]any{liveStatuses}, bothArgs...)...)
	if err != nil {
		return out, err
	}
	r.settle = newSettling(r.problem, now.Today)
	if err := r.place(ctx, tx, ids); err != nil {
		return out, err
	}
	placed, behind := 0, 0
	if !r.settle.settled() {
		var tailIDs []int64
		err := tx.WithContext(ctx).Model(&ProdOrder{}).Where("status IN ?", liveStatuses).Where(tail.where, tail.args...).
			Order("priority DESC, id").Pluck("id", &tailIDs).Error
		if err != nil {
			return out, err
		}
		behind = len(tailIDs)
		for batch := range slices.Chunk(tailIDs, cmp.Or(s.tailBatch, tailBatch)) {
			if err := r.place(ctx, tx, batch); err != nil {
				return out, err
			}
			if placed += len(batch); r.settle.settled() {
				break
			}
		}
	}
	if s.settled != nil {
		s.settled(placed, behind)
	}
	if s.planned != nil {
		s.planned()
	}
	return out, r.store(ctx, tx, &out)
}

// tailBatch is the orders behind a change of priority placed between two
// checks that the load settled.
const tailBatch = 100

// scope is a condition on plan_prod_orders with its args.
type scope struct {
	where string
	args  []any
}

// liveStatuses are the states of a production order in the plan.
var liveStatuses = []string{StatusLaunched, StatusInProgress}

// replanning is a re-plan worked out and not stored yet: the orders placed
// again, in plan order, their operations and where the schedule places
// those not done.
type replanning struct {
	wcs     map[int64]catalog.WorkCenter
	orders  []ProdOrder
	scheds  map[int64][]liveOp // every operation of each order, as stored
	byOrder map[int64][]liveOp // those not done, by seq and id, as placed
	holds   map[int64]orderHold
	placed  []placedOrder
	problem Problem // the load of the orders not placed again
	tasks   []Task  // their overdue work, then the tasks of the orders placed
	sched   *scheduler
	settle  *settling // nil: the load is not followed (see replanSettling)
}

// placedOrder is an order of a re-plan and its tasks: tasks[from:to], in
// byOrder's order.
type placedOrder struct {
	order    int // index into orders
	from, to int
}

// workOut places again the live production orders ids (locked) on the
// load of the live orders that the condition fixed selects (with its
// args), and of extra, a launch not booked yet, when given.
func (s *Service) workOut(ctx context.Context, tx *gorm.DB, now clock, wcs map[int64]catalog.WorkCenter, extra *orderNeeds, ids []int64,
	fixed string, args ...any) (*replanning, error) {
	r, err := s.startReplan(ctx, tx, now, wcs, extra, fixed, args...)
	if err != nil {
		return nil, err
	}
	return r, r.place(ctx, tx, ids)
}

// startReplan is a re-plan of no order yet, on the load of the live
// orders that the condition fixed selects (their overdue work placed
// first) and of extra, when given.
func (s *Service) startReplan(ctx context.Context, tx *gorm.DB, now clock, wcs map[int64]catalog.WorkCenter, extra *orderNeeds,
	fixed string, args ...any) (*replanning, error) {
	r := &replanning{wcs: wcs, scheds: map[int64][]liveOp{}, byOrder: map[int64][]liveOp{}}
	problem, err := s.problem(ctx, tx, now, wcs, fixed, args...)
	if err != nil {
		return nil, err
	}
	if r.holds, err = s.materialHolds(ctx, tx, now.Today, extra); err != nil {
		return nil, err
	}
	r.tasks, r.sched, r.problem = problem.Tasks, newScheduler(problem), problem
	if err := r.sched.add(r.tasks); err != nil {
		return nil, scheduleError(err, wcs)
	}
	return r, nil
}

// place places the live production orders ids (locked) after those placed
// before, in plan order.
func (r *replanning) place(ctx context.Context, tx *gorm.DB, ids []int64) error {
	orders, err := replanOrders(ctx, tx, ids)
	if err != nil {
		return err
	}
	scheds, err := schedulesOf(ctx, tx, ids)
	if err != nil {
		return err
	}
	done, err := doneOf(ctx, tx, ids)
	if err != nil {
		return err
	}
	byOrder := liveOpsOf(scheds, done)
	maps.Copy(r.scheds, scheds)
	maps.Copy(r.byOrder, byOrder)
	first, n := len(r.placed), 0
	for _, o := range orders {
		n += len(byOrder[o.ID])
	}
	from := len(r.tasks)
	r.tasks = slices.Grow(r.tasks, n)
	for _, o := range orders {
		at := len(r.tasks)
		r.tasks = appendRemainingTasks(r.tasks, byOrder[o.ID])
		if h := r.holds[o.ID]; len(h.notBefore) > 0 {
			h.applyTo(r.tasks[at:], seqsOf(byOrder[o.ID]), MaterialSteps{Cut: o.CutSeq, Band: o.BandSeq, Assemble: o.AssembleSeq})
		}
		r.placed = append(r.placed, placedOrder{order: len(r.orders), from: at, to: len(r.tasks)})
		r.orders = append(r.orders, o)
	}
	if err := r.sched.add(r.tasks[from:]); err != nil {
		return scheduleError(err, r.wcs)
	}
	if r.settle != nil {
		for _, p := range r.placed[first:] {
			r.settle.add(r.byOrder[r.orders[p.order].ID], r.sched.plan.Slots[p.from:p.to])
		}
	}
	return nil
}

// settling follows whether the orders placed again leave each work
// centre's days used up to the same minute as their slots before did
// (with the load of the orders not placed again), so that whatever is
// placed behind them would land where it did. Work overdue (planned to end
// before today), placed again from now, never settles.
type settling struct {
	today         time.Time
	centers       map[int64]Center
	base          map[dayKey]float64 // the load of the orders not placed again
	before, after map[dayKey]float64 // the orders placed again, where they were and where they are
	differ        map[dayKey]bool    // the days whose levels differ
	never         bool
}

func newSettling(p Problem, today time.Time) *settling {
	st := &settling{today: today, centers: p.Centers, base: map[dayKey]float64{}, before: map[dayKey]float64{}, after: map[dayKey]float64{},
		differ: map[dayKey]bool{}, never: len(p.Tasks) > 0}
	for _, b := range p.Load {
		k := dayKey{b.Center, epochDay(b.Day)}
		st.base[k] = max(st.base[k], b.Level)
	}
	return st
}

// add counts an order's operations placed again: where they were, and
// their new slots.
func (st *settling) add(ops []liveOp, slots []Slot) {
	var touched []dayKey
	for k, op := range ops {
		c := st.centers[op.WorkCenterID]
		if !st.useUp(st.before, op.WorkCenterID, c, slotOfBlob(op.Slot), &touched) || !st.useUp(st.after, op.WorkCenterID, c, slots[k], &touched) {
			st.never = true
		}
	}
	for _, k := range touched {
		if max(st.base[k], st.before[k]) != max(st.base[k], st.after[k]) {
			st.differ[k] = true
		} else {
			delete(st.differ, k)
		}
	}
}

// settled tells whether the levels are what they were.
func (st *settling) settled() bool { return !st.never && len(st.differ) == 0 }

// dayKey is a work centre's day, counted from 1970-01-01.
type dayKey struct {
	center int64
	day    int64
}

// useUp raises the levels of the days of work centre id (c) that slot
// uses, as problem books them (the day it ends up to its end minute, the
// working days from today before it whole), and adds them to touched. It
// is false for a slot not planned or ending before today.
func (st *settling) useUp(levels map[dayKey]float64, id int64, c Center, sl Slot, touched *[]dayKey) bool {
	if sl.Start.Day.IsZero() || sl.End.Day.IsZero() || sl.End.Day.Before(st.today) {
		return false
	}
	end := dayKey{id, epochDay(sl.End.Day)}
	levels[end] = max(levels[end], sl.End.Min)
	*touched = append(*touched, end)
	for d := sl.Start.Day; d.Before(sl.End.Day); d = d.AddDate(0, 0, 1) {
		if !d.Before(st.today) && c.Works(d) {
			k := dayKey{id, epochDay(d)}
			levels[k] = max(levels[k], c.Capacity)
			*touched = append(*touched, k)
		}
	}
	return true
}

// store writes what the re-plan changed, and tells out: each order's slots
// that moved and its held materials, its planned and promised ETAs when
// they moved, and prod_order.rescheduled when the promised one did.
func (r *replanning) store(ctx context.Context, tx *gorm.DB, out *ReplanSummary) error {
	moved := map[int64][]liveOp{} // the schedules that change
	var rescheduled []contracts.ProdOrderRescheduledPayload
	for _, p := range r.placed {
		o := r.orders[p.order]
		out.Replanned++
		opsOf := r.byOrder[o.ID]
		planned := o.PlannedETA
		if len(opsOf) > 0 {
			planned = database.Date{}
			// The order's operations not done are its schedule's own (in
			// another order) when none is done, else a copy of those.
			all := r.scheds[o.ID]
			shared := len(opsOf) == len(all)
			var slots map[int64]schedblob.Slot // the copies whose slot changes
			changed := false
			for k, op := range opsOf {
				sl := r.sched.plan.Slots[p.from+k]
				if stored := blobSlot(sl); stored != op.Slot {
					changed = true
					if shared {
						opsOf[k].Slot = stored
					} else {
						if slots == nil {
							slots = map[int64]schedblob.Slot{}
						}
						slots[op.ID] = stored
					}
				}
				if sl.End.Day.After(planned.Time) {
					planned = database.DateOf(sl.End.Day)
				}
			}
			for i := range all {
				if sl, ok := slots[all[i].ID]; ok {
					all[i].Slot = sl
				}
			}
			if changed {
				moved[o.ID] = all
			}
		}
		eta := planned
		if o.ETAGiven {
			eta = o.ETA
		}
		if held := r.holds[o.ID].held; !sameHeld(held, o.HeldBy) {
			if err := tx.Model(&ProdOrder{}).Where("id = ?", o.ID).Update("held_by", held).Error; err != nil {
				return err
			}
		}
		if planned.String() == o.PlannedETA.String() && eta.String() == o.ETA.String() {
			continue
		}
		out.Moved = append(out.Moved, Rescheduled{ProdOrderID: o.ID, Priority: o.Priority, ETABefore: o.ETA, ETAAfter: eta,
			PlannedETABefore: o.PlannedETA, PlannedETAAfter: planned, ETAGiven: o.ETAGiven})
		if eta.String() == o.ETA.String() {
			continue
		}
		rescheduled = append(rescheduled, contracts.ProdOrderRescheduledPayload{ProdOrderID: o.ID,
			ETA: eta.String(), PreviousETA: o.ETA.String(), PlannedETA: planned.String(), Priority: o.Priority})
	}
	if err := storeETAs(ctx, tx, out.Moved); err != nil {
		return err
	}
	if err := rescheduledEvents(ctx, tx, rescheduled); err != nil {
		return err
	}
	return writeSlots(ctx, tx, moved)
}

// storeETAs writes the planned and promised ETAs of the production orders
// that moved (on PostgreSQL in one statement, as arrays).
func storeETAs(ctx context.Context, tx *gorm.DB, moved []Rescheduled) error {
	if database.DialectOf(tx) != database.Postgres {
		for _, m := range moved {
			err := tx.WithContext(ctx).Model(&ProdOrder{}).Where("id = ?", m.ProdOrderID).
				Updates(map[string]any{"planned_eta": m.PlannedETAAfter, "eta": m.ETAAfter}).Error
			if err != nil {
				return err
			}
		}
		return nil
	}
	if len(moved) == 0 {
		return nil
	}
	ids, planned, eta := make([]int64, len(moved)), make([]string, len(moved)), make([]string, len(moved))
	for i, m := range moved {
		ids[i], planned[i], eta[i] = m.ProdOrderID, m.PlannedETAAfter.String(), m.ETAAfter.String()
	}
	// Through the transaction itself: gorm would spread the arrays into lists.
	_, err := tx.Statement.ConnPool.ExecContext(ctx, `UPDATE plan_prod_orders AS o
SET planned_eta = NULLIF(v.planned_eta, '')::date, eta = NULLIF(v.eta, '')::date
FROM unnest($1::bigint[], $2::text[], $3::text[]) AS v (id, planned_eta, eta) WHERE o.id = v.id`, ids, planned, eta)
	return err
}

// replanOrders reads what a re-plan needs of the production orders ids
// (not their items), in plan order: priority, higher first, then launch.
func replanOrders(ctx context.Context, tx *gorm.DB, ids []int64) ([]ProdOrder, error) {
	var out []ProdOrder
	for batch := range slices.Chunk(ids, scheduleBatch) {
		rows, err := tx.WithContext(ctx).Model(&ProdOrder{}).
			Select("id, priority, eta, planned_eta, eta_given, held_by, cut_seq, band_seq, assemble_seq").Where("id IN ?", batch).Rows()
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var o ProdOrder
			if err := rows.Scan(&o.ID, &o.Priority, &o.ETA, &o.PlannedETA, &o.ETAGiven, &o.HeldBy, &o.CutSeq, &o.BandSeq, &o.AssembleSeq); err != nil {
				_ = rows.Close()
				return nil, err
			}
			out = append(out, o)
		}
		if err := errors.Join(rows.Close(), rows.Err()); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b ProdOrder) int { return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}

// rescheduledEvents writes prod_order.rescheduled for each of the payloads,
// in their order, with the items of their production orders.
func rescheduledEvents(ctx context.Context, tx *gorm.DB, payloads []contracts.ProdOrderRescheduledPayload) error {
	ids := make([]int64, len(payloads))
	for i, p := range payloads {
		ids[i] = p.ProdOrderID
	}
	items := map[int64][]int64{}
	for batch := range slices.Chunk(ids, scheduleBatch) {
		var rows []ProdItem
		if err := tx.WithContext(ctx).Select("prod_order_id, item_id").Where("prod_order_id IN ?", batch).Order("item_id").Find(&rows).Error; err != nil {
			return err
		}
		for _, it := range rows {
			items[it.ProdOrderID] = append(items[it.ProdOrderID], it.ItemID)
		}
	}
	for _, p := range payloads {
		p.Items = items[p.ProdOrderID]
		if p.Items == nil {
			p.Items = []int64{}
		}
		if err := events.Add(ctx, tx, contracts.ProdOrderRescheduled.New(p.ProdOrderID, p)); err != nil {
			return err
		}
	}
	return nil
}

// lockLive locks (on PostgreSQL) the rows of the live production orders
// that the condition on plan_prod_orders selects, in id order, and returns
// their ids.
func lockLive(ctx context.Context, tx *gorm.DB, where string, args ...any) ([]int64, error) {
	q := database.ForUpdate(tx.WithContext(ctx).Model(&ProdOrder{}).Where("plan_prod_orders.status IN ?", []string{StatusLaunched, StatusInProgress}).
		Where(where, args...).Order("id"))
	var ids []int64
	err := q.Pluck("id", &ids).Error
	return ids, err
}
