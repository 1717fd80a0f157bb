package api_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/config"
)

type historyEvent struct {
	ID            int64
	Type          string
	Payload       json.RawMessage
	AggregateType string `json:"aggregate_type"`
	AggregateID   int64  `json:"aggregate_id"`
	Deliveries    []struct {
		Subscriber string
		Status     string
	}
}

// journalIDsAbout returns the ids of every event the journal has about the
// object, oldest first, read through the journal's own filters.
func journalIDsAbout(t *testing.T, env *apptest.Env, aggregateType string, id int64) []int64 {
	t.Helper()
	var ids []int64
	for _, e := range journalAbout(t, env, aggregateType, id) {
		ids = append(ids, e.ID)
	}
	return ids
}

// journalAbout returns every event the journal has about the object,
// oldest first, read through the journal's own filters.
func journalAbout(t *testing.T, env *apptest.Env, aggregateType string, id int64) []historyEvent {
	t.Helper()
	var evs []historyEvent
	cursor := ""
	for {
		r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?aggregate_type=%s&aggregate_id=%d&limit=500&cursor=%s", aggregateType, id, cursor), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var l struct {
			Items      []historyEvent
			NextCursor string `json:"next_cursor"`
		}
		r.JSON(t, &l)
		evs = append(evs, l.Items...)
		if l.NextCursor == "" {
			break
		}
		cursor = l.NextCursor
	}
	slices.SortFunc(evs, func(a, b historyEvent) int { return int(a.ID - b.ID) })
	return evs
}

// An order that was changed, launched on a production order it shares with
// another customer's order, made and shipped: its history is every event
// about it and about that production order, oldest first, and nothing of the
// other customer's order; page by page it is the same list, and as CSV too.
func TestOrders_History(t *testing.T) {
	t.Parallel()
	shop := newShopListener(t)
	eachWith(t, func(c *config.Config) { c.ShopWebhookSecret, c.ShopCallbackURL = shopSecret, shop.URL }, func(t *testing.T, env *apptest.Env) {
		shopID := "history-" + string(env.Dialect)
		r := deliver(env, shopBody(shopID, `{"sku": "TMB-PRIK-450", "qty": 1}`), time.Now())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		mine := orderIDOf(t, r)
		other, otherItems := receive(t, env, line{"TMB-PRIK-450", 1})
		env.Dispatch()

		var o shippedOrder
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", mine), nil).JSON(t, &o)
		item := o.Items[0].ID
		r = env.Admin(http.MethodPatch, fmt.Sprintf("/api/v1/orders/%d", mine), map[string]any{"note": "позвонить за час"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

		po := launch(t, env, map[string]any{"items": []int64{item, otherItems[0]}})
		env.Dispatch()
		finish(t, env, po)
		env.Dispatch()
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/shipments", mine),
			map[string]any{"carrier": "Деловые Линии", "tracking": "DL-7", "items": []map[string]any{{"item_id": item, "qty": 1}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		env.Dispatch()

		path := fmt.Sprintf("/api/v1/orders/%d/history", mine)
		r = env.Admin(http.MethodGet, path+"?limit=500", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var h struct {
			Items      []historyEvent
			NextCursor string `json:"next_cursor"`
		}
		r.JSON(t, &h)
		require.Empty(t, h.NextCursor)

		// Exactly the journal's events about the order and those of the
		// production order that concern its item: the production order's
		// own, and its item's operations and units, not the other
		// customer's, though they share the production order. Oldest first.
		want := journalIDsAbout(t, env, "sales_orders", mine)
		var othersOnly []int64
		for _, e := range journalAbout(t, env, "plan_prod_orders", po.ID) {
			var p struct {
				ItemID *int64  `json:"item_id"`
				Items  []int64 `json:"items"`
			}
			require.NoError(t, json.Unmarshal(e.Payload, &p), "%s", e.Payload)
			switch {
			case p.ItemID != nil && *p.ItemID != item, len(p.Items) > 0 && !slices.Contains(p.Items, item):
				othersOnly = append(othersOnly, e.ID)
			default:
				want = append(want, e.ID)
			}
		}
		slices.Sort(want)
		require.NotEmpty(t, othersOnly, "the other customer's item has operations of its own")
		var got []int64
		var types []string
		for _, e := range h.Items {
			got = append(got, e.ID)
			types = append(types, e.Type)
			about := e.AggregateType == "sales_orders" && e.AggregateID == mine || e.AggregateType == "plan_prod_orders" && e.AggregateID == po.ID
			require.True(t, about, "event %d (%s) is about %s #%d", e.ID, e.Type, e.AggregateType, e.AggregateID)
		}
		require.Equal(t, want, got)
		for _, typ := range []string{"order.received", "order.changed", "prod_order.launched", "prod_order.started", "prod_order.completed", "order.status_changed", "order.shipped"} {
			require.Contains(t, types, typ)
		}
		require.Less(t, slices.Index(types, "order.received"), slices.Index(types, "prod_order.launched"))
		require.Less(t, slices.Index(types, "prod_order.completed"), slices.Index(types, "order.shipped"))
		// The shop callbacks are among the deliveries.
		var callbacks int
		for _, e := range h.Items {
			for _, d := range e.Deliveries {
				if d.Subscriber == "sales.shop-callback" {
					callbacks++
					require.Equal(t, "processed", d.Status)
				}
			}
		}
		require.Positive(t, callbacks)
		// The other customer's order is not in it, though it shares the
		// production order.
		otherIDs := journalIDsAbout(t, env, "sales_orders", other)
		require.NotEmpty(t, otherIDs)
		for _, id := range append(otherIDs, othersOnly...) {
			require.NotContains(t, got, id)
		}
		// Filtered by kind.
		kinds := map[string]string{"order": "order.", "production": "prod_order.", "floor": "operation."}
		for kind, prefix := range kinds {
			var k struct{ Items []historyEvent }
			env.Admin(http.MethodGet, path+"?limit=500&kind="+kind, nil).JSON(t, &k)
			require.NotEmpty(t, k.Items, kind)
			for _, e := range k.Items {
				require.Contains(t, got, e.ID)
				if kind == "floor" {
					require.True(t, strings.HasPrefix(e.Type, "operation.") || strings.HasPrefix(e.Type, "unit.") || strings.HasPrefix(e.Type, "part."), e.Type)
					continue
				}
				require.True(t, strings.HasPrefix(e.Type, prefix), "%s: %s", kind, e.Type)
			}
		}
		requireProblem(t, env.Admin(http.MethodGet, path+"?kind=orders", nil), http.StatusUnprocessableEntity, "kind")

		// Page by page, the same list.
		var paged []int64
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, len(got)+1)
			r = env.Admin(http.MethodGet, path+"?limit=3&cursor="+cursor, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var p struct {
				Items      []historyEvent
				NextCursor string `json:"next_cursor"`
			}
			r.JSON(t, &p)
			require.LessOrEqual(t, len(p.Items), 3)
			for _, e := range p.Items {
				paged = append(paged, e.ID)
			}
			if p.NextCursor == "" {
				break
			}
			cursor = p.NextCursor
		}
		require.Equal(t, got, paged)

		// As CSV: the whole history, the journal screen's columns.
		r = env.Do(http.MethodGet, path+"?limit=2", nil, apptest.AdminToken, "Accept", "text/csv")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		rd := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(r.Body), "\uFEFF")))
		rd.Comma = ';' // the office's layout, the default
		rows, err := rd.ReadAll()
		require.NoError(t, err)
		require.Equal(t, []string{"№", "Событие", "Объект", "Данные", "Создано", "Обработано", "Кто"}, rows[0])
		require.Len(t, rows, len(got)+1)
		for i, row := range rows[1:] {
			require.Equal(t, fmt.Sprint(got[i]), row[0])
			require.Equal(t, types[i], row[1])
		}

		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/orders/999999/history", nil), http.StatusNotFound)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/orders/x/history", nil), http.StatusUnprocessableEntity, "id")
		requireProblem(t, env.Admin(http.MethodGet, path+"?cursor=zz", nil), http.StatusUnprocessableEntity, "cursor")
	})
}
