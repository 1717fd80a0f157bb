// Package apptest runs the whole service in tests: a fresh database of each
// dialect, the wired app with its real Echo handler, an administrator's token
// and helpers to send requests through the app and to dispatch events.
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/app"
	"github.com/tsekh/tsekh/internal/auth"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/sales"
)

// AdminToken logs in as the administrator in every Env.
const AdminToken = "test-admin-token-0123456789"

// Env is one running service over a fresh database.
type Env struct {
	T       testing.TB
	App     *app.App
	Echo    *echo.Echo
	Dialect database.Dialect

	// sent records the requests sent with Do, for the journal check of
	// their actors; shared by copies of the Env.
	sent *sentRequests
}

// sentRequests are the requests an Env sent (dbtest.CheckRequests), and the
// user of each token they used.
type sentRequests struct {
	dbtest.Requests
	mu     sync.Mutex
	tokens map[string]int64
}

// Dialects are the dialects the service's tests run on (dbtest.Dialects:
// both, or the one TEST_DIALECTS names).
func Dialects() []database.Dialect { return dbtest.Dialects() }

// Each runs fn once on each of Dialects (PostgreSQL and SQLite), each with
// a fresh service whose catalog holds the demo data.
func Each(t *testing.T, fn func(t *testing.T, env *Env)) {
	t.Helper()
	for _, d := range Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, New(t, d, nil))
		})
	}
}

// New starts a service on a fresh database of the dialect. configure, when
// given, may change the configuration first.
//
// A test of a dialect that Dialects leaves out is skipped: it runs in the
// process that runs its dialect.
func New(t testing.TB, d database.Dialect, configure func(*config.Config)) *Env {
	t.Helper()
	return start(t, dbtest.New(t, d), d, configure)
}

// Pair starts a service on each dialect, PostgreSQL's whatever Dialects
// says, for a test that compares their answers (one request at a time): it
// runs where SQLite's tests run.
func Pair(t testing.TB, configure func(*config.Config)) []*Env {
	t.Helper()
	lite := New(t, database.SQLite, configure)
	return []*Env{start(t, dbtest.NewAlways(t, database.Postgres), database.Postgres, configure), lite}
}

// start starts the service on db, a fresh database of the dialect.
func start(t testing.TB, db *gorm.DB, d database.Dialect, configure func(*config.Config)) *Env {
	t.Helper()
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	cfg.BootstrapAdminToken = AdminToken
	// The tests check what a request does, not how fast (that is the
	// benchmarks'): under the race detector, beside the other tests and on
	// a busy machine, a launch of forty wardrobes or the last of twenty
	// launches queued behind the plan's lock may take longer than the
	// service's 30 s. The tests of the timeout itself set their own.
	cfg.HTTPRequestTimeout = 5 * time.Minute
	// A cutting plan's search at a tenth of the production effort: the
	// tests check what a plan holds (every part once, on a sheet of its
	// board, its offcuts kept and counted), which the checker of the
	// optimiser's own tests checks for any effort; how few sheets the
	// production effort finds is the optimiser's tests' and benchmarks'.
	cfg.CuttingEffort = 100_000
	if configure != nil {
		configure(&cfg)
	}
	a, err := app.New(db, cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	ctx := context.Background()
	_, err = a.Catalog.SeedDemo(ctx)
	require.NoError(t, err)
	_, err = a.Auth.EnsureAdmin(ctx, AdminToken)
	require.NoError(t, err)
	env := &Env{T: t, App: a, Echo: a.HTTP(), Dialect: d, sent: &sentRequests{tokens: map[string]int64{}}}
	t.Cleanup(func() {
		checkDeclared(t, a)
		dbtest.CheckRequests(t, a.DB, &env.sent.Requests)
		// Whatever the test did to production orders, their schedules
		// hold exactly their operations.
		assert.NoError(t, plan.VerifySchedules(context.Background(), a.DB))
	})
	t.Cleanup(a.Stream.Close) // the streams end before the database goes
	// The service's dispatcher starts with it: its subscribers are
	// registered, with their lanes, before the test writes anything.
	env.Dispatch()
	return env
}

// Response is what a request got back.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it cannot.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.Body, v), "body: %s", r.Body)
}

// Map decodes the body as a JSON object.
func (r Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Do sends a request through the app. body may be nil, a []byte or string
// (sent as is) or anything else (sent as JSON). token "" sends none. The
// response must be what docs/openapi.json declares for the request (see
// checkResponse): the test fails when it is not, whatever it expected.
func (e *Env) Do(method, path string, body any, token string, headers ...string) Response {
	e.T.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	case string:
		raw = []byte(b)
	default:
		js, err := json.Marshal(b)
		require.NoError(e.T, err)
		raw = js
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	sent := sentRequest{method: method, path: path, header: req.Header.Clone(), body: raw}
	rec := httptest.NewRecorder()
	from, checked := dbtest.NextXid(req.Context(), e.App.DB)
	e.Echo.ServeHTTP(rec, req)
	if checked {
		to, _ := dbtest.NextXid(req.Context(), e.App.DB)
		r := dbtest.Request{From: from, To: to, What: method + " " + path}
		switch {
		case token != "":
			r.ActorID = e.userOf(token)
		case strings.HasPrefix(path, "/api/v1/webhooks/shop/"):
			r.ActorName = sales.ShopActorName
		}
		e.sent.Add(r)
	}
	res := Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	note := func(err error) { e.T.Logf("apptest: %s %s: %v", method, path, err) }
	if err := checkResponse(sent, res.Status, res.Header, res.Body, note); err != nil {
		e.T.Errorf("apptest: %s %s: the response breaks docs/openapi.json: %v\nstatus %d, Content-Type %q, body: %.500s",
			method, path, err, res.Status, res.Header.Get("Content-Type"), res.Body)
	}
	return res
}

// userOf returns the id of the user a token belongs to (0 for none).
func (e *Env) userOf(token string) int64 {
	e.sent.mu.Lock()
	defer e.sent.mu.Unlock()
	id, ok := e.sent.tokens[token]
	if !ok {
		_ = database.Scan(e.App.DB.Raw("SELECT user_id FROM auth_tokens WHERE hash = ?", auth.HashToken(token)), &id)
		e.sent.tokens[token] = id
	}
	return id
}

// Admin sends a request as the administrator.
func (e *Env) Admin(method, path string, body any) Response {
	e.T.Helper()
	return e.Do(method, path, body, AdminToken)
}

// Dispatch runs dispatcher passes until nothing is due, for as long as a
// request may take (HTTP_REQUEST_TIMEOUT, 5 minutes in the tests): the
// subscribers wait for the locks the requests take (the plan's, behind a
// queue of launches on a loaded machine), and a fixed 30 s was once too
// short beside stress-ng.
func (e *Env) Dispatch() {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e.App.Config.HTTPRequestTimeout)
	defer cancel()
	_, err := e.App.Dispatcher.Drain(ctx)
	require.NoError(e.T, err, "apptest: the dispatcher did not settle")
}

// RunJobs runs every queued background job to its end (the service's
// runner, JOBS_CONCURRENCY at a time) and returns how many ran.
func (e *Env) RunJobs() int {
	e.T.Helper()
	n, err := e.App.JobRunner.RunQueued(context.Background())
	require.NoError(e.T, err)
	return n
}

// UserToken creates a user with the role and returns a token for them.
func (e *Env) UserToken(name, role string) string {
	e.T.Helper()
	r := e.Admin(http.MethodPost, "/api/v1/users", map[string]any{"name": name, "role": role})
	require.Equal(e.T, http.StatusCreated, r.Status, "%s", r.Body)
	var u struct{ ID int64 }
	r.JSON(e.T, &u)
	r = e.Admin(http.MethodPost, "/api/v1/users/"+strconv.FormatInt(u.ID, 10)+"/tokens", map[string]any{"name": "test"})
	require.Equal(e.T, http.StatusCreated, r.Status, "%s", r.Body)
	var tok struct{ Token string }
	r.JSON(e.T, &tok)
	return tok.Token
}

// checkDeclared fails the test when it wrote an event of a type the app's
// registry does not declare; dbtest checks every payload against its
// declared schema when the database is dropped.
func checkDeclared(t testing.TB, a *app.App) {
	t.Helper()
	var types []string
	if err := database.Scan(a.DB.Raw("SELECT DISTINCT type FROM events ORDER BY type"), &types); err != nil {
		return // the test closed the database itself
	}
	for _, ty := range types {
		if !a.Registry.HasType(ty) {
			t.Errorf("apptest: events of type %q were written, but no module declares it (internal/contracts)", ty)
		}
	}
}
