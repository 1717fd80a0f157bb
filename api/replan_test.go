package api_test

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/config"
)

// planned is what the planning tests read of a production order.
type planned struct {
	ID         int64
	Status     string
	ETA        string `json:"eta"`
	PlannedETA string `json:"planned_eta"`
	ETAGiven   bool   `json:"eta_given"`
	Priority   int
	Late       bool
	Items      []struct {
		ItemID  int64  `json:"item_id"`
		DueDate string `json:"due_date"`
		Late    bool
	}
}

func readPlanned(t *testing.T, env *apptest.Env, id int64) planned {
	t.Helper()
	return adminGet[planned](t, env, fmt.Sprintf("/api/v1/production-orders/%d", id))
}

// receiveDue is receive with the order's due date.
func receiveDue(t *testing.T, env *apptest.Env, due string, lines ...line) (int64, []int64) {
	t.Helper()
	return receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Анна Смирнова"}, "items": lines, "due_date": due})
}

type replanSummary struct {
	ID        int64
	From      time.Time
	Replanned int
	Moved     []struct {
		ProdOrderID      int64  `json:"prod_order_id"`
		ETABefore        string `json:"eta_before"`
		ETAAfter         string `json:"eta_after"`
		PlannedETABefore string `json:"planned_eta_before"`
		PlannedETAAfter  string `json:"planned_eta_after"`
		ETAGiven         bool   `json:"eta_given"`
	}
}

func replanNow(t *testing.T, env *apptest.Env) replanSummary {
	t.Helper()
	r := env.Admin(http.MethodPost, "/api/v1/plan/replan", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var s replanSummary
	r.JSON(t, &s)
	return s
}

// workCenter finds a demo work centre by code.
func workCenter(t *testing.T, env *apptest.Env, code string) map[string]any {
	t.Helper()
	var l struct{ Items []map[string]any }
	env.Admin(http.MethodGet, "/api/v1/work-centers?limit=500", nil).JSON(t, &l)
	for _, wc := range l.Items {
		if wc["code"] == code {
			return wc
		}
	}
	t.Fatalf("no work centre %s", code)
	return nil
}

// putWorkCenter replaces a work centre's content with changes applied.
func putWorkCenter(t *testing.T, env *apptest.Env, wc map[string]any, changes map[string]any) apptest.Response {
	t.Helper()
	body := map[string]any{"code": wc["code"], "name": wc["name"], "capacity_min_per_day": wc["capacity_min_per_day"],
		"shift_start": wc["shift_start"], "calendar": wc["calendar"]}
	for k, v := range changes {
		body[k] = v
	}
	return env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%v", wc["id"]), body)
}

var moscow = func() *time.Location {
	loc, err := time.LoadLocation("Europe/Moscow")
	if err != nil {
		panic(err)
	}
	return loc
}()

// Scheduling starts from now in the factory's time zone, and a work centre's
// day of capacity from its shift start: a sofa ordered at 10:00 is sewn from
// 10:00, one ordered after the sewing shift is over is not promised for
// today.
func TestPlanning_FromNowInTheShift(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		now := time.Date(2026, 11, 16, 10, 0, 0, 0, moscow) // a Monday
		env.App.Plan.SetNow(func() time.Time { return now })
		sew := workCenter(t, env, "SEW")
		require.Equal(t, "08:00", sew["shift_start"], "the default shift start")

		// 10:00: two hours of the 08:00 shift are gone.
		_, ids := receive(t, env, line{"DIV-CHESTER-3", 1})
		first := launch(t, env, map[string]any{"items": ids})
		op := first.Operations[0]
		require.EqualValues(t, sew["id"], op.WorkCenterID)
		require.Equal(t, "2026-11-16", op.PlannedStartDay)
		require.InDelta(t, 120, op.PlannedStartMin, 0.001, "planned from 10:00, not from 08:00 or midnight")
		require.Equal(t, "2026-11-16", first.ETA)

		// 17:00: the sewing shift (08:00 + 480 minutes) is over: tomorrow.
		now = time.Date(2026, 11, 16, 17, 0, 0, 0, moscow)
		_, ids = receive(t, env, line{"DIV-CHESTER-3", 1})
		second := launch(t, env, map[string]any{"items": ids})
		for _, op := range second.Operations {
			require.Equal(t, "2026-11-17", op.PlannedStartDay, "nothing is planned in today's past")
		}
		require.Equal(t, "2026-11-17", second.ETA)

		// A shift that starts at 12:00 has three hours left at 17:00: the
		// new hours re-plan the live work on the centre from now
		// (plan.capacity), the first sofa's sewing, planned this morning
		// and not started, first.
		r := putWorkCenter(t, env, sew, map[string]any{"shift_start": "12:00"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, "12:00", workCenter(t, env, "SEW")["shift_start"])
		env.Dispatch()
		sewing := launchedOps(t, env, first.ID)[0]
		require.Equal(t, "2026-11-16", sewing.PlannedStartDay)
		require.InDelta(t, 300, sewing.PlannedStartMin, 0.001)

		// A shift start is a time of day.
		for _, bad := range []string{"25:00", "8:00", "08:60", "noon", "08:00:00"} {
			requireProblem(t, putWorkCenter(t, env, sew, map[string]any{"shift_start": bad}), http.StatusUnprocessableEntity, "shift_start")
		}
		r = env.Admin(http.MethodPost, "/api/v1/work-centers", map[string]any{"code": "NIGHT", "name": "Ночная смена", "capacity_min_per_day": 480, "shift_start": "22:00"})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		require.Equal(t, "22:00", r.Map(t)["shift_start"])
	})
}

// The same instant is another day and hour in another time zone: the
// factory's zone (FACTORY_TIMEZONE) decides where today's shift stands.
func TestPlanning_FactoryTimeZone(t *testing.T) {
	t.Parallel()
	for _, d := range apptest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			instant := time.Date(2026, 11, 16, 5, 30, 0, 0, time.UTC) // 08:30 in Moscow
			for _, tc := range []struct {
				zone     string
				startMin float64
			}{
				{"", 30},   // the default, Europe/Moscow: half an hour into the 08:00 shift
				{"UTC", 0}, // 05:30: before the shift
				{"Asia/Yekaterinburg", 150},
			} {
				env := apptest.New(t, d, func(c *config.Config) {
					if tc.zone != "" {
						c.FactoryTimezone = tc.zone
					}
				})
				env.App.Plan.SetNow(func() time.Time { return instant })
				_, ids := receive(t, env, line{"DIV-CHESTER-3", 1})
				o := launch(t, env, map[string]any{"items": ids})
				require.Equal(t, "2026-11-16", o.Operations[0].PlannedStartDay, tc.zone)
				require.InDelta(t, tc.startMin, o.Operations[0].PlannedStartMin, 0.001, tc.zone)
			}
			// Late in the evening in UTC is already tomorrow in Moscow.
			env := apptest.New(t, d, nil)
			env.App.Plan.SetNow(func() time.Time { return time.Date(2026, 11, 16, 22, 0, 0, 0, time.UTC) })
			var v scheduleView
			env.Admin(http.MethodGet, "/api/v1/plan/schedule", nil).JSON(t, &v)
			require.Equal(t, "2026-11-17", v.From, "today is the factory's")
		})
	}
}

// A later order of higher priority goes ahead of earlier ones of normal
// priority; those are re-planned after it and sales hear of their new ETA.
// Raising an order's priority after launch moves it ahead too.
func TestPlanning_Priority(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		monday := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
		env.App.Plan.SetNow(func() time.Time { return monday })

		// 40 wardrobes: three days of cutting. Then one more, behind them.
		_, big := receive(t, env, line{"SHK-RASP-1200", 40})
		a := launch(t, env, map[string]any{"items": big})
		salesOrder, small := receive(t, env, line{"SHK-RASP-1200", 1})
		b := launch(t, env, map[string]any{"items": small})
		require.GreaterOrEqual(t, b.ETA, "2026-11-19", "the small order's cutting waits for the big one's three days")
		env.Dispatch()
		var so struct{ ETA string }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", salesOrder), nil).JSON(t, &so)
		require.Equal(t, b.ETA, so.ETA)

		// The same small order, launched later with a higher priority: ahead of both.
		_, urgent := receive(t, env, line{"SHK-RASP-1200", 1})
		c := launch(t, env, map[string]any{"items": urgent, "priority": 10})
		require.Equal(t, "2026-11-16", c.ETA, "ahead of the earlier orders of normal priority")
		require.Less(t, c.ETA, b.ETA)
		require.Equal(t, 10, readPlanned(t, env, c.ID).Priority)
		require.InDelta(t, 0, c.Operations[0].PlannedStartMin, 0.001, "its first cut is the day's first")
		after := readPlanned(t, env, a.ID)
		require.Equal(t, 0, after.Priority)
		cut := c.Operations[0].WorkCenterID
		aOps := launchedOps(t, env, a.ID)
		for _, op := range aOps {
			if op.WorkCenterID == cut {
				require.False(t, op.PlannedStartDay == "2026-11-16" && op.PlannedStartMin < 18*4-0.001, "the big order's cutting moved after the urgent one's")
			}
		}

		// Raising the small normal order's priority moves it ahead of the big one.
		bBefore := readPlanned(t, env, b.ID).ETA
		require.Greater(t, bBefore, "2026-11-16")
		r := env.Admin(http.MethodPatch, fmt.Sprintf("/api/v1/production-orders/%d", b.ID), map[string]any{"priority": 20})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var ch struct {
			ProdOrder planned `json:"prod_order"`
			Replan    replanSummary
		}
		r.JSON(t, &ch)
		require.Equal(t, 20, ch.ProdOrder.Priority)
		require.Equal(t, "2026-11-16", ch.ProdOrder.ETA, "now ahead of the big order")
		require.Equal(t, 3, ch.Replan.Replanned)
		var moved bool
		for _, m := range ch.Replan.Moved {
			if m.ProdOrderID == b.ID {
				moved = true
				require.Equal(t, bBefore, m.ETABefore)
				require.Equal(t, "2026-11-16", m.ETAAfter)
			}
		}
		require.True(t, moved, "%+v", ch.Replan.Moved)
		ev := eventsOf(t, env, "prod_order.rescheduled", b.ID)
		require.NotEmpty(t, ev)
		require.Equal(t, "2026-11-16", ev[len(ev)-1].Payload["eta"])
		require.Equal(t, bBefore, ev[len(ev)-1].Payload["previous_eta"])
		env.Dispatch()
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", salesOrder), nil).JSON(t, &so)
		require.Equal(t, "2026-11-16", so.ETA, "sales follow the new ETA")

		// Refusals.
		path := fmt.Sprintf("/api/v1/production-orders/%d", b.ID)
		requireProblem(t, env.Admin(http.MethodPatch, path, map[string]any{"priority": 101}), http.StatusUnprocessableEntity, "priority")
		requireProblem(t, env.Admin(http.MethodPatch, path, map[string]any{}), http.StatusUnprocessableEntity, "priority")
		requireProblem(t, env.Admin(http.MethodPatch, "/api/v1/production-orders/999999", map[string]any{"priority": 1}), http.StatusNotFound)
		requireProblem(t, env.Do(http.MethodPatch, path, map[string]any{"priority": 1}, env.UserToken("Мастер", "master")), http.StatusForbidden)
		_, more := receive(t, env, line{"TMB-PRIK-450", 1})
		requireProblem(t, env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": more, "priority": -101}), http.StatusUnprocessableEntity, "priority")
		d := launch(t, env, map[string]any{"items": more})
		require.Equal(t, http.StatusOK, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", d.ID), nil).Status)
		requireProblem(t, env.Admin(http.MethodPatch, fmt.Sprintf("/api/v1/production-orders/%d", d.ID), map[string]any{"priority": 5}), http.StatusConflict)
		require.Equal(t, 20, readPlanned(t, env, b.ID).Priority, "nothing refused was changed")
	})
}

type launchedOp struct {
	ID              int64   `json:"id"`
	ProdOrderID     int64   `json:"prod_order_id"`
	Minutes         float64 `json:"minutes"`
	WorkCenterID    int64   `json:"work_center_id"`
	Status          string  `json:"status"`
	PlannedStartDay string  `json:"planned_start_day"`
	PlannedStartMin float64 `json:"planned_start_min"`
	PlannedEndDay   string  `json:"planned_end_day"`
	PlannedEndMin   float64 `json:"planned_end_min"`
}

func launchedOps(t *testing.T, env *apptest.Env, id int64) []launchedOp {
	t.Helper()
	var o struct{ Operations []launchedOp }
	env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", id), nil).JSON(t, &o)
	return o.Operations
}

// After the cutting capacity is cut, a re-plan moves the ETAs of the
// unfinished orders; sales and the shop hear of the new ETA, a planner's
// explicit ETA stays, and a re-plan that moves nothing says nothing.
func TestPlanning_ReplanAfterCapacityCut(t *testing.T) {
	t.Parallel()
	shop := newShopListener(t)
	eachWith(t, func(c *config.Config) { c.ShopWebhookSecret, c.ShopCallbackURL = shopSecret, shop.URL }, func(t *testing.T, env *apptest.Env) {
		monday := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
		env.App.Plan.SetNow(func() time.Time { return monday })
		shopID := "replan-" + string(env.Dialect)
		r := deliver(env, shopBody(shopID, `{"sku": "SHK-RASP-1200", "qty": 10}`), time.Now())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		orderID := orderIDOf(t, r)
		env.Dispatch()
		var so struct {
			ETA   string
			Items []struct{ ID int64 }
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", orderID), nil).JSON(t, &so)
		o := launch(t, env, map[string]any{"items": []int64{so.Items[0].ID}})
		_, fixed := receive(t, env, line{"SHK-RASP-1200", 1})
		given := launch(t, env, map[string]any{"items": fixed, "eta": "2026-12-30"})
		env.Dispatch()
		require.LessOrEqual(t, o.ETA, "2026-11-17", "10 wardrobes: 720 minutes of cutting fit Monday")
		heard := shop.heardOf(shopID)
		require.Equal(t, o.ETA, *heard[len(heard)-1].ETA, "the shop heard the launch's ETA")
		n := len(heard)

		// Nothing changed: nothing moves, nobody hears anything.
		s := replanNow(t, env)
		require.Equal(t, 2, s.Replanned)
		require.Empty(t, s.Moved)
		require.True(t, s.From.Equal(monday), "%v", s.From)

		// Cutting goes down to two hours a day: 720 minutes take six days.
		cut := workCenter(t, env, "CUT")
		r = putWorkCenter(t, env, cut, map[string]any{"capacity_min_per_day": 120})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, o.ETA, readPlanned(t, env, o.ID).ETA, "the change moves nothing until its event is handled (plan.capacity)")
		s = replanNow(t, env)
		require.Equal(t, 2, s.Replanned)
		require.Len(t, s.Moved, 2)
		m := s.Moved[0]
		require.Equal(t, o.ID, m.ProdOrderID)
		require.Equal(t, o.ETA, m.ETABefore)
		require.GreaterOrEqual(t, m.ETAAfter, "2026-11-23", "six days of cutting from Monday end in the next week")
		require.Equal(t, m.ETAAfter, m.PlannedETAAfter)
		require.False(t, m.ETAGiven)
		after := readPlanned(t, env, o.ID)
		require.Equal(t, m.ETAAfter, after.ETA)
		for _, op := range launchedOps(t, env, o.ID) {
			if op.WorkCenterID == int64(cut["id"].(float64)) {
				require.LessOrEqual(t, op.PlannedEndMin, 120.0+0.001, "no more than the new capacity a day")
			}
		}
		// The planner's ETA stays; its planned ETA moves, without an event.
		g := s.Moved[1]
		require.Equal(t, given.ID, g.ProdOrderID)
		require.True(t, g.ETAGiven)
		require.Equal(t, "2026-12-30", g.ETABefore)
		require.Equal(t, "2026-12-30", g.ETAAfter)
		require.Greater(t, g.PlannedETAAfter, g.PlannedETABefore)
		require.Empty(t, eventsOf(t, env, "prod_order.rescheduled", given.ID))
		ev := eventsOf(t, env, "prod_order.rescheduled", o.ID)
		require.Len(t, ev, 1)
		require.Equal(t, m.ETAAfter, ev[0].Payload["eta"])

		// Sales and the shop hear of it.
		env.Dispatch()
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", orderID), nil).JSON(t, &so)
		require.Equal(t, m.ETAAfter, so.ETA)
		got := shop.heardOf(shopID)[n:]
		require.Len(t, got, 1, "one callback for the moved ETA")
		require.Equal(t, "order.status_changed", got[0].Type)
		require.Equal(t, "in_production", got[0].Status)
		require.Equal(t, "in_production", got[0].PreviousStatus)
		require.Equal(t, m.ETAAfter, *got[0].ETA)

		// Work done early moves the plan the other way: with the wardrobes'
		// cutting reported done, the rest is re-planned from now.
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", o.ID), map[string]any{"seq": 1, "qty": 180})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		s = replanNow(t, env)
		require.NotEmpty(t, s.Moved)
		require.Equal(t, o.ID, s.Moved[0].ProdOrderID)
		require.Less(t, s.Moved[0].ETAAfter, m.ETAAfter, "the cutting done no longer waits for capacity")

		// Only planners re-plan.
		requireProblem(t, env.Do(http.MethodPost, "/api/v1/plan/replan", nil, env.UserToken("Мастер", "master")), http.StatusForbidden)
		requireProblem(t, env.Do(http.MethodPost, "/api/v1/plan/replan", nil, env.UserToken("Зритель", "viewer")), http.StatusForbidden)
	})
}

// A work centre with no working day within the horizon makes a re-plan a
// 422 that names it, changing nothing.
func TestPlanning_ReplanCentreThatNeverWorks(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		monday := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
		env.App.Plan.SetNow(func() time.Time { return monday })
		_, ids := receive(t, env, line{"DIV-CHESTER-3", 1})
		o := launch(t, env, map[string]any{"items": ids})
		before := launchedOps(t, env, o.ID)
		env.App.Plan.SetNow(func() time.Time { return monday.AddDate(0, 0, 7) })

		uph := workCenter(t, env, "UPH")
		var holidays []string
		for d := monday; d.Before(monday.AddDate(3, 3, 0)); d = d.AddDate(0, 0, 7) {
			holidays = append(holidays, d.Format(time.DateOnly))
		}
		r := putWorkCenter(t, env, uph, map[string]any{"calendar": map[string]any{"weekdays": []int{1}, "holidays": holidays}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Dispatch() // plan.capacity cannot re-plan: it leaves the plan as it is, and does not fail
		require.Zero(t, env.Count("events_delivery_failures"))
		require.Empty(t, catalogEventsOf(t, env, "plan.replanned"))

		p := requireProblem(t, env.Admin(http.MethodPost, "/api/v1/plan/replan", nil), http.StatusUnprocessableEntity)
		require.Contains(t, p.Detail, uph["name"])
		require.Contains(t, p.Detail, uph["code"])
		require.Equal(t, before, launchedOps(t, env, o.ID), "nothing moved")
		require.Equal(t, o.ETA, readPlanned(t, env, o.ID).ETA)
		require.Empty(t, eventsOf(t, env, "prod_order.rescheduled", o.ID))
		// Nor at a change of priority, which re-plans.
		requireProblem(t, env.Admin(http.MethodPatch, fmt.Sprintf("/api/v1/production-orders/%d", o.ID), map[string]any{"priority": 5}), http.StatusUnprocessableEntity)
		require.Equal(t, 0, readPlanned(t, env, o.ID).Priority)

		r = putWorkCenter(t, env, uph, map[string]any{"calendar": map[string]any{"weekdays": []int{1, 2, 3, 4, 5}, "holidays": holidays}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		s := replanNow(t, env)
		require.Len(t, s.Moved, 1, "fixed, the calendar lets the re-plan through")
		require.Equal(t, "2026-11-24", s.Moved[0].ETAAfter, "a week later, with Monday a holiday: Tuesday")
	})
}

// late: a production order (and each of its items) whose ETA is after the
// due date; a backlog row whose due date has passed. Both lists filter by it.
func TestPlanning_Late(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		monday := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
		env.App.Plan.SetNow(func() time.Time { return monday })

		// 40 wardrobes due Tuesday take the week; a sofa due in December does not.
		_, wardrobes := receiveDue(t, env, "2026-11-17", line{"SHK-RASP-1200", 40}, line{"TMB-PRIK-450", 1})
		late := launch(t, env, map[string]any{"items": wardrobes})
		_, sofa := receiveDue(t, env, "2026-12-15", line{"DIV-CHESTER-3", 1})
		onTime := launch(t, env, map[string]any{"items": sofa})
		_, noDue := receive(t, env, line{"DIV-CHESTER-3", 1})
		undated := launch(t, env, map[string]any{"items": noDue})

		o := readPlanned(t, env, late.ID)
		require.Greater(t, o.ETA, "2026-11-17")
		require.True(t, o.Late)
		require.True(t, o.Items[0].Late)
		require.Equal(t, "2026-11-17", o.Items[0].DueDate)
		require.False(t, readPlanned(t, env, onTime.ID).Late)
		require.False(t, readPlanned(t, env, undated.ID).Late)

		ids := func(path string) []int64 {
			t.Helper()
			var l struct {
				Items []struct {
					ID     int64
					ItemID int64 `json:"item_id"`
					Late   bool
				}
			}
			r := env.Admin(http.MethodGet, path, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			r.JSON(t, &l)
			out := []int64{}
			for _, it := range l.Items {
				id := it.ID
				if id == 0 {
					id = it.ItemID
				}
				out = append(out, id)
				require.Equal(t, path[len(path)-4:] == "true", it.Late, "%s: %d", path, id)
			}
			return out
		}
		require.Equal(t, []int64{late.ID}, ids("/api/v1/production-orders?late=true"))
		require.Equal(t, []int64{undated.ID, onTime.ID}, ids("/api/v1/production-orders?late=false"))
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/production-orders?late=maybe", nil), http.StatusUnprocessableEntity, "late")

		// A planner's ETA after the due date is late too; one before is not.
		_, dueFriday := receiveDue(t, env, "2026-11-20", line{"TMB-PRIK-450", 1})
		promised := launch(t, env, map[string]any{"items": dueFriday, "eta": "2026-11-27"})
		require.True(t, readPlanned(t, env, promised.ID).Late)
		_, exact := receiveDue(t, env, "2026-11-25", line{"TMB-PRIK-450", 1})
		onTheDay := launch(t, env, map[string]any{"items": exact, "eta": "2026-11-25"})
		require.False(t, readPlanned(t, env, onTheDay.ID).Late, "promised for its due date: in time")
		require.Equal(t, []int64{promised.ID, late.ID}, ids("/api/v1/production-orders?late=true"))

		// A done order is late no more; a cancelled one never.
		_, dueMonday := receiveDue(t, env, "2026-11-16", line{"TMB-PRIK-450", 1})
		made := launch(t, env, map[string]any{"items": dueMonday, "eta": "2026-11-20"})
		require.True(t, readPlanned(t, env, made.ID).Late)
		finish(t, env, made)
		o = readPlanned(t, env, made.ID)
		require.Equal(t, "done", o.Status)
		require.False(t, o.Late)
		require.False(t, o.Items[0].Late)
		require.NotContains(t, ids("/api/v1/production-orders?late=true"), made.ID)
		require.Contains(t, ids("/api/v1/production-orders?late=false"), made.ID)
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", promised.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.False(t, readPlanned(t, env, promised.ID).Late)

		// The backlog: the due date passed (Friday the 13th), in time (December), none.
		_, past := receiveDue(t, env, "2026-11-13", line{"TMB-PRIK-450", 1})
		_, future := receiveDue(t, env, "2026-12-01", line{"TMB-PRIK-450", 1})
		_, today := receiveDue(t, env, "2026-11-16", line{"TMB-PRIK-450", 1})
		_, none := receive(t, env, line{"TMB-PRIK-450", 1})
		require.Equal(t, []int64{past[0]}, ids("/api/v1/plan/backlog?late=true"))
		rest := ids("/api/v1/plan/backlog?late=false")
		require.Contains(t, rest, future[0])
		require.Contains(t, rest, today[0], "due today can still be made today")
		require.Contains(t, rest, none[0])
		require.Contains(t, rest, dueFriday[0], "back in the backlog, due Friday")
		require.NotContains(t, rest, past[0])
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/plan/backlog?late=1", nil), http.StatusUnprocessableEntity, "late")

		// Re-planned on Wednesday the 18th, the past-due row is still late and the sofa is not.
		env.App.Plan.SetNow(func() time.Time { return monday.AddDate(0, 0, 2) })
		replanNow(t, env)
		require.False(t, readPlanned(t, env, onTime.ID).Late)
		require.True(t, readPlanned(t, env, late.ID).Late)
	})
}

// Re-plans and changes of priority running while launches and progress
// reports happen all succeed and leave a plan in which no two operations
// still to do overlap on a work centre: they take the lock launches take,
// and the rows of the orders they move, in id order.
func TestPlanning_ReplanConcurrentWithLaunchesAndProgress(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		monday := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
		env.App.Plan.SetNow(func() time.Time { return monday })
		var first []prodOrder
		for range 2 {
			_, ids := receive(t, env, line{"SHK-RASP-1200", 4})
			first = append(first, launch(t, env, map[string]any{"items": ids}))
		}
		capacity := map[int64]float64{}
		// Less capacity everywhere: each re-plan moves the launched work.
		for _, code := range []string{"CUT", "EDGE", "DRILL", "ASM", "PACK"} {
			wc := workCenter(t, env, code)
			r := putWorkCenter(t, env, wc, map[string]any{"capacity_min_per_day": 90})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
		var wcs struct{ Items []map[string]any }
		env.Admin(http.MethodGet, "/api/v1/work-centers?limit=500", nil).JSON(t, &wcs)
		for _, wc := range wcs.Items {
			capacity[int64(wc["id"].(float64))] = wc["capacity_min_per_day"].(float64)
		}
		for round := range 2 {
			var waiting [][]int64
			for range 5 {
				_, ids := receive(t, env, line{"TMB-PRIK-450", 2})
				waiting = append(waiting, ids)
			}
			var wg sync.WaitGroup
			statuses := make(chan string, 64)
			start := make(chan struct{})
			run := func(what string, fn func() int) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					if s := fn(); s/100 != 2 {
						statuses <- fmt.Sprintf("round %d: %s: %d", round, what, s)
					}
				}()
			}
			for i, ids := range waiting {
				run("launch", func() int {
					return env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": ids, "priority": i % 3}).Status
				})
			}
			for range 4 {
				run("replan", func() int { return env.Admin(http.MethodPost, "/api/v1/plan/replan", nil).Status })
			}
			run("priority", func() int {
				return env.Admin(http.MethodPatch, fmt.Sprintf("/api/v1/production-orders/%d", first[1].ID), map[string]any{"priority": round + 1}).Status
			})
			for _, o := range first {
				run("progress", func() int {
					return env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", o.ID), map[string]any{"seq": 1, "qty": 10}).Status
				})
			}
			close(start)
			wg.Wait()
			close(statuses)
			for s := range statuses {
				t.Error(s)
			}
			requireNoOverlap(t, env, capacity)
		}
	})
}

// requireNoOverlap checks that no two operations still to do take the same
// minutes of a work centre's day. What a slot takes is known exactly on its
// first day (from its start to its end, or to the day's capacity when it
// goes on) and up to its end on its last day; the days between it may take
// whole, in part or not at all (when they were full), so they are left out.
func requireNoOverlap(t *testing.T, env *apptest.Env, capacity map[int64]float64) {
	t.Helper()
	var l struct{ Items []struct{ ID int64 } }
	env.Admin(http.MethodGet, "/api/v1/production-orders?limit=500", nil).JSON(t, &l)
	type centreDay struct {
		centre int64
		day    string
	}
	type span struct {
		from, to float64
		op       int64
	}
	taken := map[centreDay][]span{}
	for _, o := range l.Items {
		for _, op := range launchedOps(t, env, o.ID) {
			if op.Status == "done" {
				continue
			}
			first := centreDay{op.WorkCenterID, op.PlannedStartDay}
			if op.PlannedStartDay == op.PlannedEndDay {
				taken[first] = append(taken[first], span{op.PlannedStartMin, op.PlannedEndMin, op.ID})
				continue
			}
			taken[first] = append(taken[first], span{op.PlannedStartMin, capacity[op.WorkCenterID], op.ID})
			last := centreDay{op.WorkCenterID, op.PlannedEndDay}
			taken[last] = append(taken[last], span{op.PlannedEndMin - 0.01, op.PlannedEndMin, op.ID})
		}
	}
	require.NotEmpty(t, taken)
	for k, spans := range taken {
		slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
		for i := 1; i < len(spans); i++ {
			p, s := spans[i-1], spans[i]
			require.GreaterOrEqual(t, s.from, p.to-0.001, "work centre %d on %s: operation %d (%.2f–%.2f) overlaps operation %d (%.2f–%.2f)",
				k.centre, k.day, s.op, s.from, s.to, p.op, p.from, p.to)
		}
	}
}
