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
	"github.com/tsekh/tsekh/internal/render/scantest"
)

// newSheetsOf counts a plan's new sheets (not offcuts) per board, and what
// each production order's parts need of them: each part its share of its
// sheet, by area.
func newSheetsOf(p cutPlan) (map[string]float64, map[int64]map[string]float64) {
	byBoard, byOrder := map[string]float64{}, map[int64]map[string]float64{}
	for _, sh := range p.SheetList {
		if sh.OffcutID != nil {
			continue
		}
		byBoard[sh.Board]++
		total := 0.0
		for _, pt := range sh.Parts {
			total += pt.DX * pt.DY
		}
		for _, pt := range sh.Parts {
			if byOrder[pt.ProdOrderID] == nil {
				byOrder[pt.ProdOrderID] = map[string]float64{}
			}
			byOrder[pt.ProdOrderID][sh.Board] += pt.DX * pt.DY / total
		}
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
	require.NoError(t, database.Scan(env.App.DB.Raw(`SELECT prod_order_id, needed AS "left" FROM stock_needs WHERE code = ?`, board), &rows))
	out := map[int64]float64{}
	for _, r := range rows {
		if math.Abs(r.Left) > 1e-9 {
			out[r.ProdOrderID] = r.Left
		}
	}
	return out
}

// requireStockInvariants checks, for every material: on hand = receipts +
// counts − write-offs − consumption, available = on hand − reserved,
// reserved = the needs' movements = what the live production orders still
// need (stock_needs), never negative.
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
		case "consume", "write_off":
			onHand[m.Code] -= m.Qty
		case "reserve":
			reserved[m.Code] += m.Qty
		case "release":
			reserved[m.Code] -= m.Qty
		}
	}
	var needs []struct {
		Code   string
		Needed float64
	}
	require.NoError(t, database.Scan(env.App.DB.Raw(`SELECT code, sum(needed) AS needed FROM stock_needs GROUP BY code`), &needs))
	held := map[string]float64{}
	for _, n := range needs {
		held[n.Code] = n.Needed
	}
	for code, l := range stockOf(t, env) {
		require.InDelta(t, onHand[code], l.OnHand, 6e-3, "%s: on hand = receipts + counts − write-offs − consumption", code)
		require.InDelta(t, l.OnHand-l.Reserved, l.Available, 1.2e-2, "%s: available = on hand − reserved", code)
		require.InDelta(t, reserved[code], l.Reserved, 6e-3, "%s: reserved = the needs' movements", code)
		require.InDelta(t, held[code], l.Reserved, 6e-3, "%s: reserved = what the live orders still need", code)
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

// A cutting plan's sheets are what stock reserves and uses up: a launch
// reserves each part's share of the optimiser's estimate; the plan sets it
// to the part's share of the sheet it lies on, so that what the orders need
// of a board is exactly the plan's new sheets (an offcut it cuts is
// reserved whole, as a stock item); a sheet reported cut uses up exactly
// one sheet of its board (an offcut none; the parts cut on it use up no
// area of their own), keeps its offcuts in stock with their codes, and the
// shortages follow.
func TestCuttingPlans_SheetsFlowIntoStock(t *testing.T) {
	t.Parallel()
	scantest.Tools(t)
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
		estimate := map[string]float64{}
		for _, po := range []prodOrder{po1, po2, po3} {
			for _, p := range po.Parts {
				estimate[p.Board] += p.BoardNeed
			}
		}
		s := stockOf(t, env)
		for _, b := range []string{"LDSP16-WHITE", "LDSP16-SONOMA"} {
			require.InDelta(t, estimate[b], s[b].Reserved, 2e-3, "%s: the parts' estimated needs, pooled", b)
		}
		require.Less(t, s["LDSP16-WHITE"].Reserved, 3.0, "pooled: not a whole sheet per order")
		backlog := map[string]float64{}
		for code, l := range shortagesOf(t, env) {
			backlog[code] = l.Backlog
		}

		// The plan sets the needs to its sheets.
		pre := stockOf(t, env)
		p := createCutPlan(t, env, po1.ID, po2.ID, po3.ID)
		sheets, shares := newSheetsOf(p)
		require.Equal(t, 2.0, sheets["LDSP16-WHITE"], "the plan puts the nightstands beside the wardrobe")
		require.Equal(t, 1.0, sheets["LDSP16-SONOMA"])
		s = stockOf(t, env)
		short := shortagesOf(t, env)
		for _, b := range p.Boards {
			n := sheets[b.Board]
			require.InDelta(t, n, s[b.Board].Reserved, 2e-3, "%s: the plan's %v new sheets are reserved", b.Board, n)
			require.Equal(t, pre[b.Board].OnHand, s[b.Board].OnHand, "%s: a plan uses nothing up", b.Board)
			requireShortage(t, short, s[b.Board], backlog[b.Board])
			for _, po := range []int64{po1.ID, po2.ID, po3.ID} {
				require.InDelta(t, shares[po][b.Board], reservedLeft(t, env, b.Board)[po], 1e-6, "%s of production order %d: its parts' shares of their sheets", b.Board, po)
			}
		}
		changed := catalogEventsOf(t, env, "stock.released")
		require.NotEmpty(t, changed, "the plan needs fewer sheets than the estimate: the difference is released")
		require.Equal(t, "Администратор", changed[0].Actor.Name, "the plan's author")
		require.Equal(t, "cutting_plan", changed[0].Payload["source"].(map[string]any)["what"])
		requireStockInvariants(t, env)

		// A new white sheet reported cut: one sheet used up, its offcuts kept.
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
		consumed := len(catalogEventsOf(t, env, "stock.consumed"))
		master := env.UserToken("Мастер участка", "master")
		r := env.Do(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d/cut", p.ID, n), nil, master)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		s = stockOf(t, env)
		require.InDelta(t, onHand-1, s["LDSP16-WHITE"].OnHand, 1e-6, "exactly one sheet used up, none of the parts' area")
		require.InDelta(t, sheets["LDSP16-WHITE"]-1, s["LDSP16-WHITE"].Reserved, 2e-3)
		require.Equal(t, onHand, s["LDSP16-SONOMA"].OnHand)
		evs := catalogEventsOf(t, env, "stock.consumed")
		require.Len(t, evs, consumed+1, "one document for the sheet")
		require.Equal(t, "Мастер участка", evs[0].Actor.Name)
		src := evs[0].Payload["source"].(map[string]any)
		require.Equal(t, map[string]any{"plan_id": float64(p.ID), "n": float64(n)}, src["sheet"], "the document names the sheet")
		require.Len(t, src["parts"], len(sh.Parts), "and its parts")
		var kept []string
		for k := range sh.Offcuts {
			kept = append(kept, fmt.Sprintf("O%d-%d-%d", p.ID, n, k+1))
		}
		require.ElementsMatch(t, kept, evs[0].Payload["offcuts_kept"])
		var offcuts struct {
			Items []struct {
				Code, Board, Status string
				LengthMM            float64 `json:"length_mm"`
				WidthMM             float64 `json:"width_mm"`
			}
		}
		env.Admin(http.MethodGet, "/api/v1/stock/offcuts?board=ldsp16-white", nil).JSON(t, &offcuts)
		require.Len(t, offcuts.Items, len(sh.Offcuts), "the offcuts are stock, listed by board")
		for _, o := range offcuts.Items {
			require.Contains(t, kept, o.Code)
			require.Equal(t, "available", o.Status)
		}
		// Each has a label that scans to its code: a lost one is printed again.
		o := offcuts.Items[0]
		r = env.Admin(http.MethodGet, "/api/v1/stock/offcuts/"+strings.ToLower(o.Code)+"/label", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, "application/pdf", r.Header.Get("Content-Type"))
		require.Equal(t, [][]string{{o.Code}}, scantest.DecodePDF(t, r.Body, 203))
		text := scantest.Text(t, r.Body)
		require.Len(t, text, 1)
		for _, s := range []string{"Деловой остаток", fmt.Sprintf("%g × %g мм", o.LengthMM, o.WidthMM), "LDSP16-WHITE", fmt.Sprintf("Раскрой №%d · лист %d", p.ID, n)} {
			require.Contains(t, text[0], s)
		}
		r = env.Admin(http.MethodGet, "/api/v1/stock/offcuts/"+o.Code+"/label?format=zpl&dpi=300", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Contains(t, string(r.Body), "^FD"+o.Code)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/stock/offcuts/O999-1-1/label", nil), http.StatusNotFound)
		short = shortagesOf(t, env)
		requireShortage(t, short, s["LDSP16-WHITE"], backlog["LDSP16-WHITE"])
		requireStockInvariants(t, env)

		// A plan of what is left, from the cut sheet's offcut too: cutting the offcut uses up no sheet.
		p2 := createCutPlan(t, env, po1.ID, po2.ID, po3.ID)
		sheets2, _ := newSheetsOf(p2)
		s = stockOf(t, env)
		for _, b := range p2.Boards {
			require.InDelta(t, sheets2[b.Board], s[b.Board].Reserved, 2e-3, b.Board)
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
		env.Admin(http.MethodGet, "/api/v1/stock/offcuts?board=LDSP16-WHITE&status=reserved", nil).JSON(t, &offcuts)
		require.Len(t, offcuts.Items, len(offcut), "reserved by the plan")
		cut := func(n int) {
			t.Helper()
			r := env.Do(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d/cut", p2.ID, n), nil, master)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
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
		env.Admin(http.MethodGet, "/api/v1/stock/offcuts?board=LDSP16-WHITE&status=used", nil).JSON(t, &offcuts)
		require.Len(t, offcuts.Items, len(offcut), "used up")
		for _, n := range rest {
			cut(n)
		}
		s = stockOf(t, env)
		for _, b := range p2.Boards {
			require.InDelta(t, before[b.Board].OnHand-sheets2[b.Board], s[b.Board].OnHand, 1e-6, "%s: every new sheet used up once", b.Board)
			require.Zero(t, s[b.Board].Reserved, "%s: all cut, nothing left reserved", b.Board)
		}
		requireStockInvariants(t, env)
	})
}

// A part scanned through cutting is cut on its plan: its sheet goes to the
// saw then (used up once, its offcuts kept), the plan stays valid for the
// other parts, and reporting the sheet cut completes them without using it
// up again. Messages about a part name its label's code.
func TestCuttingPlans_ScanAndSheetTogether(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{{"code": "LDSP16-WHITE", "qty": 10}}})
		_, ids := receive(t, env, line{"SHK-KUPE-1600", 2})
		po := launch(t, env, map[string]any{"items": ids})
		p := createCutPlan(t, env, po.ID)
		var sh cutSheet
		for _, x := range p.SheetList {
			if x.Board == "LDSP16-WHITE" && len(x.Parts) > 1 && len(x.Offcuts) > 0 {
				sh = x
				break
			}
		}
		require.NotZero(t, sh.N, "a white sheet of several parts that leaves an offcut")
		parts := prodOrderParts(t, env, po.ID)
		code := map[int64]string{}
		for _, pt := range parts {
			code[pt.ID] = pt.Code
		}
		master := env.UserToken("Мастер участка", "master")
		before := stockOf(t, env)["LDSP16-WHITE"]

		scanOK(t, env, master, code[sh.Parts[0].PartID], 1)
		after := stockOf(t, env)["LDSP16-WHITE"]
		require.InDelta(t, before.OnHand-1, after.OnHand, 1e-6, "the sheet went to the saw, whole")
		var offcuts struct{ Items []struct{ Code string } }
		env.Admin(http.MethodGet, "/api/v1/stock/offcuts?board=LDSP16-WHITE", nil).JSON(t, &offcuts)
		require.Len(t, offcuts.Items, len(sh.Offcuts), "its offcuts are kept when it goes to the saw")
		var got cutPlan
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d", p.ID), nil).JSON(t, &got)
		require.False(t, got.Stale, "a part cut on its plan leaves the plan valid: %v", got.Why)

		scanOK(t, env, master, code[sh.Parts[1].PartID], 1)
		require.InDelta(t, after.OnHand, stockOf(t, env)["LDSP16-WHITE"].OnHand, 1e-6, "the sheet is used up once")

		r := env.Do(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d/cut", p.ID, sh.N), nil, master)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.InDelta(t, after.OnHand, stockOf(t, env)["LDSP16-WHITE"].OnHand, 1e-6, "reporting the sheet uses nothing more")
		for _, pt := range partsOf(t, env, po.ID, "") {
			for _, x := range sh.Parts {
				if x.PartID == pt.ID {
					require.NotNil(t, pt.AtSeq)
					require.Greater(t, *pt.AtSeq, 1, "%s is through cutting", pt.Code)
				}
			}
		}
		env.Admin(http.MethodGet, "/api/v1/stock/offcuts?board=LDSP16-WHITE", nil).JSON(t, &offcuts)
		require.Len(t, offcuts.Items, len(sh.Offcuts), "kept once")
		requireStockInvariants(t, env)

		// A newer plan of the rest lays its parts out: the older plan's sheets
		// with them cannot be reported cut, and the 409 names the part's code.
		p2 := createCutPlan(t, env, po.ID)
		var other cutSheet
		for _, x := range p.SheetList {
			if x.N != sh.N && x.CutAt == nil {
				other = x
				break
			}
		}
		require.NotZero(t, other.N)
		pr := requireProblem(t, env.Do(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d/cut", p.ID, other.N), nil, master), http.StatusConflict)
		require.Contains(t, pr.Detail, code[other.Parts[0].PartID])
		require.Contains(t, pr.Detail, fmt.Sprintf("cutting plan %d", p2.ID))
		require.NotContains(t, pr.Detail, fmt.Sprintf("part %d ", other.Parts[0].PartID), "never an internal id")
	})
}
