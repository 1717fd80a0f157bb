package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/sales"
)

// backlogOptions are the options of the order's backlog rows, by item.
func backlogOptions(t *testing.T, env *apptest.Env, orderID int64) map[int64]map[string]string {
	t.Helper()
	var l struct {
		Items []struct {
			ItemID  int64 `json:"item_id"`
			OrderID int64 `json:"order_id"`
			Options map[string]string
		}
	}
	r := env.Admin(http.MethodGet, "/api/v1/plan/backlog?limit=500", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &l)
	out := map[int64]map[string]string{}
	for _, b := range l.Items {
		if b.OrderID == orderID {
			out[b.ItemID] = b.Options
		}
	}
	return out
}

// itemOptionsOf are the options of the order's items, by item.
func itemOptionsOf(t *testing.T, env *apptest.Env, orderID int64) map[int64]map[string]string {
	t.Helper()
	var o struct {
		Items []struct {
			ID      int64
			Options map[string]string
		}
	}
	r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", orderID), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &o)
	out := map[int64]map[string]string{}
	for _, it := range o.Items {
		out[it.ID] = it.Options
	}
	return out
}

// PATCH changes an item's decors: validated as at intake, compared by the
// boards' codes, journalled before and after; the backlog follows, and the
// saw's list of the next launch cuts the new decor. An item added by PATCH
// takes its options too; an item in production cannot change them.
func TestChanges_PatchOptions(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		id, items := receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Анна"},
			"items": []map[string]any{{"sku": "TMB-PRIK-450", "qty": 1, "options": map[string]string{"корпус": "Дуб сонома"}}}})
		sonoma := map[string]string{"корпус": "LDSP16-SONOMA"}
		require.Equal(t, sonoma, itemOptionsOf(t, env, id)[items[0]])

		// A decor the slot does not allow, or a slot the product does not have: 422, nothing changed.
		before := rowCounts(t, env)
		for _, c := range []struct {
			options map[string]string
			field   string
		}{
			{map[string]string{"корпус": "Венге"}, "items[0].options.корпус"},
			{map[string]string{"крышка": "Белый"}, "items[0].options.крышка"},
			{map[string]string{"задняя стенка": "LDSP16-WHITE"}, "items[0].options.задняя стенка"},
		} {
			_, r := patchOrder(t, env, id, map[string]any{"note": "другой", "items": []map[string]any{{"id": items[0], "qty": 2, "options": c.options}}})
			p := requireProblem(t, r, http.StatusUnprocessableEntity, c.field)
			require.Contains(t, p.Errors[0].Message, "TMB-PRIK-450")
		}
		require.Equal(t, before, rowCounts(t, env))
		require.Equal(t, sonoma, itemOptionsOf(t, env, id)[items[0]])
		require.Equal(t, 1, orderView(t, env, id).Order.Items[0].Qty)
		require.Empty(t, changeEvents(t, env, id))

		// The same board by its code: nothing differs.
		out, r := patchOrder(t, env, id, map[string]any{"items": []map[string]any{{"id": items[0], "options": map[string]string{"Корпус": "ldsp16-sonoma"}}}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.False(t, out.Changed)
		require.Equal(t, before, rowCounts(t, env))

		// Another decor of the slot: changed, journalled, applied; an item added with its decor.
		out, r = patchOrder(t, env, id, map[string]any{"items": []map[string]any{
			{"id": items[0], "options": map[string]string{"корпус": "Ясень шимо"}},
			{"sku": "TMB-PRIK-450", "qty": 1, "options": map[string]string{"фасад": "LDSP16-WHITE"}},
		}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.True(t, out.Changed)
		require.Len(t, out.Order.Items, 2)
		added := out.Order.Items[1].ID
		shimo := map[string]string{"корпус": "LDSP16-SHIMO"}
		white := map[string]string{"фасад": "LDSP16-WHITE"}
		opts := itemOptionsOf(t, env, id)
		require.Equal(t, shimo, opts[items[0]])
		require.Equal(t, white, opts[added], "an added item takes its options")
		evs := changeEvents(t, env, id)
		require.Len(t, evs, 1)
		require.Equal(t, []any{
			map[string]any{"item_id": float64(items[0]), "sku": "TMB-PRIK-450", "change": "changed",
				"fields": []any{map[string]any{"field": "options", "before": `{"корпус":"LDSP16-SONOMA"}`, "after": `{"корпус":"LDSP16-SHIMO"}`}}},
			map[string]any{"item_id": float64(added), "sku": "TMB-PRIK-450", "change": "added", "qty": map[string]any{"before": float64(0), "after": float64(1)},
				"fields": []any{map[string]any{"field": "options", "before": "", "after": `{"фасад":"LDSP16-WHITE"}`}}},
		}, evs[0].Payload["items"])

		// The backlog follows, and the launch cuts the new decor.
		env.Dispatch()
		bl := backlogOptions(t, env, id)
		require.Equal(t, shimo, bl[items[0]])
		require.Equal(t, white, bl[added])
		po := launch(t, env, map[string]any{"items": []int64{items[0]}})
		l := cuttingListOf(t, env, po.ID)
		boards := map[string]int{}
		for _, m := range l.Materials {
			boards[m.Board] = m.Qty
		}
		require.Equal(t, map[string]int{"LDSP16-SHIMO": 4, "LDSP16-SONOMA": 1, "HDF3-WHITE": 1}, boards,
			"the body in the new ash, the front in the slot's default sonoma")

		// Back to the defaults ({}), once the item is in production: refused, naming it.
		env.Dispatch()
		_, r = patchOrder(t, env, id, map[string]any{"items": []map[string]any{{"id": items[0], "options": map[string]string{}}}})
		p := requireProblem(t, r, http.StatusConflict)
		require.Contains(t, p.Detail, fmt.Sprintf("%d (TMB-PRIK-450, in_production", items[0]))
		// The added item, still new, goes back to its defaults.
		out, r = patchOrder(t, env, id, map[string]any{"items": []map[string]any{{"id": added, "options": map[string]string{}}}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.True(t, out.Changed)
		require.Empty(t, itemOptionsOf(t, env, id)[added])
		env.Dispatch()
		require.Empty(t, backlogOptions(t, env, id)[added])
	})
}

// A shop re-delivery that changes only an item's decors is a change like
// any other: applied, journalled with the options before and after, and
// followed by the backlog; the same decors spelt otherwise are not.
func TestChanges_ShopRedeliveryChangesOptions(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		body := func(options string, version int) string {
			return shopOrderBody("opt-chg", `{"sku": "TMB-PRIK-450", "qty": 1, "options": `+options+`}`, fmt.Sprintf(`, "version": %d`, version))
		}
		id := shopAnswerOf(t, deliver(env, body(`{"корпус": "Дуб сонома"}`, 1), time.Now()), http.StatusCreated).OrderID
		env.Dispatch()
		item := salesOrderOf(t, env, id).Items[0].ID

		// The same boards by their codes, newer: nothing to change.
		before := rowCounts(t, env)
		a := shopAnswerOf(t, deliver(env, body(`{"корпус": "LDSP16-SONOMA"}`, 2), time.Now()), http.StatusOK)
		require.Equal(t, shopAnswer{OrderID: id}, a)
		require.Equal(t, before, rowCounts(t, env))

		// Another decor, newer: changed.
		a = shopAnswerOf(t, deliver(env, body(`{"корпус": "Ясень шимо"}`, 3), time.Now()), http.StatusOK)
		require.True(t, a.Changed != nil && *a.Changed, "%+v", a)
		require.Equal(t, map[string]string{"корпус": "LDSP16-SHIMO"}, itemOptionsOf(t, env, id)[item])
		evs := changeEvents(t, env, id)
		require.Len(t, evs, 1)
		require.Equal(t, "shop", evs[0].Payload["via"])
		require.Empty(t, evs[0].Payload["fields"])
		require.Equal(t, []any{map[string]any{"item_id": float64(item), "sku": "TMB-PRIK-450", "change": "changed",
			"fields": []any{map[string]any{"field": "options", "before": `{"корпус":"LDSP16-SONOMA"}`, "after": `{"корпус":"LDSP16-SHIMO"}`}}}},
			evs[0].Payload["items"])
		env.Dispatch()
		require.Equal(t, map[string]string{"корпус": "LDSP16-SHIMO"}, backlogOptions(t, env, id)[item])

		// An older delivery with the old decor: stale, ignored.
		a = shopAnswerOf(t, deliver(env, body(`{"корпус": "Дуб сонома"}`, 2), time.Now()), http.StatusOK)
		require.True(t, a.Stale != nil && *a.Stale, "%+v", a)
		require.Equal(t, map[string]string{"корпус": "LDSP16-SHIMO"}, itemOptionsOf(t, env, id)[item])

		// Again: a replay. A decor the slot does not allow: 422 naming it, the order unchanged.
		require.Equal(t, shopAnswer{OrderID: id}, shopAnswerOf(t, deliver(env, body(`{"корпус": "Ясень шимо"}`, 3), time.Now()), http.StatusOK))
		requireProblemType(t, deliver(env, body(`{"корпус": "Венге"}`, 4), time.Now()), http.StatusUnprocessableEntity, "invalid", "items[0].options.корпус")
		require.Equal(t, map[string]string{"корпус": "LDSP16-SHIMO"}, itemOptionsOf(t, env, id)[item])

		// Without options, newer: back to the slots' defaults.
		a = shopAnswerOf(t, deliver(env, shopOrderBody("opt-chg", `{"sku": "TMB-PRIK-450", "qty": 1}`, `, "version": 5`), time.Now()), http.StatusOK)
		require.True(t, a.Changed != nil && *a.Changed, "%+v", a)
		require.Empty(t, itemOptionsOf(t, env, id)[item])
		require.Len(t, changeEvents(t, env, id), 2)
	})
}

// A CRM row that differs only in an item's decor is a change; the same
// decor by its code is not.
func TestChanges_CRMRowChangesOptions(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		imp := func(options string, version int) sales.ImportReport {
			t.Helper()
			row := fmt.Sprintf(`{"crm_order_id": 601, "customer": {"name": "ООО Мебель-Сити"}, "items": [{"sku": "TMB-PRIK-450", "qty": 1, "options": %s}], "version": %d}`,
				options, version)
			r := env.Admin(http.MethodPost, "/api/v1/imports/crm/orders", `{"orders": [`+row+`]}`)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var rep sales.ImportReport
			r.JSON(t, &rep)
			return rep
		}
		rep := imp(`{"корпус": "Дуб сонома"}`, 1)
		require.Equal(t, 1, rep.Created)
		id := *rep.Rows[0].OrderID
		item := salesOrderOf(t, env, id).Items[0].ID
		require.Equal(t, "exists", imp(`{"корпус": "LDSP16-SONOMA"}`, 2).Rows[0].Result)
		require.Equal(t, "changed", imp(`{"корпус": "Ясень шимо"}`, 3).Rows[0].Result)
		require.Equal(t, map[string]string{"корпус": "LDSP16-SHIMO"}, itemOptionsOf(t, env, id)[item])
		evs := changeEvents(t, env, id)
		require.Len(t, evs, 1)
		require.Equal(t, "crm", evs[0].Payload["via"])
		require.Equal(t, []any{map[string]any{"field": "options", "before": `{"корпус":"LDSP16-SONOMA"}`, "after": `{"корпус":"LDSP16-SHIMO"}`}},
			evs[0].Payload["items"].([]any)[0].(map[string]any)["fields"])
		require.Equal(t, "exists", imp(`{"корпус": "Ясень шимо"}`, 3).Rows[0].Result)
	})
}
