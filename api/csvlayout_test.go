package api_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/config"
)

// csvRoutes are the operations docs/openapi.json says answer text/csv.
func csvRoutes(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../docs/openapi.json")
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]json.RawMessage
			}
		}
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	var routes []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			for _, r := range op.Responses {
				if _, ok := r.Content["text/csv"]; ok {
					routes = append(routes, method+" "+path)
					break
				}
			}
		}
	}
	slices.Sort(routes)
	return routes
}

var (
	csvMachineHeader = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	csvCyrillic      = regexp.MustCompile(`\p{Cyrillic}|^№$`)
	csvRFC3339       = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T`)
	csvOfficeTime    = regexp.MustCompile(`^\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}:\d{2}$`)
	csvISODate       = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	csvOfficeDate    = regexp.MustCompile(`^\d{2}\.\d{2}\.\d{4}$`)
	csvPointNumber   = regexp.MustCompile(`^-?\d+\.\d+$`)
	csvCommaNumber   = regexp.MustCompile(`^-?\d+,\d+$`)
)

// Every CSV endpoint answers in the office's layout by default (";",
// decimal commas, times in FACTORY_TIMEZONE, dates dd.mm.yyyy, Russian
// headers) and in the machine's with layout=machine (",", RFC 3339 UTC,
// decimal points, English headers), the same rows in both; metres come to
// the centimetre; another layout is a 422. The endpoints walked are every
// operation docs/openapi.json declares text/csv for: a CSV endpoint added
// without its place here fails.
func TestCSV_OneConvention(t *testing.T) {
	t.Parallel()
	eachWith(t, func(c *config.Config) { c.FactoryTimezone = "Asia/Yekaterinburg" }, func(t *testing.T, env *apptest.Env) {
		loc, err := time.LoadLocation("Asia/Yekaterinburg")
		require.NoError(t, err)
		r := env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{{"code": "PVC2-WHITE", "qty": 0.84}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		orderID, ids := receive(t, env, line{"SHK-KUPE-1600", 1})
		po := launch(t, env, map[string]any{"items": ids})
		plan := createCutPlan(t, env, po.ID)
		receiveFor(t, env, "Анна Смирнова", "2026-12-10", noteLine{SKU: "TMB-PRIK-450", Qty: 2})
		purchase := purchaseOrderOf(t, env.Admin(http.MethodPost, "/api/v1/purchase-orders", map[string]any{"supplier_id": supplierOf(t, env, apptest.AdminToken),
			"expected_on": "2026-12-10", "lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 10}, {"code": "PVC2-SONOMA", "qty": 150.5}}}), http.StatusCreated)
		env.Dispatch()

		// The route each endpoint is walked at; times and dates name the
		// columns (by their machine header) that must hold one.
		type endpoint struct {
			path         string
			times, dates []string
		}
		endpoints := map[string]endpoint{
			"get /api/v1/cutting-plans/{id}":                  {path: fmt.Sprintf("/api/v1/cutting-plans/%d", plan.ID)},
			"get /api/v1/cutting-plans/{id}/sheets/{n}":       {path: fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/1", plan.ID)},
			"get /api/v1/events":                              {path: "/api/v1/events", times: []string{"created_at", "processed_at"}},
			"get /api/v1/materials/requirements":              {path: fmt.Sprintf("/api/v1/materials/requirements?prod_orders=%d", po.ID)},
			"get /api/v1/materials/shortages":                 {path: "/api/v1/materials/shortages"},
			"get /api/v1/orders":                              {path: "/api/v1/orders", times: []string{"created_at"}, dates: []string{"due_date"}},
			"get /api/v1/orders/{id}/history":                 {path: fmt.Sprintf("/api/v1/orders/%d/history", orderID), times: []string{"created_at", "processed_at"}},
			"get /api/v1/plan/backlog":                        {path: "/api/v1/plan/backlog", times: []string{"received_at"}, dates: []string{"due_date"}},
			"get /api/v1/production-orders":                   {path: "/api/v1/production-orders", times: []string{"created_at"}, dates: []string{"eta"}},
			"get /api/v1/production-orders/cutting-list":      {path: fmt.Sprintf("/api/v1/production-orders/cutting-list?ids=%d", po.ID)},
			"get /api/v1/production-orders/{id}/cutting-list": {path: fmt.Sprintf("/api/v1/production-orders/%d/cutting-list", po.ID)},
			"get /api/v1/purchase-orders/{id}":                {path: fmt.Sprintf("/api/v1/purchase-orders/%d", purchase.ID), dates: []string{"expected_on"}},
		}
		require.Equal(t, csvRoutes(t), slices.Sorted(func(yield func(string) bool) {
			for k := range endpoints {
				if !yield(k) {
					return
				}
			}
		}), "every CSV endpoint is walked here")

		read := func(t *testing.T, path, layout string, comma rune) [][]string {
			t.Helper()
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			if layout != "" {
				path += sep + "layout=" + layout
			}
			r := env.Do(http.MethodGet, path, nil, apptest.AdminToken, "Accept", "text/csv")
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
			require.Equal(t, "text/csv; charset=utf-8", r.Header.Get("Content-Type"), path)
			body, ok := bytes.CutPrefix(r.Body, []byte("\uFEFF"))
			require.True(t, ok, "%s: a byte order mark", path)
			rd := csv.NewReader(bytes.NewReader(body))
			rd.Comma = comma
			rows, err := rd.ReadAll()
			require.NoError(t, err, "%s in the %s layout", path, layout)
			require.Greater(t, len(rows[0]), 5, "%s: the header split at %q: %q", path, comma, rows[0])
			require.Greater(t, len(rows), 1, "%s: rows to check", path)
			return rows
		}
		decimals, metres := map[string]int{}, map[string]int{}
		for route, e := range endpoints {
			t.Run(route, func(t *testing.T) {
				office := read(t, e.path, "", ';')
				require.Equal(t, office, read(t, e.path, "office", ';'), "office is the default")
				machine := read(t, e.path, "machine", ',')
				require.Len(t, machine, len(office), "the same rows in both layouts")
				for i, h := range machine[0] {
					require.Regexp(t, csvMachineHeader, h, "machine header %d", i)
					require.Regexp(t, csvCyrillic, office[0][i], "office header %d", i)
				}
				col := func(name string) int {
					i := slices.Index(machine[0], name)
					require.GreaterOrEqual(t, i, 0, "%s in %q", name, machine[0])
					return i
				}
				for _, name := range e.times {
					i := col(name)
					for n := 1; n < len(office); n++ {
						o, m := office[n][i], machine[n][i]
						require.Equal(t, o == "", m == "", "row %d %s: %q / %q", n, name, o, m)
						if m == "" {
							continue
						}
						mt, err := time.Parse(time.RFC3339, m)
						require.NoError(t, err, "machine %s", name)
						require.True(t, strings.HasSuffix(m, "Z"), "UTC: %q", m)
						ot, err := time.ParseInLocation("02.01.2006 15:04:05", o, loc)
						require.NoError(t, err, "office %s", name)
						require.True(t, ot.Equal(mt.Truncate(time.Second)), "row %d %s: %q in %s is %q", n, name, o, loc, m)
					}
				}
				for _, name := range e.dates {
					i := col(name)
					seen := false
					for n := 1; n < len(office); n++ {
						o, m := office[n][i], machine[n][i]
						if m == "" {
							continue
						}
						seen = true
						md, err := time.Parse(time.DateOnly, m)
						require.NoError(t, err, "machine %s", name)
						od, err := time.Parse("02.01.2006", o)
						require.NoError(t, err, "office %s", name)
						require.Equal(t, md, od)
					}
					require.True(t, seen, "some %s to check", name)
				}
				unit := slices.Index(machine[0], "unit")
				for n := range office[1:] {
					for i := range office[n+1] {
						o, m := office[n+1][i], machine[n+1][i]
						require.NotRegexp(t, csvRFC3339, o, "office cell %q", o)
						require.NotRegexp(t, csvISODate, o, "office cell %q", o)
						require.NotRegexp(t, csvPointNumber, o, "office cell %q", o)
						require.NotRegexp(t, csvOfficeTime, m, "machine cell %q", m)
						require.NotRegexp(t, csvOfficeDate, m, "machine cell %q", m)
						require.NotRegexp(t, csvCommaNumber, m, "machine cell %q", m)
						if csvPointNumber.MatchString(m) {
							require.Equal(t, strings.Replace(m, ".", ",", 1), o, "the same number in both")
							decimals[route]++
							if unit >= 0 && machine[n+1][unit] == "m" {
								_, frac, _ := strings.Cut(m, ".")
								require.LessOrEqual(t, len(frac), 2, "metres to the centimetre: %q (%s)", m, machine[0][i])
								metres[route]++
							}
						}
					}
				}
				requireProblem(t, env.Do(http.MethodGet, e.path+map[bool]string{true: "&", false: "?"}[strings.Contains(e.path, "?")]+"layout=nope",
					nil, apptest.AdminToken, "Accept", "text/csv"), http.StatusUnprocessableEntity, "layout")
			})
		}
		require.Positive(t, decimals["get /api/v1/materials/requirements"], "fractions to check")
		require.Positive(t, decimals["get /api/v1/materials/shortages"], "fractions to check")
		require.Positive(t, metres["get /api/v1/materials/requirements"], "metres to check")
	})
}
