package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

type promise struct {
	ReadyOn string `json:"ready_on"`
	HeldBy  []struct {
		Code        string
		AvailableOn *string `json:"available_on"`
	} `json:"held_by"`
}

func (p promise) heldOn(code string) string {
	for _, h := range p.HeldBy {
		if h.Code == code && h.AvailableOn != nil {
			return *h.AvailableOn
		}
	}
	return ""
}

func backlogPromise(t *testing.T, env *apptest.Env, item int64) promise {
	t.Helper()
	var l struct {
		Items []struct {
			ItemID int64    `json:"item_id"`
			ATP    *promise `json:"available_to_promise"`
		}
	}
	r := env.Admin(http.MethodGet, "/api/v1/plan/backlog?limit=500", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &l)
	for _, it := range l.Items {
		if it.ItemID == item {
			require.NotNil(t, it.ATP)
			return *it.ATP
		}
	}
	t.Fatalf("item %d is not in the backlog", item)
	return promise{}
}

// Available to promise: a waiting bedside table in sonoma, with no sonoma
// on the shelf, could be ready once the supplier's lead time has passed;
// ordered boards bring the promise forward; a quote for the same thing not
// ordered yet promises the same day, and the launch keeps the promise.
func TestPlan_AvailableToPromise(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
		env.App.Plan.SetNow(func() time.Time { return now })
		t.Run("ErrInvalid", func(t *testing.T) {
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/plan/quote", map[string]any{"sku": "NO-SUCH", "qty": 0}),
				http.StatusUnprocessableEntity, "sku", "qty")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/plan/quote", map[string]any{"sku": "TMB-PRIK-450", "qty": 1,
				"options": map[string]any{"корпус": "Зебрано"}}), http.StatusUnprocessableEntity, "options.корпус")
		})
		r := env.Admin(http.MethodPost, "/api/v1/suppliers", map[string]any{"name": "ООО «Плита»",
			"materials": []map[string]any{{"code": "LDSP16-SONOMA", "price": 3150, "lead_days": 5}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var sup struct{ ID int64 }
		r.JSON(t, &sup)
		body := map[string]any{"sku": "TMB-PRIK-450", "qty": 1, "options": map[string]any{"корпус": "Дуб сонома", "фасад": "Дуб сонома"}}
		_, items := receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Анна"}, "items": []map[string]any{body}})

		atp := backlogPromise(t, env, items[0])
		require.Equal(t, "2026-12-14", atp.heldOn("LDSP16-SONOMA"), "the supplier's lead time")
		require.GreaterOrEqual(t, atp.ReadyOn, "2026-12-14")
		var q promise
		r = env.Admin(http.MethodPost, "/api/v1/plan/quote", body)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &q)
		require.Equal(t, atp, q, "a quote plans as the backlog does")

		p := purchaseOrderOf(t, env.Admin(http.MethodPost, "/api/v1/purchase-orders", map[string]any{"supplier_id": sup.ID, "expected_on": "2026-12-09",
			"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 10}}}), http.StatusCreated)
		purchaseOrderOf(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/purchase-orders/%d/order", p.ID), nil), http.StatusOK)
		sooner := backlogPromise(t, env, items[0])
		require.Equal(t, "2026-12-09", sooner.heldOn("LDSP16-SONOMA"))
		require.Less(t, sooner.ReadyOn, atp.ReadyOn)

		o := launch(t, env, map[string]any{"items": items})
		require.Equal(t, sooner.ReadyOn, o.ETA, "the launch keeps the promise")
	})
}
