package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// No change without its event (docs/outbox.md, "Delivery guarantees": no change without its event): the changes that once
// wrote nothing to the journal, each with its event naming who made it.
// (On PostgreSQL every test is also checked transaction by transaction:
// internal/platform/dbtest, journal.go.)

// journalOf returns the journal's events of the type, oldest first, with
// extra filters (a query string).
func journalOf(t *testing.T, env *apptest.Env, typ, filters string) []journalEvent {
	t.Helper()
	r := env.Admin(http.MethodGet, "/api/v1/events?limit=500&type="+typ+filters, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var l struct{ Items []journalEvent }
	r.JSON(t, &l)
	for i, j := 0, len(l.Items)-1; i < j; i, j = i+1, j-1 {
		l.Items[i], l.Items[j] = l.Items[j], l.Items[i]
	}
	return l.Items
}

func actorName(e journalEvent) string {
	if e.Actor == nil {
		return "—"
	}
	return e.Actor.Name
}

// A planner's change of priority is journalled with its before and after,
// and the re-plan it makes as plan.replanned; the same priority again
// changes nothing but is re-planned all the same.
func TestJournal_PriorityChanged(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		env.App.Plan.SetNow(func() time.Time { return time.Date(2026, 11, 16, 9, 0, 0, 0, time.UTC) })
		planner := env.UserToken("Плановик Ольга", "planner")
		_, ids := receive(t, env, line{"SHK-KUPE-1600", 1})
		o := launch(t, env, map[string]any{"items": ids})
		path := fmt.Sprintf("/api/v1/production-orders/%d", o.ID)

		r := env.Do(http.MethodPatch, path, map[string]any{"priority": 50}, planner)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var ch struct {
			Replan struct{ ID int64 }
		}
		r.JSON(t, &ch)
		changed := eventsOf(t, env, "prod_order.priority_changed", o.ID)
		require.Len(t, changed, 1)
		require.Equal(t, map[string]any{"prod_order_id": float64(o.ID), "items": toAny(ids), "priority": float64(50), "previous_priority": float64(0)},
			changed[0].Payload)
		require.Equal(t, "Плановик Ольга", actorName(changed[0]))
		replans := journalOf(t, env, "plan.replanned", "")
		require.Len(t, replans, 1)
		require.Equal(t, fmt.Sprintf("plan_replans #%d", ch.Replan.ID), replans[0].Object)
		require.Equal(t, "priority", replans[0].Payload["reason"])
		require.EqualValues(t, o.ID, replans[0].Payload["prod_order_id"])
		require.Equal(t, "Плановик Ольга", actorName(replans[0]))

		r = env.Do(http.MethodPatch, path, map[string]any{"priority": 50}, planner)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Len(t, eventsOf(t, env, "prod_order.priority_changed", o.ID), 1, "the same priority is no change")
		require.Len(t, journalOf(t, env, "plan.replanned", ""), 2, "but a re-plan all the same")

		r = env.Do(http.MethodPatch, path, map[string]any{"priority": -5}, planner)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		changed = eventsOf(t, env, "prod_order.priority_changed", o.ID)
		require.Len(t, changed, 2)
		require.Equal(t, float64(-5), changed[1].Payload["priority"])
		require.Equal(t, float64(50), changed[1].Payload["previous_priority"])
	})
}

// Every operation the shop floor starts or completes is journalled on its
// production order, with its step, its part or unit, and the master who
// reported it; the order's own started and completed come once, beside.
func TestJournal_OperationStartedCompleted(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		master := env.UserToken("Мастер Пётр", "master")
		_, ids := receive(t, env, line{"DIV-CHESTER-3", 1})
		o := launch(t, env, map[string]any{"items": ids})
		var detail struct {
			Parts []struct {
				ID         int64
				Name, Code string
			}
			Operations []struct {
				ID           int64
				WorkCenterID int64 `json:"work_center_id"`
				Seq, Unit    int
				Name, Scope  string
				PartID       *int64 `json:"part_id"`
				ItemID       int64  `json:"item_id"`
			}
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", o.ID), nil).JSON(t, &detail)
		require.Len(t, detail.Operations, 8)
		partName, partCode := map[int64]string{}, map[int64]string{}
		for _, p := range detail.Parts {
			partName[p.ID], partCode[p.ID] = p.Name, p.Code
		}
		for _, op := range detail.Operations {
			for _, action := range []string{"start", "complete"} {
				r := env.Do(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/operations/%d/%s", o.ID, op.ID, action), nil, master)
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			}
		}
		for typ, verb := range map[string]string{"operation.started": "start", "operation.completed": "complete"} {
			evs := eventsOf(t, env, typ, o.ID)
			require.Len(t, evs, 8, "one %s per operation", typ)
			for i, op := range detail.Operations {
				want := map[string]any{"prod_order_id": float64(o.ID), "operation_id": float64(op.ID), "seq": float64(op.Seq), "operation": op.Name,
					"scope": op.Scope, "work_center_id": float64(op.WorkCenterID), "item_id": float64(op.ItemID), "unit": float64(op.Unit)}
				if op.PartID != nil {
					want["part_id"], want["part"], want["code"] = float64(*op.PartID), partName[*op.PartID], partCode[*op.PartID]
				} else {
					want["code"] = fmt.Sprintf("U%d-1", o.ID)
				}
				require.Equal(t, want, evs[i].Payload, "%s of operation %d", verb, op.ID)
				require.Equal(t, "Мастер Пётр", actorName(evs[i]))
			}
		}
		ops := eventsOf(t, env, "operation.started", o.ID)
		require.Equal(t, "part", ops[0].Payload["scope"], "the sofa's frame parts first")
		require.NotEmpty(t, ops[0].Payload["part"])
		require.Equal(t, "item", ops[7].Payload["scope"], "then its unit")
		require.NotContains(t, ops[7].Payload, "part_id")
		require.Len(t, eventsOf(t, env, "prod_order.started", o.ID), 1)
		require.Len(t, eventsOf(t, env, "prod_order.completed", o.ID), 1)
		require.Equal(t, "Мастер Пётр", actorName(eventsOf(t, env, "prod_order.completed", o.ID)[0]))
	})
}

// A re-plan is journalled once, naming who asked and what moved: also one
// with nothing to place, and one after which nothing moved.
func TestJournal_Replanned(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		monday := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
		env.App.Plan.SetNow(func() time.Time { return monday })
		planner := env.UserToken("Плановик Ольга", "planner")
		replan := func() replanSummary {
			t.Helper()
			r := env.Do(http.MethodPost, "/api/v1/plan/replan", nil, planner)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var s replanSummary
			r.JSON(t, &s)
			return s
		}
		requireReplanned := func(s replanSummary, n int) map[string]any {
			t.Helper()
			evs := journalOf(t, env, "plan.replanned", "")
			require.Len(t, evs, n)
			e := evs[n-1]
			require.Equal(t, fmt.Sprintf("plan_replans #%d", s.ID), e.Object)
			require.Equal(t, "Плановик Ольга", actorName(e))
			require.Equal(t, "replan", e.Payload["reason"])
			require.NotContains(t, e.Payload, "prod_order_id")
			require.Equal(t, "2026-11-16T00:00:00.000Z", e.Payload["from"])
			require.EqualValues(t, s.Replanned, e.Payload["replanned"])
			return e.Payload
		}

		s := replan()
		require.NotZero(t, s.ID)
		p := requireReplanned(s, 1)
		require.Equal(t, []any{}, p["moved"], "nothing to place: journalled all the same")
		require.EqualValues(t, 0, p["replanned"])

		_, ids := receive(t, env, line{"SHK-RASP-1200", 10})
		o := launch(t, env, map[string]any{"items": ids})
		s = replan()
		p = requireReplanned(s, 2)
		require.EqualValues(t, 1, p["replanned"])
		require.Equal(t, []any{}, p["moved"], "nothing moved")

		r := putWorkCenter(t, env, workCenter(t, env, "CUT"), map[string]any{"capacity_min_per_day": 120})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		s = replan()
		require.Len(t, s.Moved, 1)
		p = requireReplanned(s, 3)
		m := s.Moved[0]
		require.Equal(t, []any{map[string]any{"prod_order_id": float64(o.ID), "eta_before": m.ETABefore, "eta_after": m.ETAAfter,
			"planned_eta_before": m.PlannedETABefore, "planned_eta_after": m.PlannedETAAfter}}, p["moved"])
		require.Greater(t, m.ETAAfter, m.ETABefore)
		require.Len(t, eventsOf(t, env, "prod_order.rescheduled", o.ID), 1, "the order's own event, beside")
	})
}

// A correctly signed first delivery of the shop refused for its content (an
// unknown SKU) stores no order: only the intake inbox keeps it, its
// intake.rejected naming the shop's user, created with it; the first
// accepted one's events name that user too.
func TestJournal_RefusedShopDeliveryKeptOnlyInTheInbox(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		before := rowCounts(t, env)
		r := deliver(env, shopBody("refused-1", `{"sku": "NO-SUCH-SKU", "qty": 1}`), time.Now())
		requireProblem(t, r, http.StatusUnprocessableEntity, "items[0].sku")
		requireOnlyKept(t, before, rowCounts(t, env), 1, 1)
		rejected := journalOf(t, env, "intake.rejected", "")
		require.Len(t, rejected, 1)
		require.Equal(t, "Интернет-магазин", actorName(rejected[0]))

		r = deliver(env, shopBody("accepted-1"), time.Now())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		orderID := orderIDOf(t, r)
		var users []journalEvent
		for _, e := range journalOf(t, env, "user.created", "") {
			if e.Payload["name"] == "Интернет-магазин" {
				users = append(users, e)
			}
		}
		require.Len(t, users, 1, "the shop's user, created once")
		received := journalOf(t, env, "order.received", fmt.Sprintf("&aggregate_id=%d", orderID))
		require.Len(t, received, 1)
		require.Equal(t, "Интернет-магазин", actorName(received[0]))

		// Refused again, now that the user exists: only the inbox.
		before = rowCounts(t, env)
		r = deliver(env, shopBody("refused-2", `{"sku": "NO-SUCH-SKU", "qty": 1}`), time.Now())
		requireProblem(t, r, http.StatusUnprocessableEntity, "items[0].sku")
		requireOnlyKept(t, before, rowCounts(t, env), 1, 1)
	})
}
