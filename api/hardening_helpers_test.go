package api_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// requireProblemType is requireProblem that also checks the problem's type,
// e.g. "invalid" for urn:tsekh:problem:invalid.
func requireProblemType(t *testing.T, r apptest.Response, status int, typ string, fields ...string) problem {
	t.Helper()
	p := requireProblem(t, r, status, fields...)
	require.Equal(t, "urn:tsekh:problem:"+typ, p.Type, "%s", r.Body)
	return p
}

// newRequest makes a request with a body sent as is (nil: none) and the
// headers given as name, value pairs; a name may come more than once.
func newRequest(method, path string, body []byte, headers ...string) *http.Request {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	return req
}

// send sends a request through the app exactly as it is made.
func send(env *apptest.Env, req *http.Request) apptest.Response {
	rec := httptest.NewRecorder()
	env.Echo.ServeHTTP(rec, req)
	return apptest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// asAdmin is the Authorization header of the administrator.
var asAdmin = []string{"Authorization", "Bearer " + apptest.AdminToken}

// jsonAdmin are the headers of an administrator's JSON request.
var jsonAdmin = append([]string{"Content-Type", "application/json"}, asAdmin...)

// bookkeeping are the dispatcher's own tables: requests never write them.
var bookkeeping = []string{"events_partitions", "events_batches", "events_deliveries"}

// rowCounts counts the rows of every table of the modules and of the
// journal (events), so that a test can tell that a request wrote nothing.
// The tables are listed from the database, so that new ones count too.
func rowCounts(t testing.TB, env *apptest.Env) map[string]int64 {
	t.Helper()
	tables := tablesOf(t, env)
	var parts []string
	for _, name := range tables {
		if name == "goose_db_version" || slices.Contains(bookkeeping, name) {
			continue
		}
		parts = append(parts, "SELECT '"+name+"' AS name, count(*) AS n FROM "+name)
	}
	require.NotEmpty(t, parts)
	var rows []struct {
		Name string
		N    int64
	}
	require.NoError(t, database.Scan(env.App.DB.Raw(strings.Join(parts, " UNION ALL ")), &rows))
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Name] = r.N
	}
	require.Contains(t, out, "events")
	require.Contains(t, out, "sales_orders")
	return out
}

// tablesByDialect holds the tables of a migrated database, listed once per
// dialect: every test's database is a copy of the same migrations.
var tablesByDialect sync.Map // database.Dialect → []string

// tablesOf lists the tables of the env's database (read from the system
// catalogue: information_schema takes tens of milliseconds of the server's
// time on a server holding many test schemas).
func tablesOf(t testing.TB, env *apptest.Env) []string {
	t.Helper()
	if v, ok := tablesByDialect.Load(env.Dialect); ok {
		return v.([]string)
	}
	var names []string
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
	if env.Dialect == database.Postgres {
		q = `SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p')`
	}
	require.NoError(t, database.Scan(env.App.DB.Raw(q), &names))
	tablesByDialect.Store(env.Dialect, names)
	return names
}

// requireRefusedCleanly checks the rules every refused request keeps: a 4xx
// answer (never a 5xx), as application/problem+json, and no row written,
// but for an authentic delivery refused for its content (409, 422), kept in
// the intake inbox.
func requireRefusedCleanly(t testing.TB, r apptest.Response, before, after map[string]int64) {
	t.Helper()
	require.Less(t, r.Status, 500, "%s", r.Body)
	if r.Status < 400 {
		return
	}
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"), "%d %s", r.Status, r.Body)
	if after["events"] > before["events"] && (r.Status == http.StatusConflict || r.Status == http.StatusUnprocessableEntity) {
		requireOnlyKept(t, before, after, after["sales_intake_rejections"]-before["sales_intake_rejections"], 1)
		return
	}
	require.Equal(t, before, after, "a refused request (%d %s) wrote a row", r.Status, r.Body)
}
