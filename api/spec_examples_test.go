package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

type specParam struct {
	Name      string   `json:"name"`
	In        string   `json:"in"`
	Type      string   `json:"type"`
	Required  bool     `json:"required"`
	Example   any      `json:"x-example"`
	Pattern   string   `json:"pattern"`
	Minimum   *float64 `json:"minimum"`
	Maximum   *float64 `json:"maximum"`
	MaxLength *int     `json:"maxLength"`
	Enum      []any    `json:"enum"`
}

// Every parameter of the OpenAPI document holds an example that its own
// pattern, bounds and enum take, and a request every GET operation's
// examples make (as a contract-test tool generates it from the document) is
// answered 200 on a database holding the objects the ids name. (Until the
// document is regenerated with the examples, the operations without them
// are skipped.)
func TestSpec_ParameterExamplesSucceed(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/swagger.json")
	require.NoError(t, err)
	var spec struct {
		Paths map[string]map[string]struct {
			Parameters []specParam `json:"parameters"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(raw, &spec))
	withExamples := strings.Contains(string(raw), `"x-example"`)

	env := apptest.New(t, database.SQLite, withShopSecret)
	_, ids := receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Петров"}, "items": []map[string]any{{"sku": "TMB-PRIK-450", "qty": 1}, {"sku": "TMB-PRIK-450", "qty": 1}}})
	launch(t, env, map[string]any{"items": ids[:1]})
	po := launch(t, env, map[string]any{"items": ids[1:]})
	createCutPlan(t, env, po.ID) // cutting plan 1, by job 1
	// Job 2 draws the labels of production order 1, its document kept.
	labels := runJob(t, env, env.Do(http.MethodGet, "/api/v1/production-orders/1/labels", nil, apptest.AdminToken, "Prefer", "respond-async"))
	require.Equal(t, "/api/v1/jobs/2/document", labels.ResultURL)
	// Its first sheet cut, which keeps offcut O1-1-1.
	require.Equal(t, http.StatusOK, env.Admin(http.MethodPost, "/api/v1/cutting-plans/1/sheets/1/cut", nil).Status)
	// Supplier 1 and its purchase order 1.
	sup := supplierOf(t, env, apptest.AdminToken)
	purchaseOrderOf(t, env.Admin(http.MethodPost, "/api/v1/purchase-orders", map[string]any{"supplier_id": sup, "expected_on": "2026-12-10",
		"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 10}}}), http.StatusCreated)
	// A refused delivery kept in the intake inbox: rejection 1.
	require.Equal(t, http.StatusUnprocessableEntity, deliver(env, shopBody("spec-refused", `{"sku": "NO-SUCH-SKU", "qty": 1}`), time.Now()).Status)

	paths := make([]string, 0, len(spec.Paths))
	for p := range spec.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	tried := 0
	for _, path := range paths {
		for method, op := range spec.Paths[path] {
			for _, p := range op.Parameters {
				if p.In == "body" {
					continue
				}
				if withExamples {
					require.NotNil(t, p.Example, "%s %s: %s has no example", method, path, p.Name)
				}
				if p.Example != nil {
					checkExample(t, method+" "+path, p)
				}
			}
			if method != "get" {
				continue
			}
			target, ok := exampleRequest(path, op.Parameters)
			if !ok {
				t.Logf("%s %s: skipped, a parameter has no example", method, path)
				continue
			}
			tried++
			r := getExample(env, target)
			require.Equal(t, http.StatusOK, r.Status, "GET %s: %s", target, r.Body)
		}
	}
	if withExamples {
		require.Greater(t, tried, 20)
	}
}

// getExample sends the administrator's GET of an example request. An event
// stream is left as soon as its first bytes are sent: it would otherwise run
// on until the request's time bound (30 s), and its status is sent by then.
func getExample(env *apptest.Env, target string) apptest.Response {
	if !strings.HasSuffix(strings.SplitN(target, "?", 2)[0], "/stream") {
		return env.Admin(http.MethodGet, target, nil)
	}
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
	rec := &leaveOnFlush{ResponseRecorder: httptest.NewRecorder(), leave: leave}
	env.Echo.ServeHTTP(rec, req)
	return apptest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// leaveOnFlush is a client that leaves at the first flush of the response.
type leaveOnFlush struct {
	*httptest.ResponseRecorder
	leave context.CancelFunc
}

func (l *leaveOnFlush) Flush() {
	l.ResponseRecorder.Flush()
	l.leave()
}

func checkExample(t *testing.T, op string, p specParam) {
	t.Helper()
	s := fmt.Sprint(p.Example)
	if p.Pattern != "" {
		require.Regexp(t, regexp.MustCompile(p.Pattern), s, "%s: %s's example", op, p.Name)
	}
	if n, ok := p.Example.(float64); ok {
		if p.Minimum != nil {
			require.GreaterOrEqual(t, n, *p.Minimum, "%s: %s", op, p.Name)
		}
		if p.Maximum != nil {
			require.LessOrEqual(t, n, *p.Maximum, "%s: %s", op, p.Name)
		}
	}
	if p.MaxLength != nil {
		require.LessOrEqual(t, len([]rune(s)), *p.MaxLength, "%s: %s", op, p.Name)
	}
	if len(p.Enum) > 0 {
		require.Contains(t, p.Enum, p.Example, "%s: %s", op, p.Name)
	}
	if p.In == "path" && p.Type == "integer" {
		require.NotNil(t, p.Minimum, "%s: path id %s has a minimum", op, p.Name)
	}
}

// exampleRequest fills the path and query with the parameters' examples;
// false when a path parameter has none.
func exampleRequest(path string, params []specParam) (string, bool) {
	q := url.Values{}
	for _, p := range params {
		switch p.In {
		case "path":
			if p.Example == nil {
				return "", false
			}
			path = strings.Replace(path, "{"+p.Name+"}", url.PathEscape(fmt.Sprint(p.Example)), 1)
		case "query":
			if p.Example == nil {
				if p.Required {
					return "", false
				}
				continue
			}
			q.Set(p.Name, fmt.Sprint(p.Example))
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path, true
}
