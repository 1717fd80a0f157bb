package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/sales"
)

// finish starts and completes every operation of the production order.
func finish(t *testing.T, env *apptest.Env, o prodOrder) {
	t.Helper()
	for _, op := range o.Operations {
		for _, action := range []string{"start", "complete"} {
			r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/operations/%d/%s", o.ID, op.ID, action), nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
	}
}

type shippedOrder struct {
	ID     int64
	Status string
	Items  []struct {
		ID         int64
		Status     string
		Qty        int
		ShippedQty int `json:"shipped_qty"`
	}
	Shipments []struct {
		ID        int64
		Carrier   string
		Tracking  string
		ShippedAt time.Time `json:"shipped_at"`
		Items     []struct {
			ItemID int64 `json:"item_id"`
			SKU    string
			Qty    int
		}
	}
}

// Made items ship, partially or whole, never more than was made or ordered;
// the order goes partially_shipped, then shipped, and the shop hears of each
// shipment with its carrier and tracking.
func TestShipments(t *testing.T) {
	t.Parallel()
	shop := newShopListener(t)
	eachWith(t, func(c *config.Config) { c.ShopWebhookSecret, c.ShopCallbackURL = shopSecret, shop.URL }, func(t *testing.T, env *apptest.Env) {
		shopID := "ship-" + string(env.Dialect)
		r := deliver(env, shopBody(shopID, `{"sku": "DIV-CHESTER-3", "qty": 2}`, `{"sku": "TMB-PRIK-450", "qty": 1}`), time.Now())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		id := orderIDOf(t, r)
		env.Dispatch()
		read := func() shippedOrder {
			t.Helper()
			env.Dispatch()
			var o shippedOrder
			env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil).JSON(t, &o)
			return o
		}
		o := read()
		sofa, tumb := o.Items[0].ID, o.Items[1].ID
		path := fmt.Sprintf("/api/v1/orders/%d/shipments", id)
		ship := func(body map[string]any) apptest.Response {
			t.Helper()
			return env.Admin(http.MethodPost, path, body)
		}
		ln := func(item int64, qty int) map[string]any { return map[string]any{"item_id": item, "qty": qty} }
		lines := func(ls ...map[string]any) map[string]any { return map[string]any{"items": ls} }

		// Nothing is made yet: a received order cannot ship.
		requireProblem(t, ship(lines(ln(sofa, 1))), http.StatusConflict)

		finish(t, env, launch(t, env, map[string]any{"items": []int64{sofa}}))
		tumbOrder := launch(t, env, map[string]any{"items": []int64{tumb}})
		require.Equal(t, "in_production", read().Status)

		_, other := receive(t, env, line{"TMB-PRIK-450", 1})
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{lines(ln(tumb, 1)), "items[0].item_id"},                  // not made yet
			{lines(ln(sofa, 3)), "items[0].qty"},                      // more than ordered
			{lines(ln(sofa, 1), ln(other[0], 1)), "items[1].item_id"}, // not of this order
			{lines(ln(sofa, 1), ln(sofa, 1)), "items[1].item_id"},     // repeated
			{lines(ln(sofa, 0)), "items[0].qty"},
			{lines(), "items"},
			{map[string]any{"items": []any{ln(sofa, 1)}, "carrier": "ПЭК\u0007"}, "carrier"},
			{map[string]any{"items": []any{ln(sofa, 1)}, "shipped_at": "2026-12-18"}, "shipped_at"},
		} {
			r := ship(c.body)
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%v: %s", c.body, r.Body)
			require.Contains(t, string(r.Body), `"field":"`+c.field+`"`, "%v", c.body)
		}
		require.Empty(t, read().Shipments, "nothing refused was stored")

		r = ship(map[string]any{"items": []any{ln(sofa, 1)}, "carrier": "Деловые Линии", "tracking": "DL-0042", "shipped_at": "2026-12-18T09:30:00Z"})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		o = read()
		require.Equal(t, "partially_shipped", o.Status)
		require.Len(t, o.Shipments, 1)
		require.Equal(t, "Деловые Линии", o.Shipments[0].Carrier)
		require.Equal(t, "DL-0042", o.Shipments[0].Tracking)
		require.True(t, o.Shipments[0].ShippedAt.Equal(time.Date(2026, 12, 18, 9, 30, 0, 0, time.UTC)), "%v", o.Shipments[0].ShippedAt)
		require.Equal(t, sofa, o.Shipments[0].Items[0].ItemID)
		require.Equal(t, "DIV-CHESTER-3", o.Shipments[0].Items[0].SKU)
		require.Equal(t, 1, o.Items[0].ShippedQty)
		require.Equal(t, "done", o.Items[0].Status)

		// One sofa is left of two: not two more.
		r = ship(lines(ln(sofa, 2)))
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		require.Contains(t, string(r.Body), `"field":"items[0].qty"`)

		// Production finishing the rest makes the order ready again: what
		// is left of it can ship.
		finish(t, env, tumbOrder)
		require.Equal(t, "ready", read().Status)

		r = ship(map[string]any{"items": []any{ln(sofa, 1), ln(tumb, 1)}, "carrier": "ПЭК", "tracking": "PEK-7"})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		o = read()
		require.Equal(t, "shipped", o.Status)
		require.Len(t, o.Shipments, 2)
		for _, it := range o.Items {
			require.Equal(t, "shipped", it.Status)
			require.Equal(t, it.Qty, it.ShippedQty)
		}
		requireProblem(t, ship(lines(ln(sofa, 1))), http.StatusConflict)

		shipped := eventsOfOrder(t, env, "order.shipped", id)
		require.Len(t, shipped, 2)
		require.Equal(t, "partially_shipped", shipped[0].Payload["status"])
		require.Equal(t, "Деловые Линии", shipped[0].Payload["shipment"].(map[string]any)["carrier"])
		require.Equal(t, "shipped", shipped[1].Payload["status"])
		var statuses []any
		for _, e := range eventsOfOrder(t, env, "order.status_changed", id) {
			statuses = append(statuses, e.Payload["status"])
		}
		require.Equal(t, []any{"partially_shipped", "ready", "shipped"}, statuses[len(statuses)-3:])

		// The shop heard of both shipments, with carrier and tracking.
		var mine []sales.ShopCallbackBody
		for _, b := range shop.heardOf(shopID) {
			if b.Type == "order.shipped" {
				mine = append(mine, b)
			}
		}
		require.Len(t, mine, 2)
		require.NotNil(t, mine[0].Shipment)
		require.Equal(t, "Деловые Линии", mine[0].Shipment.Carrier)
		require.Equal(t, "DL-0042", mine[0].Shipment.Tracking)
		require.Equal(t, "partially_shipped", mine[0].Status)
		require.Equal(t, "PEK-7", mine[1].Shipment.Tracking)
		require.Len(t, mine[1].Shipment.Items, 2)
		require.Equal(t, "shipped", mine[1].Status)
	})
}

// eventsOfOrder returns the journal's events of the type about the sales order, oldest first.
func eventsOfOrder(t *testing.T, env *apptest.Env, typ string, orderID int64) []journalEvent {
	t.Helper()
	r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?type=%s&aggregate_type=sales_orders&aggregate_id=%d", typ, orderID), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var l struct{ Items []journalEvent }
	r.JSON(t, &l)
	for i, j := 0, len(l.Items)-1; i < j; i, j = i+1, j-1 {
		l.Items[i], l.Items[j] = l.Items[j], l.Items[i]
	}
	return l.Items
}
