package api_test

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

type stockLevel struct {
	Code         string
	Unit         string
	OnHand       float64 `json:"on_hand"`
	Reserved     float64
	Available    float64
	ReorderPoint float64 `json:"reorder_point"`
	Backlog      float64
	ToBuy        float64 `json:"to_buy"`
}

func stockOf(t *testing.T, env *apptest.Env) map[string]stockLevel {
	t.Helper()
	out := map[string]stockLevel{}
	next := "/api/v1/stock?limit=500"
	var l struct{ Items []stockLevel }
	r := env.Admin(http.MethodGet, next, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &l)
	for _, it := range l.Items {
		out[it.Code] = it
	}
	return out
}

func shortagesOf(t *testing.T, env *apptest.Env) map[string]stockLevel {
	t.Helper()
	var l struct{ Items []stockLevel }
	r := env.Admin(http.MethodGet, "/api/v1/materials/shortages", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &l)
	out := map[string]stockLevel{}
	for _, it := range l.Items {
		out[it.Code] = it
	}
	return out
}

// A receipt fills the shelf, a launch reserves what its order needs (short
// when there is not enough, never refused), the shortage list says what to
// buy for the backlog and the reorder points, a cancel releases, a count
// sets what is on hand.
func TestStock_ShortagesAfterReceiptAndLaunch(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		t.Run("ErrInvalid", func(t *testing.T) {
			events := env.Count("events")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{
				{"code": "NO-SUCH", "qty": 1}, {"code": "LDSP16-WHITE", "qty": 1.5}, {"code": "HINGE-110", "qty": -2}, {"code": "PVC2-WHITE", "qty": 0},
			}}), http.StatusUnprocessableEntity, "lines[0].code", "lines[1].qty", "lines[2].qty", "lines[3].qty")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/stock/counts", map[string]any{"lines": []map[string]any{{"code": "LDSP16-WHITE", "qty": 3}}}),
				http.StatusUnprocessableEntity, "reason")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/stock/counts", map[string]any{"reason": "инвентаризация",
				"lines": []map[string]any{{"code": "LDSP16-WHITE", "qty": -1}, {"code": "ldsp16-white", "qty": 1}}}),
				http.StatusUnprocessableEntity, "lines[0].qty", "lines[1].code")
			requireProblem(t, env.Admin(http.MethodGet, "/api/v1/stock?kind=wood", nil), http.StatusUnprocessableEntity, "kind")
			require.Equal(t, events, env.Count("events"), "nothing written")
		})

		r := env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"note": "накладная 1542",
			"lines": []map[string]any{{"code": "ldsp16-white", "qty": 5}, {"code": "PVC2-WHITE", "qty": 100.5}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var doc struct {
			DocumentID int64 `json:"document_id"`
		}
		r.JSON(t, &doc)
		received := catalogEvents(t, env, "stock.received", "stock_documents", doc.DocumentID)
		require.Len(t, received, 1)
		require.Equal(t, "Администратор", received[0].Actor.Name)
		s := stockOf(t, env)
		require.Equal(t, stockLevel{Code: "LDSP16-WHITE", Unit: "sheet", OnHand: 5, Available: 5, ReorderPoint: 10}, s["LDSP16-WHITE"])
		require.InDelta(t, 100.5, s["PVC2-WHITE"].OnHand, 1e-9)

		// The wardrobe's white body: 7.76 m² of 5.70 m² usable sheets, 2 sheets; its sonoma doors 3.40 m², 1 sheet, none on hand.
		_, ids := receive(t, env, line{"SHK-KUPE-1600", 1})
		po := launch(t, env, map[string]any{"items": ids})
		env.Dispatch()
		s = stockOf(t, env)
		require.Equal(t, 5.0, s["LDSP16-WHITE"].OnHand)
		require.Equal(t, 2.0, s["LDSP16-WHITE"].Reserved)
		require.Equal(t, 3.0, s["LDSP16-WHITE"].Available)
		require.Equal(t, 1.0, s["LDSP16-SONOMA"].Reserved)
		require.Equal(t, -1.0, s["LDSP16-SONOMA"].Available, "launched short, not refused")
		reserved := catalogEventsOf(t, env, "stock.reserved")
		require.Len(t, reserved, 1)
		require.EqualValues(t, po.ID, reserved[0].Payload["prod_order_id"])
		require.Contains(t, fmt.Sprint(reserved[0].Payload["short"]), "LDSP16-SONOMA")
		require.Nil(t, reserved[0].Actor, "the system's work")
		var got struct{ Short []string }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", po.ID), nil).JSON(t, &got)
		require.Contains(t, got.Short, "LDSP16-SONOMA", "the production order says what it was launched short of")
		require.Contains(t, got.Short, "CONFIRMAT", "none on hand")
		require.NotContains(t, got.Short, "LDSP16-WHITE", "5 sheets on hand cover 2")
		require.NotContains(t, got.Short, "PVC2-WHITE", "100.5 m on hand cover it")

		// Another wardrobe waits in the backlog: 2 more white sheets, 1 sonoma.
		receive(t, env, line{"SHK-KUPE-1600", 1})
		short := shortagesOf(t, env)
		require.Equal(t, 2.0, short["LDSP16-WHITE"].Backlog)
		require.Equal(t, 9.0, short["LDSP16-WHITE"].ToBuy, "2 for the backlog + 10 reorder point − 3 available")
		require.Equal(t, 12.0, short["LDSP16-SONOMA"].ToBuy, "1 + 10 − (−1)")
		require.Equal(t, 100.0, short["CONFIRMAT"].ToBuy-short["CONFIRMAT"].Backlog+short["CONFIRMAT"].Available-900, "the reorder point of 1000 pieces")
		rows := readCSVSep(t, env, "/api/v1/materials/shortages", apptest.AdminToken, ';')
		require.Equal(t, "Купить", rows[0][len(rows[0])-1])
		require.Len(t, rows, 1+len(short))

		// A receipt covers the white: what remains to buy shrinks by it.
		env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{{"code": "LDSP16-WHITE", "qty": 20}}})
		short = shortagesOf(t, env)
		_, listed := short["LDSP16-WHITE"]
		require.False(t, listed, "23 available cover the backlog's 2 and the reorder point")

		// Cancelling releases the reservation; a count sets what is on hand.
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", po.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Dispatch()
		s = stockOf(t, env)
		require.Zero(t, s["LDSP16-WHITE"].Reserved)
		require.Zero(t, s["LDSP16-SONOMA"].Reserved)
		r = env.Admin(http.MethodPost, "/api/v1/stock/counts", map[string]any{"reason": "инвентаризация", "lines": []map[string]any{{"code": "LDSP16-WHITE", "qty": 24}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		require.Equal(t, 24.0, stockOf(t, env)["LDSP16-WHITE"].OnHand)
		counted := catalogEventsOf(t, env, "stock.counted")
		require.Len(t, counted, 1)
		require.Equal(t, "инвентаризация", counted[0].Payload["reason"])
	})
}

func catalogEventsOf(t *testing.T, env *apptest.Env, typ string) []journalEvent {
	t.Helper()
	var l struct{ Items []journalEvent }
	env.Admin(http.MethodGet, "/api/v1/events?type="+typ, nil).JSON(t, &l)
	return l.Items
}

// The invariants of stock, with 20 launches and cancellations at once on
// the same boards: for every material, on hand = receipts + counts −
// consumption, available = on hand − reserved, reserved = what the live
// production orders need, and a cancelled order leaves nothing reserved.
func TestStock_InvariantsUnderConcurrency(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{{"code": "LDSP16-WHITE", "qty": 10}, {"code": "HDF3-WHITE", "qty": 3}}})
		const n = 20
		var items []int64
		for range n {
			_, ids := receive(t, env, line{"TMB-PRIK-450", 1})
			items = append(items, ids...)
		}
		var wg sync.WaitGroup
		pos := make([]int64, n)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { // the dispatcher runs meanwhile
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
					_, _ = env.App.Dispatcher.Drain(t.Context())
				}
			}
		}()
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": []int64{items[i]}})
				if r.Status != http.StatusCreated {
					t.Errorf("launch %d: %d %s", i, r.Status, r.Body)
					return
				}
				var o struct{ ID int64 }
				r.JSON(t, &o)
				pos[i] = o.ID
				if i%2 == 1 {
					if r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", o.ID), nil); r.Status != http.StatusOK {
						t.Errorf("cancel %d: %d %s", o.ID, r.Status, r.Body)
					}
				}
			}()
		}
		wg.Wait()
		close(stop)
		<-done
		env.Dispatch()
		require.False(t, t.Failed())

		// What the live production orders need, as the plan computes it.
		want := map[string]float64{}
		for i, id := range pos {
			if i%2 == 1 {
				continue
			}
			var req struct {
				Materials []struct {
					Code string
					Qty  float64
				}
			}
			r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/materials/requirements?prod_orders=%d", id), nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			r.JSON(t, &req)
			for _, m := range req.Materials {
				want[m.Code] += m.Qty
			}
		}
		require.Equal(t, 10.0, want["LDSP16-WHITE"], "one sheet per nightstand's white body")
		requireStockInvariants(t, env)
		for code, l := range stockOf(t, env) {
			require.InDelta(t, want[code], l.Reserved, 1e-6, "%s: reserved = what the live orders need", code)
		}
		var left float64
		var cancelled []string
		for i, id := range pos {
			if i%2 == 1 {
				cancelled = append(cancelled, fmt.Sprint(id))
			}
		}
		require.NoError(t, database.Scan(env.App.DB.Raw(`SELECT coalesce(sum(needed - consumed), 0) FROM stock_reservations WHERE NOT released AND prod_order_id IN (`+
			strings.Join(cancelled, ",")+`)`), &left))
		require.Zero(t, math.Abs(left), "a cancelled order leaves nothing reserved")
	})
}

// Items of a cancelled sales order leave a production order on which no
// work has started and that keeps its other items: its reservations come
// down to what the item left needs, exactly, with stock.released for the
// difference (the system's work); the cancelled order's materials are no
// longer reserved at all.
func TestStock_ItemsReleasedShrinkTheReservation(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{
			{"code": "LDSP16-WHITE", "qty": 10}, {"code": "CONFIRMAT", "qty": 100}}})
		cancelledID, cancelled := receive(t, env, line{"SHK-KUPE-1600", 1})
		_, kept := receive(t, env, line{"TMB-PRIK-450", 1})
		// Launched together, and cancelled before sales hears of the launch.
		po := launch(t, env, map[string]any{"items": []int64{cancelled[0], kept[0]}})
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", cancelledID), cancelBody)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Dispatch()
		require.Equal(t, "launched", prodOrderOf(t, env, po.ID).Status)
		require.Len(t, eventsOf(t, env, "prod_order.items_released", po.ID), 1)

		// What the item left needs, as the plan computes it.
		var req struct {
			Materials []struct {
				Code string
				Qty  float64
			}
		}
		r = env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/materials/requirements?prod_orders=%d", po.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &req)
		want := map[string]float64{}
		for _, m := range req.Materials {
			want[m.Code] += m.Qty
		}
		require.Equal(t, 1.0, want["LDSP16-WHITE"], "the nightstand's white body")
		require.Equal(t, 8.0, want["CONFIRMAT"], "the nightstand's confirmats")
		require.Equal(t, 1.0, want["LDSP16-SONOMA"], "the nightstand's front: the wardrobe's doors are gone")

		s := stockOf(t, env)
		for code, l := range s {
			require.InDelta(t, want[code], l.Reserved, 1e-6, "%s: reserved = what the item left needs", code)
			require.InDelta(t, l.OnHand-l.Reserved, l.Available, 1e-6, "%s: available = on hand − reserved", code)
		}
		require.Equal(t, 9.0, s["LDSP16-WHITE"].Available)
		var left []struct {
			Code string
			Qty  float64
		}
		require.NoError(t, database.Scan(env.App.DB.Raw(`SELECT code, needed - consumed AS qty FROM stock_reservations WHERE NOT released AND prod_order_id = ?`, po.ID), &left))
		for _, l := range left {
			require.InDelta(t, want[l.Code], l.Qty, 1e-6, "%s: the order's reservation", l.Code)
		}
		released := catalogEventsOf(t, env, "stock.released")
		require.Len(t, released, 1)
		require.EqualValues(t, po.ID, released[0].Payload["prod_order_id"])
		require.Contains(t, fmt.Sprint(released[0].Payload["lines"]), "KUPE-ROLLERS", "the wardrobe's fittings")
		require.Nil(t, released[0].Actor, "the system's work")

		// Cancelling the production order then releases the rest.
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", po.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Dispatch()
		for code, l := range stockOf(t, env) {
			require.Zero(t, l.Reserved, "%s: nothing reserved once it is cancelled", code)
		}
	})
}

// The floor's reports use up what was reserved: boards at cutting (the
// first step), bands at banding (the second), fittings at assembly.
func TestStock_ConsumedAsTheFloorReports(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{
			{"code": "LDSP16-WHITE", "qty": 4}, {"code": "PVC2-WHITE", "qty": 50}, {"code": "CONFIRMAT", "qty": 100}}})
		_, ids := receive(t, env, line{"TMB-PRIK-450", 1})
		po := launch(t, env, map[string]any{"items": ids})
		env.Dispatch()
		report := func(seq, qty int) {
			t.Helper()
			r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", po.ID), map[string]any{"seq": seq, "qty": qty})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			env.Dispatch()
		}
		s := stockOf(t, env)
		require.Equal(t, 1.0, s["LDSP16-WHITE"].Reserved)
		bands := s["PVC2-WHITE"].Reserved
		require.InDelta(t, 2.88, bands, 1e-9, "the sides' front edges, 2 × (500 + 30) mm, and the top all round, 2 × 480 + 2 × 430 mm")

		report(1, 3) // half the parts cut: the white sheet is started, so used up
		s = stockOf(t, env)
		require.Equal(t, 3.0, s["LDSP16-WHITE"].OnHand)
		require.Zero(t, s["LDSP16-WHITE"].Reserved)
		require.Equal(t, 50.0, s["PVC2-WHITE"].OnHand, "nothing banded yet")
		require.Len(t, catalogEventsOf(t, env, "stock.consumed"), 1)

		report(1, 3)
		report(2, 3) // half banded: half the band
		s = stockOf(t, env)
		require.InDelta(t, 50-bands/2, s["PVC2-WHITE"].OnHand, 1e-6)
		require.InDelta(t, bands/2, s["PVC2-WHITE"].Reserved, 1e-6)
		report(2, 3)
		report(3, 6)
		require.Equal(t, 100.0, stockOf(t, env)["CONFIRMAT"].OnHand, "not assembled yet")
		report(4, 1)
		s = stockOf(t, env)
		require.Equal(t, 92.0, s["CONFIRMAT"].OnHand, "8 confirmats per nightstand")
		require.InDelta(t, 50-bands, s["PVC2-WHITE"].OnHand, 1e-6)
		require.Zero(t, s["PVC2-WHITE"].Reserved)
	})
}

// What a week's due work needs: the launched production orders with an
// item due in the week (their parts not yet cut) and the backlog's items
// due in it, by the boards their options chose; work due later is left out.
func TestMaterials_RequirementsOfAWeek(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		order := func(due string, sku string, options map[string]string) []int64 {
			_, ids := receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Иван"}, "due_date": due,
				"items": []map[string]any{{"sku": sku, "qty": 1, "options": options}}})
			return ids
		}
		a := order("2026-12-08", "TMB-PRIK-450", map[string]string{"корпус": "Дуб сонома"})
		order("2026-12-20", "TMB-PRIK-450", nil)
		c := order("2026-12-09", "SHK-KUPE-1600", nil)
		po := launch(t, env, map[string]any{"items": c})

		var req struct {
			ProdOrders   []int64 `json:"prod_orders"`
			BacklogItems []int64 `json:"backlog_items"`
			Materials    []struct {
				Code                   string
				Unit                   string
				Qty, Launched, Backlog float64
			}
		}
		r := env.Admin(http.MethodGet, "/api/v1/materials/requirements?from=2026-12-07&to=2026-12-13", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &req)
		require.Equal(t, []int64{po.ID}, req.ProdOrders)
		require.Equal(t, a, req.BacklogItems, "the item due on the 20th is not this week's")
		got := map[string][3]float64{}
		for _, m := range req.Materials {
			got[m.Code] = [3]float64{m.Launched, m.Backlog, m.Qty}
		}
		require.Equal(t, [3]float64{2, 0, 2}, got["LDSP16-WHITE"], "the wardrobe's white body; the nightstand chose sonoma")
		require.Equal(t, [3]float64{1, 1, 1}, got["LDSP16-SONOMA"], "the doors 3.40 m² and the nightstand 1.49 m² fit one sheet")
		require.Equal(t, [3]float64{24, 8, 32}, got["CONFIRMAT"])
		require.Equal(t, [3]float64{0, 4.33, 4.33}, got["PVC2-SONOMA"], "1060 + 1820 + 1452 mm")

		// Cut parts are no longer needed; the production order named is needed whole.
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", po.ID), map[string]any{"seq": 1, "qty": 13})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Admin(http.MethodGet, "/api/v1/materials/requirements?from=2026-12-07&to=2026-12-13", nil).JSON(t, &req)
		for _, m := range req.Materials {
			if m.Code == "LDSP16-WHITE" {
				require.Zero(t, m.Launched, "cut already")
			}
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/materials/requirements?prod_orders=%d", po.ID), nil).JSON(t, &req)
		require.Empty(t, req.BacklogItems)
		for _, m := range req.Materials {
			if m.Code == "LDSP16-WHITE" {
				require.Equal(t, 2.0, m.Qty)
			}
		}
		rows := readCSVSep(t, env, fmt.Sprintf("/api/v1/materials/requirements?prod_orders=%d", po.ID), apptest.AdminToken, ';')
		require.Equal(t, "Код", rows[0][0])

		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/materials/requirements", nil), http.StatusUnprocessableEntity, "from")
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/materials/requirements?from=2026-12-13&to=2026-12-07", nil), http.StatusUnprocessableEntity, "to")
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/materials/requirements?prod_orders=999999", nil), http.StatusUnprocessableEntity, "prod_orders")
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/materials/requirements?prod_orders=x", nil), http.StatusUnprocessableEntity, "prod_orders")
	})
}
