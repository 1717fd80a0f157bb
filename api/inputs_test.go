package api_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/api"
	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

func cursorOf(raw string) string {
	return url.QueryEscape(base64.RawURLEncoding.EncodeToString([]byte(raw)))
}

// Cursors are input like any other: one made by hand, one of another list
// or of another sort, or one whose key is out of every range, is a 422
// naming cursor, never a 500 from the database (SQLSTATE 22008 for the
// year 0000 on PostgreSQL) nor an empty page.
func TestCursors_Validated(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		a := receiveFor(t, env, "А", "2026-12-10", noteLine{SKU: "TMB-PRIK-450", Qty: 1})
		b := receiveFor(t, env, "Б", "2026-12-11", noteLine{SKU: "TMB-PRIK-450", Qty: 1})
		receiveFor(t, env, "В", "2026-12-12", noteLine{SKU: "TMB-PRIK-450", Qty: 1})
		receiveFor(t, env, "Г", "2026-12-13", noteLine{SKU: "TMB-PRIK-450", Qty: 1})
		launch(t, env, map[string]any{"items": []int64{a[0]}})
		launch(t, env, map[string]any{"items": []int64{b[0]}})

		next := func(path string) string {
			t.Helper()
			var p struct {
				NextCursor string `json:"next_cursor"`
			}
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
	t.Parallel()
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

// Every cell a spreadsheet would run as a formula comes with a leading
// apostrophe, the shop customer's name "-1+1+cmd|' /C calc'!A0" included, in
// every CSV the API writes (orders, backlog).
func TestCSV_CellsNeutralised(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		names := []string{"-1+1+cmd|' /C calc'!A0", "=HYPERLINK(\"x\")", "+7 900", "@SUM(A1)", "-x", "Иван"}
		for _, n := range names {
			receiveFor(t, env, n, "", noteLine{SKU: "TMB-PRIK-450", Qty: 1})
		}
		cells := map[string]bool{}
		for _, path := range []string{"/api/v1/orders", "/api/v1/plan/backlog"} {
			r := env.Do(http.MethodGet, path, nil, apptest.AdminToken, "Accept", "text/csv")
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			rd := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(r.Body, []byte("\uFEFF"))))
			rd.Comma = ';' // the office's layout, the default
			rows, err := rd.ReadAll()
			require.NoError(t, err)
			for _, row := range rows {
				for _, cell := range row {
					cells[cell] = true
					if cell != "" {
						require.NotContains(t, "=+-@\t\r", cell[:1], "%s: %q", path, cell)
					}
				}
			}
		}
		for _, n := range names[:5] {
			require.True(t, cells["'"+n], n)
		}
		require.True(t, cells["Иван"])
	})
}

// Accept is read with its q-values: q=0 refuses a type, the highest weight
// wins, and an Accept that allows nothing the endpoint has is a 406
// problem+json.
func TestAccept_QValues(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		receiveFor(t, env, "А", "", noteLine{SKU: "TMB-PRIK-450", Qty: 1})
		for _, tc := range []struct{ path, accept, want string }{
			{"/api/v1/orders", "application/json, text/csv;q=0", "application/json"},
			{"/api/v1/orders", "text/csv;q=0.9, application/json;q=0.1", "text/csv"},
			{"/api/v1/orders", "text/csv", "text/csv"},
			{"/api/v1/orders", "text/*", "text/csv"},
			{"/api/v1/orders", "*/*", "application/json"},
			{"/api/v1/orders", "*/*;q=0.5, text/csv;q=0.4", "application/json"},
			{"/api/v1/orders", "text/*;q=0, */*", "application/json"},
			{"/api/v1/orders", "", "application/json"},
			{"/api/v1/plan/backlog", "text/csv;q=1, application/json;q=0.5", "text/csv"},
			{"/api/v1/production-orders", "application/json;q=0.2, text/csv;q=0.3", "text/csv"},
			{"/api/v1/products", "application/*", "application/json"},
		} {
			r := env.Do(http.MethodGet, tc.path, nil, apptest.AdminToken, "Accept", tc.accept)
			require.Equal(t, http.StatusOK, r.Status, "%s %q: %s", tc.path, tc.accept, r.Body)
			require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), tc.want), "%s %q: %s", tc.path, tc.accept, r.Header.Get("Content-Type"))
		}
		for _, tc := range []struct{ path, accept string }{
			{"/api/v1/orders", "text/csv;q=0, application/json;q=0"},
			{"/api/v1/orders", "image/png"},
			{"/api/v1/products", "text/csv"},
			{"/api/v1/plan/backlog", "text/html, */*;q=0"},
		} {
			requireProblemType(t, env.Do(http.MethodGet, tc.path, nil, apptest.AdminToken, "Accept", tc.accept),
				http.StatusNotAcceptable, "not_acceptable")
		}
	})
}

// A member an office body does not have, or has spelt otherwise (QTY for
// qty: encoding/json alone would take it), is a 422 naming it with its
// path, on every POST, PUT and PATCH that takes a body; nothing is written.
func TestBodies_UnknownMembersRefused(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		order := `{"customer": {"name": "Иван"}, "items": [{"sku": "SHK-KUPE-1600", "QTY": 2}]}`
		cases := []refusal{
			{"OrderCaseVariant", post("/api/v1/orders", []byte(order)), 422, "invalid", []string{"items[0].QTY"}},
			{"OrderUnknown", post("/api/v1/orders", []byte(`{"customer": {"name": "Иван", "nick": "x"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1}], "priority": 1}`)), 422, "invalid", []string{"customer.nick", "priority"}},
			{"CRMEnvelope", post("/api/v1/imports/crm/orders", []byte(`{"orders": [], "Orders": []}`)), 422, "invalid", []string{"Orders"}},
			{"WorkCenter", post("/api/v1/work-centers", []byte(`{"code": "x", "name": "x", "capacity_min_per_day": 60, "Capacity": 1}`)), 422, "invalid", []string{"Capacity"}},
			{"Product", post("/api/v1/products", []byte(`{"sku": "X", "SKU": "Y"}`)), 422, "invalid", []string{"SKU"}},
			{"Route", post("/api/v1/routes", []byte(`{"name": "x", "operations": [{"Work_Center_ID": 1}]}`)), 422, "invalid", []string{"operations[0].Work_Center_ID"}},
			{"User", post("/api/v1/users", []byte(`{"email": "a@example.com", "Role": "admin"}`)), 422, "invalid", []string{"Role"}},
			{"Launch", post("/api/v1/production-orders", []byte(`{"Items": [1]}`)), 422, "invalid", []string{"Items"}},
			{"ChangeOrder", func() *http.Request {
				return newRequest(http.MethodPatch, "/api/v1/orders/999", []byte(`{"Due_Date": "2026-12-01"}`), jsonAdmin...)
			}, 422, "invalid", []string{"Due_Date"}},
			{"UpdateWorkCenter", func() *http.Request {
				return newRequest(http.MethodPut, "/api/v1/work-centers/999", []byte(`{"code": "x", "name": "x", "capacity_min_per_day": 60, "colour": "red"}`), jsonAdmin...)
			}, 422, "invalid", []string{"colour"}},
			// Lone surrogates, which encoding/json turns into U+FFFD silently.
			{"OrderLoneSurrogate", post("/api/v1/orders", []byte(`{"customer": {"name": "Иван\ud800"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1}]}`)), 422, "invalid", []string{"customer.name"}},
			{"ShopLoneSurrogate", signed([]byte(strings.Replace(shopBody("s0"), `"s0"`, `"\ud800"`, 1))), 422, "invalid", []string{"id"}},
			{"ShopLoneLowSurrogate", signed([]byte(strings.Replace(shopBody(`s1`), "Анна", `\udfffАнна`, 1))), 422, "invalid", []string{"customer.name"}},
		}
		runRefusals(t, env, cases)

		// The shop stays tolerant of members it does not know; two shop ids
		// that differ only in a lone surrogate are refused, never merged.
		r := send(env, shopDelivery([]byte(strings.Replace(shopBody("s2"), `"due_date"`, `"loyalty": {"tier": 2}, "due_date"`, 1))))
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	})
}

// A work centre's code is one regardless of case, its capacity at most a
// day's minutes; a user's e-mail is an address.
func TestCatalog_CodesAndBounds(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		wc := func(code string, capacity int) map[string]any {
			return map[string]any{"code": code, "name": "Кромка", "capacity_min_per_day": capacity}
		}
		r := env.Admin(http.MethodPost, "/api/v1/work-centers", wc("EDGE-X", 1440))
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var created struct{ ID int64 }
		r.JSON(t, &created)
		requireProblemType(t, env.Admin(http.MethodPost, "/api/v1/work-centers", wc("edge-x", 480)), http.StatusConflict, "conflict")
		requireProblemType(t, env.Admin(http.MethodPost, "/api/v1/work-centers", wc("Edge-X", 480)), http.StatusConflict, "conflict")
		requireProblem(t, env.Admin(http.MethodPost, "/api/v1/work-centers", wc("EDGE-Y", 1441)), http.StatusUnprocessableEntity, "capacity_min_per_day")
		requireProblem(t, env.Admin(http.MethodPost, "/api/v1/work-centers", wc("EDGE-Y", 100000)), http.StatusUnprocessableEntity, "capacity_min_per_day")
		// Its own code in another case is its own.
		r = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", created.ID), wc("edge-x", 960))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

		// A duplicate an older tsekh let in (marked by migration 00018) can
		// still be changed under its code, and renamed to a free one only.
		// A duplicate from before migration 00018, as the migration left it.
		require.NoError(t, dbtest.Fixture(env.App.DB, func(tx *gorm.DB) error {
			return tx.Exec(`INSERT INTO catalog_work_centers (code, name, capacity_min_per_day, code_duplicate) VALUES ('EDGE-x', 'Кромка 2', 480, true)`).Error
		}))
		var dup int64
		require.NoError(t, database.Scan(env.App.DB.Raw(`SELECT id FROM catalog_work_centers WHERE code = 'EDGE-x'`), &dup))
		r = env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/work-centers/%d", dup), nil)
		require.Contains(t, string(r.Body), `"code_duplicate":true`)
		r = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", dup), wc("EDGE-x", 600))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		requireProblemType(t, env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", dup), wc("EDGE-X", 600)), http.StatusConflict, "conflict")
		r = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", dup), wc("EDGE-2", 600))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.NotContains(t, string(r.Body), "code_duplicate")

		for _, email := range []string{"not-an-email", "Иван <ivan@example.com>", "ivan@localhost", "ivan@@example.com", "ivan@example..com", "@example.com", "ivan@[127.0.0.1]"} {
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/users", map[string]any{"name": "Иван", "email": email, "role": "manager"}),
				http.StatusUnprocessableEntity, "email")
		}
		r = env.Admin(http.MethodPost, "/api/v1/users", map[string]any{"name": "Иван", "email": "ivan.petrov+plan@example.com", "role": "manager"})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	})
}

// A request whose headers are over the app's 64 KiB is a 431 problem+json;
// net/http answers itself, in plain text, only past its own 1 MiB (and for
// what it cannot parse: a duplicate Content-Length is its 400).
func TestHTTP_ServerErrorsAsProblems(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, database.SQLite, nil)
	srv := httptest.NewUnstartedServer(env.Echo)
	srv.Config = api.HTTPServer("", env.Echo, 0)
	srv.Start()
	t.Cleanup(srv.Close)

	do := func(size int) *http.Response {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/products", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
		req.Header.Set("X-Big", strings.Repeat("a", size))
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = res.Body.Close() })
		return res
	}
	require.Equal(t, http.StatusOK, do(60<<10).StatusCode) //nolint:bodyclose // do closes it at cleanup
	res := do(100 << 10)                                   //nolint:bodyclose // do closes it at cleanup
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, res.StatusCode)
	require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
	var p problem
	require.NoError(t, json.NewDecoder(res.Body).Decode(&p))
	require.Equal(t, "urn:tsekh:problem:headers_too_large", p.Type)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, p.Status)

	res = do(2 << 20) //nolint:bodyclose // do closes it at cleanup
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, res.StatusCode)
	require.NotEqual(t, "application/problem+json", res.Header.Get("Content-Type"), "net/http's own answer, before any handler")

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"))
	require.NoError(t, err)
	line, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "HTTP/1.1 400 Bad Request\r\n", line, "net/http refuses it before any handler runs")
}
