package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/sales"
)

// changedOrder is the answer of PATCH /api/v1/orders/{id}.
type changedOrder struct {
	Changed bool
	Order   struct {
		ID       int64
		Status   string
		Note     string
		DueDate  *string `json:"due_date"`
		Customer struct{ Name, Phone, Email string }
		Items    []struct {
			ID     int64
			SKU    string
			Qty    int
			Note   string
			Status string
		}
	}
}

func patchOrder(t *testing.T, env *apptest.Env, id int64, body any) (changedOrder, apptest.Response) {
	t.Helper()
	r := env.Admin(http.MethodPatch, fmt.Sprintf("/api/v1/orders/%d", id), body)
	var out changedOrder
	if r.Status == http.StatusOK {
		r.JSON(t, &out)
	}
	return out, r
}

// changeEvents are the order's order.changed payloads, oldest first.
func changeEvents(t *testing.T, env *apptest.Env, orderID int64) []journalEvent {
	t.Helper()
	return eventsOfOrder(t, env, "order.changed", orderID)
}

type backlogRow struct {
	ItemID   int64 `json:"item_id"`
	OrderID  int64 `json:"order_id"`
	SKU      string
	Qty      int
	DueDate  *string `json:"due_date"`
	Customer string
	Note     string
}

func backlogOf(t *testing.T, env *apptest.Env, orderID int64) map[int64]backlogRow {
	t.Helper()
	var l struct{ Items []backlogRow }
	r := env.Admin(http.MethodGet, "/api/v1/plan/backlog?limit=500", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &l)
	out := map[int64]backlogRow{}
	for _, b := range l.Items {
		if b.OrderID == orderID {
			out[b.ItemID] = b
		}
	}
	return out
}

// Each kind of change through PATCH: contacts, due date, note, quantities,
// items added and removed; order.changed says what changed, before and
// after, and the plan's backlog follows it. A change that alters nothing
// writes nothing and says so.
func TestChanges_Patch(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		id, items := receive(t, env, line{"SHK-KUPE-1600", 1}, line{"TMB-PRIK-450", 2}, line{"SHK-RASP-1200", 1})

		out, r := patchOrder(t, env, id, map[string]any{
			"customer": map[string]any{"phone": "+7 900 765-43-21", "email": "ivan@example.com"},
			"due_date": "2026-12-27", "note": "звонить за час"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.True(t, out.Changed)
		require.Equal(t, "Иван Петров", out.Order.Customer.Name, "left out: unchanged")
		require.Equal(t, "+7 900 765-43-21", out.Order.Customer.Phone)
		require.Equal(t, "ivan@example.com", out.Order.Customer.Email)
		require.Equal(t, "2026-12-27", *out.Order.DueDate)
		require.Equal(t, "звонить за час", out.Order.Note)
		evs := changeEvents(t, env, id)
		require.Len(t, evs, 1)
		require.Equal(t, "patch", evs[0].Payload["via"])
		require.Equal(t, []any{
			map[string]any{"field": "customer.phone", "before": "", "after": "+7 900 765-43-21"},
			map[string]any{"field": "customer.email", "before": "", "after": "ivan@example.com"},
			map[string]any{"field": "due_date", "before": "", "after": "2026-12-27"},
			map[string]any{"field": "note", "before": "", "after": "звонить за час"},
		}, evs[0].Payload["fields"])
		require.Empty(t, evs[0].Payload["items"])
		require.NotNil(t, evs[0].Actor, "the manager is journalled")
		require.Equal(t, "Администратор", evs[0].Actor.Name)
		// The order is found by its new phone, and no longer by none.
		var found struct{ Items []struct{ ID int64 } }
		r = env.Admin(http.MethodGet, "/api/v1/orders?customer=9007654321", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &found)
		require.Len(t, found.Items, 1)
		require.Equal(t, id, found.Items[0].ID)

		// Quantities, an item removed, one added.
		out, r = patchOrder(t, env, id, map[string]any{"items": []map[string]any{
			{"id": items[0], "qty": 3},
			{"id": items[2], "remove": true},
			{"sku": "DIV-CHESTER-3", "qty": 1, "note": "велюр, серый"},
			{"id": items[1], "note": "орех"},
		}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.True(t, out.Changed)
		require.Len(t, out.Order.Items, 3)
		require.Equal(t, items[0], out.Order.Items[0].ID)
		require.Equal(t, 3, out.Order.Items[0].Qty)
		require.Equal(t, "орех", out.Order.Items[1].Note)
		added := out.Order.Items[2]
		require.Equal(t, "DIV-CHESTER-3", added.SKU)
		require.Equal(t, "new", added.Status)
		evs = changeEvents(t, env, id)
		require.Len(t, evs, 2)
		require.Empty(t, evs[1].Payload["fields"])
		require.Equal(t, "2026-12-27", evs[1].Payload["due_date"], "the due date rides along for new items")
		require.Equal(t, []any{
			map[string]any{"item_id": float64(items[0]), "sku": "SHK-KUPE-1600", "change": "changed", "qty": map[string]any{"before": float64(1), "after": float64(3)}},
			map[string]any{"item_id": float64(items[2]), "sku": "SHK-RASP-1200", "change": "removed", "qty": map[string]any{"before": float64(1), "after": float64(0)}},
			map[string]any{"item_id": float64(items[1]), "sku": "TMB-PRIK-450", "change": "changed",
				"fields": []any{map[string]any{"field": "note", "before": "", "after": "орех"}}},
			map[string]any{"item_id": float64(added.ID), "sku": "DIV-CHESTER-3", "change": "added", "qty": map[string]any{"before": float64(0), "after": float64(1)},
				"fields": []any{map[string]any{"field": "note", "before": "", "after": "велюр, серый"}}},
		}, evs[1].Payload["items"])

		// The backlog follows.
		env.Dispatch()
		bl := backlogOf(t, env, id)
		require.Len(t, bl, 3)
		require.Equal(t, 3, bl[items[0]].Qty)
		require.NotContains(t, bl, items[2], "the removed item left the backlog")
		require.Equal(t, 1, bl[added.ID].Qty)
		require.Equal(t, "DIV-CHESTER-3", bl[added.ID].SKU)
		require.Equal(t, "велюр, серый", bl[added.ID].Note)
		require.Equal(t, "орех", bl[items[1]].Note, "the note follows")
		for _, b := range bl {
			require.Equal(t, "2026-12-27", *b.DueDate, "item %d", b.ItemID)
			require.Equal(t, "Иван Петров", b.Customer, "item %d", b.ItemID)
		}

		// null clears the due date; the backlog follows, and the customer's
		// new name too.
		out, r = patchOrder(t, env, id, map[string]any{"due_date": nil, "note": "", "customer": map[string]any{"name": "Иван Сергеевич Петров"}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.True(t, out.Changed)
		require.Nil(t, out.Order.DueDate)
		require.Empty(t, out.Order.Note)
		env.Dispatch()
		for _, b := range backlogOf(t, env, id) {
			require.Nil(t, b.DueDate, "item %d", b.ItemID)
			require.Equal(t, "Иван Сергеевич Петров", b.Customer, "item %d", b.ItemID)
		}
		require.Contains(t, changeEvents(t, env, id)[2].Payload["fields"], map[string]any{"field": "due_date", "before": "2026-12-27", "after": ""})

		// Nothing differs: nothing written, and the answer says so.
		before := rowCounts(t, env)
		out, r = patchOrder(t, env, id, map[string]any{"customer": map[string]any{"phone": "+7 900 765-43-21"}, "due_date": nil,
			"items": []map[string]any{{"id": items[0], "qty": 3}}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.False(t, out.Changed)
		require.Equal(t, before, rowCounts(t, env))
		out, r = patchOrder(t, env, id, map[string]any{})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.False(t, out.Changed)
		require.Len(t, changeEvents(t, env, id), 3)

		// A manager may change orders; a viewer may not.
		manager := env.UserToken("Мария Менеджер", "manager")
		r = env.Do(http.MethodPatch, fmt.Sprintf("/api/v1/orders/%d", id), map[string]any{"note": "от менеджера"}, manager)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, "Мария Менеджер", changeEvents(t, env, id)[3].Actor.Name)
	})
}

// Removing the last item production has not made moves the order on, as
// its items say: ready once the rest is made.
func TestChanges_RemovingTheLastItemLeftMakesTheOrderReady(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		id, items := receive(t, env, line{"TMB-PRIK-450", 1}, line{"SHK-KUPE-1600", 1})
		finish(t, env, launch(t, env, map[string]any{"items": items[:1]}))
		env.Dispatch()
		require.Equal(t, "in_production", salesOrderOf(t, env, id).Status)
		out, r := patchOrder(t, env, id, map[string]any{"items": []map[string]any{{"id": items[1], "remove": true}}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.True(t, out.Changed)
		require.Equal(t, "ready", out.Order.Status)
		sc := eventsOfOrder(t, env, "order.status_changed", id)
		require.Equal(t, "ready", sc[len(sc)-1].Payload["status"])
		// A made item does not change, and nothing is added to a ready order.
		_, r = patchOrder(t, env, id, map[string]any{"items": []map[string]any{{"sku": "TMB-PRIK-450", "qty": 1}}})
		p := requireProblemType(t, r, http.StatusConflict, "conflict")
		require.Contains(t, p.Detail, "ready")
	})
}

// An item production has taken up cannot change (409 naming it), while
// the rest of the order can. An item launched just before sales heard of
// it changes in sales, and the plan flags its production order instead of
// making the old quantity without a word.
func TestChanges_LaunchedItems(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		id, items := receive(t, env, line{"SHK-KUPE-1600", 1}, line{"TMB-PRIK-450", 2}, line{"SHK-RASP-1200", 1})
		po := launch(t, env, map[string]any{"items": items[:1]})
		env.Dispatch()

		for _, body := range []map[string]any{
			{"items": []map[string]any{{"id": items[0], "qty": 2}}},
			{"items": []map[string]any{{"id": items[1], "qty": 3}, {"id": items[0], "remove": true}}},
		} {
			before := rowCounts(t, env)
			_, r := patchOrder(t, env, id, body)
			p := requireProblemType(t, r, http.StatusConflict, "conflict")
			require.Contains(t, p.Detail, fmt.Sprintf("%d (SHK-KUPE-1600, in_production, production order %d)", items[0], po.ID))
			require.NotContains(t, p.Detail, fmt.Sprintf("%d (", items[1]), "only the items in production are named")
			requireRefusedCleanly(t, r, before, rowCounts(t, env))
		}
		// The rest of the order changes.
		out, r := patchOrder(t, env, id, map[string]any{"customer": map[string]any{"name": "Иван Петрович Петров"},
			"items": []map[string]any{{"id": items[1], "qty": 3}}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.True(t, out.Changed)
		require.Equal(t, "in_production", out.Order.Status)
		env.Dispatch()
		require.Equal(t, 3, backlogOf(t, env, id)[items[1]].Qty)

		// Launched, and sales has not heard of it yet: sales lets the change
		// through; the plan flags the production order built on 1.
		raced := launch(t, env, map[string]any{"items": items[2:]})
		out, r = patchOrder(t, env, id, map[string]any{"items": []map[string]any{{"id": items[2], "qty": 4}}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.True(t, out.Changed)
		env.Dispatch()
		got := prodOrderOf(t, env, raced.ID)
		require.True(t, got.NeedsAttention, "a production order built on a stale quantity is flagged")
		require.Contains(t, got.AttentionReason, fmt.Sprintf("sales order %d changed", id))
		require.Contains(t, got.AttentionReason, fmt.Sprintf("item %d (SHK-RASP-1200) changed quantity 1 → 4", items[2]))
		flagged := eventsOf(t, env, "prod_order.needs_attention", raced.ID)
		require.Len(t, flagged, 1)
		require.Equal(t, toAny(items[2:]), flagged[0].Payload["items"])
		require.Equal(t, "launched", flagged[0].Payload["status"])
		require.False(t, prodOrderOf(t, env, po.ID).NeedsAttention, "the other production order is not concerned")
		require.NotContains(t, backlogIDs(t, env), items[2])
		var detail struct {
			Items []struct {
				ItemID     int64 `json:"item_id"`
				Qty        int
				OrderedQty *int `json:"ordered_qty"`
				Removed    bool
			}
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", raced.ID), nil).JSON(t, &detail)
		require.Equal(t, 1, detail.Items[0].Qty, "what it was built on")
		require.NotNil(t, detail.Items[0].OrderedQty)
		require.Equal(t, 4, *detail.Items[0].OrderedQty, "what is ordered now")
		// The planner cancels it: the item goes back to the backlog as ordered now.
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", raced.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, 4, backlogOf(t, env, id)[items[2]].Qty)

		// Removed in the same window: flagged, and a cancellation does not bring it back.
		id2, items2 := receive(t, env, line{"TMB-PRIK-450", 1}, line{"SHK-KUPE-1600", 1})
		gone := launch(t, env, map[string]any{"items": items2[:1]})
		_, r = patchOrder(t, env, id2, map[string]any{"items": []map[string]any{{"id": items2[0], "remove": true}}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Dispatch()
		got = prodOrderOf(t, env, gone.ID)
		require.True(t, got.NeedsAttention)
		require.Contains(t, got.AttentionReason, fmt.Sprintf("item %d (TMB-PRIK-450) was removed", items2[0]))
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", gone.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Dispatch()
		require.NotContains(t, backlogIDs(t, env), items2[0], "a removed item does not come back")
		require.Len(t, salesOrderOf(t, env, id2).Items, 1)

		// The note (a colour) changed in the same window: flagged too.
		noted := launch(t, env, map[string]any{"items": items2[1:]})
		_, r = patchOrder(t, env, id2, map[string]any{"items": []map[string]any{{"id": items2[1], "note": "цвет: венге"}}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Dispatch()
		got = prodOrderOf(t, env, noted.ID)
		require.True(t, got.NeedsAttention)
		require.Contains(t, got.AttentionReason, fmt.Sprintf(`item %d (SHK-KUPE-1600) changed note "" → "цвет: венге"`, items2[1]))

		// A cancelled order changes no more, not even its contacts.
		other, _ := receive(t, env, line{"TMB-PRIK-450", 1})
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", other), cancelBody)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		_, r = patchOrder(t, env, other, map[string]any{"note": "поздно"})
		p := requireProblemType(t, r, http.StatusConflict, "conflict")
		require.Contains(t, p.Detail, "cancelled")
	})
}

func patch(path string, body []byte) func() *http.Request {
	return func() *http.Request { return newRequest(http.MethodPatch, path, body, jsonAdmin...) }
}

// Refused changes write nothing: validation as for POST /orders.
func TestChanges_Refusals(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		id, items := receive(t, env, line{"SHK-KUPE-1600", 1}, line{"TMB-PRIK-450", 2})
		path := fmt.Sprintf("/api/v1/orders/%d", id)
		viewer := env.UserToken("Наблюдатель", "viewer")
		runRefusals(t, env, []refusal{
			{"UnknownSKU", patch(path, []byte(`{"items": [{"sku": "NO-SUCH-SKU", "qty": 1}]}`)), 422, "invalid", []string{"items[0].sku"}},
			{"UnknownItem", patch(path, []byte(`{"items": [{"id": 999999, "qty": 1}]}`)), 422, "invalid", []string{"items[0].id"}},
			{"ZeroQty", patch(path, []byte(fmt.Sprintf(`{"items": [{"id": %d, "qty": 0}]}`, items[0]))), 422, "invalid", []string{"items[0].qty"}},
			{"QtyAsText", patch(path, []byte(fmt.Sprintf(`{"items": [{"id": %d, "qty": "2"}]}`, items[0]))), 422, "invalid", []string{"items[0].qty"}},
			{"NewItemWithoutQty", patch(path, []byte(`{"items": [{"sku": "SHK-KUPE-1600"}]}`)), 422, "invalid", []string{"items[0].qty"}},
			{"SKUOfAnItem", patch(path, []byte(fmt.Sprintf(`{"items": [{"id": %d, "sku": "TMB-PRIK-450"}]}`, items[0]))), 422, "invalid", []string{"items[0].sku"}},
			{"NeitherIDNorSKU", patch(path, []byte(`{"items": [{"qty": 2}]}`)), 422, "invalid", []string{"items[0]"}},
			{"RepeatedItem", patch(path, []byte(fmt.Sprintf(`{"items": [{"id": %d, "qty": 2}, {"id": %d, "qty": 3}]}`, items[0], items[0]))), 422, "invalid", []string{"items[1].id"}},
			{"RemoveWithQty", patch(path, []byte(fmt.Sprintf(`{"items": [{"id": %d, "remove": true, "qty": 2}]}`, items[0]))), 422, "invalid", []string{"items[0].remove"}},
			{"NoItemLeft", patch(path, []byte(fmt.Sprintf(`{"items": [{"id": %d, "remove": true}, {"id": %d, "remove": true}]}`, items[0], items[1]))), 422, "invalid", []string{"items"}},
			{"NameCleared", patch(path, []byte(`{"customer": {"name": null}}`)), 422, "invalid", []string{"customer.name"}},
			{"NameEmpty", patch(path, []byte(`{"customer": {"name": "  "}}`)), 422, "invalid", []string{"customer.name"}},
			{"BadEmail", patch(path, []byte(`{"customer": {"email": "nobody"}}`)), 422, "invalid", []string{"customer.email"}},
			{"PhoneAsNumber", patch(path, []byte(`{"customer": {"phone": 79001234567}}`)), 422, "invalid", []string{"customer.phone"}},
			{"BadDueDate", patch(path, []byte(`{"due_date": "2026-13-01", "items": [{"id": 0, "qty": 1}]}`)), 422, "invalid", []string{"due_date", "items[0]"}},
			{"DueDateOutOfRange", patch(path, []byte(`{"due_date": "9999-12-31"}`)), 422, "invalid", []string{"due_date"}},
			{"ControlCharacterInNote", patch(path, []byte(`{"note": "a\u0000b"}`)), 422, "invalid", []string{"note"}},
			{"NotJSON", patch(path, []byte(`{"note": `)), 400, "bad_request", nil},
			{"NoOrder", patch("/api/v1/orders/999999", []byte(`{"note": "x"}`)), 404, "not_found", nil},
			{"Viewer", func() *http.Request {
				return newRequest(http.MethodPatch, path, []byte(`{"note": "x"}`), "Content-Type", "application/json", "Authorization", "Bearer "+viewer)
			}, 403, "forbidden", nil},
		})
	})
}

// shopOrderBody is a shop delivery with the marks and fields given (JSON
// members without braces, e.g. `"version": 2`).
func shopOrderBody(id, items, extra string) string {
	return fmt.Sprintf(`{"id": %q, "customer": {"name": "Анна Смирнова", "phone": "+7 900 111-22-33"}, "items": [%s], "due_date": "2026-12-24"%s}`,
		id, items, extra)
}

type shopAnswer struct {
	OrderID int64 `json:"order_id"`
	Changed *bool `json:"changed"`
	Stale   *bool `json:"stale"`
}

func shopAnswerOf(t *testing.T, r apptest.Response, status int) shopAnswer {
	t.Helper()
	require.Equal(t, status, r.Status, "%s", r.Body)
	var a shopAnswer
	r.JSON(t, &a)
	return a
}

// The shop's fields are kept and shown as given; re-deliveries of an order
// are changes when newer and different, ignored when older, plain replays
// when identical, and refused when they cannot be told apart (no version)
// or the order cannot take them.
func TestChanges_ShopRedeliveries(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		const lines = `{"sku": "SHK-KUPE-1600", "qty": 1, "unit_price": 54990.00, "line_total": "54990.00"},
			{"sku": "TMB-PRIK-450", "qty": 2, "unit_price": 7490.5, "line_total": 14981}`
		const shopFields = `, "delivery_address": "Москва, ул. Лесная, д. 5, кв. 12\nподъезд 2", "delivery_date": "2026-12-26", "currency": "RUB", "total": 69971.00`
		v1 := shopOrderBody("chg-1", lines, shopFields+`, "version": 1`)
		a := shopAnswerOf(t, deliver(env, v1, time.Now()), http.StatusCreated)
		id := a.OrderID
		env.Dispatch()

		// The shop's fields, as given.
		r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil)
		require.Equal(t, http.StatusOK, r.Status)
		body := string(r.Body)
		for _, s := range []string{`"total":69971.00`, `"currency":"RUB"`, `"delivery_date":"2026-12-26"`,
			`"delivery_address":"Москва, ул. Лесная, д. 5, кв. 12\nподъезд 2"`, `"unit_price":54990.00`, `"line_total":54990.00`,
			`"unit_price":7490.5`, `"line_total":14981`, `"source_version":1`} {
			require.Contains(t, body, s)
		}
		var listed struct{ Items []map[string]any }
		env.Admin(http.MethodGet, "/api/v1/orders?source=shop", nil).JSON(t, &listed)
		require.Len(t, listed.Items, 1)
		require.EqualValues(t, 69971, listed.Items[0]["total"], "lists show them too")
		require.Equal(t, "Москва, ул. Лесная, д. 5, кв. 12\nподъезд 2", listed.Items[0]["delivery_address"])

		// Identical: a plain replay, even with the amounts written otherwise and a later version.
		before := rowCounts(t, env)
		a = shopAnswerOf(t, deliver(env, v1, time.Now()), http.StatusOK)
		require.Equal(t, shopAnswer{OrderID: id}, a)
		same := strings.Replace(strings.Replace(v1, "54990.00,", "54990,", 1), `"version": 1`, `"version": 7`, 1)
		a = shopAnswerOf(t, deliver(env, same, time.Now()), http.StatusOK)
		require.Equal(t, shopAnswer{OrderID: id}, a)
		require.Equal(t, before, rowCounts(t, env))

		// Newer and different: a change.
		v2 := shopOrderBody("chg-1", `{"sku": "SHK-KUPE-1600", "qty": 2, "unit_price": 54990.00, "line_total": 109980.00}`,
			strings.NewReplacer("2026-12-26", "2026-12-29", "69971.00", "109980.00").Replace(shopFields)+`, "version": 2`)
		a = shopAnswerOf(t, deliver(env, v2, time.Now()), http.StatusOK)
		require.Equal(t, id, a.OrderID)
		require.NotNil(t, a.Changed)
		require.True(t, *a.Changed)
		evs := changeEvents(t, env, id)
		require.Len(t, evs, 1)
		require.Equal(t, "shop", evs[0].Payload["via"])
		require.Equal(t, "Интернет-магазин", evs[0].Actor.Name)
		require.Equal(t, []any{
			map[string]any{"field": "delivery_date", "before": "2026-12-26", "after": "2026-12-29"},
			map[string]any{"field": "total", "before": "69971.00", "after": "109980.00"},
		}, evs[0].Payload["fields"])
		changes := evs[0].Payload["items"].([]any)
		require.Len(t, changes, 2)
		require.Equal(t, "changed", changes[0].(map[string]any)["change"])
		require.Equal(t, map[string]any{"before": float64(1), "after": float64(2)}, changes[0].(map[string]any)["qty"])
		require.Equal(t, "removed", changes[1].(map[string]any)["change"])
		env.Dispatch()
		bl := backlogOf(t, env, id)
		require.Len(t, bl, 1, "the removed item left the backlog")
		for _, b := range bl {
			require.Equal(t, 2, b.Qty)
		}

		// Older: ignored, and said so.
		before = rowCounts(t, env)
		older := shopOrderBody("chg-1", `{"sku": "SHK-KUPE-1600", "qty": 5}`, `, "version": 1`)
		a = shopAnswerOf(t, deliver(env, older, time.Now()), http.StatusOK)
		require.Equal(t, id, a.OrderID)
		require.NotNil(t, a.Stale)
		require.True(t, *a.Stale)
		require.Nil(t, a.Changed)
		// v2 again: a plain replay.
		require.Equal(t, shopAnswer{OrderID: id}, shopAnswerOf(t, deliver(env, v2, time.Now()), http.StatusOK))
		// Different, without version or updated_at: refused, it cannot be told from an older one.
		p := requireProblemType(t, deliver(env, shopOrderBody("chg-1", `{"sku": "SHK-KUPE-1600", "qty": 5}`, ""), time.Now()), http.StatusConflict, "conflict")
		require.Contains(t, p.Detail, "updated_at or version")
		requireOnlyKept(t, before, rowCounts(t, env), 1, 1)
		// A manager changed the order since: the shop's retry of v2 is still a replay, not a stale delivery.
		_, r = patchOrder(t, env, id, map[string]any{"customer": map[string]any{"phone": "+7 900 999-99-99"}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, shopAnswer{OrderID: id}, shopAnswerOf(t, deliver(env, v2, time.Now()), http.StatusOK))
		require.Equal(t, "+7 900 999-99-99", orderView(t, env, id).Order.Customer.Phone, "and it does not undo the manager's change")

		// Launched: a newer delivery changing the item is refused, naming it.
		o := salesOrderOf(t, env, id)
		po := launch(t, env, map[string]any{"items": []int64{o.Items[0].ID}})
		env.Dispatch()
		before = rowCounts(t, env)
		// Built on the order's tsekh version, which has the manager's change.
		built := fmt.Sprintf(`, "tsekh_version": %d`, int64(env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil).Map(t)["version"].(float64)))
		v3 := shopOrderBody("chg-1", `{"sku": "SHK-KUPE-1600", "qty": 3}`, `, "version": 3`+built)
		p = requireProblemType(t, deliver(env, v3, time.Now()), http.StatusConflict, "conflict")
		require.Contains(t, p.Detail, fmt.Sprintf("%d (SHK-KUPE-1600, in_production, production order %d)", o.Items[0].ID, po.ID))
		// The rejection of the unmarked delivery above is still open (the
		// replays of v2 since did not resolve it: they made no change), so
		// it takes this refusal: nothing new is kept, one more refusal.
		requireOnlyKept(t, before, rowCounts(t, env), 0, 1)
		// An unknown SKU in a newer delivery: 422, no order written; the inbox's open rejection takes it.
		requireProblemType(t, deliver(env, shopOrderBody("chg-1", `{"sku": "SHK-KUPE-1600", "qty": 2}, {"sku": "NO-SUCH", "qty": 1}`, `, "version": 4`+built), time.Now()),
			http.StatusUnprocessableEntity, "invalid", "items[1].sku")
		requireOnlyKept(t, before, rowCounts(t, env), 0, 2)
		// Prices alone change on a launched item: production does not use them.
		v5 := shopOrderBody("chg-1", `{"sku": "SHK-KUPE-1600", "qty": 2, "unit_price": 49990.00, "line_total": 99980.00}`,
			strings.NewReplacer("2026-12-26", "2026-12-29", "69971.00", "99980.00").Replace(shopFields)+`, "version": 5`+built)
		a = shopAnswerOf(t, deliver(env, v5, time.Now()), http.StatusOK)
		require.True(t, a.Changed != nil && *a.Changed, "%+v", a)
		r = env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil)
		require.Contains(t, string(r.Body), `"unit_price":49990.00`)
		require.Equal(t, "in_production", salesOrderOf(t, env, id).Items[0].Status)

		// updated_at instead of version.
		t1 := shopOrderBody("chg-2", `{"sku": "TMB-PRIK-450", "qty": 1}`, `, "updated_at": "2026-11-30T10:00:00+03:00"`)
		id2 := shopAnswerOf(t, deliver(env, t1, time.Now()), http.StatusCreated).OrderID
		t2 := shopOrderBody("chg-2", `{"sku": "TMB-PRIK-450", "qty": 1}, {"sku": "SHK-KUPE-1600", "qty": 1}`, `, "updated_at": "2026-11-30T07:00:00.5Z"`)
		a = shopAnswerOf(t, deliver(env, t2, time.Now()), http.StatusOK)
		require.True(t, a.Changed != nil && *a.Changed, "%+v", a)
		require.Len(t, salesOrderOf(t, env, id2).Items, 2)
		require.Equal(t, "added", changeEvents(t, env, id2)[0].Payload["items"].([]any)[0].(map[string]any)["change"])
		t0 := shopOrderBody("chg-2", `{"sku": "TMB-PRIK-450", "qty": 9}`, `, "updated_at": "2026-11-30T07:00:00.499Z"`)
		a = shopAnswerOf(t, deliver(env, t0, time.Now()), http.StatusOK)
		require.True(t, a.Stale != nil && *a.Stale, "%+v", a)

		// The shop's new fields are validated like the rest.
		for _, tc := range []struct{ extra, field string }{
			{`, "total": -5`, "total"}, {`, "total": "12,50"`, "total"}, {`, "currency": "rub"`, "currency"},
			{`, "delivery_date": "2026-02-30"`, "delivery_date"}, {`, "version": 0`, "version"}, {`, "updated_at": "yesterday"`, "updated_at"},
		} {
			requireProblemType(t, deliver(env, shopOrderBody("chg-3", `{"sku": "TMB-PRIK-450", "qty": 1}`, tc.extra), time.Now()),
				http.StatusUnprocessableEntity, "invalid", tc.field)
		}
		requireProblemType(t, deliver(env, shopOrderBody("chg-3", `{"sku": "TMB-PRIK-450", "qty": 1, "unit_price": true}`, ""), time.Now()),
			http.StatusUnprocessableEntity, "invalid", "items[0].unit_price")
	})
}

// A CRM row of an order imported before is exists when it says the same,
// changed when it differs and is newer, conflict when it differs and
// cannot be applied: older, unmarked, or touching an item in production.
func TestChanges_CRMRows(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		manager := env.UserToken("Мария Менеджер", "manager")
		imp := func(rows ...string) sales.ImportReport {
			t.Helper()
			r := env.Do(http.MethodPost, "/api/v1/imports/crm/orders", `{"orders": [`+strings.Join(rows, ",")+`]}`, manager)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var rep sales.ImportReport
			r.JSON(t, &rep)
			return rep
		}
		row := func(id int, qty int, due, marks string) string {
			return fmt.Sprintf(`{"crm_order_id": %d, "customer": {"name": "ООО Мебель-Сити"}, "items": [{"sku": "SHK-KUPE-1600", "qty": %d}, {"sku": "TMB-PRIK-450", "qty": 1}], "due_date": %q%s}`,
				id, qty, due, marks)
		}
		rep := imp(row(501, 1, "2026-12-20", `, "version": 1`), row(502, 1, "2026-12-20", `, "updated_at": "2026-11-30T09:00:00Z"`))
		require.Equal(t, 2, rep.Created)
		first, second := *rep.Rows[0].OrderID, *rep.Rows[1].OrderID
		env.Dispatch()

		rep = imp(
			row(501, 1, "2026-12-20", `, "version": 1`),                         // the same
			row(502, 1, "2026-12-23", `, "updated_at": "2026-11-30T10:00:00Z"`), // a later due date, newer
		)
		require.Equal(t, []string{"exists", "changed"}, []string{rep.Rows[0].Result, rep.Rows[1].Result})
		require.Equal(t, 1, rep.Exists)
		require.Equal(t, 1, rep.Changed)
		require.Equal(t, second, *rep.Rows[1].OrderID)
		evs := changeEvents(t, env, second)
		require.Len(t, evs, 1)
		require.Equal(t, "crm", evs[0].Payload["via"])
		require.Equal(t, "Мария Менеджер", evs[0].Actor.Name)
		require.Equal(t, []any{map[string]any{"field": "due_date", "before": "2026-12-20", "after": "2026-12-23"}}, evs[0].Payload["fields"])
		env.Dispatch()
		for _, b := range backlogOf(t, env, second) {
			require.Equal(t, "2026-12-23", *b.DueDate)
		}

		o := salesOrderOf(t, env, first)
		po := launch(t, env, map[string]any{"items": []int64{o.Items[0].ID}})
		env.Dispatch()
		before := rowCounts(t, env)
		rep = imp(
			row(502, 1, "2026-12-21", `, "updated_at": "2026-11-30T09:30:00Z"`), // older than the row applied
			row(502, 1, "2026-12-21", ""),                                       // unmarked
			row(501, 4, "2026-12-20", `, "version": 2`),                         // newer, but its item is in production
		)
		for i, r := range rep.Rows {
			require.Equal(t, "conflict", r.Result, "row %d: %+v", i, r)
			require.NotNil(t, r.OrderID, "row %d names its order", i)
		}
		require.Equal(t, 3, rep.Conflict)
		require.Contains(t, rep.Rows[0].Detail, "not newer")
		require.Contains(t, rep.Rows[0].Detail, "2026-11-30T10:00:00Z")
		require.Contains(t, rep.Rows[1].Detail, "updated_at or version")
		require.Contains(t, rep.Rows[2].Detail, fmt.Sprintf("%d (SHK-KUPE-1600, in_production, production order %d)", o.Items[0].ID, po.ID))
		// Nothing of a conflict is written but the intake inbox: the unmarked
		// row and the one in production are kept (an older row is not: it is done with).
		requireOnlyKept(t, before, rowCounts(t, env), 2, 2)
	})
}

// Replays of the shop's webhook and CRM rows that exist use up no order
// number: the next new order takes the next one.
func TestOrders_ReplaysKeepOrderNumbersContiguous(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		a := shopAnswerOf(t, deliver(env, shopBody("seq-1"), time.Now()), http.StatusCreated).OrderID
		for range 3 {
			shopAnswerOf(t, deliver(env, shopBody("seq-1"), time.Now()), http.StatusOK)
		}
		row := `{"orders": [{"crm_order_id": 777, "customer": {"name": "Пётр"}, "items": [{"sku": "TMB-PRIK-450", "qty": 1}]}]}`
		var rep sales.ImportReport
		env.Admin(http.MethodPost, "/api/v1/imports/crm/orders", json.RawMessage(row)).JSON(t, &rep)
		require.Equal(t, sales.ImportCreated, rep.Rows[0].Result)
		b := *rep.Rows[0].OrderID
		for range 3 {
			env.Admin(http.MethodPost, "/api/v1/imports/crm/orders", json.RawMessage(row)).JSON(t, &rep)
			require.Equal(t, sales.ImportExists, rep.Rows[0].Result)
		}
		c := shopAnswerOf(t, deliver(env, shopBody("seq-2"), time.Now()), http.StatusCreated).OrderID
		require.Equal(t, []int64{a, a + 1, a + 2}, []int64{a, b, c}, "order numbers run on")
	})
}

// The planner launches an item while a manager changes its quantity and
// the dispatcher runs: whichever wins, no production order is left built
// on a quantity the sales order no longer has without being flagged for
// the planner.
func TestChanges_RacesLaunch(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		const rounds = 20
		outcomes := map[string]int{}
		for round := range rounds {
			orderID, ids := receive(t, env, line{"TMB-PRIK-450", 1})
			launchStatus, patchStatus := raceLaunch(env, round, ids, func() int {
				return env.Admin(http.MethodPatch, fmt.Sprintf("/api/v1/orders/%d", orderID),
					map[string]any{"items": []map[string]any{{"id": ids[0], "qty": 2}}}).Status
			})
			require.Contains(t, []int{http.StatusCreated, http.StatusConflict, http.StatusUnprocessableEntity}, launchStatus, "round %d", round)
			require.Contains(t, []int{http.StatusOK, http.StatusConflict}, patchStatus, "round %d", round)
			outcomes[fmt.Sprintf("launch %d, change %d", launchStatus, patchStatus)]++
		}
		t.Logf("outcomes: %v", outcomes)

		qty := map[int64]int{}
		var l struct {
			Items []struct {
				Items []struct {
					ID  int64
					Qty int
				}
			}
		}
		r := env.Admin(http.MethodGet, "/api/v1/orders?limit=500", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &l)
		for _, o := range l.Items {
			for _, it := range o.Items {
				qty[it.ID] = it.Qty
			}
		}
		var pl struct{ Items []attentionOrder }
		env.Admin(http.MethodGet, "/api/v1/production-orders?limit=500&status=launched", nil).JSON(t, &pl)
		stale := 0
		for _, p := range pl.Items {
			for _, it := range p.Items {
				if it.Qty != qty[it.ItemID] {
					stale++
					require.True(t, p.NeedsAttention, "production order %d makes %d of item %d, ordered %d, and nobody is told", p.ID, it.Qty, it.ItemID, qty[it.ItemID])
					require.Contains(t, p.AttentionReason, fmt.Sprintf("item %d (TMB-PRIK-450) changed quantity %d → %d", it.ItemID, it.Qty, qty[it.ItemID]))
				}
			}
		}
		t.Logf("production orders built on a quantity changed since, flagged: %d", stale)
	})
}

// Deliveries of one order at the same instant take turns: one order, and
// no order number spent by the others.
func TestOrders_ConcurrentReplaysKeepOrderNumbersContiguous(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		const n = 20
		body, at := shopBody("burst-seq"), time.Now()
		ids := make([]int64, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := deliver(env, body, at)
				if r.Status == http.StatusOK || r.Status == http.StatusCreated {
					ids[i] = orderIDOf(t, r)
				}
			}()
		}
		close(start)
		wg.Wait()
		for _, id := range ids {
			require.Equal(t, ids[0], id)
		}
		next := shopAnswerOf(t, deliver(env, shopBody("burst-seq-next"), time.Now()), http.StatusCreated).OrderID
		require.Equal(t, ids[0]+1, next, "the next order takes the next number")
	})
}

func orderView(t *testing.T, env *apptest.Env, id int64) changedOrder {
	t.Helper()
	r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var out changedOrder
	r.JSON(t, &out.Order)
	return out
}
