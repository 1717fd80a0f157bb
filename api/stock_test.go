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

		// The wardrobe's white body takes two sheets, the second not whole;
		// its sonoma doors most of one sheet, none on hand. What stock
		// reserves is what its parts need: each its share of the sheets
		// the optimiser lays them out on.
		_, ids := receive(t, env, line{"SHK-KUPE-1600", 1})
		po := launch(t, env, map[string]any{"items": ids})
		need := map[string]float64{}
		for _, p := range po.Parts {
			need[p.Board] += p.BoardNeed
		}
		require.Greater(t, need["LDSP16-WHITE"], 1.0)
		require.Less(t, need["LDSP16-WHITE"], 2.0, "the second sheet is not used whole: its rest is one clean piece")
		require.Greater(t, need["LDSP16-SONOMA"], 0.5)
		require.Less(t, need["LDSP16-SONOMA"], 1.0)
		s = stockOf(t, env)
		require.Equal(t, 5.0, s["LDSP16-WHITE"].OnHand)
		require.InDelta(t, need["LDSP16-WHITE"], s["LDSP16-WHITE"].Reserved, 1e-3)
		require.InDelta(t, 5-need["LDSP16-WHITE"], s["LDSP16-WHITE"].Available, 2e-3)
		require.InDelta(t, need["LDSP16-SONOMA"], s["LDSP16-SONOMA"].Reserved, 1e-3)
		require.InDelta(t, -need["LDSP16-SONOMA"], s["LDSP16-SONOMA"].Available, 2e-3, "launched short, not refused")
		reserved := catalogEventsOf(t, env, "stock.reserved")
		require.Len(t, reserved, 1, "written in the launch's transaction")
		require.EqualValues(t, po.ID, reserved[0].Payload["prod_order_id"])
		require.Contains(t, fmt.Sprint(reserved[0].Payload["short"]), "LDSP16-SONOMA")
		require.Equal(t, "Администратор", reserved[0].Actor.Name, "the launch's author")
		require.Contains(t, po.Short, "LDSP16-SONOMA", "the launch's answer says what it is short of")
		var got struct{ Short []string }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", po.ID), nil).JSON(t, &got)
		require.Equal(t, po.Short, got.Short, "as a read just after it says")
		require.Contains(t, got.Short, "LDSP16-SONOMA", "the production order says what it is short of")
		require.Contains(t, got.Short, "CONFIRMAT", "none on hand")
		require.NotContains(t, got.Short, "LDSP16-WHITE", "5 sheets on hand cover it")
		require.NotContains(t, got.Short, "PVC2-WHITE", "100.5 m on hand cover it")

		// Another wardrobe waits in the backlog: it needs what the first did,
		// rounded up once, with the reorder point, for buying.
		receive(t, env, line{"SHK-KUPE-1600", 1})
		short := shortagesOf(t, env)
		require.InDelta(t, need["LDSP16-WHITE"], short["LDSP16-WHITE"].Backlog, 1e-3)
		require.Equal(t, math.Ceil(need["LDSP16-WHITE"]+10-(5-need["LDSP16-WHITE"])), short["LDSP16-WHITE"].ToBuy, "backlog + 10 reorder point − available, rounded up once")
		require.Equal(t, math.Ceil(need["LDSP16-SONOMA"]+10+need["LDSP16-SONOMA"]), short["LDSP16-SONOMA"].ToBuy, "backlog + 10 − (−reserved)")
		require.Equal(t, 100.0, short["CONFIRMAT"].ToBuy-short["CONFIRMAT"].Backlog+short["CONFIRMAT"].Available-900, "the reorder point of 1000 pieces")
		rows := readCSVSep(t, env, "/api/v1/materials/shortages", apptest.AdminToken, ';')
		require.Equal(t, []string{"Купить", "Ниже нуля из-за"}, rows[0][9:], "what to buy, then the production orders that took it below nothing")
		require.Len(t, rows, 1+len(short))

		// A receipt covers the white: what remains to buy shrinks by it.
		env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{{"code": "LDSP16-WHITE", "qty": 20}}})
		short = shortagesOf(t, env)
		_, listed := short["LDSP16-WHITE"]
		require.False(t, listed, "over 23 available cover the backlog and the reorder point")

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
		var one struct {
			Materials []struct {
				Code string
				Qty  float64
			}
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/materials/requirements?prod_orders=%d", pos[0]), nil).JSON(t, &one)
		for _, m := range one.Materials {
			if m.Code == "LDSP16-WHITE" {
				require.InDelta(t, 10*m.Qty, want["LDSP16-WHITE"], 0.01, "ten nightstands' white bodies, pooled: not a sheet each")
				require.Less(t, want["LDSP16-WHITE"], 2.0)
			}
		}
		requireStockInvariants(t, env)
		for code, l := range stockOf(t, env) {
			// each order's requirement is shown rounded (sheets to the thousandth, metres to the centimetre)
			require.InDelta(t, want[code], l.Reserved, 0.06, "%s: reserved = what the live orders need", code)
		}
		var left float64
		var cancelled []string
		for i, id := range pos {
			if i%2 == 1 {
				cancelled = append(cancelled, fmt.Sprint(id))
			}
		}
		require.NoError(t, database.Scan(env.App.DB.Raw(`SELECT coalesce(sum(needed), 0) FROM stock_needs WHERE prod_order_id IN (`+
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
		left := prodOrderOf(t, env, po.ID)
		boards := map[string]float64{}
		for _, p := range left.Parts {
			require.Equal(t, kept[0], p.ItemID, "the wardrobe's parts are gone")
			boards[p.Board] += p.BoardNeed
		}
		require.InDelta(t, boards["LDSP16-WHITE"], want["LDSP16-WHITE"], 1e-3, "the nightstand's white body")
		require.Greater(t, boards["LDSP16-WHITE"], 0.0)
		require.Less(t, boards["LDSP16-WHITE"], 0.5, "a nightstand's share, not the wardrobe's sheets")
		require.Equal(t, 8.0, want["CONFIRMAT"], "the nightstand's confirmats")
		require.InDelta(t, boards["LDSP16-SONOMA"], want["LDSP16-SONOMA"], 1e-3, "the nightstand's front: the wardrobe's doors are gone")

		s := stockOf(t, env)
		for code, l := range s {
			require.InDelta(t, want[code], l.Reserved, 1e-6, "%s: reserved = what the item left needs", code)
			require.InDelta(t, l.OnHand-l.Reserved, l.Available, 1e-6, "%s: available = on hand − reserved", code)
		}
		require.InDelta(t, 10-boards["LDSP16-WHITE"], s["LDSP16-WHITE"].Available, 2e-3)
		var needs []struct {
			Code string
			Qty  float64
		}
		require.NoError(t, database.Scan(env.App.DB.Raw(`SELECT code, needed AS qty FROM stock_needs WHERE needed > 0 AND prod_order_id = ?`, po.ID), &needs))
		for _, l := range needs {
			require.InDelta(t, want[l.Code], l.Qty, 1e-2, "%s: the order's needs", l.Code)
		}
		released := catalogEventsOf(t, env, "stock.released")
		require.Len(t, released, 1)
		require.EqualValues(t, po.ID, released[0].Payload["prod_order_id"])
		require.Contains(t, fmt.Sprint(released[0].Payload["lines"]), "KUPE-ROLLERS", "the wardrobe's fittings")
		require.Contains(t, fmt.Sprint(released[0].Payload["source"]), "items_released")
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

// The floor's reports use up what physically moved: a part cut without a
// cutting plan its own area of its own board (in sheets of the board's
// largest usable format), a part banded its own edges' metres (each banded
// side plus the overhang), a unit assembled its fittings; each release of
// what the order needs is exactly that part's need.
func TestStock_ConsumedAsTheFloorReports(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{
			{"code": "LDSP16-WHITE", "qty": 4}, {"code": "LDSP16-SONOMA", "qty": 4}, {"code": "HDF3-WHITE", "qty": 4},
			{"code": "PVC2-WHITE", "qty": 50}, {"code": "CONFIRMAT", "qty": 100}}})
		_, ids := receive(t, env, line{"TMB-PRIK-450", 1})
		po := launch(t, env, map[string]any{"items": ids})
		report := func(seq, qty int) {
			t.Helper()
			r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", po.ID), map[string]any{"seq": seq, "qty": qty})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
		partsAt := func(step int, state string) []floorPart {
			t.Helper()
			var l struct{ Items []floorPart }
			env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d/parts?step=%d&state=%s", po.ID, step, state), nil).JSON(t, &l)
			return l.Items
		}
		const usableWhite = 2.780 * 2.050 // 2800 × 2070 less 10 mm trims
		s := stockOf(t, env)
		white, bands := 0.0, 0.0
		for _, p := range partsAt(1, "pending") {
			if p.Board == "LDSP16-WHITE" {
				white += p.BoardNeed
			}
			bands += bandMetres(p, "PVC2-WHITE")
		}
		require.InDelta(t, white, s["LDSP16-WHITE"].Reserved, 1e-3)
		require.InDelta(t, bands, s["PVC2-WHITE"].Reserved, 1e-3)
		require.InDelta(t, 2.88, bands, 1e-9, "the sides' front edges, 2 × (500 + 30) mm, and the top all round, 2 × 480 + 2 × 430 mm")

		report(1, 3)
		cut := partsAt(1, "done")
		require.Len(t, cut, 3)
		area, need := map[string]float64{}, map[string]float64{}
		for _, p := range cut {
			area[p.Board] += float64(p.LengthMM*p.WidthMM) / 1e6
		}
		for _, p := range partsAt(1, "pending") {
			need[p.Board] += p.BoardNeed
		}
		s = stockOf(t, env)
		require.InDelta(t, 4-area["LDSP16-WHITE"]/usableWhite, s["LDSP16-WHITE"].OnHand, 2e-3, "their own area, not a sheet")
		require.InDelta(t, need["LDSP16-WHITE"], s["LDSP16-WHITE"].Reserved, 2e-3, "what the parts left uncut need")
		require.Equal(t, 50.0, s["PVC2-WHITE"].OnHand, "nothing banded yet")
		consumed := catalogEventsOf(t, env, "stock.consumed")
		require.Len(t, consumed, 1)
		src := consumed[0].Payload["source"].(map[string]any)
		require.Equal(t, "cut", src["what"])
		var codes []string
		for _, p := range cut {
			codes = append(codes, p.Code)
		}
		require.ElementsMatch(t, codes, src["parts"], "the document names the parts cut")

		report(1, 3)
		report(2, 3) // three banded: their own edges
		banded := partsAt(2, "done")
		done := 0.0
		for _, p := range banded {
			done += bandMetres(p, "PVC2-WHITE")
		}
		s = stockOf(t, env)
		require.InDelta(t, 50-done, s["PVC2-WHITE"].OnHand, 1e-6)
		require.InDelta(t, bands-done, s["PVC2-WHITE"].Reserved, 1e-6)
		report(2, 3)
		report(3, 6)
		require.Equal(t, 100.0, stockOf(t, env)["CONFIRMAT"].OnHand, "not assembled yet")
		report(4, 1)
		s = stockOf(t, env)
		require.Equal(t, 92.0, s["CONFIRMAT"].OnHand, "8 confirmats per nightstand")
		require.InDelta(t, 50-bands, s["PVC2-WHITE"].OnHand, 1e-6)
		require.Zero(t, s["PVC2-WHITE"].Reserved)
		require.Zero(t, s["LDSP16-WHITE"].Reserved)
		requireStockInvariants(t, env)
	})
}

// bandMetres is what the part's edges banded with band need: each side's
// length plus the 30 mm overhang.
func bandMetres(p floorPart, band string) float64 {
	m := 0.0
	for side, b := range p.Edges {
		if b != band {
			continue
		}
		l := p.LengthMM
		if side == "w1" || side == "w2" {
			l = p.WidthMM
		}
		m += float64(l+30) / 1000
	}
	return m
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
				Code                             string
				Unit                             string
				Qty, Launched, Backlog, Consumed float64
				Sheets                           *int
			}
		}
		r := env.Admin(http.MethodGet, "/api/v1/materials/requirements?from=2026-12-07&to=2026-12-13", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &req)
		require.Equal(t, []int64{po.ID}, req.ProdOrders)
		require.Equal(t, a, req.BacklogItems, "the item due on the 20th is not this week's")
		got := map[string][3]float64{}
		sheets := map[string]int{}
		for _, m := range req.Materials {
			got[m.Code] = [3]float64{m.Launched, m.Backlog, m.Qty}
			require.InDelta(t, m.Launched+m.Backlog, m.Qty, 1.5e-3, "%s: qty = launched + backlog", m.Code)
			if m.Sheets != nil {
				sheets[m.Code] = *m.Sheets
				require.Equal(t, int(math.Ceil(m.Qty-1e-9)), *m.Sheets, "%s: rounded up once, for buying", m.Code)
			}
		}
		need := map[string]float64{}
		for _, p := range po.Parts {
			need[p.Board] += p.BoardNeed
		}
		require.InDelta(t, need["LDSP16-WHITE"], got["LDSP16-WHITE"][0], 1e-3, "the wardrobe's white body, as stock reserves it")
		require.Zero(t, got["LDSP16-WHITE"][1], "the nightstand chose sonoma")
		require.Equal(t, 2, sheets["LDSP16-WHITE"])
		require.InDelta(t, need["LDSP16-SONOMA"], got["LDSP16-SONOMA"][0], 1e-3, "the wardrobe's doors")
		require.Greater(t, got["LDSP16-SONOMA"][1], 0.1, "the nightstand's sonoma body")
		require.Equal(t, 1, sheets["LDSP16-SONOMA"], "the doors and the nightstand's body, pooled, in one sheet")
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
				require.Zero(t, m.Qty, "the order still needs nothing of it")
				require.Greater(t, m.Consumed, 1.0, "it used its parts' area")
				require.Less(t, m.Consumed, need["LDSP16-WHITE"], "their area is less than the sheets they were laid out on")
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
