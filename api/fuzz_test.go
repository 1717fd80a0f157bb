package api_test

// Fuzz targets for every way input comes in through the API: the JSON
// bodies of the shop's webhook, manual orders, the CRM import and the
// catalog, the query parameters of the lists and the parameters in paths. Each sends what it is
// given through the real app on PostgreSQL and on SQLite and asserts that
// the answer is never a 5xx, that every 4xx is application/problem+json, and
// that a refused request wrote no row (every table of the modules and the
// journal counted before and after).
//
// The seeds (f.Add) hold every input of the hardening report and run with
// go test; go test -run XXX -fuzz FuzzCreateOrder ./api explores further.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/sales"
)

// fuzzPairs is how many pairs of services (one on each database) a fuzz
// target starts: its seeds run that many at a time, each on a pair of its
// own while it runs (fuzzing itself, with -fuzz, runs them one by one).
const fuzzPairs = 2

// fuzzEnvSet is a fuzz target's services: all of them, for its set-up, and
// the pairs its inputs take turns on.
type fuzzEnvSet struct {
	all   []*apptest.Env
	pairs chan []*apptest.Env
}

// fuzzEnvs starts the services of a fuzz target.
func fuzzEnvs(f *testing.F, configure func(*config.Config)) *fuzzEnvSet {
	f.Helper()
	set := &fuzzEnvSet{pairs: make(chan []*apptest.Env, fuzzPairs)}
	for range fuzzPairs {
		pair := apptest.Pair(f, configure)
		set.all = append(set.all, pair...)
		set.pairs <- pair
	}
	return set
}

// each runs fn for one input on every service of a free pair, as t (an
// Env's helpers fail the test they are given): no other input runs on that
// pair meanwhile, so the row counts before and after a request are its own.
func (s *fuzzEnvSet) each(t *testing.T, fn func(t *testing.T, env *apptest.Env)) {
	t.Parallel()
	pair := <-s.pairs
	defer func() { s.pairs <- pair }()
	for _, env := range pair {
		e := *env
		e.T = t
		fn(t, &e)
	}
}

var plainID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// fuzzSend sends req and checks the rules every answer keeps; it returns
// the answer and the row counts before and after.
func fuzzSend(t *testing.T, env *apptest.Env, req *http.Request) (r apptest.Response, before, after map[string]int64) {
	t.Helper()
	before = rowCounts(t, env)
	r = send(env, req)
	after = rowCounts(t, env)
	requireRefusedCleanly(t, r, before, after)
	require.Regexp(t, plainID, r.Header.Get("X-Request-Id"))
	if r.Status >= 400 && req.Method != http.MethodHead {
		var p problem
		require.NoError(t, json.Unmarshal(r.Body, &p), "%s", r.Body)
		require.Equal(t, r.Status, p.Status)
		require.True(t, strings.HasPrefix(p.Type, "urn:tsekh:problem:"), p.Type)
		require.NotEmpty(t, p.Title)
		require.NotEmpty(t, p.Detail)
		for _, e := range p.Errors {
			require.NotEmpty(t, e.Field, "%s", r.Body)
			require.NotEmpty(t, e.Message)
		}
	}
	return r, before, after
}

// bodyRequest is a POST or PUT of body as the fuzzer made it, with its
// Content-Type ("" for none), optionally in chunks (no length known).
func bodyRequest(method, path string, body []byte, contentType string, chunked bool, headers ...string) *http.Request {
	req := newRequest(method, path, body, headers...)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if chunked {
		req.ContentLength, req.TransferEncoding = -1, []string{"chunked"}
	}
	return req
}

// Seeds shared by every body.
const (
	ctJSON    = "application/json"
	nul       = `\u0000`
	cyrillic  = "Жжжжжжжжжж"
	truncated = `{"customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600"`
)

// badStrings are strings (as JSON text, quotes included) that no text field takes.
var badStrings = []string{
	`"` + nul + `"`, `"a` + nul + `b"`, `"\u0007"`, `"\u001b[31m"`, `"\u007f"`, `"\u0085"`,
	"\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", `"\ud800"`,
}

// orderSeeds are manual order bodies: the valid ones and the hardening
// report's inputs.
func orderSeeds() [][]byte {
	seeds := [][]byte{
		orderBody(`"Иван Петров"`, `"+7 900 123-45-67"`, `"ivan@example.com"`, `"SHK-KUPE-1600"`, `"цвет:\tдуб\nручки: хром"`, "2026-12-20"),
		orderBody(`"`+strings.Repeat("Ж", 101)+`"`, `""`, `""`, `"SHK-KUPE-1600"`, `""`, ""), // 202 bytes, 101 characters: fits
		orderBody(`"`+strings.Repeat("Ж", 200)+`"`, `""`, `""`, `"SHK-KUPE-1600"`, `""`, "2100-12-31"),
		orderBody(`"`+strings.Repeat("Ж", 201)+`"`, `""`, `""`, `"SHK-KUPE-1600"`, `""`, ""),
		orderBody(`"x"`, `"`+strings.Repeat("9", 500_000)+`"`, `""`, `"SHK-KUPE-1600"`, `""`, ""), // a 500 KB phone
		orderBody(`"x"`, `""`, `""`, `"SHK-KUPE-1600"`, `"`+strings.Repeat("n", 500_000)+`"`, ""), // a 500 KB note
		orderBody(`"x"`, `""`, `""`, `"SHK-KUPE-1600"`, `""`, "0000-01-01"),
		orderBody(`"x"`, `""`, `""`, `"SHK-KUPE-1600"`, `""`, "9999-12-31"),
		orderBody(`"x"`, `""`, `""`, `"SHK-KUPE-1600"`, `""`, "10000-01-01"),
		orderBody(`"x\ny"`, `"+7\t900"`, `"a@b"`, `"SHK-KUPE-1600"`, `""`, ""),
		[]byte(`{"customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600", "qty": "one"}]}`),
		[]byte(`{"customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1}, {"sku": "TMB-PRIK-450", "qty": 1.5}]}`),
		[]byte(`{"customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1e400}]}`),
		[]byte(`{"customer": "x", "items": {}}`),
		[]byte(`{"customer\u0000": {"name": "x"}, "items": []}`),
		[]byte(truncated), []byte(`{"customer":`), []byte(`{`), []byte(``), []byte(`null`), []byte(`[]`), []byte(`"x"`), []byte(`{} {}`),
		[]byte(`{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`),
	}
	for _, s := range badStrings {
		for _, field := range []string{"name", "phone", "email", "sku", "note"} {
			seeds = append(seeds, okOrder(field, s))
		}
	}
	return seeds
}

func FuzzCreateOrder(f *testing.F) {
	for _, b := range orderSeeds() {
		f.Add(b, ctJSON, "", false)
	}
	valid := orderSeeds()[0]
	for _, ct := range []string{"", "application/jsonxyz", "text/plain", "application/json; charset=utf-8", "application/json; charset=latin1", "multipart/form-data; boundary=x"} {
		f.Add(valid, ct, "", false)
	}
	f.Add(valid, ctJSON, "key-1", false)
	f.Add(valid, ctJSON, "a\nb", false) // two Idempotency-Key headers
	f.Add(valid, ctJSON, "a,b", false)
	f.Add(valid, ctJSON, "ключ", false)
	f.Add(valid, ctJSON, strings.Repeat("k", 256), false)
	f.Add(valid, ctJSON, "", true)
	over := append(bytes.Clone(valid), bytes.Repeat([]byte(" "), 1<<20+1-len(valid))...) // 1 MiB + 1
	f.Add(over, ctJSON, "", false)
	f.Add(over, ctJSON, "", true)
	f.Add(over[:1_000_001], ctJSON, "", true) // over the old 1,000,000-byte limit, under 1 MiB
	envs := fuzzEnvs(f, nil)
	f.Fuzz(func(t *testing.T, body []byte, contentType, keys string, chunked bool) {
		envs.each(t, func(t *testing.T, env *apptest.Env) {
			var headers []string
			if keys != "" {
				for _, k := range strings.Split(keys, "\n") {
					headers = append(headers, "Idempotency-Key", k)
				}
			}
			fuzzSend(t, env, bodyRequest(http.MethodPost, "/api/v1/orders", body, contentType, chunked, append(headers, asAdmin...)...))
		})
	})
}

func FuzzShopWebhook(f *testing.F) {
	for _, b := range orderSeeds() {
		f.Add(b, ctJSON)
	}
	shop := func(field, value string) []byte {
		return []byte(strings.Replace(shopBody("f1"), `"`+field+`": "`, `"`+field+`": "`+value, 1))
	}
	for _, s := range []string{nul, "\xff", "\xc0\xaf", `\u0007`} {
		for _, field := range []string{"id", "name", "email", "sku"} {
			f.Add(shop(field, s), ctJSON)
		}
	}
	f.Add([]byte(shopBody("f2")), ctJSON)
	f.Add([]byte(shopBody("f2")), "application/jsonxyz")
	f.Add([]byte(shopBody("f2")), "")
	f.Add([]byte(strings.Replace(shopBody("f3"), "2026-12-24", "0000-01-01", 1)), ctJSON)
	f.Add([]byte(strings.Replace(shopBody("f3"), "2026-12-24", "9999-12-31", 1)), ctJSON)
	f.Add([]byte(shopBody("f4", `{"sku": "SHK-KUPE-1600", "qty": 1}`, `{"sku": "SHK-KUPE-1600", "qty": "1"}`)), ctJSON)
	f.Add([]byte(`{"id": 17, "customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1}]}`), ctJSON)
	f.Add([]byte(`{"id": 1.5, "customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1}]}`), ctJSON)
	f.Add([]byte(`{"id": "`+strings.Repeat("Ж", 65)+`", "customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1}]}`), ctJSON)
	f.Add([]byte(`{"id": "a"`), ctJSON)
	envs := fuzzEnvs(f, withShopSecret)
	for _, env := range envs.all {
		// The shop's own user is made on its first delivery: make it now, so
		// that every refusal below can be seen to write nothing.
		require.Equal(f, http.StatusCreated, send(env, shopDelivery([]byte(shopBody("warm-up")))).Status)
	}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		envs.each(t, func(t *testing.T, env *apptest.Env) {
			req := shopDelivery(body)
			req.Header.Del("Content-Type")
			if contentType != "" {
				req.Header.Set("Content-Type", contentType)
			}
			fuzzSend(t, env, req)
		})
	})
}

// crmRow is a CRM row whose customer's name is the JSON text given.
func crmRow(id any, name string, due string) string {
	return fmt.Sprintf(`{"crm_order_id": %v, "customer": {"name": %s}, "items": [{"sku": "TMB-PRIK-450", "qty": 1}], "due_date": %q}`, id, name, due)
}

func FuzzImportCRM(f *testing.F) {
	batch := func(rows ...string) []byte { return []byte(`{"orders": [` + strings.Join(rows, ", ") + `]}`) }
	f.Add(batch(crmRow(1, `"Первый"`, "2026-12-20"), crmRow(2, `"Второй`+nul+`"`, "2026-12-20"), crmRow(3, `"Третий"`, "2026-12-20")), ctJSON)
	for i, s := range badStrings {
		f.Add(batch(crmRow(100+i, `"ok"`, ""), crmRow(200+i, s, ""), crmRow(300+i, `"ok"`, "")), ctJSON)
	}
	f.Add(batch(crmRow(`"10455"`, `"x"`, ""), crmRow(`1.5`, `"x"`, ""), crmRow(`-1`, `"x"`, ""), crmRow(`null`, `"x"`, "")), ctJSON)
	f.Add(batch(crmRow(4, `"x"`, "0000-01-01"), crmRow(5, `"x"`, "9999-12-31"), crmRow(6, `"`+strings.Repeat("Ж", 201)+`"`, "")), ctJSON)
	f.Add(batch(`{"crm_order_id": 7, "customer": {"name": "x"}, "items": [{"sku": "TMB-PRIK-450", "qty": "1"}]}`, `"not a row"`, `[]`, `null`), ctJSON)
	f.Add(batch(crmRow(8, `"x"`, "")), "application/jsonxyz")
	f.Add(batch(crmRow(8, `"x"`, "")), "")
	f.Add([]byte(`{"orders": [`+crmRow(9, `"x"`, "")), ctJSON)
	f.Add([]byte(`{"orders": {}}`), ctJSON)
	f.Add([]byte(`{"orders": [`+strings.Repeat(`{},`, sales.MaxCRMImportRows)+`{}]}`), ctJSON)
	f.Add([]byte("{\"orders\": [], \"x\xff\": 1}"), ctJSON)
	envs := fuzzEnvs(f, nil)
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		envs.each(t, func(t *testing.T, env *apptest.Env) {
			r, before, after := fuzzSend(t, env, bodyRequest(http.MethodPost, "/api/v1/imports/crm/orders", body, contentType, false, asAdmin...))
			if r.Status != http.StatusOK {
				return
			}
			// A refused or failed row wrote no order: the orders written are
			// those of the rows created; besides their events, at most one
			// intake.rejected per refused row kept in the intake inbox.
			var rep sales.ImportReport
			r.JSON(t, &rep)
			require.EqualValues(t, rep.Created, after["sales_orders"]-before["sales_orders"], "%s", r.Body)
			kept := after["events"] - before["events"] - int64(rep.Created)
			require.True(t, kept >= 0 && kept <= int64(rep.Refused), "%d events beyond the orders' for %d refused rows: %s", kept, rep.Refused, r.Body)
			require.LessOrEqual(t, after["sales_intake_rejections"]-before["sales_intake_rejections"], kept)
			require.Len(t, rep.Rows, rep.Created+rep.Exists+rep.Refused+rep.Failed)
			require.Zero(t, rep.Failed, "%s", r.Body)
			for _, row := range rep.Rows {
				if row.Result == sales.ImportRefused {
					require.NotEmpty(t, row.Detail)
				}
				if row.CRMOrderID != nil {
					require.NotEmpty(t, *row.CRMOrderID)
					require.LessOrEqual(t, utf8.RuneCountInString(*row.CRMOrderID), 64)
				}
			}
		})
	})
}

// catalogTargets are the catalog's writes a fuzz input picks from.
var catalogTargets = []struct{ method, path string }{
	{http.MethodPost, "/api/v1/work-centers"}, {http.MethodPut, "/api/v1/work-centers/1"},
	{http.MethodPost, "/api/v1/routes"}, {http.MethodPut, "/api/v1/routes/1"},
	{http.MethodPost, "/api/v1/products"}, {http.MethodPut, "/api/v1/products/1"},
	{http.MethodPost, "/api/v1/users"}, {http.MethodPost, "/api/v1/users/1/tokens"},
	{http.MethodPost, "/api/v1/production-orders"}, {http.MethodPost, "/api/v1/production-orders/1/progress"},
}

func FuzzCatalog(f *testing.F) {
	wc := func(code, name, holiday string) []byte {
		return []byte(`{"code": ` + code + `, "name": ` + name + `, "capacity_min_per_day": 900, "calendar": {"weekdays": [1, 2, 3, 4, 5], "holidays": ["` + holiday + `"]}}`)
	}
	route := func(name, opName string) []byte {
		return []byte(`{"name": ` + name + `, "kind": "case", "operations": [{"name": ` + opName + `, "work_center_id": 1, "scope": "part", "minutes": 4}]}`)
	}
	product := func(sku, name, material string) []byte {
		return []byte(`{"sku": ` + sku + `, "name": ` + name + `, "kind": "case", "route_id": 1, "parts": [{"name": "Бок", "material": ` + material + `, "length_mm": 600, "width_mm": 300, "thickness_mm": 16, "edging": "ПВХ", "qty": 2}]}`)
	}
	f.Add(uint8(0), wc(`"CNC"`, `"ЧПУ"`, "2026-12-31"), ctJSON)
	f.Add(uint8(1), wc(`"CUT"`, `"Раскрой"`, "2026-12-31"), ctJSON)
	f.Add(uint8(2), route(`"Новый"`, `"Раскрой"`), ctJSON)
	f.Add(uint8(4), product(`"NEW-1"`, `"Новый"`, `"ЛДСП 16 мм"`), ctJSON)
	f.Add(uint8(6), []byte(`{"name": "Ольга", "role": "viewer", "email": "olga@example.com"}`), ctJSON)
	f.Add(uint8(7), []byte(`{"name": "CRM"}`), ctJSON)
	for _, s := range badStrings {
		f.Add(uint8(0), wc(`"CNC"`, s, "2026-12-31"), ctJSON)
		f.Add(uint8(1), wc(s, `"x"`, "2026-12-31"), ctJSON)
		f.Add(uint8(2), route(`"x"`, s), ctJSON)
		f.Add(uint8(3), route(s, `"x"`), ctJSON)
		f.Add(uint8(4), product(`"S"`, `"x"`, s), ctJSON)
		f.Add(uint8(5), product(s, `"x"`, `"y"`), ctJSON)
		f.Add(uint8(6), []byte(`{"name": `+s+`, "role": "viewer"}`), ctJSON)
		f.Add(uint8(7), []byte(`{"name": `+s+`}`), ctJSON)
	}
	f.Add(uint8(0), wc(`"CNC"`, `"`+strings.Repeat("Ж", 201)+`"`, "0000-01-01"), ctJSON)
	f.Add(uint8(0), wc(`"CNC"`, `"x"`, "9999-12-31"), ctJSON)
	f.Add(uint8(0), wc(`"`+cyrillic+cyrillic+cyrillic+cyrillic+`"`, `"x"`, "2026-12-31"), ctJSON)
	f.Add(uint8(0), []byte(`{"code": "CNC", "name": "x", "capacity_min_per_day": 900, "calendar": {"weekdays": [1, "2"]}}`), ctJSON)
	f.Add(uint8(2), []byte(`{"name": "x", "kind": "case", "operations": [{"name": "a", "work_center_id": 1, "scope": "part", "minutes": "4"}]}`), ctJSON)
	f.Add(uint8(4), []byte(`{"sku": "S", "name": "x", "kind": "case", "route_id": 1, "parts": [{"name": "a", "material": "b", "length_mm": 1, "width_mm": 1, "thickness_mm": 1, "qty": 1e400}]}`), ctJSON)
	f.Add(uint8(8), []byte(`{"items": [1], "eta": "9999-12-31"}`), ctJSON)
	f.Add(uint8(8), []byte(`{"items": [1], "eta": "0000-01-01"}`), ctJSON)
	f.Add(uint8(8), []byte(`{"items": ["1"]}`), ctJSON)
	f.Add(uint8(0), wc(`"CNC"`, `"x"`, "2026-12-31"), "application/jsonxyz")
	f.Add(uint8(3), route(`"x"`, `"y"`), "")
	f.Add(uint8(5), []byte(`{"sku": "S", "name": "x", "kind": "case", "route_id": 1, "parts": [{"name": "a"`), ctJSON)
	f.Add(uint8(1), []byte(`{"code": "CNC"`), ctJSON)
	envs := fuzzEnvs(f, nil)
	f.Fuzz(func(t *testing.T, target uint8, body []byte, contentType string) {
		c := catalogTargets[int(target)%len(catalogTargets)]
		envs.each(t, func(t *testing.T, env *apptest.Env) {
			fuzzSend(t, env, bodyRequest(c.method, c.path, body, contentType, false, asAdmin...))
		})
	})
}

// listPaths are the routes a GET fuzz input picks from.
var listPaths = []string{
	"/api/v1/events", "/api/v1/orders", "/api/v1/products", "/api/v1/work-centers", "/api/v1/routes",
	"/api/v1/plan/backlog", "/api/v1/plan/schedule", "/api/v1/production-orders", "/api/v1/subscribers",
	"/api/v1/event-types", "/api/v1/events/1", "/api/v1/orders/1", "/api/v1/me", "/healthz", "/readyz",
}

func FuzzListQuery(f *testing.F) {
	for _, q := range []string{
		"type=%00", "type=%FF", "type=%C0%AF", "aggregate_type=%00", "aggregate_type=%FF", "aggregate_type=%C0%AF",
		"type=order.received&aggregate_type=sales_orders&aggregate_id=1&actor_id=1&status=processed",
		"since=2026-11-13T17:20:25.729Z&until=2026-11-13T17:20:25.730Z", "since=0000-01-01T00:00:00Z", "until=9999-12-31T23:59:59Z",
		"since=%00", "until=%FF", "status=%C0%AF", "aggregate_id=%00", "actor_id=-1", "limit=%00", "limit=0", "limit=501",
		"cursor=%FF", "cursor=zzz", "%00=1", "%FF", "a=%zz", "type=" + strings.Repeat("t", 101), "status=" + strings.Repeat("%00", 1000),
	} {
		f.Add(uint8(0), q, "", false)
	}
	for i, q := range []string{"status=%00", "source=%FF", "status=%C0%AF", "limit=%FF", "from=0000-01-01", "from=2026-01-01&to=10000-01-01",
		"from=9999-12-31", "to=%00", "status=%00"} {
		f.Add(uint8([]int{1, 1, 7, 5, 6, 6, 6, 6, 7}[i]), q, "", false)
	}
	for i := range listPaths {
		f.Add(uint8(i), "", "", true) // HEAD
		f.Add(uint8(i), "cursor=%C0%AF&limit=%00", "", true)
	}
	f.Add(uint8(13), "", strings.Repeat("x", 8000), false)
	f.Add(uint8(13), "", "<script>alert(1)</script>", false)
	f.Add(uint8(13), "", "abc-123", false)
	envs := fuzzEnvs(f, nil)
	f.Fuzz(func(t *testing.T, path uint8, query, requestID string, head bool) {
		p := listPaths[int(path)%len(listPaths)]
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		envs.each(t, func(t *testing.T, env *apptest.Env) {
			req := httptest.NewRequest(method, p, nil)
			req.URL.RawQuery = query
			req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
			if requestID != "" {
				req.Header.Set("X-Request-Id", requestID)
			}
			r, before, after := fuzzSend(t, env, req)
			require.Equal(t, before, after, "a read wrote a row")
			if head {
				require.Empty(t, r.Body)
			}
			if plainID.MatchString(requestID) {
				require.Equal(t, requestID, r.Header.Get("X-Request-Id"))
			}
		})
	})
}

// pathRoutes are routes with a parameter in their path, as method and the
// path around it (not those that would lock the fuzzer's administrator out).
var pathRoutes = []struct{ method, before, after string }{
	{http.MethodGet, "/api/v1/orders/", ""}, {http.MethodPost, "/api/v1/orders/", "/cancel"},
	{http.MethodGet, "/api/v1/events/", ""}, {http.MethodPost, "/api/v1/events/", "/retry"},
	{http.MethodGet, "/api/v1/users/", ""}, {http.MethodGet, "/api/v1/products/", ""},
	{http.MethodGet, "/api/v1/production-orders/", ""}, {http.MethodPost, "/api/v1/production-orders/1/operations/", "/start"},
	{http.MethodPost, "/api/v1/subscribers/", "/replay"}, {http.MethodDelete, "/api/v1/subscribers/", ""},
}

func FuzzPathParams(f *testing.F) {
	for i := range pathRoutes {
		for _, seg := range []string{"1", "0", "-1", "x", "a\x00b", "\x00", "\xff", "\xc0\xaf", "nats.relay", "plan.backlog", strings.Repeat("9", 30), strings.Repeat("Ж", 300)} {
			f.Add(uint8(i), seg)
		}
	}
	envs := fuzzEnvs(f, nil)
	f.Fuzz(func(t *testing.T, route uint8, segment string) {
		r := pathRoutes[int(route)%len(pathRoutes)]
		envs.each(t, func(t *testing.T, env *apptest.Env) {
			var body []byte
			if strings.HasSuffix(r.after, "/replay") {
				body = []byte(`{"from_event_id": 1}`)
			}
			req := newRequest(r.method, r.before+url.PathEscape(segment)+r.after, body, jsonAdmin...)
			fuzzSend(t, env, req)
		})
	})
}

// The fuzz targets explore from valid input too: the first order seed is an
// order the app takes.
func TestFuzz_FirstOrderSeedIsValid(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, database.SQLite, nil)
	r := send(env, bodyRequest(http.MethodPost, "/api/v1/orders", orderSeeds()[0], ctJSON, false, asAdmin...))
	require.Equal(t, http.StatusCreated, r.Status, "the first order seed is a valid order: %s", r.Body)
}

// sortedLists are the lists a cursor fuzz input picks from, with the sorts
// each takes ("" its default).
var sortedLists = []struct {
	path  string
	sorts []string
}{
	{"/api/v1/plan/backlog", []string{"", "received", "-received", "due_date", "-due_date"}},
	{"/api/v1/production-orders", []string{"", "-created", "created", "eta", "-eta", "due_date", "-due_date"}},
	{"/api/v1/orders", []string{""}}, {"/api/v1/events", []string{""}}, {"/api/v1/products", []string{""}},
	{"/api/v1/work-centers", []string{""}}, {"/api/v1/routes", []string{""}}, {"/api/v1/users", []string{""}},
}

// FuzzCursor sends cursors made by hand (the fuzzer's bytes, base64url
// encoded as a cursor is, or as they are) to every sorted list in each of
// its sorts, on lists that hold rows: the answer is a page (200) or a 422
// naming cursor, never a 500 (SQLSTATE 22008 on PostgreSQL for the year 0000).
func FuzzCursor(f *testing.F) {
	for _, raw := range []string{
		`{"l":"/api/v1/plan/backlog","s":"due_date","k":"0000-01-01","id":1}`,
		`{"l":"/api/v1/production-orders","s":"eta","k":"0000-01-01","id":1}`,
		`{"l":"/api/v1/production-orders","s":"due_date","k":"9999-12-31","id":9223372036854775807}`,
		`{"l":"/api/v1/plan/backlog","s":"-due_date","k":"2026-12-01","id":1}`,
		`{"l":"/api/v1/plan/backlog","s":"-due_date","k":null,"id":1}`,
		`{"l":"/api/v1/orders","id":1}`, `{"l":"/api/v1/orders","s":"due_date","id":1}`, `{"l":"/api/v1/events","id":-1}`,
		`{"l":"/api/v1/plan/backlog","s":"due_date","k":"2026-12-01T00:00:00Z","id":1}`, `{"l":1}`, `{}`, `5`, ``,
	} {
		for i := range sortedLists {
			f.Add(uint8(i), uint8(3), []byte(raw), true)
		}
	}
	f.Add(uint8(0), uint8(0), []byte("%00"), false)
	f.Add(uint8(1), uint8(3), []byte("eyJsIjoiL2FwaS92MS9vcmRlcnMiLCJpZCI6MX0"), false)
	envs := fuzzEnvs(f, nil)
	for _, env := range envs.all {
		for i, due := range []string{"2026-12-10", "", "2026-12-01"} {
			body := map[string]any{"customer": map[string]any{"name": "Ф" + fmt.Sprint(i)}, "items": []map[string]any{{"sku": "TMB-PRIK-450", "qty": 1}, {"sku": "TMB-PRIK-450", "qty": 1}}}
			if due != "" {
				body["due_date"] = due
			}
			r := env.Admin(http.MethodPost, "/api/v1/orders", body)
			require.Equal(f, http.StatusCreated, r.Status, "%s", r.Body)
			var o struct{ Items []struct{ ID int64 } }
			r.JSON(f, &o)
			env.Dispatch()
			r = env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": []int64{o.Items[0].ID}})
			require.Equal(f, http.StatusCreated, r.Status, "%s", r.Body)
		}
	}
	f.Fuzz(func(t *testing.T, list, sort uint8, cursor []byte, encode bool) {
		l := sortedLists[int(list)%len(sortedLists)]
		s := l.sorts[int(sort)%len(l.sorts)]
		c := string(cursor)
		if encode {
			c = base64.RawURLEncoding.EncodeToString(cursor)
		}
		q := url.Values{"cursor": {c}, "limit": {"1"}}
		if s != "" {
			q.Set("sort", s)
		}
		envs.each(t, func(t *testing.T, env *apptest.Env) {
			req := httptest.NewRequest(http.MethodGet, l.path, nil)
			req.URL.RawQuery = q.Encode()
			req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
			r, _, _ := fuzzSend(t, env, req)
			if c == "" {
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
				return
			}
			if r.Status != http.StatusOK {
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
				var p problem
				require.NoError(t, json.Unmarshal(r.Body, &p))
				var fields []string
				for _, e := range p.Errors {
					fields = append(fields, e.Field)
				}
				require.Contains(t, fields, "cursor", "%s", r.Body)
			}
		})
	})
}
