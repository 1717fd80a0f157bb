package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/api"
	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

var validOrder = map[string]any{
	"customer": map[string]any{"name": "Иван Петров", "phone": "+7 900 000-00-00"},
	"items":    []map[string]any{{"sku": "SHK-KUPE-1600", "qty": 1}, {"sku": "TMB-PRIK-450", "qty": 2, "note": "дуб"}},
	"due_date": "2026-12-20",
}

type problem struct {
	Type, Title, Detail, Instance string
	Status                        int
	Errors                        []struct{ Field, Message string }
}

func requireProblem(t *testing.T, r apptest.Response, status int, fields ...string) problem {
	t.Helper()
	require.Equal(t, status, r.Status, "%s", r.Body)
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	var p problem
	r.JSON(t, &p)
	require.Equal(t, status, p.Status)
	require.NotEmpty(t, p.Title)
	require.NotEmpty(t, p.Detail)
	require.True(t, strings.HasPrefix(p.Type, "urn:tsekh:problem:"), p.Type)
	var got []string
	for _, e := range p.Errors {
		got = append(got, e.Field)
		require.NotEmpty(t, e.Message)
	}
	require.ElementsMatch(t, fields, got)
	return p
}

func TestOrders_Create(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		t.Run("OK", func(t *testing.T) {
			r := env.Admin(http.MethodPost, "/api/v1/orders", validOrder)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			var o struct {
				ID       int64
				Status   string
				Source   string
				DueDate  string `json:"due_date"`
				Customer struct{ Name string }
				Items    []struct {
					ID     int64
					SKU    string
					Qty    int
					Status string
				}
			}
			r.JSON(t, &o)
			require.Equal(t, "received", o.Status)
			require.Equal(t, "manual", o.Source)
			require.Equal(t, "2026-12-20", o.DueDate)
			require.Len(t, o.Items, 2)
			require.Equal(t, "new", o.Items[0].Status)

			got := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", o.ID), nil)
			require.Equal(t, http.StatusOK, got.Status)
			require.JSONEq(t, string(r.Body), string(got.Body))

			// Its event, in the journal, names the admin as the actor.
			ev := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?type=order.received&aggregate_id=%d", o.ID), nil)
			require.Equal(t, http.StatusOK, ev.Status)
			var list struct {
				Items []struct {
					ID      int64
					Type    string
					Object  string
					Payload map[string]any
					Actor   *struct {
						ID   int64
						Name string
					}
					Status      string
					ProcessedAt *string `json:"processed_at"`
				}
			}
			ev.JSON(t, &list)
			require.Len(t, list.Items, 1)
			e := list.Items[0]
			require.Equal(t, fmt.Sprintf("sales_orders #%d", o.ID), e.Object)
			require.EqualValues(t, o.ID, e.Payload["order_id"])
			require.EqualValues(t, 2, e.Payload["lines"])
			require.Equal(t, "manual", e.Payload["source"])
			require.NotNil(t, e.Actor)
			require.Equal(t, "Администратор", e.Actor.Name)
			require.Equal(t, "pending", e.Status)
			require.Nil(t, e.ProcessedAt)

			// The dispatcher hands it to the plan's backlog and marks it processed.
			env.Dispatch()
			bl := env.Admin(http.MethodGet, "/api/v1/plan/backlog", nil)
			var backlog struct {
				Items []struct {
					ItemID int64 `json:"item_id"`
				}
			}
			bl.JSON(t, &backlog)
			require.Len(t, backlog.Items, 2)
			require.Equal(t, o.Items[0].ID, backlog.Items[0].ItemID)
			one := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events/%d", e.ID), nil).Map(t)
			require.Equal(t, "processed", one["status"])
			require.NotNil(t, one["processed_at"])
			deliveries := one["deliveries"].([]any)
			require.Len(t, deliveries, 1)
			require.Equal(t, "plan.backlog", deliveries[0].(map[string]any)["subscriber"])
			require.Equal(t, "processed", deliveries[0].(map[string]any)["status"])
		})

		t.Run("ErrInvalid", func(t *testing.T) {
			before := env.Count("sales_orders")
			events := env.Count("events")
			r := env.Admin(http.MethodPost, "/api/v1/orders", map[string]any{
				"customer": map[string]any{"name": " "},
				"items":    []map[string]any{{"sku": "SHK-KUPE-1600", "qty": 0}, {"sku": "", "qty": 1}},
			})
			requireProblem(t, r, http.StatusUnprocessableEntity, "customer.name", "items[0].qty", "items[1].sku")
			r = env.Admin(http.MethodPost, "/api/v1/orders", map[string]any{"customer": map[string]any{"name": "x"}, "items": []any{}})
			requireProblem(t, r, http.StatusUnprocessableEntity, "items")
			r = env.Admin(http.MethodPost, "/api/v1/orders", map[string]any{"customer": map[string]any{"name": "x"}, "items": []map[string]any{{"sku": "SHK-KUPE-1600", "qty": 1}}, "due_date": "20.12.2026"})
			requireProblem(t, r, http.StatusUnprocessableEntity, "due_date")
			r = env.Admin(http.MethodPost, "/api/v1/orders", `{"customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600", "qty": "one"}]}`)
			requireProblem(t, r, http.StatusUnprocessableEntity, "items[0].qty")
			require.Equal(t, before, env.Count("sales_orders"))
			require.Equal(t, events, env.Count("events"))
		})

		t.Run("ErrUnknownSKU", func(t *testing.T) {
			before := env.Count("sales_orders")
			r := env.Admin(http.MethodPost, "/api/v1/orders", map[string]any{
				"customer": map[string]any{"name": "x"},
				"items":    []map[string]any{{"sku": "SHK-KUPE-1600", "qty": 1}, {"sku": "NO-SUCH", "qty": 1}},
			})
			p := requireProblem(t, r, http.StatusUnprocessableEntity, "items[1].sku")
			require.Contains(t, p.Errors[0].Message, "NO-SUCH")
			require.Equal(t, before, env.Count("sales_orders"))
		})

		t.Run("ErrMalformed", func(t *testing.T) {
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/orders", `{"customer":`), http.StatusBadRequest)
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/orders", `[1, 2]`), http.StatusBadRequest)
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/orders", ``), http.StatusBadRequest)
			big := `{"customer": {"name": "` + strings.Repeat("x", 1<<20) + `"}}`
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/orders", big), http.StatusRequestEntityTooLarge)
		})

		t.Run("ErrForbidden", func(t *testing.T) {
			viewer := env.UserToken("Наблюдатель", "viewer")
			requireProblem(t, env.Do(http.MethodPost, "/api/v1/orders", validOrder, viewer), http.StatusForbidden)
			require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/api/v1/orders", nil, viewer).Status)
		})
	})
}

// An order and its event commit together: a failure after the order row, or
// in the event's insert, leaves neither.
func TestOrders_CreateIsAtomic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, table, column, value string }{
		{"FailAfterOrderRow", "sales_order_items", "", ""},
		{"FailInEventInsert", "events", "type", "order.received"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.Each(t, func(t *testing.T, env *apptest.Env) {
				orders, items, evs := env.Count("sales_orders"), env.Count("sales_order_items"), env.Count("events")
				env.FailInserts(tc.table, tc.column, tc.value)
				r := env.Admin(http.MethodPost, "/api/v1/orders", validOrder)
				p := requireProblem(t, r, http.StatusInternalServerError)
				require.NotContains(t, p.Detail, "injected", "internal errors are not shown to clients")
				require.Equal(t, orders, env.Count("sales_orders"))
				require.Equal(t, items, env.Count("sales_order_items"))
				require.Equal(t, evs, env.Count("events"))
			})
		})
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		t.Run("Me", func(t *testing.T) {
			me := env.Admin(http.MethodGet, "/api/v1/me", nil).Map(t)
			require.Equal(t, "Администратор", me["name"])
			require.Equal(t, "admin", me["role"])
		})
		t.Run("ErrNoToken", func(t *testing.T) {
			r := env.Do(http.MethodGet, "/api/v1/orders", nil, "")
			requireProblem(t, r, http.StatusUnauthorized)
			require.Contains(t, r.Header.Get("WWW-Authenticate"), "Bearer")
		})
		t.Run("ErrBadToken", func(t *testing.T) {
			requireProblem(t, env.Do(http.MethodGet, "/api/v1/me", nil, "tsk_not-a-token"), http.StatusUnauthorized)
			requireProblem(t, env.Do(http.MethodGet, "/api/v1/me", nil, "", "Authorization", "Basic YWRtaW46YWRtaW4="), http.StatusUnauthorized)
		})
		t.Run("UsersAndTokens", func(t *testing.T) {
			tok := env.UserToken("Ольга", "planner")
			me := env.Do(http.MethodGet, "/api/v1/me", nil, tok).Map(t)
			require.Equal(t, "Ольга", me["name"])
			require.Equal(t, "planner", me["role"])
			// Tokens are stored hashed: the secret is nowhere in the database.
			var n int64
			require.NoError(t, database.Scan(env.App.DB.Raw("SELECT count(*) FROM auth_tokens WHERE hash = ?", tok), &n))
			require.Zero(t, n)
			// A planner cannot manage users.
			requireProblem(t, env.Do(http.MethodPost, "/api/v1/users", map[string]any{"name": "x", "role": "admin"}, tok), http.StatusForbidden)
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/users", map[string]any{"name": "", "role": "boss"}), http.StatusUnprocessableEntity, "name", "role")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/users/999999/tokens", map[string]any{}), http.StatusNotFound)
		})
		t.Run("ErrConflictEmail", func(t *testing.T) {
			u := map[string]any{"name": "Пётр", "role": "viewer", "email": "petr@example.com"}
			require.Equal(t, http.StatusCreated, env.Admin(http.MethodPost, "/api/v1/users", u).Status)
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/users", u), http.StatusConflict)
		})
	})
}

func TestHTTP_Hygiene(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		r := env.Admin(http.MethodGet, "/api/v1/no-such-thing", nil)
		requireProblem(t, r, http.StatusNotFound)
		require.NotEmpty(t, r.Header.Get("X-Request-Id"))
		r = env.Admin(http.MethodDelete, "/api/v1/orders", nil)
		requireProblem(t, r, http.StatusMethodNotAllowed)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/orders/abc", nil), http.StatusUnprocessableEntity, "id")
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/orders/424242", nil), http.StatusNotFound)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/events?limit=501", nil), http.StatusUnprocessableEntity, "limit")
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/events?cursor=zzz", nil), http.StatusUnprocessableEntity, "cursor")
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/events?status=lost&since=yesterday", nil), http.StatusUnprocessableEntity, "status", "since")
		require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/healthz", nil, "").Status)
		require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/readyz", nil, "").Status)
		// The 4xx the health checks document: a body over the limit, as on every route.
		requireProblem(t, env.Do(http.MethodGet, "/healthz", strings.Repeat("x", api.MaxBodyBytes+1), ""), http.StatusRequestEntityTooLarge)
		requireProblem(t, env.Do(http.MethodGet, "/readyz", strings.Repeat("x", api.MaxBodyBytes+1), ""), http.StatusRequestEntityTooLarge)
		require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/swagger/index.html", nil, "").Status)
		m := env.Admin(http.MethodGet, "/metrics", nil)
		require.Equal(t, http.StatusOK, m.Status)
		require.Contains(t, string(m.Body), "tsekh_events_pending")
		// The Go runtime's, from the one collector every App of the
		// process (two here at least, one per dialect) registers.
		require.Contains(t, string(m.Body), "go_goroutines")
		require.Contains(t, string(m.Body), "process_cpu_seconds_total")
	})
}

func TestCatalog_Products(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		var list struct {
			Items []struct {
				ID    int64
				SKU   string
				Parts []struct{ Qty int }
			}
			NextCursor string `json:"next_cursor"`
		}
		env.Admin(http.MethodGet, "/api/v1/products?limit=2", nil).JSON(t, &list)
		require.Len(t, list.Items, 2)
		require.NotEmpty(t, list.NextCursor)
		first := list.Items[0]
		env.Admin(http.MethodGet, "/api/v1/products?limit=2&cursor="+list.NextCursor, nil).JSON(t, &list)
		require.NotEmpty(t, list.Items)
		require.Greater(t, list.Items[0].ID, first.ID)
		p := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/products/%d", first.ID), nil).Map(t)
		require.Equal(t, first.SKU, p["sku"])
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/products/99999", nil), http.StatusNotFound)
	})
}

// Filters and pagination return every matching row exactly once while new
// events are being written.
func TestEvents_JournalPaginationUnderWrites(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		for range 30 {
			require.Equal(t, http.StatusCreated, env.Admin(http.MethodPost, "/api/v1/orders", validOrder).Status)
		}
		var existing []int64
		cursor := ""
		var stop sync.WaitGroup
		done := make(chan struct{})
		stop.Add(1)
		go func() { // keep writing while the client pages
			defer stop.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if r := env.Admin(http.MethodPost, "/api/v1/orders", validOrder); r.Status != http.StatusCreated {
					t.Errorf("write during paging: %d %s", r.Status, r.Body)
					return
				}
			}
		}()
		var firstPageTop int64
		for {
			r := env.Admin(http.MethodGet, "/api/v1/events?type=order.received&aggregate_type=sales_orders&limit=7&cursor="+cursor, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var page struct {
				Items []struct {
					ID   int64
					Type string
				}
				NextCursor string `json:"next_cursor"`
			}
			r.JSON(t, &page)
			for _, it := range page.Items {
				require.Equal(t, "order.received", it.Type)
				if firstPageTop == 0 {
					firstPageTop = it.ID
				}
				existing = append(existing, it.ID)
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
		close(done)
		stop.Wait()
		// Newest first, no duplicates, nothing skipped below the first page's top.
		require.True(t, sort.SliceIsSorted(existing, func(i, j int) bool { return existing[i] > existing[j] }))
		var want []int64
		require.NoError(t, database.Scan(env.App.DB.Raw("SELECT id FROM events WHERE type = 'order.received' AND id <= ? ORDER BY id DESC", firstPageTop), &want))
		require.Equal(t, want, existing)
		require.GreaterOrEqual(t, len(existing), 30)

		// The other filters.
		var byActor struct{ Items []struct{ ID int64 } }
		env.Admin(http.MethodGet, "/api/v1/events?actor_id=1&limit=500", nil).JSON(t, &byActor)
		require.NotEmpty(t, byActor.Items)
		var none struct{ Items []any }
		env.Admin(http.MethodGet, "/api/v1/events?since=2999-01-01T00:00:00Z", nil).JSON(t, &none)
		require.Empty(t, none.Items)
		env.Admin(http.MethodGet, "/api/v1/events?until=2000-01-01T00:00:00Z", nil).JSON(t, &none)
		require.Empty(t, none.Items)
		var pending, processed struct{ Items []struct{ ID int64 } }
		env.Admin(http.MethodGet, "/api/v1/events?status=pending&limit=500", nil).JSON(t, &pending)
		require.NotEmpty(t, pending.Items)
		env.Dispatch()
		env.Admin(http.MethodGet, "/api/v1/events?status=pending&limit=500", nil).JSON(t, &pending)
		require.Empty(t, pending.Items)
		env.Admin(http.MethodGet, "/api/v1/events?status=processed&limit=500", nil).JSON(t, &processed)
		require.Len(t, processed.Items, int(env.Count("events")))
	})
}

func TestEvents_TypesAndSubscribers(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		var types struct {
			Items []struct {
				Type, Owner   string
				AggregateType string `json:"aggregate_type"`
				Schema        map[string]any
			}
		}
		env.Admin(http.MethodGet, "/api/v1/event-types", nil).JSON(t, &types)
		names := map[string]bool{}
		for _, ty := range types.Items {
			names[ty.Type] = true
			require.NotEmpty(t, ty.Schema, ty.Type)
		}
		require.True(t, names["order.received"])
		require.Equal(t, http.StatusCreated, env.Admin(http.MethodPost, "/api/v1/orders", validOrder).Status)
		var subs struct {
			Items []struct {
				Name    string
				Pending int
			}
		}
		env.Admin(http.MethodGet, "/api/v1/subscribers", nil).JSON(t, &subs)
		require.NotEmpty(t, subs.Items)
		byName := map[string]int{}
		for _, s := range subs.Items {
			byName[s.Name] = s.Pending
		}
		require.Equal(t, 1, byName["plan.backlog"])
		env.Dispatch()
		env.Admin(http.MethodGet, "/api/v1/subscribers", nil).JSON(t, &subs)
		for _, s := range subs.Items {
			require.Zero(t, s.Pending, s.Name)
		}
	})
}

// Every route the app serves is in the generated OpenAPI document, with the
// same methods, so that docs/ cannot fall behind the handlers.
func TestSpec_EveryRouteDocumented(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/swagger.json")
	require.NoError(t, err)
	var spec struct {
		Paths map[string]map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal(raw, &spec))
	env := apptest.New(t, database.SQLite, nil)
	param := regexp.MustCompile(`:([a-z_]+)`)
	var missing []string
	for _, r := range env.Echo.Routes() {
		if strings.HasPrefix(r.Path, "/swagger") || r.Path == "/metrics" || r.Method == "echo_route_any" || strings.HasSuffix(r.Path, "/*") {
			continue
		}
		path := param.ReplaceAllString(r.Path, "{$1}")
		ops, ok := spec.Paths[path]
		if _, has := ops[strings.ToLower(r.Method)]; !ok || !has {
			missing = append(missing, r.Method+" "+path)
		}
	}
	require.Empty(t, missing, "routes missing from docs/swagger.json: run make docs")
}

// The OpenAPI document is a contract clients generate code from: every
// operation has an id, a summary and a description, uses only declared tags,
// and answers its errors with the Problem schema.
func TestSpec_OperationsAreComplete(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/swagger.json")
	require.NoError(t, err)
	var spec struct {
		Tags  []struct{ Name string }
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Summary     string
			Description string
			Tags        []string
			Security    []map[string]any
			Responses   map[string]struct {
				Schema map[string]any
			}
		}
	}
	require.NoError(t, json.Unmarshal(raw, &spec))
	tags := map[string]bool{}
	for _, tg := range spec.Tags {
		tags[tg.Name] = true
	}
	ids := map[string]string{}
	var problems []string
	for path, ops := range spec.Paths {
		for method, op := range ops {
			where := method + " " + path
			if op.OperationID == "" {
				problems = append(problems, where+": no @ID")
			} else if other, dup := ids[op.OperationID]; dup {
				problems = append(problems, where+": @ID "+op.OperationID+" also used by "+other)
			}
			ids[op.OperationID] = where
			if op.Summary == "" || op.Description == "" {
				problems = append(problems, where+": needs @Summary and @Description")
			}
			for _, tg := range op.Tags {
				if !tags[tg] {
					problems = append(problems, where+": tag "+tg+" is not declared with @tag.name in api/server.go")
				}
			}
			for code, res := range op.Responses {
				if code >= "400" && fmt.Sprint(res.Schema["$ref"]) != "#/definitions/api.Problem" {
					problems = append(problems, where+": response "+code+" must be {object} Problem")
				}
			}
		}
	}
	sort.Strings(problems)
	require.Empty(t, problems, "fix the swag annotations, then run make docs")
}

// Every operation says how it is authenticated: the public ones (the shop's
// webhook, which is signed, and the health checks) with an empty security
// list, every other one with the bearer token. The document names no host
// and no schemes, so Swagger UI calls the origin that serves it, whatever
// port or proxy that is.
func TestSpec_SecurityAndOrigin(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/swagger.json")
	require.NoError(t, err)
	var spec struct {
		Host    *string
		Schemes []string
		Paths   map[string]map[string]struct {
			Security *[]map[string][]string
		}
	}
	require.NoError(t, json.Unmarshal(raw, &spec))
	require.Nil(t, spec.Host, "no host: the origin serving the document is the API's")
	require.Empty(t, spec.Schemes, "no schemes: the scheme serving the document is the API's")
	public := map[string]bool{"post /api/v1/webhooks/shop/orders": true, "get /healthz": true, "get /readyz": true, "get /asyncapi.json": true, "get /openapi.json": true}
	bearer := []map[string][]string{{"BearerAuth": {}}}
	var problems []string
	for path, ops := range spec.Paths {
		for method, op := range ops {
			where := method + " " + path
			switch {
			case op.Security == nil:
				problems = append(problems, where+": declares no security (@Security BearerAuth, or an empty @Security if public)")
			case public[where] && len(*op.Security) > 0:
				problems = append(problems, where+": is public and must declare security: [] (an empty @Security)")
			case !public[where] && !sameSecurity(bearer, *op.Security):
				problems = append(problems, fmt.Sprintf("%s: security %v, want BearerAuth", where, *op.Security))
			}
		}
	}
	sort.Strings(problems)
	require.Empty(t, problems, "fix the swag annotations, then run make docs")

	env := apptest.New(t, database.SQLite, nil)
	r := env.Do(http.MethodGet, "/swagger/doc.json", nil, "")
	require.Equal(t, http.StatusOK, r.Status)
	var served struct {
		Host    string
		Schemes []string
	}
	r.JSON(t, &served)
	require.Empty(t, served.Host, "the served document names no host")
	require.Empty(t, served.Schemes)
}

func sameSecurity(a, b []map[string][]string) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
