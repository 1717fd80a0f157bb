package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// Every whole number of a body is within the column that stores it, on
// both databases: PostgreSQL would refuse to encode 2147483648 into an int4
// (a 500), SQLite would store it. Each is a 422 naming the member, and
// nothing is written.
func TestStrictInput_WholeNumbersWithinTheirColumns(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		_, ids := receive(t, env, line{"TMB-PRIK-450", 1})
		po := launch(t, env, map[string]any{"items": ids})
		code := partsOf(t, env, po.ID, "")[0].Code
		for _, tc := range []struct {
			method, path, body string
			field              string
		}{
			{http.MethodPost, "/api/v1/floor/scans", `{"code": "` + code + `", "step": 2147483648}`, "step"},
			{http.MethodPost, "/api/v1/floor/scans", `{"code": "` + code + `", "step": -2147483649}`, "step"},
			{http.MethodPost, "/api/v1/floor/scrap", `{"code": "` + code + `", "step": 4294967297, "reason": "chipped"}`, "step"},
			{http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", po.ID), `{"seq": 2147483648, "qty": 1}`, "seq"},
			{http.MethodPatch, fmt.Sprintf("/api/v1/production-orders/%d", po.ID), `{"priority": 9223372036854775807}`, "priority"},
			{http.MethodPut, "/api/v1/materials/1", `{"kind": "board", "code": "x", "name": "x", "trim": {"l1": 2147483648}}`, "trim.l1"},
			{http.MethodPost, "/api/v1/orders", `{"customer": {"name": "x"}, "items": [{"sku": "TMB-PRIK-450", "qty": 2147483648}]}`, "items[0].qty"},
			{http.MethodPost, "/api/v1/work-centers", `{"code": "W", "name": "w", "capacity_min_per_day": 60, "calendar": {"weekdays": [1, 2147483648]}}`, "calendar.weekdays[1]"},
		} {
			before := rowCounts(t, env)
			r := send(env, newRequest(tc.method, tc.path, []byte(tc.body), jsonAdmin...))
			requireRefusedCleanly(t, r, before, rowCounts(t, env))
			p := requireProblem(t, r, http.StatusUnprocessableEntity, tc.field)
			require.Contains(t, p.Errors[0].Message, "from -2147483648 to 2147483647", "%s %s", tc.path, tc.body)
		}
		// The largest that fits is the service's to judge: a step the route has not.
		requireProblem(t, send(env, newRequest(http.MethodPost, "/api/v1/floor/scans", []byte(`{"code": "`+code+`", "step": 2147483647}`), jsonAdmin...)),
			http.StatusUnprocessableEntity, "step")
	})
}

// A member sent twice is refused, naming it, rather than the last winning;
// a query parameter given twice too, rather than the first winning; and the
// event stream answers only a client that takes text/event-stream.
func TestStrictInput_NothingTwiceAndTheStreamAsItIs(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		for _, tc := range []struct {
			method, path, body string
			field              string
		}{
			{http.MethodPost, "/api/v1/orders", `{"customer": {"name": "x"}, "items": [{"sku": "TMB-PRIK-450", "qty": -5, "qty": 1}]}`, "items[0].qty"},
			{http.MethodPost, "/api/v1/orders", `{"customer": {"name": "x", "name": "y"}, "items": [{"sku": "TMB-PRIK-450", "qty": 1}]}`, "customer.name"},
			{http.MethodPost, "/api/v1/stock/receipts", `{"lines": [{"code": "LDSP16-WHITE", "qty": 1}], "lines": []}`, "lines"},
			{http.MethodPost, "/api/v1/materials", `{"kind": "fitting", "code": "A", "code": "B", "name": "x"}`, "code"},
		} {
			before := rowCounts(t, env)
			r := send(env, newRequest(tc.method, tc.path, []byte(tc.body), jsonAdmin...))
			requireRefusedCleanly(t, r, before, rowCounts(t, env))
			p := requireProblem(t, r, http.StatusUnprocessableEntity, tc.field)
			require.Contains(t, p.Errors[0].Message, "more than once")
		}

		for _, tc := range []struct{ path, param string }{
			{"/api/v1/events/stream?after=0&after=5", "after"},
			{"/api/v1/production-orders/1/labels?layout=label&layout=a4", "layout"},
			{"/api/v1/events?limit=1&limit=2", "limit"},
			{"/api/v1/orders?status=new&status=cancelled", "status"},
		} {
			p := requireProblemType(t, env.Admin(http.MethodGet, tc.path, nil), http.StatusUnprocessableEntity, "invalid", tc.param)
			require.Contains(t, p.Errors[0].Message, "is given 2 times", tc.path)
		}

		for _, accept := range []string{"application/json", "text/csv", "text/event-stream;q=0, application/json"} {
			r := env.Do(http.MethodGet, "/api/v1/events/stream?after=0", nil, apptest.AdminToken, "Accept", accept)
			p := requireProblemType(t, r, http.StatusNotAcceptable, "not_acceptable")
			require.Contains(t, p.Detail, "text/event-stream", accept)
		}
		// A client that takes the stream among others gets it (HEAD: its
		// headers alone, so that the test does not wait on it).
		for _, accept := range []string{"", "text/event-stream", "*/*", "application/json, text/event-stream;q=0.5"} {
			r := env.Do(http.MethodHead, "/api/v1/events/stream?after=0", nil, apptest.AdminToken, "Accept", accept)
			require.Equal(t, http.StatusOK, r.Status, "%q: %s", accept, r.Body)
			require.Equal(t, "text/event-stream", r.Header.Get("Content-Type"))
		}
	})
}

// A cursor belongs to the list of one object: one of an order's history
// (or a production order's parts) sent for another's is a 422 naming
// cursor, not a page of nothing; for its own list it goes on.
func TestStrictInput_CursorsKeepToTheirObject(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		first, firstItems := receive(t, env, line{"TMB-PRIK-450", 1})
		second, secondItems := receive(t, env, line{"TMB-PRIK-450", 1})
		r := env.Admin(http.MethodPatch, fmt.Sprintf("/api/v1/orders/%d", first), map[string]any{"note": "позвонить за час"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		poA := launch(t, env, map[string]any{"items": firstItems})
		poB := launch(t, env, map[string]any{"items": secondItems})
		env.Dispatch()

		for _, tc := range []struct{ mine, other string }{
			{fmt.Sprintf("/api/v1/orders/%d/history", first), fmt.Sprintf("/api/v1/orders/%d/history", second)},
			{fmt.Sprintf("/api/v1/production-orders/%d/parts", poA.ID), fmt.Sprintf("/api/v1/production-orders/%d/parts", poB.ID)},
		} {
			var pg struct {
				Items      []map[string]any
				NextCursor string `json:"next_cursor"`
			}
			env.Admin(http.MethodGet, tc.mine+"?limit=1", nil).JSON(t, &pg)
			require.Len(t, pg.Items, 1)
			require.NotEmpty(t, pg.NextCursor, tc.mine)
			p := requireProblem(t, env.Admin(http.MethodGet, tc.other+"?limit=1&cursor="+pg.NextCursor, nil), http.StatusUnprocessableEntity, "cursor")
			require.Contains(t, p.Errors[0].Message, "another list")
			r := env.Admin(http.MethodGet, tc.mine+"?limit=1&cursor="+pg.NextCursor, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var next struct{ Items []map[string]any }
			r.JSON(t, &next)
			require.Len(t, next.Items, 1, "its own list goes on")
			require.NotEqual(t, pg.Items[0]["id"], next.Items[0]["id"])
		}
	})
}
