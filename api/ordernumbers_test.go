package api_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// A refused request spends no order number, whatever refuses it and
// however many requests come at once: valid orders, orders naming an
// unknown SKU or a decor the slot does not allow (422), and orders whose
// transaction fails after the order row was written (an item's insert
// broken on purpose) all race; the orders that exist are numbered 1..N,
// N the orders created, on both databases.
func TestOrders_NumbersWithoutGaps(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		env.FailInserts("sales_order_items", "note", "broken")
		bodies := []struct {
			body   string
			status int
		}{
			{`{"customer": {"name": "Анна"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1}]}`, http.StatusCreated},
			{`{"customer": {"name": "Борис"}, "items": [{"sku": "NO-SUCH-SKU", "qty": 1}]}`, http.StatusUnprocessableEntity},
			{`{"customer": {"name": "Вера"}, "items": [{"sku": "TMB-PRIK-450", "qty": 1, "options": {"корпус": "Розовый"}}]}`, http.StatusUnprocessableEntity},
			{`{"customer": {"name": "Глеб"}, "items": [{"sku": "TMB-PRIK-450", "qty": 1, "note": "broken"}]}`, http.StatusInternalServerError},
		}
		const rounds = 8
		status := make([]int, rounds*len(bodies))
		ids := make([]int64, len(status))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range status {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := env.Do(http.MethodPost, "/api/v1/orders", bodies[i%len(bodies)].body, apptest.AdminToken)
				status[i] = r.Status
				if r.Status == http.StatusCreated {
					var o struct {
						ID int64 `json:"id"`
					}
					r.JSON(t, &o)
					ids[i] = o.ID
				}
			}()
		}
		close(start)
		wg.Wait()
		var created []int64
		for i, s := range status {
			require.Equal(t, bodies[i%len(bodies)].status, s, "request %d", i)
			if s == http.StatusCreated {
				created = append(created, ids[i])
			}
		}
		require.Len(t, created, rounds)
		var numbers []int64
		require.NoError(t, database.Scan(env.App.DB.Raw("SELECT id FROM sales_orders ORDER BY id"), &numbers))
		want := make([]int64, rounds)
		for i := range want {
			want[i] = int64(i + 1)
		}
		require.Equal(t, want, numbers, "orders numbered 1..%d without gaps", rounds)
		require.ElementsMatch(t, want, created)

		// The next order takes the next number, whatever came before it.
		r := env.Do(http.MethodPost, "/api/v1/orders", bodies[0].body, apptest.AdminToken)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		require.Contains(t, string(r.Body), fmt.Sprintf(`"id":%d,`, rounds+1))
	})
}
