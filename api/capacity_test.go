package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// A work centre's new hours move the plan by themselves: the saw given an
// hour a day instead of a shift, the wardrobe cut on it ends later, the
// sales order hears the new ETA, and the re-plan is journalled with reason
// capacity; a shift again brings it back. A centre no live work uses
// changes no plan.
func TestPlan_CapacityChangeReplans(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		env.App.Plan.SetNow(func() time.Time { return time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC) })
		orderID, items := receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Анна"},
			"items": []map[string]any{{"sku": "SHK-KUPE-1600", "qty": 2}}})
		po := launch(t, env, map[string]any{"items": items})
		env.Dispatch()
		var centers struct {
			Items []struct {
				ID                int64
				Code              string
				Name              string
				CapacityMinPerDay int `json:"capacity_min_per_day"`
			}
		}
		env.Admin(http.MethodGet, "/api/v1/work-centers?limit=100", nil).JSON(t, &centers)
		var saw int64
		var shift int
		for _, c := range centers.Items {
			if c.Code == "CUT" {
				saw, shift = c.ID, c.CapacityMinPerDay
			}
		}
		require.NotZero(t, saw)
		hours := func(minutes int) string {
			r := env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", saw), map[string]any{
				"code": "CUT", "name": "Раскрой", "capacity_min_per_day": minutes})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			env.Dispatch() // plan.capacity re-plans
			var o struct{ ETA string }
			env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", po.ID), nil).JSON(t, &o)
			var sales struct{ ETA *string }
			env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", orderID), nil).JSON(t, &sales)
			require.NotNil(t, sales.ETA)
			require.Equal(t, o.ETA, *sales.ETA, "the sales order heard the ETA")
			return o.ETA
		}
		slow := hours(60)
		require.Greater(t, slow, po.ETA, "an hour a day: the cutting ends later")
		replans := catalogEventsOf(t, env, "plan.replanned")
		require.NotEmpty(t, replans)
		require.Equal(t, "capacity", replans[0].Payload["reason"])
		require.EqualValues(t, 1, replans[0].Payload["replanned"])
		require.Equal(t, po.ETA, hours(shift), "a shift again: the ETA it had")
		require.Len(t, catalogEventsOf(t, env, "plan.replanned"), 2)

		r := env.Admin(http.MethodPost, "/api/v1/work-centers", map[string]any{"code": "CNC", "name": "ЧПУ", "capacity_min_per_day": 900})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var cnc struct{ ID int64 }
		r.JSON(t, &cnc)
		r = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", cnc.ID), map[string]any{"code": "CNC", "name": "ЧПУ", "capacity_min_per_day": 60})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Dispatch()
		require.Len(t, catalogEventsOf(t, env, "plan.replanned"), 2, "no live work on it: nothing to re-plan")
	})
}

// A re-plan of everything runs in the background when the client prefers
// (Prefer: respond-async): 202 with the job's location at once, nothing
// re-planned until a runner takes it; done, the job names the re-plan,
// journalled in the requester's name. Without the preference it answers
// 200 as it always did.
func TestPlan_ReplanAsJob(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		_, items := receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Анна"},
			"items": []map[string]any{{"sku": "SHK-KUPE-1600", "qty": 1}}})
		launch(t, env, map[string]any{"items": items})
		r := env.Do(http.MethodPost, "/api/v1/plan/replan", nil, apptest.AdminToken, "Prefer", "wait=10, respond-async")
		require.Equal(t, "respond-async", r.Header.Get("Preference-Applied"))
		require.Empty(t, catalogEventsOf(t, env, "plan.replanned"), "nothing re-planned while the client waited")
		j := runJob(t, env, r)
		require.Equal(t, "replan", j.Kind)
		require.Equal(t, "done", j.Status, "%+v", j)
		replans := catalogEventsOf(t, env, "plan.replanned")
		require.Len(t, replans, 1)
		require.EqualValues(t, replans[0].Payload["replan_id"], j.Result["replan_id"])
		require.EqualValues(t, 1, j.Result["replanned"])
		require.Equal(t, "Администратор", actorName(replans[0]))
		var list struct{ Items []jobOf }
		env.Admin(http.MethodGet, "/api/v1/jobs?kind=replan", nil).JSON(t, &list)
		require.Len(t, list.Items, 1)

		r = env.Admin(http.MethodPost, "/api/v1/plan/replan", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Empty(t, r.Header.Get("Preference-Applied"))
		require.Len(t, catalogEventsOf(t, env, "plan.replanned"), 2)
	})
}
