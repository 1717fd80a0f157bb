package api_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// cancelBody is a cancellation's body: its reason is required.
var cancelBody = map[string]any{"reason": "the customer changed their mind"}

// requireOnlyKept checks that between two row counts nothing was written
// but what keeping refused deliveries in the intake inbox writes: kept new
// rejections, one intake.rejected event for each refusal kept (refusals,
// counting those that updated an open rejection), and the shop's user
// with its user.created when the refusal was its first delivery.
func requireOnlyKept(t testing.TB, before, after map[string]int64, kept, refusals int64) {
	t.Helper()
	users := after["auth_users"] - before["auth_users"]
	require.Equal(t, kept, after["sales_intake_rejections"]-before["sales_intake_rejections"], "rejections kept")
	require.Equal(t, refusals+users, after["events"]-before["events"], "one intake.rejected per refusal (and user.created for the shop's first)")
	b, a := maps.Clone(before), maps.Clone(after)
	for _, k := range []string{"sales_intake_rejections", "events", "auth_users"} {
		delete(b, k)
		delete(a, k)
	}
	require.Equal(t, b, a, "nothing but the intake inbox written")
}

// orderMap reads an order as the API shows it.
func orderMap(t *testing.T, env *apptest.Env, id int64) map[string]any {
	t.Helper()
	r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.Map(t)
}

func versionOf(t *testing.T, env *apptest.Env, id int64) int64 {
	t.Helper()
	return int64(orderMap(t, env, id)["version"].(float64))
}

func firstItemQty(t *testing.T, env *apptest.Env, id int64) (itemID int64, qty int) {
	t.Helper()
	it := orderMap(t, env, id)["items"].([]any)[0].(map[string]any)
	return int64(it["id"].(float64)), int(it["qty"].(float64))
}

type rejectionView struct {
	ID         int64
	Source     string
	SyncID     *string `json:"sync_id"`
	CRMOrderID *string `json:"crm_order_id"`
	Body       json.RawMessage
	Reasons    []string
	Errors     []struct{ Field, Message string }
	Status     string
	Deliveries int
	Retries    int
	OrderID    *int64 `json:"order_id"`
	Outcome    string
}

func (r rejectionView) fields() []string {
	var out []string
	for _, e := range r.Errors {
		out = append(out, e.Field)
	}
	return out
}

func rejectionsOf(t *testing.T, env *apptest.Env, query string) []rejectionView {
	t.Helper()
	r := env.Admin(http.MethodGet, "/api/v1/intake/rejections"+query, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var out struct{ Items []rejectionView }
	r.JSON(t, &out)
	return out.Items
}

func rejectionAction(t *testing.T, env *apptest.Env, id int64, action string, body any, status int) rejectionView {
	t.Helper()
	r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/intake/rejections/%d/%s", id, action), body)
	require.Equal(t, status, r.Status, "%s", r.Body)
	var out rejectionView
	r.JSON(t, &out)
	return out
}

// The office's change reaches the shop with the new version; the shop's
// next delivery, newer by its own marks but built on the version before the
// change, is refused naming the fields (and kept in the inbox); built on the
// version it heard, it applies.
func TestShopPartner_NoSilentOverwrite(t *testing.T) {
	t.Parallel()
	shop := newShopListener(t)
	eachWith(t, func(c *config.Config) { c.ShopWebhookSecret, c.ShopCallbackURL = shopSecret, shop.URL }, func(t *testing.T, env *apptest.Env) {
		shopID := "sync-" + string(env.Dialect)
		r := deliver(env, shopOrderBody(shopID, `{"sku": "SHK-KUPE-1600", "qty": 1}`, `, "version": 1`), time.Now())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		id := orderIDOf(t, r)
		require.EqualValues(t, 1, r.Map(t)["version"], "the answer carries the order's tsekh version")
		itemID, _ := firstItemQty(t, env, id)

		// A manager raises the quantity to 3: the shop hears it, with before and after and the new version.
		_, pr := patchOrder(t, env, id, map[string]any{"items": []map[string]any{{"id": itemID, "qty": 3}}})
		require.Equal(t, http.StatusOK, pr.Status, "%s", pr.Body)
		env.Dispatch()
		heard := shop.heardOf(shopID)
		require.NotEmpty(t, heard)
		last := heard[len(heard)-1]
		require.Equal(t, "order.changed", last.Type)
		require.Equal(t, "patch", last.Via)
		require.Equal(t, versionOf(t, env, id), last.Version)
		require.Greater(t, last.Version, int64(1))
		require.Len(t, last.Changes.Items, 1)
		require.Equal(t, 1, last.Changes.Items[0].Qty.Before)
		require.Equal(t, 3, last.Changes.Items[0].Qty.After)

		// The shop's version 2, built on tsekh version 1, still says 1: 409 naming the item, nothing changed, kept.
		before := rowCounts(t, env)
		stale := shopOrderBody(shopID, `{"sku": "SHK-KUPE-1600", "qty": 1}`, `, "version": 2, "tsekh_version": 1`)
		p := requireProblem(t, deliver(env, stale, time.Now()), http.StatusConflict, "items[0]")
		require.Contains(t, p.Detail, "office")
		_, qty := firstItemQty(t, env, id)
		require.Equal(t, 3, qty, "the office's change stands")
		requireOnlyKept(t, before, rowCounts(t, env), 1, 1)
		kept := rejectionsOf(t, env, "?source=shop&reason=conflict&open=true")
		require.Len(t, kept, 1)
		require.Equal(t, []string{"items[0]"}, kept[0].fields())
		require.JSONEq(t, stale, string(kept[0].Body), "the body as received")

		// Without tsekh_version it is built on none: the same.
		requireProblem(t, deliver(env, shopOrderBody(shopID, `{"sku": "SHK-KUPE-1600", "qty": 1}`, `, "version": 2, "delivery_address": "Тверь"`), time.Now()),
			http.StatusConflict, "items[0]")

		// Built on the version it heard, the shop may set it back: applied, and the kept rejection resolved by it.
		fresh := shopOrderBody(shopID, `{"sku": "SHK-KUPE-1600", "qty": 2}`, fmt.Sprintf(`, "version": 2, "tsekh_version": %d`, last.Version))
		a := deliver(env, fresh, time.Now())
		require.Equal(t, http.StatusOK, a.Status, "%s", a.Body)
		require.Equal(t, true, a.Map(t)["changed"])
		_, qty = firstItemQty(t, env, id)
		require.Equal(t, 2, qty)
		resolved := rejectionAction(t, env, kept[0].ID, "retry", nil, http.StatusOK)
		require.Equal(t, "resolved", resolved.Status)
		require.Equal(t, id, *resolved.OrderID)
		require.Equal(t, "changed", resolved.Outcome)
	})
}

// With SHOP_CONFLICTS=shop a delivery built on an older version is merged:
// the fields the office did not touch are applied, the office's kept, and
// the order flagged for a manager; the shop hears of it.
func TestShopPartner_MergedAndFlagged(t *testing.T) {
	t.Parallel()
	shop := newShopListener(t)
	eachWith(t, func(c *config.Config) {
		c.ShopWebhookSecret, c.ShopCallbackURL, c.ShopConflicts = shopSecret, shop.URL, "shop"
	}, func(t *testing.T, env *apptest.Env) {
		shopID := "merge-" + string(env.Dialect)
		r := deliver(env, shopOrderBody(shopID, `{"sku": "SHK-KUPE-1600", "qty": 1}`, `, "version": 1`), time.Now())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		id := orderIDOf(t, r)
		itemID, _ := firstItemQty(t, env, id)
		_, pr := patchOrder(t, env, id, map[string]any{"customer": map[string]any{"phone": "+7 900 999-99-99"},
			"items": []map[string]any{{"id": itemID, "qty": 3}}})
		require.Equal(t, http.StatusOK, pr.Status, "%s", pr.Body)

		// The shop changes the phone back, the quantity, and the delivery address, on version 1.
		merged := shopOrderBody(shopID, `{"sku": "SHK-KUPE-1600", "qty": 5}`, `, "delivery_address": "Тверь, ул. Новая, 1", "version": 2, "tsekh_version": 1`)
		a := deliver(env, merged, time.Now())
		require.Equal(t, http.StatusOK, a.Status, "%s", a.Body)
		o := orderMap(t, env, id)
		require.Equal(t, "+7 900 999-99-99", o["customer"].(map[string]any)["phone"], "the office's phone kept")
		require.EqualValues(t, 3, o["items"].([]any)[0].(map[string]any)["qty"], "the office's quantity kept")
		require.Equal(t, "Тверь, ул. Новая, 1", o["delivery_address"], "what the office did not touch applied")
		require.Contains(t, o["attention"], "customer.phone")
		require.Contains(t, o["attention"], "items[0]")
		flagged := eventsOfOrder(t, env, "order.shop_conflict", id)
		require.Len(t, flagged, 1)
		require.Equal(t, "Интернет-магазин", actorName(flagged[0]))
		env.Dispatch()
		heard := shop.heardOf(shopID)
		last := heard[len(heard)-1]
		require.Equal(t, "order.shop_conflict", last.Type)
		require.Len(t, last.Conflicts, 2)
		require.Equal(t, versionOf(t, env, id), last.Version)
		require.Empty(t, rejectionsOf(t, env, "?open=true"), "merged, not refused")

		// A manager who has looked at it clears the note, journalled; once.
		requireProblem(t, env.Do(http.MethodDelete, fmt.Sprintf("/api/v1/orders/%d/attention", id), nil, env.UserToken("Наблюдатель", "viewer")), http.StatusForbidden)
		cl := env.Admin(http.MethodDelete, fmt.Sprintf("/api/v1/orders/%d/attention", id), nil)
		require.Equal(t, http.StatusOK, cl.Status, "%s", cl.Body)
		require.Equal(t, "", cl.Map(t)["attention"])
		cleared := eventsOfOrder(t, env, "order.attention_cleared", id)
		require.Len(t, cleared, 1)
		require.Equal(t, "Администратор", actorName(cleared[0]))
		requireProblem(t, env.Admin(http.MethodDelete, fmt.Sprintf("/api/v1/orders/%d/attention", id), nil), http.StatusConflict)
		requireProblem(t, env.Admin(http.MethodDelete, "/api/v1/orders/999999/attention", nil), http.StatusNotFound)
	})
}

// A correctly signed order with a SKU the catalogue lacks is refused with
// every reason and kept; once the SKU is added a retry creates the order
// once, however often and however many at once it is retried.
func TestShopPartner_RefusedOrderKeptAndRetried(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		// Every reason at once: the unknown SKUs, the bad quantity and the date.
		bad := `{"id": "all-at-once", "customer": {"name": "Пётр"}, "items": [{"sku": "NEW-SOFA", "qty": 1}, {"sku": "SHK-KUPE-1600", "qty": 0}, {"sku": "NEW-CHAIR", "qty": 2}], "due_date": "2026-02-30"}`
		p := requireProblem(t, deliver(env, bad, time.Now()), http.StatusUnprocessableEntity, "items[0].sku", "items[1].qty", "items[2].sku", "due_date")
		require.Len(t, p.Errors, 4)

		ids := []string{"new-sofa-1", "new-sofa-2"}
		for _, shopID := range ids {
			body := fmt.Sprintf(`{"id": %q, "customer": {"name": "Покупатель %s"}, "items": [{"sku": "NEW-SOFA", "qty": 1}]}`, shopID, shopID)
			requireProblem(t, deliver(env, body, time.Now()), http.StatusUnprocessableEntity, "items[0].sku")
		}
		open := rejectionsOf(t, env, "?source=shop&reason=unknown_sku&open=true")
		require.Len(t, open, 3)
		require.Equal(t, []string{"unknown_sku", "invalid"}, open[2].Reasons)
		require.ElementsMatch(t, []string{"items[0].sku", "items[1].qty", "items[2].sku", "due_date"}, open[2].fields())
		require.Empty(t, rejectionsOf(t, env, "?source=crm"))
		require.Empty(t, rejectionsOf(t, env, "?reason=in_production"))
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/intake/rejections?reason=nope", nil), http.StatusUnprocessableEntity, "reason")
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/intake/rejections?open=maybe", nil), http.StatusUnprocessableEntity, "open")
		requireProblem(t, env.Do(http.MethodGet, "/api/v1/intake/rejections", nil, env.UserToken("Мастер", "master")), http.StatusForbidden)
		page1 := env.Admin(http.MethodGet, "/api/v1/intake/rejections?limit=2", nil).Map(t)
		require.NotEmpty(t, page1["next_cursor"])
		page2 := env.Admin(http.MethodGet, "/api/v1/intake/rejections?limit=2&cursor="+page1["next_cursor"].(string), nil).Map(t)
		require.Len(t, page2["items"], 1)

		// Retried before the SKU exists: still open, with its reasons, 200.
		sofa1, sofa2 := open[1], open[0]
		again := rejectionAction(t, env, sofa1.ID, "retry", nil, http.StatusOK)
		require.Equal(t, "open", again.Status)
		require.Equal(t, 1, again.Retries)
		require.Equal(t, []string{"items[0].sku"}, again.fields())

		var routes struct{ Items []struct{ ID int64 } }
		env.Admin(http.MethodGet, "/api/v1/routes", nil).JSON(t, &routes)
		pr := env.Admin(http.MethodPost, "/api/v1/products", map[string]any{"sku": "NEW-SOFA", "name": "Диван новый", "kind": "upholstered",
			"route_id": routes.Items[1].ID, "parts": []map[string]any{{"name": "Каркас", "board": "PLY18", "length_mm": 2000, "width_mm": 900, "qty": 1}}})
		require.Equal(t, http.StatusCreated, pr.Status, "%s", pr.Body)

		// Retried twice: one order, one order.received.
		ordersOf := func(customer string) (orders, received int) {
			var ids []int64
			require.NoError(t, database.Scan(env.App.DB.Raw("SELECT id FROM sales_orders WHERE customer_name = ?", customer), &ids))
			for _, id := range ids {
				received += len(eventsOfOrder(t, env, "order.received", id))
			}
			return len(ids), received
		}
		first := rejectionAction(t, env, sofa1.ID, "retry", nil, http.StatusOK)
		require.Equal(t, "resolved", first.Status)
		require.Equal(t, "created", first.Outcome)
		second := rejectionAction(t, env, sofa1.ID, "retry", nil, http.StatusOK)
		require.Equal(t, first.OrderID, second.OrderID)
		o, rcv := ordersOf("Покупатель new-sofa-1")
		require.Equal(t, 1, o)
		require.Equal(t, 1, rcv)
		resolvedEvents := journalOf(t, env, "intake.resolved", fmt.Sprintf("&aggregate_id=%d", sofa1.ID))
		require.Len(t, resolvedEvents, 1)
		require.Equal(t, "Администратор", actorName(resolvedEvents[0]))

		// Twenty retries at once: still one.
		var wg sync.WaitGroup
		statuses := make([]int, 20)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/intake/rejections/%d/retry", sofa2.ID), nil).Status
			}()
		}
		wg.Wait()
		for i, s := range statuses {
			require.Equal(t, http.StatusOK, s, "retry %d", i)
		}
		o, rcv = ordersOf("Покупатель new-sofa-2")
		require.Equal(t, 1, o)
		require.Equal(t, 1, rcv)
		require.Len(t, journalOf(t, env, "intake.resolved", fmt.Sprintf("&aggregate_id=%d", sofa2.ID)), 1)

		// Dismissing: a reason is required; a resolved one cannot be; an unknown one is 404.
		allAtOnce := open[2]
		requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/intake/rejections/%d/dismiss", allAtOnce.ID), nil), http.StatusUnprocessableEntity, "reason")
		requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/intake/rejections/%d/dismiss", allAtOnce.ID), map[string]any{"reason": " "}), http.StatusUnprocessableEntity, "reason")
		d := rejectionAction(t, env, allAtOnce.ID, "dismiss", map[string]any{"reason": "заказ оформлен заново"}, http.StatusOK)
		require.Equal(t, "dismissed", d.Status)
		requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/intake/rejections/%d/retry", allAtOnce.ID), nil), http.StatusConflict)
		requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/intake/rejections/%d/dismiss", sofa1.ID), map[string]any{"reason": "x"}), http.StatusConflict)
		for _, action := range []string{"retry", "dismiss"} {
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/intake/rejections/999999/"+action, map[string]any{"reason": "x"}), http.StatusNotFound)
		}
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/intake/rejections/999999", nil), http.StatusNotFound)
		require.Len(t, journalOf(t, env, "intake.dismissed", ""), 1)
		require.Empty(t, rejectionsOf(t, env, "?open=true"))
	})
}

// A CRM file with three kinds of bad rows: each row names every reason at
// once, and each is kept in the inbox with its kinds.
func TestShopPartner_CRMRowsEveryReasonAtOnce(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		first := env.Admin(http.MethodPost, "/api/v1/imports/crm/orders", map[string]any{"orders": []any{
			map[string]any{"crm_order_id": 900, "customer": map[string]any{"name": "Ольга"}, "items": []any{map[string]any{"sku": "TMB-PRIK-450", "qty": 1}}},
		}})
		require.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
		r := env.Admin(http.MethodPost, "/api/v1/imports/crm/orders", map[string]any{"orders": []any{
			// Unknown SKUs only, two of them.
			map[string]any{"crm_order_id": 901, "customer": map[string]any{"name": "Иван"},
				"items": []any{map[string]any{"sku": "NO-1", "qty": 1}, map[string]any{"sku": "NO-2", "qty": 1}}},
			// A bad quantity, a bad date and an unknown SKU together.
			map[string]any{"crm_order_id": 902, "customer": map[string]any{"name": "Мария"}, "due_date": "2026-13-01",
				"items": []any{map[string]any{"sku": "TMB-PRIK-450", "qty": 0}, map[string]any{"sku": "NO-3", "qty": 1}}},
			// Imported before, now different without version or updated_at: a conflict.
			map[string]any{"crm_order_id": 900, "customer": map[string]any{"name": "Ольга"}, "items": []any{map[string]any{"sku": "TMB-PRIK-450", "qty": 4}}},
		}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var rep struct {
			Rows []struct {
				Result string
				Errors []struct{ Field string }
			}
		}
		r.JSON(t, &rep)
		fields := func(i int) []string {
			var out []string
			for _, e := range rep.Rows[i].Errors {
				out = append(out, e.Field)
			}
			return out
		}
		require.Equal(t, "refused", rep.Rows[0].Result)
		require.ElementsMatch(t, []string{"items[0].sku", "items[1].sku"}, fields(0))
		require.Equal(t, "refused", rep.Rows[1].Result)
		require.ElementsMatch(t, []string{"due_date", "items[0].qty", "items[1].sku"}, fields(1))
		require.Equal(t, "conflict", rep.Rows[2].Result)

		kept := rejectionsOf(t, env, "?source=crm")
		require.Len(t, kept, 3)
		byID := map[string]rejectionView{}
		for _, k := range kept {
			byID[*k.CRMOrderID] = k
		}
		require.Equal(t, []string{"unknown_sku"}, byID["901"].Reasons)
		require.Equal(t, []string{"unknown_sku", "invalid"}, byID["902"].Reasons)
		require.Equal(t, []string{"conflict"}, byID["900"].Reasons)
		require.ElementsMatch(t, []string{"due_date", "items[0].qty", "items[1].sku"}, byID["902"].fields())
		rejected := journalOf(t, env, "intake.rejected", "")
		require.Len(t, rejected, 3)
		require.Equal(t, "Администратор", actorName(rejected[0]), "the importer")

		// The open rejections are a metric.
		m := env.Admin(http.MethodGet, "/metrics", nil)
		require.Contains(t, string(m.Body), `tsekh_intake_rejections_open{source="crm"} 3`)
	})
}

// The shop's marks are compared at the precision sent: a delivery a tenth
// of a microsecond later is newer, one between the two older.
func TestShopPartner_SubMillisecondMarks(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		at := func(mark string, qty int) string {
			return shopOrderBody("marks", fmt.Sprintf(`{"sku": "SHK-KUPE-1600", "qty": %d}`, qty), `, "updated_at": "`+mark+`"`)
		}
		r := deliver(env, at("2026-12-02T10:00:00.1231Z", 1), time.Now())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		id := orderIDOf(t, r)
		r = deliver(env, at("2026-12-02T10:00:00.1239Z", 2), time.Now())
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, true, r.Map(t)["changed"], "newer by 0.8 ms")
		r = deliver(env, at("2026-12-02T10:00:00.12390001Z", 3), time.Now())
		require.Equal(t, true, r.Map(t)["changed"], "newer by 10 ns")
		r = deliver(env, at("2026-12-02T10:00:00.1235Z", 4), time.Now())
		require.Equal(t, true, r.Map(t)["stale"], "between the two: older")
		_, qty := firstItemQty(t, env, id)
		require.Equal(t, 3, qty)
	})
}
