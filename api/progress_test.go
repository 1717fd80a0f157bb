package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// A work centre with no working day within the scheduling horizon refuses a
// launch with a 422 that names it, not a 500; fixing its calendar lets the
// same launch through.
func TestProduction_CentreThatNeverWorks(t *testing.T) {
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		monday := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
		env.App.Plan.SetToday(func() time.Time { return monday })
		_, ids := receive(t, env, line{"DIV-CHESTER-3", 1})

		var wcs struct {
			Items []struct {
				ID                int64
				Code              string
				Name              string
				CapacityMinPerDay int `json:"capacity_min_per_day"`
			}
		}
		env.Admin(http.MethodGet, "/api/v1/work-centers?limit=500", nil).JSON(t, &wcs)
		// The sofa's route starts on the first work centre of its route: find it
		// from a launch that is cancelled straight away.
		o := launch(t, env, map[string]any{"items": ids})
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", o.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		centre := o.Operations[0].WorkCenterID
		var code, name string
		var capacity int
		for _, wc := range wcs.Items {
			if wc.ID == centre {
				code, name, capacity = wc.Code, wc.Name, wc.CapacityMinPerDay
			}
		}
		require.NotEmpty(t, code)

		// Mondays only, and every Monday for three and a quarter years a holiday.
		var holidays []string
		for d := monday; d.Before(monday.AddDate(3, 3, 0)); d = d.AddDate(0, 0, 7) {
			holidays = append(holidays, d.Format(time.DateOnly))
		}
		put := func(weekdays []int, holidays []string) {
			t.Helper()
			r := env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", centre), map[string]any{"code": code, "name": name,
				"capacity_min_per_day": capacity, "calendar": map[string]any{"weekdays": weekdays, "holidays": holidays}})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
		put([]int{1}, holidays)

		p := requireProblem(t, env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": ids}), http.StatusUnprocessableEntity)
		require.Contains(t, p.Detail, name)
		require.Contains(t, p.Detail, code)
		require.Contains(t, backlogIDs(t, env), ids[0], "the items stay in the backlog")

		put([]int{1, 2, 3, 4, 5}, holidays)
		launch(t, env, map[string]any{"items": ids})
	})
}

// The shop floor's master reports progress and reads the plan; they launch,
// cancel and change nothing else.
func TestProduction_MasterRole(t *testing.T) {
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		tok := env.UserToken("Мастер смены", "master")
		var me struct{ Role string }
		env.Do(http.MethodGet, "/api/v1/me", nil, tok).JSON(t, &me)
		require.Equal(t, "master", me.Role)

		_, ids := receive(t, env, line{"DIV-CHESTER-3", 1})
		p := requireProblem(t, env.Do(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": ids}, tok), http.StatusForbidden)
		require.Contains(t, p.Detail, "master")
		o := launch(t, env, map[string]any{"items": ids})

		for _, path := range []string{"/api/v1/plan/backlog", "/api/v1/plan/schedule", "/api/v1/production-orders",
			fmt.Sprintf("/api/v1/production-orders/%d", o.ID), "/api/v1/work-centers", "/api/v1/routes", "/api/v1/products"} {
			r := env.Do(http.MethodGet, path, nil, tok)
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
		}
		op := o.Operations[0].ID
		for _, action := range []string{"start", "complete"} {
			r := env.Do(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/operations/%d/%s", o.ID, op, action), nil, tok)
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", action, r.Body)
		}
		started := eventsOf(t, env, "prod_order.started", o.ID)
		require.Len(t, started, 1)
		require.NotNil(t, started[0].Actor)
		require.Equal(t, "Мастер смены", started[0].Actor.Name)

		for _, c := range []struct {
			method, path string
			body         any
		}{
			{http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", o.ID), nil},
			{http.MethodPost, "/api/v1/work-centers", map[string]any{"code": "CNC", "name": "ЧПУ", "capacity_min_per_day": 900}},
			{http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", o.Operations[0].WorkCenterID), map[string]any{"code": "CNC", "name": "ЧПУ", "capacity_min_per_day": 900}},
			{http.MethodPost, "/api/v1/routes", map[string]any{}},
			{http.MethodPost, "/api/v1/products", map[string]any{}},
			{http.MethodPost, "/api/v1/orders", validOrder},
			{http.MethodPost, "/api/v1/users", map[string]any{"name": "x", "role": "master"}},
		} {
			requireProblem(t, env.Do(c.method, c.path, c.body, tok), http.StatusForbidden)
		}
	})
}
