package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/sales"
)

// The CRM names its orders with text: "CRM-5001" is an id (leading zeros
// kept, on both databases), up to 64 characters; a row names every problem
// it has at once, values of the wrong kind beside the rest; rows count
// from 1.
func TestOrders_ImportCRMTextIDs(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		long := strings.Repeat("Я", 65)
		batch := `{"orders": [
			{"crm_order_id": "CRM-5001", "customer": {"name": "Анна"}, "items": [{"sku": "TMB-PRIK-450", "qty": 1}]},
			{"crm_order_id": "005002", "customer": {"name": "Борис"}, "items": [{"sku": "TMB-PRIK-450", "qty": 1}]},
			{"crm_order_id": "CRM-5003", "customer": {"name": ""}, "due_date": 20261220,
			 "items": [{"sku": "NO-SUCH", "qty": "two"}, {"sku": "TMB-PRIK-450", "qty": 0, "note": 5}]},
			{"crm_order_id": "` + long + `", "customer": {"name": "Вера"}, "items": [{"sku": "TMB-PRIK-450", "qty": 1}]},
			{"crm_order_id": {"id": 1}, "customer": {"name": "Глеб"}, "items": [{"sku": "TMB-PRIK-450", "qty": "1"}]}
		]}`
		r := env.Admin(http.MethodPost, "/api/v1/imports/crm/orders", batch)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var rep sales.ImportReport
		r.JSON(t, &rep)
		require.Len(t, rep.Rows, 5)
		fields := func(i int) []string {
			var out []string
			for _, f := range rep.Rows[i].Errors {
				out = append(out, f.Field)
			}
			return out
		}
		for i, row := range rep.Rows {
			require.Equal(t, i+1, row.Row)
		}
		require.Equal(t, []string{"created", "created", "refused", "refused", "refused"},
			[]string{rep.Rows[0].Result, rep.Rows[1].Result, rep.Rows[2].Result, rep.Rows[3].Result, rep.Rows[4].Result})
		require.Equal(t, "CRM-5001", *rep.Rows[0].CRMOrderID)
		require.Equal(t, "005002", *rep.Rows[1].CRMOrderID)
		o := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", *rep.Rows[1].OrderID), nil).Map(t)
		require.Equal(t, "005002", o["crm_order_id"], "kept as text, leading zeros and all")

		// Every problem of the row at once: three values of the wrong kind,
		// the name, a quantity out of bounds and the unknown SKU.
		require.ElementsMatch(t, []string{"due_date", "items[0].qty", "items[1].note", "customer.name", "items[1].qty", "items[0].sku"}, fields(2))
		require.Equal(t, "CRM-5003", *rep.Rows[2].CRMOrderID)
		require.Equal(t, []string{"crm_order_id"}, fields(3))
		require.Nil(t, rep.Rows[3].CRMOrderID, "an id too long is not the row's id")
		require.ElementsMatch(t, []string{"crm_order_id", "items[0].qty"}, fields(4))

		// The same id again is the same order: exists.
		again := env.Admin(http.MethodPost, "/api/v1/imports/crm/orders",
			`{"orders": [{"crm_order_id": "CRM-5001", "customer": {"name": "Анна"}, "items": [{"sku": "TMB-PRIK-450", "qty": 1}]}]}`)
		again.JSON(t, &rep)
		require.Equal(t, sales.ImportExists, rep.Rows[0].Result)
		require.EqualValues(t, 2, env.Count("sales_orders"))
		kept := rejectionsOf(t, env, "?source=crm")
		require.Len(t, kept, 1, "the row with a valid id is kept in the inbox")
		require.Equal(t, "CRM-5003", *kept[0].CRMOrderID)
	})
}
