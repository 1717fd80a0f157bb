package api_test

import (
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

type heldOrder struct {
	ID     int64
	ETA    string `json:"eta"`
	HeldBy []struct {
		Code        string
		Needed      float64
		AvailableOn *string `json:"available_on"`
	} `json:"held_by"`
	Operations []struct {
		Seq             int
		PlannedStartDay string `json:"planned_start_day"`
	}
}

// heldOn returns the production order, the day the material is available
// to it ("" when it does not hold it back) and the day its cutting (step
// 1) starts.
func heldOn(t *testing.T, env *apptest.Env, id int64, code string) (heldOrder, string, string) {
	t.Helper()
	var o heldOrder
	r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", id), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &o)
	held := ""
	for _, h := range o.HeldBy {
		if h.Code == code {
			require.NotNil(t, h.AvailableOn, "a supplier sells it")
			require.Positive(t, h.Needed)
			held = *h.AvailableOn
		}
	}
	cut := ""
	for _, op := range o.Operations {
		if op.Seq == 1 && (cut == "" || op.PlannedStartDay < cut) {
			cut = op.PlannedStartDay
		}
	}
	return o, held, cut
}

// A week in which boards arrive late. On Monday 7 December a bedside
// table in sonoma is launched with no sonoma on the shelf and nothing on
// order: its cutting waits for the supplier's lead time (5 working days:
// Monday the 14th). The buyer orders the boards for Wednesday the 9th:
// the plan re-plans by itself, the cutting and the ETA move earlier, and
// the sales order hears the new ETA. On Wednesday the supplier has not
// delivered and promises Friday: the order is cancelled and a new one
// placed for Friday the 11th, and the ETA follows it later. On Friday the
// boards come: nothing holds the order back any more.
func TestMaterials_WeekOfLateBoards(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC) // Monday, 08:00 in Moscow
		env.App.Plan.SetNow(func() time.Time { return now })
		r := env.Admin(http.MethodPost, "/api/v1/suppliers", map[string]any{"name": "ООО «Плита»",
			"materials": []map[string]any{{"code": "LDSP16-SONOMA", "price": 3150, "lead_days": 5}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var sup struct{ ID int64 }
		r.JSON(t, &sup)
		orderID, items := receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Анна"},
			"items": []map[string]any{{"sku": "TMB-PRIK-450", "qty": 1, "options": map[string]any{"корпус": "Дуб сонома", "фасад": "Дуб сонома"}}}})
		po := launch(t, env, map[string]any{"items": items})
		env.Dispatch()

		o, held, cut := heldOn(t, env, po.ID, "LDSP16-SONOMA")
		require.Equal(t, "2026-12-14", held, "not on order: the supplier's lead time from today")
		require.Equal(t, "2026-12-14", cut, "the saw waits for the boards")
		require.GreaterOrEqual(t, o.ETA, cut)
		etaUnordered := o.ETA

		place := func(day string) int64 {
			p := purchaseOrderOf(t, env.Admin(http.MethodPost, "/api/v1/purchase-orders", map[string]any{"supplier_id": sup.ID, "expected_on": day,
				"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 10}}}), http.StatusCreated)
			purchaseOrderOf(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/purchase-orders/%d/order", p.ID), nil), http.StatusOK)
			env.Dispatch() // plan.materials re-plans
			return p.ID
		}
		first := place("2026-12-09")
		o, held, cut = heldOn(t, env, po.ID, "LDSP16-SONOMA")
		require.Equal(t, "2026-12-09", held)
		require.Equal(t, "2026-12-09", cut)
		etaWednesday := o.ETA
		require.Less(t, etaWednesday, etaUnordered, "ordered boards come sooner than the lead time")
		var sales struct{ ETA *string }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", orderID), nil).JSON(t, &sales)
		require.NotNil(t, sales.ETA)
		require.Equal(t, etaWednesday, *sales.ETA, "the sales order heard the new ETA")

		// Wednesday: no boards; the supplier promises Friday.
		now = time.Date(2026, 12, 9, 5, 0, 0, 0, time.UTC)
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/purchase-orders/%d/cancel", first), map[string]any{"reason": "поставщик перенёс на пятницу"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		second := place("2026-12-11")
		o, held, cut = heldOn(t, env, po.ID, "LDSP16-SONOMA")
		require.Equal(t, "2026-12-11", held)
		require.Equal(t, "2026-12-11", cut)
		require.Greater(t, o.ETA, etaWednesday, "the ETA follows the boards")
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", orderID), nil).JSON(t, &sales)
		require.Equal(t, o.ETA, *sales.ETA)
		var moved struct{ Items []journalEvent }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?type=prod_order.rescheduled&aggregate_id=%d&aggregate_type=plan_prod_orders", po.ID), nil).JSON(t, &moved)
		require.GreaterOrEqual(t, len(moved.Items), 2, "each move was announced")
		require.NotEmpty(t, catalogEventsOf(t, env, "plan.replanned"))

		// Friday: the boards come.
		now = time.Date(2026, 12, 11, 5, 0, 0, 0, time.UTC)
		r = env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"purchase_order_id": second,
			"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 10}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		env.Dispatch()
		_, held, cut = heldOn(t, env, po.ID, "LDSP16-SONOMA")
		require.Empty(t, held, "on the shelf: nothing to wait for")
		require.Equal(t, "2026-12-11", cut)
	})
}

// Stock goes to the live orders in plan order: with enough sonoma on the
// shelf for one bedside table but not two, the first launched is held by
// nothing, the second waits for the supplier's lead time.
func TestMaterials_NetOfEarlierNeeds(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
		env.App.Plan.SetNow(func() time.Time { return now })
		r := env.Admin(http.MethodPost, "/api/v1/suppliers", map[string]any{"name": "ООО «Плита»",
			"materials": []map[string]any{{"code": "LDSP16-SONOMA", "price": 3150, "lead_days": 5}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		item := map[string]any{"sku": "TMB-PRIK-450", "qty": 4, "options": map[string]any{"корпус": "Дуб сонома", "фасад": "Дуб сонома"}}
		_, first := receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Анна"}, "items": []map[string]any{item}})
		_, second := receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Борис"}, "items": []map[string]any{item}})
		a := launch(t, env, map[string]any{"items": first})
		need := stockOf(t, env)["LDSP16-SONOMA"].Reserved
		shelf := math.Ceil(need)
		require.Less(t, shelf, 2*need, "the shelf holds enough for one, not two")
		r = env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": shelf}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		b := launch(t, env, map[string]any{"items": second})
		_, heldB, cutB := heldOn(t, env, b.ID, "LDSP16-SONOMA")
		require.Equal(t, "2026-12-14", heldB, "what is on the shelf went to the first order")
		require.Equal(t, "2026-12-14", cutB)
		require.Equal(t, http.StatusOK, env.Admin(http.MethodPost, "/api/v1/plan/replan", nil).Status)
		_, heldA, cutA := heldOn(t, env, a.ID, "LDSP16-SONOMA")
		require.Empty(t, heldA, "the first order's boards are on the shelf")
		require.Equal(t, "2026-12-07", cutA)
	})
}
