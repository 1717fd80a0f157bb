package api_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

func cursorOf(raw string) string {
	return url.QueryEscape(base64.RawURLEncoding.EncodeToString([]byte(raw)))
}

// Cursors are input like any other: one made by hand, one of another list
// or of another sort, or one whose key is out of every range, is a 422
// naming cursor, never a 500 from the database (SQLSTATE 22008 for the
// year 0000 on PostgreSQL) nor an empty page.
func TestCursors_Validated(t *testing.T) {
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		a := receiveFor(t, env, "А", "2026-12-10", noteLine{SKU: "TMB-PRIK-450", Qty: 1})
		b := receiveFor(t, env, "Б", "2026-12-11", noteLine{SKU: "TMB-PRIK-450", Qty: 1})
		receiveFor(t, env, "В", "2026-12-12", noteLine{SKU: "TMB-PRIK-450", Qty: 1})
		receiveFor(t, env, "Г", "2026-12-13", noteLine{SKU: "TMB-PRIK-450", Qty: 1})
		launch(t, env, map[string]any{"items": []int64{a[0]}})
		launch(t, env, map[string]any{"items": []int64{b[0]}})

		next := func(path string) string {
			t.Helper()
			var p struct{ NextCursor string `json:"next_cursor"` }
			r := env.Admin(http.MethodGet, path, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
			r.JSON(t, &p)
			require.NotEmpty(t, p.NextCursor, path)
			return url.QueryEscape(p.NextCursor)
		}
		backlogDue := next("/api/v1/plan/backlog?sort=due_date&limit=1")
		backlog := next("/api/v1/plan/backlog?limit=1")
		prodETA := next("/api/v1/production-orders?sort=eta&limit=1")
		orders := next("/api/v1/orders?limit=1")
		events := next("/api/v1/events?limit=1")

		// Their own list and sort take them.
		for _, p := range []string{
			"/api/v1/plan/backlog?sort=due_date&cursor=" + backlogDue,
			"/api/v1/plan/backlog?cursor=" + backlog,
			"/api/v1/production-orders?sort=eta&cursor=" + prodETA,
			"/api/v1/orders?cursor=" + orders,
			"/api/v1/events?cursor=" + events,
		} {
			require.Equal(t, http.StatusOK, env.Admin(http.MethodGet, p, nil).Status, p)
		}

		for _, p := range []string{
			// Out of range keys, hand-made.
			"/api/v1/plan/backlog?sort=due_date&cursor=" + cursorOf(`{"l":"/api/v1/plan/backlog","s":"due_date","k":"0000-01-01","id":1}`),
			"/api/v1/plan/backlog?sort=-due_date&cursor=" + cursorOf(`{"l":"/api/v1/plan/backlog","s":"-due_date","k":"9999-12-31","id":1}`),
			"/api/v1/production-orders?sort=eta&cursor=" + cursorOf(`{"l":"/api/v1/production-orders","s":"eta","k":"0000-01-01","id":1}`),
			"/api/v1/production-orders?sort=due_date&cursor=" + cursorOf(`{"l":"/api/v1/production-orders","s":"due_date","k":"-0001-01-01","id":1}`),
			"/api/v1/production-orders?sort=eta&cursor=" + cursorOf(`{"l":"/api/v1/production-orders","s":"eta","k":"2026-02-30","id":1}`),
			"/api/v1/orders?cursor=" + cursorOf(`{"l":"/api/v1/orders","id":-5}`),
			"/api/v1/orders?cursor=" + cursorOf(`{"l":"/api/v1/orders","id":1e30}`),
			"/api/v1/orders?cursor=" + cursorOf(`5`), // a plain id: not a cursor of this API
			// Another sort of the same list.
			"/api/v1/plan/backlog?sort=-due_date&cursor=" + backlogDue,
			"/api/v1/plan/backlog?sort=due_date&cursor=" + backlog,
			"/api/v1/production-orders?sort=-eta&cursor=" + prodETA,
			"/api/v1/orders?cursor=" + cursorOf(`{"l":"/api/v1/orders","s":"due_date","k":"2026-12-01","id":3}`),
			// Another list, with the same sort.
			"/api/v1/production-orders?sort=due_date&cursor=" + backlogDue,
			"/api/v1/orders?cursor=" + events,
			"/api/v1/events?cursor=" + orders,
			"/api/v1/products?cursor=" + backlog,
			"/api/v1/users?cursor=" + orders,
			"/api/v1/work-centers?cursor=" + orders,
			"/api/v1/routes?cursor=" + orders,
		} {
			requireProblem(t, env.Admin(http.MethodGet, p, nil), http.StatusUnprocessableEntity, "cursor")
		}
	})
}

// since after until (or equal: an empty range) is a 422 naming both.
func TestEvents_SinceAfterUntil(t *testing.T) {
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/events?since=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z", nil),
			http.StatusUnprocessableEntity, "since", "until")
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/events?since=2026-12-01T00:00:00Z&until=2026-12-01T00:00:00Z", nil),
			http.StatusUnprocessableEntity, "since", "until")
		require.Equal(t, http.StatusOK, env.Admin(http.MethodGet, "/api/v1/events?since=2026-12-01T00:00:00Z&until=2026-12-01T00:00:01Z", nil).Status)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/orders?due_after=2026-12-02&due_before=2026-12-01", nil),
			http.StatusUnprocessableEntity, "due_before")
	})
}
