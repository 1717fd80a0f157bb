package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/sales"
)

const (
	shopSecret  = "test-shop-secret-of-at-least-32-bytes"
	webhookPath = "/api/v1/webhooks/shop/orders"
)

// eachWith is apptest.Each with a configuration change.
func eachWith(t *testing.T, configure func(*config.Config), fn func(t *testing.T, env *apptest.Env)) {
	t.Helper()
	for _, d := range apptest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, apptest.New(t, d, configure))
		})
	}
}

func withShopSecret(c *config.Config) { c.ShopWebhookSecret = shopSecret }

func shopBody(id string, items ...string) string {
	if len(items) == 0 {
		items = []string{`{"sku": "SHK-KUPE-1600", "qty": 1}`}
	}
	return fmt.Sprintf(`{"id": %q, "customer": {"name": "Анна Смирнова", "email": "anna@example.com"}, "items": [%s], "due_date": "2026-12-24"}`,
		id, strings.Join(items, ", "))
}

// deliver sends a webhook delivery signed at the time given.
func deliver(env *apptest.Env, body string, at time.Time) apptest.Response {
	env.T.Helper()
	return env.Do(http.MethodPost, webhookPath, body, "",
		sales.HeaderShopTimestamp, strconv.FormatInt(at.Unix(), 10),
		sales.HeaderShopSignature, sales.Sign(shopSecret, at.Unix(), []byte(body)))
}

func orderIDOf(t *testing.T, r apptest.Response) int64 {
	t.Helper()
	var out struct {
		OrderID int64 `json:"order_id"`
	}
	r.JSON(t, &out)
	require.NotZero(t, out.OrderID, "%s", r.Body)
	return out.OrderID
}

func TestOrders_CreateFromWebhook(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		body := shopBody("7826d8468b3d")
		var id int64
		t.Run("OK", func(t *testing.T) {
			r := deliver(env, body, time.Now())
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			id = orderIDOf(t, r)
			o := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil).Map(t)
			require.Equal(t, "shop", o["source"])
			require.Equal(t, "shop-7826d8468b3d", o["sync_id"])
			require.Equal(t, "received", o["status"])
			require.Equal(t, "2026-12-24", o["due_date"])

			var evs struct {
				Items []struct {
					Payload map[string]any
					Actor   *struct{ Name string }
				}
			}
			env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?type=order.received&aggregate_id=%d", id), nil).JSON(t, &evs)
			require.Len(t, evs.Items, 1)
			require.Equal(t, "shop-7826d8468b3d", evs.Items[0].Payload["sync_id"])
			require.Equal(t, "shop", evs.Items[0].Payload["source"])
			require.NotNil(t, evs.Items[0].Actor)
			require.Equal(t, "Интернет-магазин", evs.Items[0].Actor.Name)
		})
		t.Run("RedeliveredLater", func(t *testing.T) {
			// Shops retry with a fresh signature, minutes or a day later: the same order, 200, nothing written.
			orders, evs := env.Count("sales_orders"), env.Count("events")
			// The order was received a day ago; no window of time limits the de-duplication.
			require.NoError(t, dbtest.Fixture(env.App.DB, func(tx *gorm.DB) error {
				return tx.Exec("UPDATE sales_orders SET created_at = ? WHERE id = ?", time.Now().Add(-24*time.Hour).UTC(), id).Error
			}))
			for _, at := range []time.Time{time.Now().Add(-4 * time.Minute), time.Now(), time.Now().Add(4 * time.Minute)} {
				r := deliver(env, body, at)
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
				require.Equal(t, id, orderIDOf(t, r))
			}
			require.Equal(t, orders, env.Count("sales_orders"))
			require.Equal(t, evs, env.Count("events"))
		})

		refused := func(t *testing.T, r apptest.Response, status int, fields ...string) problem {
			t.Helper()
			orders, items, evs := env.Count("sales_orders"), env.Count("sales_order_items"), env.Count("events")
			p := requireProblem(t, r, status, fields...)
			require.Equal(t, orders, env.Count("sales_orders"), "nothing stored")
			require.Equal(t, items, env.Count("sales_order_items"), "nothing stored")
			require.Equal(t, evs, env.Count("events"), "nothing stored")
			return p
		}
		t.Run("ErrReplayAfter5Minutes", func(t *testing.T) {
			p := refused(t, deliver(env, shopBody("replayed"), time.Now().Add(-5*time.Minute-5*time.Second)), http.StatusUnauthorized)
			require.Contains(t, p.Detail, "timestamp")
		})
		t.Run("ErrBadSignature", func(t *testing.T) {
			now := strconv.FormatInt(time.Now().Unix(), 10)
			b := shopBody("forged")
			wrong := sales.Sign("not-the-secret", time.Now().Unix(), []byte(b))
			refused(t, env.Do(http.MethodPost, webhookPath, b, "", sales.HeaderShopTimestamp, now, sales.HeaderShopSignature, wrong), http.StatusUnauthorized)
			refused(t, env.Do(http.MethodPost, webhookPath, b, "", sales.HeaderShopTimestamp, now), http.StatusUnauthorized)
			refused(t, env.Do(http.MethodPost, webhookPath, b, ""), http.StatusUnauthorized)
			// Signed, then changed on the way.
			sig := sales.Sign(shopSecret, time.Now().Unix(), []byte(b))
			refused(t, env.Do(http.MethodPost, webhookPath, strings.Replace(b, `"qty": 1`, `"qty": 9`, 1), "",
				sales.HeaderShopTimestamp, now, sales.HeaderShopSignature, sig), http.StatusUnauthorized)
			// A bearer token is no substitute for the signature.
			refused(t, env.Do(http.MethodPost, webhookPath, b, apptest.AdminToken), http.StatusUnauthorized)
		})
		t.Run("ErrTooLarge", func(t *testing.T) {
			big := shopBody("big", `{"sku": "SHK-KUPE-1600", "qty": 1, "note": "`+strings.Repeat("x", 1<<20)+`"}`)
			refused(t, deliver(env, big, time.Now()), http.StatusRequestEntityTooLarge)
		})
		t.Run("ErrMalformed", func(t *testing.T) {
			refused(t, deliver(env, `{"id": "m1", "items": [`, time.Now()), http.StatusBadRequest)
			refused(t, deliver(env, `[]`, time.Now()), http.StatusBadRequest)
		})
		t.Run("ErrUnknownSKU", func(t *testing.T) {
			p := refused(t, deliver(env, shopBody("u1", `{"sku": "SHK-KUPE-1600", "qty": 1}`, `{"sku": "NO-SUCH-SKU", "qty": 1}`), time.Now()),
				http.StatusUnprocessableEntity, "items[1].sku")
			require.Contains(t, p.Errors[0].Message, "NO-SUCH-SKU")
			// Refused, and kept in the intake inbox for the office to see.
			kept := rejectionsOf(t, env, "?open=true&reason=unknown_sku")
			require.Len(t, kept, 1)
			require.Equal(t, "shop-u1", *kept[0].SyncID)
			// The shop may fix the order and send it again: created, and the kept rejection resolved by it.
			r := deliver(env, shopBody("u1"), time.Now())
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			resolved := rejectionsOf(t, env, "?open=false&source=shop")
			require.Len(t, resolved, 1)
			require.Equal(t, orderIDOf(t, r), *resolved[0].OrderID)
			require.Equal(t, "created", resolved[0].Outcome)
			require.Equal(t, "Интернет-магазин", actorName(journalOf(t, env, "intake.resolved", "")[0]), "by the shop's delivery")
		})
		t.Run("ErrEmptyItems", func(t *testing.T) {
			refused(t, deliver(env, `{"id": "e1", "customer": {"name": "x"}, "items": []}`, time.Now()), http.StatusUnprocessableEntity, "items")
		})
		t.Run("ErrBadQuantities", func(t *testing.T) {
			refused(t, deliver(env, shopBody("q1", `{"sku": "SHK-KUPE-1600", "qty": 0}`, `{"sku": "SHK-KUPE-1600", "qty": -2}`), time.Now()),
				http.StatusUnprocessableEntity, "items[0].qty", "items[1].qty")
			refused(t, deliver(env, shopBody("q2", `{"sku": "SHK-KUPE-1600", "qty": "1"}`), time.Now()), http.StatusUnprocessableEntity, "items[0].qty")
		})
		t.Run("ErrNoID", func(t *testing.T) {
			refused(t, deliver(env, `{"customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1}]}`, time.Now()), http.StatusUnprocessableEntity, "id")
		})
	})
}

func TestOrders_WebhookNotConfigured(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		b := shopBody("x1")
		r := env.Do(http.MethodPost, webhookPath, b, "",
			sales.HeaderShopTimestamp, strconv.FormatInt(time.Now().Unix(), 10), sales.HeaderShopSignature, sales.Sign("", time.Now().Unix(), []byte(b)))
		p := requireProblem(t, r, http.StatusServiceUnavailable)
		require.Contains(t, p.Detail, "SHOP_WEBHOOK_SECRET")
		require.Zero(t, env.Count("sales_orders"))
	})
}

// Fifty identical deliveries at the same instant: one order, one event, and
// every delivery names it.
func TestOrders_WebhookConcurrentDeliveries(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		body := shopBody("burst-1", `{"sku": "SHK-KUPE-1600", "qty": 1}`, `{"sku": "TMB-PRIK-450", "qty": 2}`)
		at := time.Now()
		const n = 50
		responses := make([]apptest.Response, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				responses[i] = deliver(env, body, at)
			}()
		}
		close(start)
		wg.Wait()
		created := 0
		ids := map[int64]int{}
		for _, r := range responses {
			require.Contains(t, []int{http.StatusCreated, http.StatusOK}, r.Status, "%s", r.Body)
			if r.Status == http.StatusCreated {
				created++
			}
			ids[orderIDOf(t, r)]++
		}
		require.Equal(t, 1, created)
		require.Len(t, ids, 1)
		var orders, items, evs int64
		db := env.App.DB
		// Counted by what a duplicate would look like: sync_id is unique, so a
		// second order could only come in under another (or no) sync_id.
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM sales_orders"), &orders))
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM sales_order_items"), &items))
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM events WHERE type = 'order.received'"), &evs))
		require.EqualValues(t, 1, orders)
		require.EqualValues(t, 2, items)
		require.EqualValues(t, 1, evs)
		// The shop's user was made once, too.
		var users int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM auth_users WHERE name = 'Интернет-магазин'"), &users))
		require.EqualValues(t, 1, users)
	})
}

func TestOrders_ImportFromCRM(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		manager := env.UserToken("Мария Менеджер", "manager")
		batch := `{"orders": [
			{"crm_order_id": 10452, "customer": {"name": "ООО Мебель-Сити"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 3}], "due_date": "2026-12-20"},
			{"crm_order_id": 10453, "customer": {"name": "Пётр"}, "items": [{"sku": "NO-SUCH", "qty": 1}]},
			{"crm_order_id": 10454, "customer": {"name": ""}, "items": [{"sku": "TMB-PRIK-450", "qty": 0}]},
			{"customer": {"name": "Без номера"}, "items": [{"sku": "TMB-PRIK-450", "qty": 1}]},
			"not an object",
			{"crm_order_id": "10455", "customer": {"name": "x"}, "items": []},
			{"crm_order_id": 10456, "customer": {"name": "Ирина"}, "items": [{"sku": "TMB-PRIK-450", "qty": 2}]},
			{"crm_order_id": 10457, "customer": {"name": "Олег"}, "items": [{"sku": "TMB-PRIK-450", "qty": "2"}]}
		]}`
		r := env.Do(http.MethodPost, "/api/v1/imports/crm/orders", batch, manager)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var rep sales.ImportReport
		r.JSON(t, &rep)
		require.Equal(t, 2, rep.Created)
		require.Equal(t, 0, rep.Exists)
		require.Equal(t, 6, rep.Refused)
		require.Len(t, rep.Rows, 8)
		results := make([]string, len(rep.Rows))
		for i, row := range rep.Rows {
			require.Equal(t, i+1, row.Row, "rows count from 1")
			results[i] = row.Result
		}
		require.Equal(t, []string{"created", "refused", "refused", "refused", "refused", "refused", "created", "refused"}, results)
		fieldsOf := func(row sales.ImportRow) []string {
			var out []string
			for _, f := range row.Errors {
				out = append(out, f.Field)
			}
			return out
		}
		require.Equal(t, []string{"items[0].sku"}, fieldsOf(rep.Rows[1]))
		require.ElementsMatch(t, []string{"customer.name", "items[0].qty"}, fieldsOf(rep.Rows[2]))
		require.Equal(t, []string{"crm_order_id"}, fieldsOf(rep.Rows[3]))
		require.NotEmpty(t, rep.Rows[4].Detail)
		require.Equal(t, []string{"items"}, fieldsOf(rep.Rows[5]), "a crm_order_id is text: \"10455\" is one")
		require.Equal(t, "10455", *rep.Rows[5].CRMOrderID)
		require.Equal(t, []string{"items[0].qty"}, fieldsOf(rep.Rows[7]))
		require.Equal(t, "10457", *rep.Rows[7].CRMOrderID, "the report names the row's CRM id")
		require.Equal(t, "10453", *rep.Rows[1].CRMOrderID)
		require.Nil(t, rep.Rows[1].OrderID)

		first := *rep.Rows[0].OrderID
		o := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", first), nil).Map(t)
		require.Equal(t, "crm", o["source"])
		require.Equal(t, "10452", o["crm_order_id"])
		var evs struct {
			Items []struct {
				Payload map[string]any
				Actor   *struct{ Name string }
			}
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?type=order.received&aggregate_id=%d", first), nil).JSON(t, &evs)
		require.Len(t, evs.Items, 1)
		require.Equal(t, "10452", evs.Items[0].Payload["crm_order_id"])
		require.Equal(t, "Мария Менеджер", evs.Items[0].Actor.Name, "the user who ran the import")

		// Again, with one row fixed: the imported rows are reported as present, with their orders.
		fixed := strings.Replace(batch, `"NO-SUCH"`, `"SHK-KUPE-1600"`, 1)
		orders := env.Count("sales_orders")
		env.Do(http.MethodPost, "/api/v1/imports/crm/orders", fixed, manager).JSON(t, &rep)
		require.Equal(t, 1, rep.Created)
		require.Equal(t, 2, rep.Exists)
		require.Equal(t, first, *rep.Rows[0].OrderID)
		require.Equal(t, "exists", rep.Rows[6].Result)
		require.Equal(t, orders+1, env.Count("sales_orders"))

		// Refusals of the whole request.
		requireProblem(t, env.Do(http.MethodPost, "/api/v1/imports/crm/orders", `{}`, manager), http.StatusUnprocessableEntity, "orders")
		requireProblem(t, env.Do(http.MethodPost, "/api/v1/imports/crm/orders", `{"orders": {}}`, manager), http.StatusUnprocessableEntity, "orders")
		requireProblem(t, env.Do(http.MethodPost, "/api/v1/imports/crm/orders", `{"orders": [`, manager), http.StatusBadRequest)
		many := `{"orders": [` + strings.Repeat(`{},`, sales.MaxCRMImportRows) + `{}]}`
		requireProblem(t, env.Do(http.MethodPost, "/api/v1/imports/crm/orders", many, manager), http.StatusUnprocessableEntity, "orders")
		viewer := env.UserToken("Наблюдатель", "viewer")
		requireProblem(t, env.Do(http.MethodPost, "/api/v1/imports/crm/orders", batch, viewer), http.StatusForbidden)
	})
}

func TestOrders_IdempotencyKey(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		post := func(body any, token, key string) apptest.Response {
			t.Helper()
			return env.Do(http.MethodPost, "/api/v1/orders", body, token, "Idempotency-Key", key)
		}
		t.Run("OK", func(t *testing.T) {
			orders := env.Count("sales_orders")
			first := post(validOrder, apptest.AdminToken, "key-1")
			require.Equal(t, http.StatusCreated, first.Status, "%s", first.Body)
			require.Empty(t, first.Header.Get("Idempotent-Replayed"))
			// The same body, spaced and ordered differently: the stored response, byte for byte.
			again := post(`{"due_date": "2026-12-20", "items": [{"sku": "SHK-KUPE-1600", "qty": 1}, {"qty": 2, "sku": "TMB-PRIK-450", "note": "дуб"}],
				"customer": {"phone": "+7 900 000-00-00", "name": "Иван Петров"}}`, apptest.AdminToken, "key-1")
			require.Equal(t, first.Status, again.Status)
			require.Equal(t, string(first.Body), string(again.Body))
			require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
			require.Equal(t, orders+1, env.Count("sales_orders"))
			// Keys belong to their user: another manager's "key-1" is a new order.
			other := env.UserToken("Другой менеджер", "manager")
			r := post(validOrder, other, "key-1")
			require.Equal(t, http.StatusCreated, r.Status)
			require.NotEqual(t, string(first.Body), string(r.Body))
			require.Equal(t, orders+2, env.Count("sales_orders"))
		})
		t.Run("ErrOtherBody", func(t *testing.T) {
			require.Equal(t, http.StatusCreated, post(validOrder, apptest.AdminToken, "key-2").Status)
			orders := env.Count("sales_orders")
			changed := map[string]any{"customer": map[string]any{"name": "Иван Петров"}, "items": []map[string]any{{"sku": "SHK-KUPE-1600", "qty": 5}}}
			p := requireProblem(t, post(changed, apptest.AdminToken, "key-2"), http.StatusUnprocessableEntity)
			require.Contains(t, p.Detail, "Idempotency-Key")
			require.Equal(t, orders, env.Count("sales_orders"))
		})
		t.Run("ErrInFlight", func(t *testing.T) {
			// A first request holds the key: it has reserved it and not finished.
			require.NoError(t, env.App.DB.Exec(`INSERT INTO sales_idempotency_keys (user_id, key, request_hash, state) VALUES (1, 'key-3', ?, 'in_flight')`,
				sales.RequestHash(mustJSON(t, validOrder))).Error)
			orders := env.Count("sales_orders")
			p := requireProblem(t, post(validOrder, apptest.AdminToken, "key-3"), http.StatusConflict)
			require.Contains(t, p.Detail, "in progress")
			require.Equal(t, orders, env.Count("sales_orders"))
			// A request that died in flight long ago no longer holds its key.
			require.NoError(t, env.App.DB.Exec(`UPDATE sales_idempotency_keys SET created_at = ? WHERE key = 'key-3'`, time.Now().Add(-time.Hour).UTC()).Error)
			require.Equal(t, http.StatusCreated, post(validOrder, apptest.AdminToken, "key-3").Status)
			require.Equal(t, http.StatusCreated, post(validOrder, apptest.AdminToken, "key-3").Status)
			require.Equal(t, orders+1, env.Count("sales_orders"))
		})
		t.Run("FailedRequestReleasesKey", func(t *testing.T) {
			bad := map[string]any{"customer": map[string]any{"name": "x"}, "items": []map[string]any{{"sku": "NO-SUCH", "qty": 1}}}
			requireProblem(t, post(bad, apptest.AdminToken, "key-4"), http.StatusUnprocessableEntity, "items[0].sku")
			require.Equal(t, http.StatusCreated, post(validOrder, apptest.AdminToken, "key-4").Status)
		})
		t.Run("ErrBadKey", func(t *testing.T) {
			requireProblem(t, post(validOrder, apptest.AdminToken, ""), http.StatusBadRequest)
			requireProblem(t, post(validOrder, apptest.AdminToken, strings.Repeat("k", 256)), http.StatusBadRequest)
			requireProblem(t, post(validOrder, apptest.AdminToken, "ключ"), http.StatusBadRequest)
		})
		t.Run("Concurrent", func(t *testing.T) {
			orders := env.Count("sales_orders")
			var wg sync.WaitGroup
			statuses := make([]int, 20)
			bodies := make([]string, 20)
			for i := range statuses {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := post(validOrder, apptest.AdminToken, "key-burst")
					statuses[i], bodies[i] = r.Status, string(r.Body)
				}()
			}
			wg.Wait()
			var created string
			for i, st := range statuses {
				require.Contains(t, []int{http.StatusCreated, http.StatusConflict}, st, bodies[i])
				if st == http.StatusCreated {
					if created == "" {
						created = bodies[i]
					}
					require.Equal(t, created, bodies[i], "every 201 is the one stored response")
				}
			}
			require.NotEmpty(t, created)
			require.Equal(t, orders+1, env.Count("sales_orders"))
		})
	})
}

func TestOrders_CancelOverHTTP(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		r := env.Admin(http.MethodPost, "/api/v1/orders", validOrder)
		require.Equal(t, http.StatusCreated, r.Status)
		id := int64(r.Map(t)["id"].(float64))
		env.Dispatch()
		backlog := func() int {
			var bl struct{ Items []any }
			env.Admin(http.MethodGet, "/api/v1/plan/backlog", nil).JSON(t, &bl)
			return len(bl.Items)
		}
		require.Equal(t, 2, backlog())
		viewer := env.UserToken("Наблюдатель", "viewer")
		requireProblem(t, env.Do(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", id), nil, viewer), http.StatusForbidden)
		// A reason is required: none, or a blank one, is 422 naming it, and changes nothing.
		for _, body := range []any{nil, map[string]any{}, map[string]any{"reason": "  "}} {
			requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", id), body), http.StatusUnprocessableEntity, "reason")
		}
		require.Equal(t, "received", env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil).Map(t)["status"])
		c := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", id), cancelBody)
		require.Equal(t, http.StatusOK, c.Status, "%s", c.Body)
		require.Equal(t, "cancelled", c.Map(t)["status"])
		require.Equal(t, "the customer changed their mind", c.Map(t)["cancel_reason"])
		requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", id), cancelBody), http.StatusConflict)
		requireProblem(t, env.Admin(http.MethodPost, "/api/v1/orders/999999/cancel", cancelBody), http.StatusNotFound)
		var evs struct{ Items []struct{ Type string } }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?aggregate_type=sales_orders&aggregate_id=%d", id), nil).JSON(t, &evs)
		var types []string
		for _, e := range evs.Items {
			types = append(types, e.Type)
		}
		require.Equal(t, []string{"order.status_changed", "order.cancelled", "order.received"}, types)
		// The plan hears of it and drops the order's items from its backlog.
		env.Dispatch()
		require.Zero(t, backlog())
	})
}

// shopListener is the shop's end of SHOP_CALLBACK_URL: it checks tsekh's
// signature on every callback and keeps the bodies it heard.
type shopListener struct {
	URL   string
	mu    sync.Mutex
	heard []sales.ShopCallbackBody
}

func newShopListener(t *testing.T) *shopListener {
	t.Helper()
	l := &shopListener{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if err := sales.VerifySignature(shopSecret, r.Header.Get(sales.HeaderShopTimestamp), r.Header.Get(sales.HeaderShopSignature), raw, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var b sales.ShopCallbackBody
		if err := jsonUnmarshal(raw, &b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		l.mu.Lock()
		l.heard = append(l.heard, b)
		l.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	l.URL = srv.URL
	return l
}

// heardOf returns what the shop heard about its order shopID, in order.
func (l *shopListener) heardOf(shopID string) []sales.ShopCallbackBody {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []sales.ShopCallbackBody
	for _, b := range l.heard {
		if b.ShopOrderID == shopID {
			out = append(out, b)
		}
	}
	return out
}

// The shop hears of its order's progress at SHOP_CALLBACK_URL.
func TestShopCallback_EndToEnd(t *testing.T) {
	t.Parallel()
	shop := newShopListener(t)
	eachWith(t, func(c *config.Config) { c.ShopWebhookSecret, c.ShopCallbackURL = shopSecret, shop.URL }, func(t *testing.T, env *apptest.Env) {
		shopID := "cb-" + string(env.Dialect)
		r := deliver(env, shopBody(shopID), time.Now())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		id := orderIDOf(t, r)
		require.Equal(t, http.StatusOK, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", id), cancelBody).Status)
		env.Dispatch()
		mine := shop.heardOf(shopID)
		require.Len(t, mine, 1)
		require.Equal(t, id, mine[0].OrderID)
		require.Equal(t, "cancelled", mine[0].Status)
		var subs struct{ Items []struct{ Name string } }
		env.Admin(http.MethodGet, "/api/v1/subscribers", nil).JSON(t, &subs)
		var names []string
		for _, s := range subs.Items {
			names = append(names, s.Name)
		}
		require.Contains(t, names, sales.SubscriberShopCallback)
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// In the wired service the sales module follows the plan's events: the order
// shows its state and ETA, and the shop hears of them.
func TestOrders_FollowProduction(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		require.NotNil(t, env.App.Registry.Subscriber(sales.SubscriberProduction), "sales.production is wired")
		r := env.Admin(http.MethodPost, "/api/v1/orders", validOrder)
		require.Equal(t, http.StatusCreated, r.Status)
		var o struct {
			ID    int64
			Items []struct{ ID int64 }
		}
		r.JSON(t, &o)
		env.Dispatch()
		// As the plan module writes it when a production order is launched.
		require.NoError(t, env.App.DB.Transaction(func(tx *gorm.DB) error {
			return events.Add(context.Background(), tx, contracts.ProdOrderLaunched.New(77, contracts.ProdOrderLaunchedPayload{ProdOrderID: 77,
				Items: []int64{o.Items[0].ID, o.Items[1].ID}, Route: "Корпус ЛДСП (типовой)", PartsCount: 1, OpsCount: 1, ETA: "2026-12-18"}))
		}))
		env.Dispatch()
		got := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", o.ID), nil).Map(t)
		require.Equal(t, "in_production", got["status"])
		require.Equal(t, "2026-12-18", got["eta"])
		item := got["items"].([]any)[0].(map[string]any)
		require.Equal(t, "in_production", item["status"])
		require.Equal(t, "2026-12-18", item["eta"])
		requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", o.ID), cancelBody), http.StatusConflict)
	})
}

// The whole life of an order with the plan module: launched, made, ready;
// and back to received when its production order is cancelled.
func TestOrders_LifeCycleWithThePlan(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		newOrder := func() (orderID, itemID int64) {
			r := env.Admin(http.MethodPost, "/api/v1/orders", map[string]any{
				"customer": map[string]any{"name": "Ольга"}, "items": []map[string]any{{"sku": "TMB-PRIK-450", "qty": 1}}})
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			var o struct {
				ID    int64
				Items []struct{ ID int64 }
			}
			r.JSON(t, &o)
			return o.ID, o.Items[0].ID
		}
		type prodOrder struct {
			ID         int64
			ETA        string `json:"eta"`
			Operations []struct{ ID int64 }
		}
		launch := func(itemID int64) prodOrder {
			env.Dispatch() // the item reaches the plan's backlog
			r := env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": []int64{itemID}})
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			var p prodOrder
			r.JSON(t, &p)
			env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", p.ID), nil).JSON(t, &p)
			require.NotEmpty(t, p.Operations)
			require.NotEmpty(t, p.ETA)
			env.Dispatch()
			return p
		}
		order := func(id int64) map[string]any {
			return env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil).Map(t)
		}

		id, item := newOrder()
		p := launch(item)
		o := order(id)
		require.Equal(t, "in_production", o["status"])
		require.Equal(t, p.ETA, o["eta"], "the order shows the production order's ETA")
		for _, op := range p.Operations {
			for _, step := range []string{"start", "complete"} {
				r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/operations/%d/%s", p.ID, op.ID, step), nil)
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			}
		}
		env.Dispatch()
		o = order(id)
		require.Equal(t, "ready", o["status"])
		require.Equal(t, "done", o["items"].([]any)[0].(map[string]any)["status"])

		id, item = newOrder()
		p = launch(item)
		require.Equal(t, http.StatusOK, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", p.ID), nil).Status)
		env.Dispatch()
		o = order(id)
		require.Equal(t, "received", o["status"])
		require.Nil(t, o["eta"])

		var changes struct {
			Items []struct{ Payload map[string]any }
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?type=order.status_changed&aggregate_id=%d", id), nil).JSON(t, &changes)
		require.Len(t, changes.Items, 2)
		require.Equal(t, "received", changes.Items[0].Payload["status"], "newest first")
		require.Equal(t, "in_production", changes.Items[1].Payload["status"])
	})
}
