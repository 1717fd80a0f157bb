package plan

import (
	"context"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
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
		out, err = s.replanJournalled(ctx, tx, contracts.ReplanRequested, 0, "1 = 1")
		return err
	})
	return out, err
}

// replanJournalled re-plans the live orders that moving selects (all of
// them: "1 = 1"; see replanFrom) and journals it: a row of plan_replans and
// its plan.replanned event, with the reason and, for a change of priority,
// the production order whose priority changed.
func (s *Service) replanJournalled(ctx context.Context, tx *gorm.DB, reason string, prodOrderID int64, moving string, args ...any) (ReplanSummary, error) {
	out, err := s.replanFrom(ctx, tx, moving, args...)
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
// that moving selects on the load of the others.
func (s *Service) replanFrom(ctx context.Context, tx *gorm.DB, moving string, args ...any) (ReplanSummary, error) {
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
	return s.replan(ctx, tx, now, centers, nil, moving, args...)
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
// so that it takes its new place; the orders ahead keep theirs. It returns
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
		behind, behindArgs = behindInPlan(max(priority, o.Priority), id)
		if out.Replan, err = s.replanJournalled(ctx, tx, contracts.ReplanPriority, id, behind, behindArgs...); err != nil {
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
	live := []string{StatusLaunched, StatusInProgress}
	ids, err := lockLive(ctx, tx, moving, args...)
	if err != nil {
		return out, err
	}
	if len(ids) == 0 {
		return out, nil
	}
	var orders []ProdOrder
	if err := withItems(tx.WithContext(ctx)).Where("id IN ?", ids).Order("priority DESC, id").Find(&orders).Error; err != nil {
		return out, err
	}
	byOrder, err := liveOpsOf(ctx, tx, ids)
	if err != nil {
		return out, err
	}
	notMoving := "NOT (plan_prod_orders.status IN ? AND (" + moving + "))"
	problem, err := s.problem(ctx, tx, now, wcs, notMoving, append([]any{live}, args...)...)
	if err != nil {
		return out, err
	}
	type placed struct {
		order    int // index into orders
		from, to int // its tasks: problem.Tasks[from:to], in byOrder's order
	}
	holds, err := s.materialHolds(ctx, tx, now.Today, extra)
	if err != nil {
		return out, err
	}
	plan := make([]placed, len(orders))
	for i, o := range orders {
		from := len(problem.Tasks)
		tasks := remainingTasks(byOrder[o.ID], from)
		holds[o.ID].applyTo(tasks, seqsOf(byOrder[o.ID]), MaterialSteps{Cut: o.CutSeq, Band: o.BandSeq, Assemble: o.AssembleSeq})
		problem.Tasks = append(problem.Tasks, tasks...)
		plan[i] = placed{order: i, from: from, to: len(problem.Tasks)}
	}
	sched, err := Schedule(problem)
	if err != nil {
		return out, scheduleError(err, wcs)
	}
	if s.planned != nil {
		s.planned()
	}
	var changed []slotChange
	for _, p := range plan {
		o := orders[p.order]
		out.Replanned++
		opsOf := byOrder[o.ID]
		planned := o.PlannedETA
		if len(opsOf) > 0 {
			planned = database.Date{}
			for k, op := range opsOf {
				sl := sched.Slots[p.from+k]
				if !sameSlot(sl, op.Slot) {
					changed = append(changed, slotChange{id: op.ID, slot: sl})
				}
				if sl.End.Day.After(planned.Time) {
					planned = database.DateOf(sl.End.Day)
				}
			}
		}
		eta := planned
		if o.ETAGiven {
			eta = o.ETA
		}
		if held := holds[o.ID].held; !sameHeld(held, o.HeldBy) {
			if err := tx.Model(&ProdOrder{}).Where("id = ?", o.ID).Update("held_by", held).Error; err != nil {
				return out, err
			}
		}
		if planned.String() == o.PlannedETA.String() && eta.String() == o.ETA.String() {
			continue
		}
		out.Moved = append(out.Moved, Rescheduled{ProdOrderID: o.ID, Priority: o.Priority, ETABefore: o.ETA, ETAAfter: eta,
			PlannedETABefore: o.PlannedETA, PlannedETAAfter: planned, ETAGiven: o.ETAGiven})
		if err := tx.Model(&ProdOrder{}).Where("id = ?", o.ID).Updates(map[string]any{"planned_eta": planned, "eta": eta}).Error; err != nil {
			return out, err
		}
		if eta.String() == o.ETA.String() {
			continue
		}
		err := events.Add(ctx, tx, contracts.ProdOrderRescheduled.New(o.ID, contracts.ProdOrderRescheduledPayload{ProdOrderID: o.ID, Items: o.ItemIDs(),
			ETA: eta.String(), PreviousETA: o.ETA.String(), PlannedETA: planned.String(), Priority: o.Priority}))
		if err != nil {
			return out, err
		}
	}
	return out, storeSlots(tx, changed)
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

func sameSlot(a, b Slot) bool {
	return a.Start.Day.Equal(b.Start.Day) && a.Start.Min == b.Start.Min && a.End.Day.Equal(b.End.Day) && a.End.Min == b.End.Min
}

// slotChange is an operation's new planned slot.
type slotChange struct {
	id   int64
	slot Slot
}

// slotBatch is the operations per UPDATE of their slots: a few hundred
// kilobytes of JSON a statement.
const slotBatch = 10_000

// slotKey and slotColumns are the columns storeSlots writes, in the order
// of each row's values.
var (
	slotKey     = database.Column{Name: "id", Type: "bigint"}
	slotColumns = []database.Column{{Name: "start_day", Type: "date"}, {Name: "start_min", Type: "double precision"},
		{Name: "end_day", Type: "date"}, {Name: "end_min", Type: "double precision"}}
)

// storeSlots writes the operations' new slots, a batch per statement.
func storeSlots(tx *gorm.DB, changes []slotChange) error {
	sql := database.UpdateFromJSON(tx, "plan_operations", slotKey, slotColumns)
	var rows []byte
	for batch := range slices.Chunk(changes, slotBatch) {
		rows = append(rows[:0], '[')
		for i, c := range batch {
			if i > 0 {
				rows = append(rows, ',')
			}
			rows = appendSlotRow(rows, c)
		}
		rows = append(rows, ']')
		if err := tx.Exec(sql, string(rows)).Error; err != nil {
			return err
		}
	}
	return nil
}

// appendSlotRow appends [id, "start day", start minute, "end day", end
// minute] to b (the minutes exactly: the shortest text that reads back as
// the same float64).
func appendSlotRow(b []byte, c slotChange) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, c.id, 10)
	b = append(b, ",\""...)
	b = c.slot.Start.Day.AppendFormat(b, time.DateOnly)
	b = append(b, "\","...)
	b = strconv.AppendFloat(b, c.slot.Start.Min, 'g', -1, 64)
	b = append(b, ",\""...)
	b = c.slot.End.Day.AppendFormat(b, time.DateOnly)
	b = append(b, "\","...)
	b = strconv.AppendFloat(b, c.slot.End.Min, 'g', -1, 64)
	return append(b, ']')
}
