package events_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// The operator's way out, through the real HTTP API: a delivery that gave up
// is visible with its attempts and error, and an admin re-queues it.
func TestAdminRetry_ThroughTheAPI(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := apptest.New(t, d, func(c *config.Config) { c.DispatchMaxAttempts = 1 })
			env.FailInserts("plan_backlog", "", "")
			r := env.Admin(http.MethodPost, "/api/v1/orders", map[string]any{
				"customer": map[string]any{"name": "Иван Петров"}, "items": []map[string]any{{"sku": "SHK-KUPE-1600", "qty": 1}}})
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			env.Dispatch()

			var list struct {
				Items []struct {
					ID     int64
					Status string
				}
			}
			env.Admin(http.MethodGet, "/api/v1/events?type=order.received&status=failed", nil).JSON(t, &list)
			require.Len(t, list.Items, 1, "the failed event is listed")
			id := list.Items[0].ID
			path := fmt.Sprintf("/api/v1/events/%d", id)

			var ev struct {
				Status     string
				Deliveries []struct {
					Subscriber string
					Status     string
					Attempts   int
					LastError  string `json:"last_error"`
				}
			}
			env.Admin(http.MethodGet, path, nil).JSON(t, &ev)
			require.Equal(t, "failed", ev.Status)
			found := false
			for _, dl := range ev.Deliveries {
				if dl.Subscriber == "plan.backlog" {
					found = true
					require.Equal(t, "failed", dl.Status)
					require.Equal(t, 1, dl.Attempts)
					require.Contains(t, dl.LastError, "injected failure")
				}
			}
			require.True(t, found, "plan.backlog's delivery is shown: %+v", ev)

			var subs struct {
				Items []struct {
					Name   string
					Failed int64
				}
			}
			env.Admin(http.MethodGet, "/api/v1/subscribers", nil).JSON(t, &subs)
			for _, s := range subs.Items {
				if s.Name == "plan.backlog" {
					require.EqualValues(t, 1, s.Failed)
				}
			}
			metrics := env.Do(http.MethodGet, "/metrics", nil, "")
			require.Contains(t, string(metrics.Body), `tsekh_event_deliveries_total{outcome="error",subscriber="plan.backlog"} 1`)

			viewer := env.UserToken("Наблюдатель", "viewer")
			require.Equal(t, http.StatusForbidden, env.Do(http.MethodPost, path+"/retry", nil, viewer).Status)
			require.Equal(t, http.StatusNotFound, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/events/%d/retry", id+1000), nil).Status)

			// The cause is mended; the admin retries.
			if d == database.Postgres {
				require.NoError(t, env.App.DB.Exec("DROP TRIGGER fail_plan_backlog ON plan_backlog").Error)
			} else {
				require.NoError(t, env.App.DB.Exec("DROP TRIGGER fail_plan_backlog").Error)
			}
			r = env.Admin(http.MethodPost, path+"/retry", nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			require.JSONEq(t, `{"requeued": 1}`, string(r.Body))
			env.Dispatch()
			env.Admin(http.MethodGet, path, nil).JSON(t, &ev)
			require.Equal(t, "processed", ev.Status)
			require.EqualValues(t, 1, env.Count("plan_backlog"))
			require.Equal(t, http.StatusConflict, env.Admin(http.MethodPost, path+"/retry", nil).Status, "nothing left to retry")
		})
	}
}
