package api_test

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// newSheetsOf counts a plan's new sheets (not offcuts) per board, and per
// production order and board as stock charges them: each to the first
// production order with a part on it.
func newSheetsOf(p cutPlan) (map[string]float64, map[int64]map[string]float64) {
	byBoard, byOrder := map[string]float64{}, map[int64]map[string]float64{}
	for _, sh := range p.SheetList {
		if sh.OffcutID != nil {
			continue
		}
		byBoard[sh.Board]++
		o := sh.Parts[0].ProdOrderID
		if byOrder[o] == nil {
			byOrder[o] = map[string]float64{}
		}
		byOrder[o][sh.Board]++
	}
	return byBoard, byOrder
}

// reservedLeft returns what each live reservation of the board still holds,
// per production order.
func reservedLeft(t *testing.T, env *apptest.Env, board string) map[int64]float64 {
	t.Helper()
	var rows []struct {
		ProdOrderID int64
		Left        float64
	}
	require.NoError(t, database.Scan(env.App.DB.Raw(`SELECT prod_order_id, needed - consumed AS "left" FROM stock_reservations WHERE code = ? AND NOT released`, board), &rows))
	out := map[int64]float64{}
	for _, r := range rows {
		if math.Abs(r.Left) > 1e-9 {
			out[r.ProdOrderID] = r.Left
		}
	}
	return out
}

// requireStockInvariants checks, for every material: on hand = receipts +
// counts − consumption, available = on hand − reserved, reserved = the
// reservations' movements = what the live reservations still hold, never
// negative.
func requireStockInvariants(t *testing.T, env *apptest.Env) {
	t.Helper()
	var moves []struct {
		Code, Kind string
		Qty        float64
	}
	require.NoError(t, database.Scan(env.App.DB.Raw(`SELECT code, kind, qty FROM stock_movements`), &moves))
	onHand, reserved := map[string]float64{}, map[string]float64{}
	for _, m := range moves {
		switch m.Kind {
		case "receipt", "count":
			onHand[m.Code] += m.Qty
		case "consume":
			onHand[m.Code] -= m.Qty
			reserved[m.Code] -= m.Qty
		case "reserve":
			reserved[m.Code] += m.Qty
		case "release":
			reserved[m.Code] -= m.Qty
		}
	}
	held, err := env.App.Stock.ReservedFor(t.Context())
	require.NoError(t, err)
	for code, l := range stockOf(t, env) {
		require.InDelta(t, onHand[code], l.OnHand, 1e-6, "%s: on hand = receipts + counts − consumption", code)
		require.InDelta(t, l.OnHand-l.Reserved, l.Available, 1e-6, "%s: available = on hand − reserved", code)
		require.InDelta(t, reserved[code], l.Reserved, 1e-6, "%s: reserved = the reservations' movements", code)
		require.InDelta(t, held[strings.ToLower(code)], l.Reserved, 1e-6, "%s: reserved = what the live reservations hold", code)
		require.GreaterOrEqual(t, l.Reserved, -1e-9, "%s: reserved never negative", code)
	}
}

// requireShortage checks the shortage of a board against its stock and
// what the backlog needs: to buy = backlog + reorder point − available.
func requireShortage(t *testing.T, short map[string]stockLevel, l stockLevel, backlog float64) {
	t.Helper()
	buy := math.Ceil(backlog + l.ReorderPoint - l.Available)
	got, listed := short[l.Code]
	if buy <= 0 {
		require.False(t, listed, "%s: nothing to buy", l.Code)
		return
	}
	require.True(t, listed, "%s: %v to buy", l.Code, buy)
	require.Equal(t, l.Reserved, got.Reserved, l.Code)
	require.Equal(t, l.Available, got.Available, l.Code)
	require.Equal(t, buy, got.ToBuy, l.Code)
}

// A cutting plan's sheets are what stock reserves and uses up: the plan
// sets its production orders' board reservations to the new sheets it cuts
// for them (each sheet charged to the first order with a part on it), a
// sheet reported cut uses up exactly one sheet of its board (an offcut
// none; the parts cut on it use up no board by the area estimate), and the
// shortages follow.
func TestCuttingPlans_SheetsFlowIntoStock(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		const onHand = 6.0
		env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{
			{"code": "LDSP16-WHITE", "qty": onHand}, {"code": "LDSP16-SONOMA", "qty": onHand}}})
		_, ids1 := receive(t, env, line{"SHK-KUPE-1600", 1})
		po1 := launch(t, env, map[string]any{"items": ids1})
		_, ids2 := receive(t, env, line{"TMB-PRIK-450", 1})
		po2 := launch(t, env, map[string]any{"items": ids2})
		_, ids3 := receive(t, env, line{"TMB-PRIK-450", 1})
		po3 := launch(t, env, map[string]any{"items": ids3})
		receive(t, env, line{"SHK-KUPE-1600", 1}) // waits in the backlog
		env.Dispatch()
		s := stockOf(t, env)
		require.Equal(t, 4.0, s["LDSP16-WHITE"].Reserved, "the area estimate: 2 white sheets for the wardrobe, 1 for each nightstand")
		require.Equal(t, 3.0, s["LDSP16-SONOMA"].Reserved, "the area estimate: 1 sonoma sheet for each")
		estimate := s
		backlog := map[string]float64{}
		for code, l := range shortagesOf(t, env) {
			backlog[code] = l.Backlog
		}

		// The plan sets the reservations to its new sheets.
		reservedBefore := len(catalogEventsOf(t, env, "stock.reserved")) + len(catalogEventsOf(t, env, "stock.released"))
		p := createCutPlan(t, env, po1.ID, po2.ID, po3.ID)
		env.Dispatch()
		sheets, charged := newSheetsOf(p)
		require.Equal(t, 2.0, sheets["LDSP16-WHITE"], "the plan puts the nightstands beside the wardrobe")
		require.Equal(t, 1.0, sheets["LDSP16-SONOMA"])
		s = stockOf(t, env)
		short := shortagesOf(t, env)
		for _, b := range p.Boards {
			n := sheets[b.Board]
			require.Equal(t, n, s[b.Board].Reserved, "%s: the plan's %v new sheets are reserved", b.Board, n)
			require.Equal(t, estimate[b.Board].OnHand, s[b.Board].OnHand, b.Board)
			requireShortage(t, short, s[b.Board], backlog[b.Board])
			for _, po := range []int64{po1.ID, po2.ID, po3.ID} {
				require.Equal(t, charged[po][b.Board], reservedLeft(t, env, b.Board)[po], "%s of production order %d", b.Board, po)
			}
		}
		var changed []journalEvent
		for _, typ := range []string{"stock.reserved", "stock.released"} {
			changed = append(changed, catalogEventsOf(t, env, typ)...)
		}
		require.Greater(t, len(changed), reservedBefore, "the reservations' changes are written")
		for _, ev := range changed {
			if ev.Actor != nil {
				require.Equal(t, "Администратор", ev.Actor.Name, "the plan's author")
			}
		}
		requireStockInvariants(t, env)

		// A new white sheet reported cut: one sheet used up, from the first order's reservation.
		n, largest := 0, 0.0 // the white sheet that leaves the largest offcut
		for _, sh := range p.SheetList {
			for _, o := range sh.Offcuts {
				if sh.OffcutID == nil && sh.Board == "LDSP16-WHITE" && o.DX*o.DY > largest {
					n, largest = sh.N, o.DX*o.DY
				}
			}
		}
		require.NotZero(t, n, "some white sheet leaves an offcut")
		sh := p.SheetList[n-1]
		first := sh.Parts[0].ProdOrderID
		leftBefore := reservedLeft(t, env, "LDSP16-WHITE")
		consumed := len(catalogEventsOf(t, env, "stock.consumed"))
		master := env.UserToken("Мастер участка", "master")
		r := env.Do(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d/cut", p.ID, n), nil, master)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Dispatch()
		s = stockOf(t, env)
		require.Equal(t, onHand-1, s["LDSP16-WHITE"].OnHand, "exactly one sheet used up, none by the area estimate")
		require.Equal(t, sheets["LDSP16-WHITE"]-1, s["LDSP16-WHITE"].Reserved)
		require.Equal(t, onHand, s["LDSP16-SONOMA"].OnHand)
		require.Equal(t, leftBefore[first]-1, reservedLeft(t, env, "LDSP16-WHITE")[first], "charged to the first order on the sheet")
		evs := catalogEventsOf(t, env, "stock.consumed")
		require.Len(t, evs, consumed+1)
		require.Equal(t, "Мастер участка", evs[0].Actor.Name)
		require.EqualValues(t, first, evs[0].Payload["prod_order_id"])
		short = shortagesOf(t, env)
		requireShortage(t, short, s["LDSP16-WHITE"], backlog["LDSP16-WHITE"])
		require.Equal(t, sheets["LDSP16-WHITE"]-1, short["LDSP16-WHITE"].Reserved)
		requireStockInvariants(t, env)

		// A plan of what is left, from the cut sheet's offcut too: cutting the offcut uses up no sheet.
		p2 := createCutPlan(t, env, po1.ID, po2.ID, po3.ID)
		env.Dispatch()
		sheets2, _ := newSheetsOf(p2)
		s = stockOf(t, env)
		for _, b := range p2.Boards {
			require.Equal(t, sheets2[b.Board], s[b.Board].Reserved, b.Board)
		}
		requireStockInvariants(t, env)
		var offcut, rest []int
		for _, sh := range p2.SheetList {
			if sh.OffcutID != nil {
				offcut = append(offcut, sh.N)
			} else {
				rest = append(rest, sh.N)
			}
		}
		require.NotEmpty(t, offcut, "the plan cuts the offcut")
		cut := func(n int) {
			t.Helper()
			r := env.Do(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d/cut", p2.ID, n), nil, master)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			env.Dispatch()
		}
		before := stockOf(t, env)
		for _, n := range offcut {
			cut(n)
		}
		s = stockOf(t, env)
		for _, b := range p2.Boards {
			require.Equal(t, before[b.Board].OnHand, s[b.Board].OnHand, "%s: an offcut is no new sheet", b.Board)
			require.Equal(t, before[b.Board].Reserved, s[b.Board].Reserved, b.Board)
		}
		for _, n := range rest {
			cut(n)
		}
		s = stockOf(t, env)
		for _, b := range p2.Boards {
			require.Equal(t, before[b.Board].OnHand-sheets2[b.Board], s[b.Board].OnHand, "%s: every new sheet used up once", b.Board)
			require.Zero(t, s[b.Board].Reserved, "%s: all cut, nothing left reserved", b.Board)
		}
		requireStockInvariants(t, env)
	})
}
