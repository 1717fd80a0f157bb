package api_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// physicalSteps is how many random steps one run plays per database
// (PHYSICAL_STEPS overrides it, to play longer by hand).
func physicalSteps() int {
	if n, err := strconv.Atoi(os.Getenv("PHYSICAL_STEPS")); err == nil && n > 0 {
		return n
	}
	return 70
}

// A factory's weeks, played at random on both databases: orders received,
// launched and cancelled, cutting plans made, parts scanned, reported by
// quantity (with scrap named), scrapped, sheets reported cut, production
// orders closed short, units shipped, stock received, counted and written
// off. After every step the physical truth holds:
//   - on hand = receipts + counts − write-offs − consumption, from the
//     movements and from the journal's events alone;
//   - reserved = the needs' movements = the needs of the live orders =
//     what those orders' parts and units still need, counted here from the
//     floor (every part not cut its share of its sheet, or its estimate;
//     its bands until banded; a unit's fittings until assembled); a
//     production order that is not live needs nothing;
//   - a board's consumption is the sheets really taken to the saw, once
//     each, and the area of the parts cut without a plan;
//   - every part is used up once (one document names it being cut);
//   - nothing shipped comes back.
func TestPhysicalTruth_Weeks(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		seed := uint64(20261204) // PHYSICAL_SEED overrides it, to play other weeks by hand
		if n, err := strconv.ParseUint(os.Getenv("PHYSICAL_SEED"), 10, 64); err == nil {
			seed = n
		}
		if env.Dialect == database.SQLite {
			seed++
		}
		w := &week{t: t, env: env, rng: rand.New(rand.NewPCG(seed, 41)), shipped: map[int64]int{}, taken: map[string]bool{}}
		w.master = env.UserToken("Мастер участка", "master")
		env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{
			{"code": "LDSP16-WHITE", "qty": 8}, {"code": "LDSP16-SONOMA", "qty": 4}, {"code": "LDSP16-SHIMO", "qty": 3},
			{"code": "HDF3-WHITE", "qty": 3}, {"code": "PVC2-WHITE", "qty": 60}, {"code": "CONFIRMAT", "qty": 300}}})
		steps := physicalSteps()
		for i := range steps {
			what := w.step()
			w.env.Dispatch()
			w.check(fmt.Sprintf("step %d (%s), seed %d", i+1, what, seed))
		}
		require.Greater(t, w.did["cut sheet"]+w.did["scan"]+w.did["report"], 5, "the floor did work: %v", w.did)
		t.Logf("%s: %v", env.Dialect, w.did)
	})
}

// week is a run of TestPhysicalTruth_Weeks: what it did and saw so far.
type week struct {
	t       *testing.T
	env     *apptest.Env
	rng     *rand.Rand
	master  string
	did     map[string]int
	shipped map[int64]int   // item → shipped so far
	taken   map[string]bool // cutting-plan sheets reported cut, "plan/n"
}

// step plays one random action that the state allows and returns its name.
func (w *week) step() string {
	if w.did == nil {
		w.did = map[string]int{}
	}
	actions := []struct {
		name   string
		weight int
		do     func() bool
	}{
		{"order", 6, w.order}, {"launch", 6, w.launch}, {"plan", 3, w.plan}, {"scan", 8, w.scan}, {"report", 6, w.report},
		{"cut sheet", 4, w.cutSheet}, {"scrap", 2, w.scrap}, {"cancel", 1, w.cancel}, {"close", 1, w.closeShort},
		{"ship", 3, w.ship}, {"receive", 1, w.receipt}, {"count", 1, w.count}, {"write off", 1, w.writeOff},
	}
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	for range 50 {
		n := w.rng.IntN(total)
		for _, a := range actions {
			if n -= a.weight; n >= 0 {
				continue
			}
			if a.do() {
				w.did[a.name]++
				return a.name
			}
			break
		}
	}
	w.order()
	w.did["order"]++
	return "order"
}

func (w *week) ok(r apptest.Response, status int) {
	w.t.Helper()
	require.Equal(w.t, status, r.Status, "%s", r.Body)
}

func (w *week) ids(q string, args ...any) []int64 {
	w.t.Helper()
	var ids []int64
	require.NoError(w.t, database.Scan(w.env.App.DB.Raw(q, args...), &ids))
	return ids
}

func (w *week) pick(ids []int64) int64 { return ids[w.rng.IntN(len(ids))] }

func (w *week) order() bool {
	skus := []string{"TMB-PRIK-450", "TMB-PRIK-450", "SHK-KUPE-1600", "SHK-RASP-1200"}
	decors := []string{"", "Дуб сонома", "Ясень шимо", "Белый"}
	var items []map[string]any
	for range 1 + w.rng.IntN(2) {
		it := map[string]any{"sku": skus[w.rng.IntN(len(skus))], "qty": 1 + w.rng.IntN(2)}
		opts := map[string]string{}
		if d := decors[w.rng.IntN(len(decors))]; d != "" {
			opts["корпус"] = d
		}
		if d := decors[w.rng.IntN(len(decors))]; d != "" {
			opts["фасад"] = d
		}
		it["options"] = opts
		items = append(items, it)
	}
	receiveOrder(w.t, w.env, map[string]any{"customer": map[string]any{"name": "Покупатель"}, "items": items})
	return true
}

func (w *week) launch() bool {
	backlog := w.ids("SELECT item_id FROM plan_backlog ORDER BY item_id")
	if len(backlog) == 0 {
		return false
	}
	n := min(len(backlog), 1+w.rng.IntN(3))
	w.rng.Shuffle(len(backlog), func(i, j int) { backlog[i], backlog[j] = backlog[j], backlog[i] })
	w.ok(w.env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": backlog[:n]}), http.StatusCreated)
	return true
}

// liveWithUncut are the live production orders with a part not yet cut.
func (w *week) liveWithUncut() []int64 {
	return w.ids(`SELECT DISTINCT o.id FROM plan_prod_orders o JOIN plan_operations op ON op.prod_order_id = o.id
WHERE o.status IN ('launched', 'in_progress') AND op.part_id IS NOT NULL AND op.seq = 1 AND op.status <> 'done' ORDER BY o.id`)
}

func (w *week) plan() bool {
	live := w.liveWithUncut()
	if len(live) == 0 {
		return false
	}
	w.rng.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
	w.ok(w.env.Admin(http.MethodPost, "/api/v1/cutting-plans", map[string]any{"prod_orders": live[:min(len(live), 1+w.rng.IntN(2))]}), http.StatusAccepted)
	w.env.RunJobs()
	return true
}

// ready is an operation ready to be reported: not done, every one before
// it on its part (or unit) done.
type ready struct {
	ID, ProdOrderID, ItemID int64
	Unit, Seq               int
	PartID                  *int64
	Code                    string
}

func (w *week) readyOps() []ready {
	w.t.Helper()
	var rs []ready
	require.NoError(w.t, database.Scan(w.env.App.DB.Raw(`SELECT op.id, op.prod_order_id, op.item_id, op.unit, op.seq, op.part_id,
  COALESCE(p.code, u.code) AS code
FROM plan_operations op JOIN plan_prod_orders o ON o.id = op.prod_order_id
LEFT JOIN plan_parts p ON p.id = op.part_id
LEFT JOIN plan_units u ON u.prod_order_id = op.prod_order_id AND u.item_id = op.item_id AND u.unit = op.unit
WHERE o.status IN ('launched', 'in_progress') AND op.status <> 'done' AND NOT EXISTS (
  SELECT 1 FROM plan_operations b WHERE b.prod_order_id = op.prod_order_id AND b.item_id = op.item_id AND b.unit = op.unit
    AND b.seq < op.seq AND b.status <> 'done' AND (b.part_id IS NULL OR op.part_id IS NULL OR b.part_id = op.part_id))
ORDER BY op.id`), &rs))
	return rs
}

func (w *week) scan() bool {
	rs := w.readyOps()
	if len(rs) == 0 {
		return false
	}
	r := rs[w.rng.IntN(len(rs))]
	w.ok(w.env.Do(http.MethodPost, "/api/v1/floor/scans", map[string]any{"code": r.Code, "step": r.Seq}, w.master), http.StatusOK)
	return true
}

func (w *week) report() bool {
	rs := w.readyOps()
	if len(rs) == 0 {
		return false
	}
	r := rs[w.rng.IntN(len(rs))]
	var same []ready
	for _, x := range rs {
		if x.ProdOrderID == r.ProdOrderID && x.Seq == r.Seq {
			same = append(same, x)
		}
	}
	body := map[string]any{"seq": r.Seq, "qty": 1 + w.rng.IntN(len(same))}
	if r.PartID != nil && len(same) > 1 && w.rng.IntN(4) == 0 {
		spoilt := same[len(same)-1]
		body["qty"] = min(body["qty"].(int), len(same)-1)
		body["scrap_parts"] = []map[string]any{{"code": spoilt.Code, "reason": "chipped"}}
	}
	w.ok(w.env.Do(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", r.ProdOrderID), body, w.master), http.StatusOK)
	return true
}

func (w *week) cutSheet() bool {
	var sheets []struct {
		PlanID int64
		N      int
	}
	require.NoError(w.t, database.Scan(w.env.App.DB.Raw(`SELECT s.plan_id, s.n FROM cutting_sheets s JOIN cutting_plans p ON p.id = s.plan_id
WHERE s.cut_at IS NULL AND p.replaced_by IS NULL ORDER BY s.plan_id, s.n`), &sheets))
	w.rng.Shuffle(len(sheets), func(i, j int) { sheets[i], sheets[j] = sheets[j], sheets[i] })
	for _, sh := range sheets {
		r := w.env.Do(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d/cut", sh.PlanID, sh.N), nil, w.master)
		if r.Status == http.StatusConflict { // a newer plan lays a part of it out: the 409 names it by its code
			require.Regexp(w.t, `part P\d+-\d+(\.\d+)? is laid out by cutting plan \d+`, problemOf(w.t, r).Detail)
			continue
		}
		w.ok(r, http.StatusOK)
		w.taken[fmt.Sprintf("%d/%d", sh.PlanID, sh.N)] = true
		return true
	}
	return false
}

func problemOf(t *testing.T, r apptest.Response) problem {
	t.Helper()
	var p problem
	require.NoError(t, json.Unmarshal(r.Body, &p))
	return p
}

func (w *week) scrap() bool {
	rs := w.readyOps()
	var parts []ready
	for _, r := range rs {
		if r.PartID != nil {
			parts = append(parts, r)
		}
	}
	if len(parts) == 0 {
		return false
	}
	r := parts[w.rng.IntN(len(parts))]
	w.ok(w.env.Do(http.MethodPost, "/api/v1/floor/scrap", map[string]any{"code": r.Code, "reason": "damaged"}, w.master), http.StatusOK)
	return true
}

func (w *week) cancel() bool {
	launched := w.ids("SELECT id FROM plan_prod_orders WHERE status = 'launched' ORDER BY id")
	if len(launched) == 0 {
		return false
	}
	w.ok(w.env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", w.pick(launched)), nil), http.StatusOK)
	return true
}

func (w *week) closeShort() bool {
	started := w.ids("SELECT id FROM plan_prod_orders WHERE status = 'in_progress' ORDER BY id")
	if len(started) == 0 {
		return false
	}
	rest := []string{"backlog", "write_off"}[w.rng.IntN(2)]
	w.ok(w.env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/close", w.pick(started)),
		map[string]any{"reason": "конец недели", "rest": rest}), http.StatusOK)
	return true
}

func (w *week) ship() bool {
	var items []struct {
		ID, OrderID int64
		Left        int
	}
	require.NoError(w.t, database.Scan(w.env.App.DB.Raw(`SELECT id, order_id, LEAST_LEFT AS "left" FROM (
  SELECT id, order_id, CASE WHEN made_qty < qty - written_off_qty THEN made_qty ELSE qty - written_off_qty END - shipped_qty AS LEAST_LEFT
  FROM sales_order_items) x WHERE LEAST_LEFT > 0 ORDER BY id`), &items))
	if len(items) == 0 {
		return false
	}
	it := items[w.rng.IntN(len(items))]
	w.ok(w.env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/shipments", it.OrderID), map[string]any{"carrier": "ПЭК",
		"items": []map[string]any{{"item_id": it.ID, "qty": 1 + w.rng.IntN(it.Left)}}}), http.StatusCreated)
	return true
}

func (w *week) receipt() bool {
	w.ok(w.env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{
		{"code": []string{"LDSP16-WHITE", "LDSP16-SONOMA", "LDSP16-SHIMO", "HDF3-WHITE"}[w.rng.IntN(4)], "qty": 1 + w.rng.IntN(4)}}}), http.StatusCreated)
	return true
}

func (w *week) count() bool {
	code := []string{"LDSP16-WHITE", "PVC2-WHITE", "CONFIRMAT"}[w.rng.IntN(3)]
	qty := float64(w.rng.IntN(10))
	if code == "PVC2-WHITE" {
		qty = float64(w.rng.IntN(6000)) / 100
	}
	w.ok(w.env.Admin(http.MethodPost, "/api/v1/stock/counts", map[string]any{"reason": "инвентаризация",
		"lines": []map[string]any{{"code": code, "qty": qty}}}), http.StatusCreated)
	return true
}

func (w *week) writeOff() bool {
	var codes []string
	require.NoError(w.t, database.Scan(w.env.App.DB.Raw(`SELECT code FROM stock_offcuts WHERE status = 'available' ORDER BY id`), &codes))
	line := map[string]any{"code": "LDSP16-SONOMA", "qty": 1}
	if len(codes) > 0 && w.rng.IntN(2) == 0 {
		line = map[string]any{"code": codes[w.rng.IntN(len(codes))], "qty": 1}
	}
	w.ok(w.env.Admin(http.MethodPost, "/api/v1/stock/write-offs", map[string]any{"reason": "повреждён", "lines": []map[string]any{line}}), http.StatusCreated)
	return true
}

// check asserts the physical truth (see TestPhysicalTruth_Weeks).
func (w *week) check(at string) {
	t, db := w.t, w.env.App.DB
	t.Helper()
	const eps = 1e-6
	materials := map[string]struct {
		Kind string
		Area float64
	}{}
	var ms []struct {
		Code, Kind, Formats string
		L1, L2, W1, W2      float64
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT code, kind, formats, trim_l1_mm AS l1, trim_l2_mm AS l2, trim_w1_mm AS w1, trim_w2_mm AS w2 FROM catalog_materials`), &ms))
	for _, m := range ms {
		var fs []struct {
			LengthMM float64 `json:"length_mm"`
			WidthMM  float64 `json:"width_mm"`
		}
		require.NoError(t, json.Unmarshal([]byte(m.Formats), &fs))
		area := 0.0
		for _, f := range fs {
			area = math.Max(area, (f.LengthMM-m.W1-m.W2)*(f.WidthMM-m.L1-m.L2)/1e6)
		}
		materials[m.Code] = struct {
			Kind string
			Area float64
		}{m.Kind, area}
	}

	// Levels against movements and needs.
	var levels []struct {
		Code             string
		OnHand, Reserved float64
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT code, on_hand, reserved FROM stock_levels`), &levels))
	var moves []struct {
		Code, Kind string
		Qty        float64
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT code, kind, qty FROM stock_movements`), &moves))
	onHand, reserved, consumed := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, m := range moves {
		switch m.Kind {
		case "receipt", "count":
			onHand[m.Code] += m.Qty
		case "consume":
			onHand[m.Code] -= m.Qty
			consumed[m.Code] += m.Qty
		case "write_off":
			onHand[m.Code] -= m.Qty
		case "reserve":
			reserved[m.Code] += m.Qty
		case "release":
			reserved[m.Code] -= m.Qty
		}
	}
	var needs []struct {
		ProdOrderID int64
		Code        string
		Needed      float64
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT prod_order_id, code, needed FROM stock_needs`), &needs))
	held := map[string]float64{}
	for _, n := range needs {
		held[n.Code] += n.Needed
	}
	journal := w.journalOnHand()
	for _, l := range levels {
		require.InDelta(t, onHand[l.Code], l.OnHand, eps, "%s: %s on hand = receipts + counts − write-offs − consumption", at, l.Code)
		require.InDelta(t, journal[l.Code], l.OnHand, 1e-4, "%s: %s on hand from the journal alone", at, l.Code)
		require.InDelta(t, reserved[l.Code], l.Reserved, eps, "%s: %s reserved = the needs' movements", at, l.Code)
		require.InDelta(t, held[l.Code], l.Reserved, eps, "%s: %s reserved = what the orders need", at, l.Code)
	}

	// What each order needs = what its parts and units still need.
	want := w.remainingNeeds(materials)
	got := map[int64]map[string]float64{}
	for _, n := range needs {
		if got[n.ProdOrderID] == nil {
			got[n.ProdOrderID] = map[string]float64{}
		}
		got[n.ProdOrderID][n.Code] += n.Needed
	}
	for order, codes := range got {
		for code, v := range codes {
			require.InDelta(t, want[order][code], v, 1e-4, "%s: production order %d needs of %s what its parts and units still need", at, order, code)
		}
	}
	for order, codes := range want {
		for code, v := range codes {
			require.InDelta(t, v, got[order][code], 1e-4, "%s: production order %d needs of %s what its parts and units still need", at, order, code)
		}
	}

	// A board's consumption is its sheets taken to the saw and the area of
	// the parts cut without a plan.
	var cut []struct {
		Code, Board       string
		LengthMM, WidthMM float64
		SheetPlanID       *int64
		SheetN            *int
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT p.code, p.board, p.length_mm, p.width_mm, p.sheet_plan_id, p.sheet_n FROM plan_parts p
WHERE (p.status = 'live' AND EXISTS (SELECT 1 FROM plan_operations op WHERE op.part_id = p.id AND op.seq = 1 AND op.status = 'done'))
   OR p.status = 'scrapped'`), &cut))
	sheets := map[string]bool{}
	boards := map[string]float64{}
	for _, p := range cut {
		if p.SheetPlanID != nil {
			sheets[fmt.Sprintf("%d/%d", *p.SheetPlanID, *p.SheetN)] = true
			continue
		}
		boards[p.Board] += p.LengthMM * p.WidthMM / 1e6 / materials[p.Board].Area
	}
	for k := range w.taken {
		sheets[k] = true
	}
	var taken []struct {
		PlanID   int64
		N        int
		Board    string
		OffcutID *int64
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT plan_id, n, board, offcut_id FROM stock_plan_sheets WHERE document_id IS NOT NULL`), &taken))
	require.Len(t, taken, len(sheets), "%s: the sheets taken to the saw are those its parts were cut on or reported cut", at)
	for _, s := range taken {
		require.True(t, sheets[fmt.Sprintf("%d/%d", s.PlanID, s.N)], "%s: sheet %d/%d taken to the saw", at, s.PlanID, s.N)
		if s.OffcutID == nil {
			boards[s.Board]++
		}
	}
	for code, m := range materials {
		if m.Kind == "board" {
			require.InDelta(t, boards[code], consumed[code], 1e-4, "%s: %s used up = its sheets taken to the saw + the area of parts cut without a plan", at, code)
		}
	}

	// Every part is cut once: one document uses up the board it is cut
	// from, naming it.
	var docs []struct {
		ID     int64
		Source string
		Code   string
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT d.id, d.source, m.code FROM stock_documents d JOIN stock_movements m ON m.document_id = d.id
WHERE d.kind = 'consumption' AND m.kind = 'consume' ORDER BY d.id`), &docs))
	var boardOf map[string]string
	{
		var ps []struct{ Code, Board string }
		require.NoError(t, database.Scan(db.Raw(`SELECT code, board FROM plan_parts`), &ps))
		boardOf = make(map[string]string, len(ps))
		for _, p := range ps {
			boardOf[p.Code] = p.Board
		}
	}
	usedUp := map[int64]map[string]bool{}
	sourceOf := map[int64]string{}
	for _, d := range docs {
		if usedUp[d.ID] == nil {
			usedUp[d.ID] = map[string]bool{}
		}
		usedUp[d.ID][d.Code] = true
		sourceOf[d.ID] = d.Source
	}
	named := map[string]int{}
	for id, codes := range usedUp {
		var src struct {
			What  string
			Parts []string
		}
		require.NoError(t, json.Unmarshal([]byte(sourceOf[id]), &src))
		if src.What != "cut" && src.What != "scrapped" {
			continue
		}
		for _, p := range src.Parts {
			if codes[boardOf[p]] {
				named[p]++
				require.Equal(t, 1, named[p], "%s: part %s's board used up twice", at, p)
			}
		}
	}

	// Nothing shipped comes back.
	var items []struct {
		ID         int64
		Status     string
		ShippedQty int
		Qty        int
		WrittenOff int
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT id, status, shipped_qty, qty, written_off_qty AS written_off FROM sales_order_items`), &items))
	for _, it := range items {
		require.GreaterOrEqual(t, it.ShippedQty, w.shipped[it.ID], "%s: item %d shipped less than before", at, it.ID)
		w.shipped[it.ID] = it.ShippedQty
		if it.ShippedQty > 0 && it.ShippedQty >= it.Qty-it.WrittenOff {
			require.Equal(t, "shipped", it.Status, "%s: item %d shipped whole", at, it.ID)
		}
	}
}

// journalOnHand is on hand per material from the journal's stock events
// alone: receipts and counts add their lines, write-offs and consumption
// take theirs (offcuts, which are no material, left out).
func (w *week) journalOnHand() map[string]float64 {
	w.t.Helper()
	var evs []struct {
		Type    string
		Payload string
	}
	require.NoError(w.t, database.Scan(w.env.App.DB.Raw(`SELECT type, payload FROM events WHERE type IN ('stock.received', 'stock.counted', 'stock.written_off', 'stock.consumed') ORDER BY id`), &evs))
	out := map[string]float64{}
	for _, ev := range evs {
		var p struct {
			Lines []struct {
				Code string
				Qty  float64
			}
		}
		require.NoError(w.t, json.Unmarshal([]byte(ev.Payload), &p))
		for _, l := range p.Lines {
			if strings.HasPrefix(l.Code, "O") && strings.Count(l.Code, "-") == 2 {
				continue // an offcut
			}
			switch ev.Type {
			case "stock.consumed":
				out[l.Code] -= l.Qty
			default: // receipts, counts (the difference), write-offs (negative)
				out[l.Code] += l.Qty
			}
		}
	}
	return out
}

// remainingNeeds counts, from the floor's tables, what each live production
// order still needs: each live part not yet cut its board share (its share
// of the sheet a plan lays it on, by area, nothing on an offcut or on a
// sheet taken to the saw already; else its
// estimate, which is no less than its own area), each live part not yet
// banded its edges' metres with the order's overhang, each unit not yet
// assembled its fittings.
func (w *week) remainingNeeds(materials map[string]struct {
	Kind string
	Area float64
}) map[int64]map[string]float64 {
	t, db := w.t, w.env.App.DB
	t.Helper()
	var parts []struct {
		ID, ProdOrderID   int64
		Board             string
		LengthMM, WidthMM int
		BoardNeed         float64
		SheetPlanID       *int64
		SheetN            *int
		EdgeL1, EdgeL2    string
		EdgeW1, EdgeW2    string
		Overhang          int
		Cut, Banded       bool
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT p.id, p.prod_order_id, p.board, p.length_mm, p.width_mm, p.board_need, p.sheet_plan_id, p.sheet_n,
  p.edge_l1, p.edge_l2, p.edge_w1, p.edge_w2, o.edge_overhang_mm AS overhang,
  NOT EXISTS (SELECT 1 FROM plan_operations op WHERE op.part_id = p.id AND op.seq = 1 AND op.status <> 'done') AS cut,
  NOT EXISTS (SELECT 1 FROM plan_operations op WHERE op.part_id = p.id AND op.seq = 2 AND op.status <> 'done') AS banded
FROM plan_parts p JOIN plan_prod_orders o ON o.id = p.prod_order_id
WHERE o.status IN ('launched', 'in_progress') AND p.status = 'live'`), &parts))
	out := map[int64]map[string]float64{}
	add := func(order int64, code string, v float64) {
		if out[order] == nil {
			out[order] = map[string]float64{}
		}
		out[order][code] += v
	}
	shares := w.sheetShares()
	var taken []struct {
		PlanID int64
		N      int
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT plan_id, n FROM stock_plan_sheets WHERE document_id IS NOT NULL`), &taken))
	atSaw := map[string]bool{}
	for _, s := range taken {
		atSaw[fmt.Sprintf("%d/%d", s.PlanID, s.N)] = true
	}
	for _, p := range parts {
		if !p.Cut {
			share := p.BoardNeed
			if p.SheetPlanID != nil {
				key := fmt.Sprintf("%d/%d", *p.SheetPlanID, *p.SheetN)
				want, ok := shares[key][p.ID]
				require.True(t, ok, "part %d lies on sheet %s, which lays it out", p.ID, key)
				if atSaw[key] {
					want = 0 // the sheet went to the saw with a part cut from it: it holds this one too
				}
				require.InDelta(t, want, share, 1e-6, "part %d needs its share of its sheet %s (taken: %v)", p.ID, key, atSaw[key])
			} else {
				own := float64(p.LengthMM*p.WidthMM) / 1e6 / materials[p.Board].Area
				require.GreaterOrEqual(t, share, own-1e-9, "part %d's estimate is no less than its own area", p.ID)
			}
			add(p.ProdOrderID, p.Board, share)
		}
		if !p.Banded {
			for side, band := range map[string]string{"l1": p.EdgeL1, "l2": p.EdgeL2, "w1": p.EdgeW1, "w2": p.EdgeW2} {
				if band == "" {
					continue
				}
				l := p.LengthMM
				if side[0] == 'w' {
					l = p.WidthMM
				}
				add(p.ProdOrderID, band, float64(l+p.Overhang)/1000)
			}
		}
	}
	var units []struct {
		ProdOrderID, ItemID int64
		Code                string
		Qty                 float64
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT op.prod_order_id, op.item_id, f.code, f.qty * 1.0 / i.qty AS qty
FROM plan_operations op JOIN plan_prod_orders o ON o.id = op.prod_order_id
JOIN plan_prod_order_items i ON i.prod_order_id = op.prod_order_id AND i.item_id = op.item_id
JOIN plan_fittings f ON f.prod_order_id = op.prod_order_id AND f.item_id = op.item_id
WHERE o.status IN ('launched', 'in_progress') AND op.part_id IS NULL AND op.seq = 4 AND op.status <> 'done'`), &units))
	for _, u := range units {
		add(u.ProdOrderID, u.Code, u.Qty)
	}
	for order, codes := range out {
		for code, v := range codes {
			if math.Abs(v) < 1e-9 {
				delete(codes, code)
			}
		}
		if len(codes) == 0 {
			delete(out, order)
		}
	}
	return out
}

// sheetShares is each part's share of its cutting-plan sheet, by area
// (nothing on an offcut), per sheet "plan/n", from the stored layouts.
func (w *week) sheetShares() map[string]map[int64]float64 {
	w.t.Helper()
	var rows []struct {
		PlanID   int64
		N        int
		OffcutID *int64
		Layout   string
	}
	require.NoError(w.t, database.Scan(w.env.App.DB.Raw(`SELECT plan_id, n, offcut_id, layout FROM cutting_sheets`), &rows))
	out := map[string]map[int64]float64{}
	for _, r := range rows {
		var sh cutSheet
		require.NoError(w.t, json.Unmarshal([]byte(r.Layout), &sh))
		total := 0.0
		for _, p := range sh.Parts {
			total += p.DX * p.DY
		}
		m := map[int64]float64{}
		for _, p := range sh.Parts {
			if r.OffcutID == nil {
				m[p.PartID] = p.DX * p.DY / total
			} else {
				m[p.PartID] = 0
			}
		}
		out[fmt.Sprintf("%d/%d", r.PlanID, r.N)] = m
	}
	return out
}
