package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// Shipped stays shipped: one item of an order is made and shipped, the
// other written off by closing its production order short; the shipped
// item does not go back to done, the order ends shipped, and shipping it
// again is refused as shipped whole already.
func TestShipments_ShippedStaysShippedThroughAClose(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		id, items := receive(t, env, line{"TMB-PRIK-450", 1}, line{"TMB-PRIK-450", 1})
		po := launch(t, env, map[string]any{"items": items})
		report := func(seq, qty int) {
			t.Helper()
			r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", po.ID),
				map[string]any{"seq": seq, "qty": qty, "unit": 1, "item_id": items[0]})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
		for seq := 1; seq <= 3; seq++ {
			report(seq, 6)
		}
		report(4, 1)
		report(5, 1)
		env.Dispatch()
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/shipments", id), map[string]any{"carrier": "ПЭК",
			"items": []map[string]any{{"item_id": items[0], "qty": 1}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var o shippedOrder
		r.JSON(t, &o)
		require.Equal(t, "partially_shipped", o.Status)

		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/close", po.ID),
			map[string]any{"reason": "вторую тумбу заказчик не ждёт", "rest": "write_off"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Dispatch()
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil).JSON(t, &o)
		status := map[int64]string{}
		for _, it := range o.Items {
			status[it.ID] = it.Status
		}
		require.Equal(t, "shipped", status[items[0]], "the shipped item stays shipped")
		require.Equal(t, "written_off", status[items[1]])
		require.Equal(t, "shipped", o.Status, "everything wanted shipped: the order is shipped, not ready")
		p := requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/shipments", id), map[string]any{"carrier": "ПЭК",
			"items": []map[string]any{{"item_id": items[0], "qty": 1}}}), http.StatusConflict)
		require.Contains(t, p.Detail, "shipped")
	})
}
