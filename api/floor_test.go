package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/render/scantest"
)

type floorPart struct {
	ID        int64
	Code      string
	UnitCode  string `json:"unit_code"`
	ItemID    int64  `json:"item_id"`
	Unit      int
	Name      string
	Material  string
	Board     string
	BoardNeed float64 `json:"board_need"`
	LengthMM  int     `json:"length_mm"`
	WidthMM   int     `json:"width_mm"`
	Edges     map[string]string
	State     string
	Status    string
	AtSeq     *int    `json:"at_seq"`
	RecutOf   *int64  `json:"recut_of"`
	RecutCode *string `json:"recut_code"`
	Scrap     struct {
		ScrapSeq    *int    `json:"scrap_seq"`
		ScrapReason string  `json:"scrap_reason"`
		ScrapNote   string  `json:"scrap_note"`
		ScrappedBy  *string `json:"scrapped_by"`
	}
	Steps []struct {
		Seq         int
		Status      string
		CompletedBy *string `json:"completed_by"`
	}
}

type scanResult struct {
	Code      string
	Kind      string
	Repeated  bool
	NextSeq   *int   `json:"next_seq"`
	UnitMade  bool   `json:"unit_made"`
	Status    string `json:"prod_order_status"`
	Operation struct {
		ID     int64
		Seq    int
		Status string
	}
}

// partsOf lists every part of the production order, page by page.
func partsOf(t *testing.T, env *apptest.Env, id int64, query string) []floorPart {
	t.Helper()
	var all []floorPart
	cursor := ""
	for {
		url := fmt.Sprintf("/api/v1/production-orders/%d/parts?limit=5%s", id, query)
		if cursor != "" {
			url += "&cursor=" + cursor
		}
		r := env.Admin(http.MethodGet, url, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var page struct {
			Items      []floorPart
			NextCursor string `json:"next_cursor"`
		}
		r.JSON(t, &page)
		all = append(all, page.Items...)
		if page.NextCursor == "" {
			return all
		}
		cursor = page.NextCursor
	}
}

func scanAs(t *testing.T, env *apptest.Env, token, code string, step int) apptest.Response {
	t.Helper()
	return env.Do(http.MethodPost, "/api/v1/floor/scans", map[string]any{"code": code, "step": step}, token)
}

func scanOK(t *testing.T, env *apptest.Env, token, code string, step int) scanResult {
	t.Helper()
	r := scanAs(t, env, token, code, step)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var s scanResult
	r.JSON(t, &s)
	return s
}

func countEvents(t *testing.T, env *apptest.Env, typ, code string) int {
	t.Helper()
	var payloads []string
	require.NoError(t, database.Scan(env.App.DB.Raw("SELECT CAST(payload AS TEXT) FROM events WHERE type = ?", typ), &payloads))
	n := 0
	for _, p := range payloads {
		var v struct{ Code string }
		require.NoError(t, json.Unmarshal([]byte(p), &v))
		if code == "" || v.Code == code {
			n++
		}
	}
	return n
}

// A wardrobe goes from launch to packing by scans alone: its 13 parts
// through cutting, edging and drilling by their codes, then its unit
// through assembly and packing by the unit's code. Out of route order is a
// 409 naming the step the part is at; the same scan twice is one report;
// bad input changes nothing. The unit made is made for its item at once:
// sales sees the order ready.
func TestFloor_WardrobeByScans(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		orderID, ids := receive(t, env, line{"SHK-KUPE-1600", 1})
		o := launch(t, env, map[string]any{"items": ids})
		master := env.UserToken("Мастер участка", "master")
		viewer := env.UserToken("Наблюдатель", "viewer")

		parts := partsOf(t, env, o.ID, "")
		require.Len(t, parts, 13)
		codes := map[string]bool{}
		for i, p := range parts {
			require.Equal(t, fmt.Sprintf("P%d-%d", o.ID, i+1), p.Code)
			require.Equal(t, fmt.Sprintf("U%d-1", o.ID), p.UnitCode)
			require.Equal(t, "pending", p.State)
			require.Len(t, p.Steps, 3)
			codes[p.Code] = true
		}
		require.Len(t, codes, 13)
		unit := parts[0].UnitCode

		// Bad input: nothing changes.
		for _, c := range []struct {
			code  string
			step  int
			field string
		}{{"P999999-1", 1, "code"}, {"", 1, "code"}, {parts[0].Code, 0, "step"}, {parts[0].Code, 9, "step"}, {parts[0].Code, 4, "step"}, {unit, 1, "step"}} {
			r := scanAs(t, env, master, c.code, c.step)
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%v: %s", c, r.Body)
			require.Contains(t, string(r.Body), `"field":"`+c.field+`"`)
		}
		r := scanAs(t, env, viewer, parts[0].Code, 1)
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		r = env.Do(http.MethodPost, "/api/v1/floor/scans", map[string]any{"code": parts[0].Code, "step": 1, "prod_order_id": o.ID + 1}, master)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "a code of another production order: %s", r.Body)
		require.Contains(t, string(r.Body), `"field":"code"`)
		r = scanAs(t, env, master, parts[0].Code, 2)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		require.Contains(t, string(r.Body), "is at step 1")
		require.Equal(t, 0, countEvents(t, env, "operation.completed", ""))

		// Cutting, edging, drilling, part by part; a lower-case scan reads the same.
		for seq := 1; seq <= 3; seq++ {
			for i, p := range parts {
				code := p.Code
				if i == 0 {
					code = strings.ToLower(code)
				}
				s := scanOK(t, env, master, code, seq)
				require.False(t, s.Repeated)
				require.Equal(t, "part", s.Kind)
				require.Equal(t, "done", s.Operation.Status)
				require.NotNil(t, s.NextSeq)
				require.Equal(t, seq+1, *s.NextSeq)
				if seq == 1 && i == 5 {
					// the unit cannot be assembled before its parts are through
					r := scanAs(t, env, master, unit, 4)
					require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
					require.Contains(t, string(r.Body), "is at step 1")
				}
			}
		}
		again := scanOK(t, env, master, parts[3].Code, 3)
		require.True(t, again.Repeated, "the same scan again is one report")
		require.Equal(t, 13*3, countEvents(t, env, "operation.completed", ""))

		drilled := partsOf(t, env, o.ID, "&step=3&state=done")
		require.Len(t, drilled, 13)
		require.Equal(t, "done", drilled[0].State)
		require.Equal(t, "Мастер участка", *drilled[0].Steps[2].CompletedBy)
		require.Empty(t, partsOf(t, env, o.ID, "&step=3&state=pending"))

		s := scanOK(t, env, master, unit, 4)
		require.Equal(t, "unit", s.Kind)
		require.False(t, s.UnitMade)
		s = scanOK(t, env, master, unit, 5)
		require.True(t, s.UnitMade)
		require.Nil(t, s.NextSeq)
		require.Equal(t, "done", s.Status)
		require.Equal(t, 1, countEvents(t, env, "unit.made", unit))
		require.True(t, scanOK(t, env, master, unit, 5).Repeated)
		r = scanAs(t, env, master, parts[0].Code, 1)
		require.Equal(t, http.StatusOK, r.Status, "a repeated scan of a done order is still one report: %s", r.Body)

		env.Dispatch()
		so := salesOf(t, env, orderID)
		require.Equal(t, "ready", so.Status)
		require.Equal(t, 1, so.Items[0].MadeQty)
	})
}

// Twenty scans of one code at the same instant are one report: one
// operation.completed, the others answered as repeated.
func TestFloor_ParallelScansAreOneReport(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		_, ids := receive(t, env, line{"TMB-PRIK-450", 1})
		o := launch(t, env, map[string]any{"items": ids})
		code := fmt.Sprintf("P%d-1", o.ID)
		var wg sync.WaitGroup
		results := make([]apptest.Response, 20)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = env.Do(http.MethodPost, "/api/v1/floor/scans", map[string]any{"code": code, "step": 1}, apptest.AdminToken)
			}()
		}
		wg.Wait()
		fresh := 0
		for _, r := range results {
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var s scanResult
			r.JSON(t, &s)
			if !s.Repeated {
				fresh++
			}
		}
		require.Equal(t, 1, fresh)
		require.Equal(t, 1, countEvents(t, env, "operation.completed", code))
		require.Equal(t, 1, countEvents(t, env, "prod_order.started", ""))
	})
}

type scrapResult struct {
	Scrapped floorPart
	Recut    floorPart
}

type recutList struct {
	Boards []struct {
		Material    string
		ThicknessMM int `json:"thickness_mm"`
		Qty         int
		Parts       []struct {
			Code    string
			Name    string
			RecutOf string `json:"recut_of"`
			Reason  string
		}
	}
}

// A side panel of a wardrobe spoilt at drilling is scrapped by its code
// with a reason: it is kept, scrapped, with the reason and who reported it;
// a re-cut with a new code, linked to it, is on the saw's re-cut list and in
// the cutting list, goes through the steps again, and the unit is made once
// it has.
func TestFloor_ScrapSidePanelAtDrillingAndRecut(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		_, ids := receive(t, env, line{"SHK-KUPE-1600", 1})
		o := launch(t, env, map[string]any{"items": ids})
		master := env.UserToken("Мастер участка", "master")
		viewer := env.UserToken("Наблюдатель", "viewer")
		parts := partsOf(t, env, o.ID, "")
		for seq := 1; seq <= 2; seq++ {
			for _, p := range parts {
				scanOK(t, env, master, p.Code, seq)
			}
		}
		side := parts[0]
		require.Equal(t, "Боковина", side.Name)

		// Bad input changes nothing.
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"code": side.Code}, "reason"},
			{map[string]any{"code": side.Code, "reason": "oops"}, "reason"},
			{map[string]any{"code": "P999999-1", "reason": "drilling_error"}, "code"},
			{map[string]any{"reason": "drilling_error"}, "code"},
			{map[string]any{"code": side.UnitCode, "reason": "drilling_error"}, "code"},
			{map[string]any{"code": side.Code, "reason": "drilling_error", "step": 9}, "step"},
		} {
			r := env.Do(http.MethodPost, "/api/v1/floor/scrap", c.body, master)
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%v: %s", c.body, r.Body)
			require.Contains(t, string(r.Body), `"field":"`+c.field+`"`)
		}
		r := env.Do(http.MethodPost, "/api/v1/floor/scrap", map[string]any{"code": side.Code, "reason": "drilling_error"}, viewer)
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		require.Equal(t, 0, countEvents(t, env, "part.scrapped", ""))
		require.Empty(t, partsOf(t, env, o.ID, "&state=scrapped"))

		r = env.Do(http.MethodPost, "/api/v1/floor/scrap", map[string]any{"code": side.Code, "reason": "drilling_error", "note": "присадка не с той стороны"}, master)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var sc scrapResult
		r.JSON(t, &sc)
		require.Equal(t, "scrapped", sc.Scrapped.State)
		require.Equal(t, 3, *sc.Scrapped.Scrap.ScrapSeq, "spoilt at the step it was at: drilling")
		require.Equal(t, "drilling_error", sc.Scrapped.Scrap.ScrapReason)
		require.Equal(t, "присадка не с той стороны", sc.Scrapped.Scrap.ScrapNote)
		require.Equal(t, "Мастер участка", *sc.Scrapped.Scrap.ScrappedBy)
		require.Equal(t, side.Code+".1", sc.Recut.Code)
		require.Equal(t, side.Code+".1", *sc.Scrapped.RecutCode)
		require.Equal(t, side.ID, *sc.Recut.RecutOf)
		require.Equal(t, "pending", sc.Recut.State)
		require.Len(t, sc.Recut.Steps, 3)
		require.Equal(t, 1, countEvents(t, env, "part.scrapped", side.Code))
		require.Equal(t, 1, countEvents(t, env, "part.recut", sc.Recut.Code))
		r = env.Do(http.MethodPost, "/api/v1/floor/scrap", map[string]any{"code": side.Code, "reason": "drilling_error"}, master)
		require.Equal(t, http.StatusConflict, r.Status, "scrapped already: %s", r.Body)

		// The saw's re-cut list, by board, and the next cutting list.
		var rl recutList
		env.Admin(http.MethodGet, "/api/v1/floor/recuts", nil).JSON(t, &rl)
		require.Len(t, rl.Boards, 1)
		require.Equal(t, side.Material, rl.Boards[0].Material)
		require.Equal(t, 1, rl.Boards[0].Qty)
		require.Equal(t, sc.Recut.Code, rl.Boards[0].Parts[0].Code)
		require.Equal(t, side.Code, rl.Boards[0].Parts[0].RecutOf)
		require.Equal(t, "drilling_error", rl.Boards[0].Parts[0].Reason)
		var cl struct {
			Materials []struct {
				Parts []struct {
					Name string
					Qty  int
				}
			}
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d/cutting-list", o.ID), nil).JSON(t, &cl)
		sides := 0
		for _, m := range cl.Materials {
			for _, p := range m.Parts {
				if p.Name == "Боковина" {
					sides += p.Qty
				}
			}
		}
		require.Equal(t, 2, sides, "the other side and the re-cut: the scrapped side is not cut again")

		// The scrapped part no longer scans; the re-cut goes through again.
		r = scanAs(t, env, master, side.Code, 3)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		r = scanAs(t, env, master, sc.Recut.Code, 2)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		require.Contains(t, string(r.Body), "is at step 1")
		for _, p := range parts[1:] {
			scanOK(t, env, master, p.Code, 3)
		}
		r = scanAs(t, env, master, side.UnitCode, 4)
		require.Equal(t, http.StatusConflict, r.Status, "the re-cut is not through: %s", r.Body)
		require.Contains(t, string(r.Body), sc.Recut.Code)
		for seq := 1; seq <= 3; seq++ {
			scanOK(t, env, master, sc.Recut.Code, seq)
		}
		env.Admin(http.MethodGet, "/api/v1/floor/recuts", nil).JSON(t, &rl)
		require.Empty(t, rl.Boards, "cut: off the re-cut list")
		scanOK(t, env, master, side.UnitCode, 4)
		require.True(t, scanOK(t, env, master, side.UnitCode, 5).UnitMade)
		require.Len(t, partsOf(t, env, o.ID, "&state=scrapped"), 1)
		require.Len(t, partsOf(t, env, o.ID, "&state=done"), 13)
	})
}

// makeUnit takes one nightstand unit (6 parts; three part steps, two unit
// steps) of the item through every step, naming the unit.
func makeUnit(t *testing.T, env *apptest.Env, prodOrderID, itemID int64, unit int) {
	t.Helper()
	for seq := 1; seq <= 5; seq++ {
		qty := 6
		if seq > 3 {
			qty = 1
		}
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", prodOrderID),
			map[string]any{"seq": seq, "qty": qty, "unit": unit, "item_id": itemID})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	}
}

func shipItem(env *apptest.Env, orderID, itemID int64, qty int) apptest.Response {
	return env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/shipments", orderID),
		map[string]any{"items": []any{map[string]any{"item_id": itemID, "qty": qty}}, "carrier": "Деловые Линии", "tracking": "DL-1"})
}

// Two customers' nightstands share a production order. The first
// customer's unit, finished while the order runs on, is made for its item
// at once: the order is ready and ships; the production order finishing
// later leaves it shipped.
func TestFloor_ShipFinishedUnitsOutOfARunningSharedOrder(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		orderA, itemsA := receive(t, env, line{"TMB-PRIK-450", 1})
		orderB, itemsB := receive(t, env, line{"TMB-PRIK-450", 2})
		o := launch(t, env, map[string]any{"items": []int64{itemsA[0], itemsB[0]}})
		env.Dispatch()
		r := shipItem(env, orderA, itemsA[0], 1)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "nothing made yet: %s", r.Body)

		// the unit does not exist: 422 naming it
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", o.ID), map[string]any{"seq": 1, "qty": 1, "unit": 3})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		require.Contains(t, string(r.Body), `"field":"unit"`)

		makeUnit(t, env, o.ID, itemsA[0], 1)
		require.Equal(t, "in_progress", prodOrderOf(t, env, o.ID).Status)
		env.Dispatch()
		a := salesOf(t, env, orderA)
		require.Equal(t, "ready", a.Status)
		require.Equal(t, 1, a.Items[0].MadeQty)
		r = shipItem(env, orderA, itemsA[0], 1)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		require.Equal(t, "shipped", salesOf(t, env, orderA).Status)
		require.Equal(t, "in_production", salesOf(t, env, orderB).Status)

		makeUnit(t, env, o.ID, itemsB[0], 1)
		makeUnit(t, env, o.ID, itemsB[0], 2)
		require.Equal(t, "done", prodOrderOf(t, env, o.ID).Status)
		env.Dispatch()
		a = salesOf(t, env, orderA)
		require.Equal(t, "shipped", a.Status)
		require.Equal(t, "shipped", a.Items[0].Status, "the production order's completion leaves a shipped item shipped")
		b := salesOf(t, env, orderB)
		require.Equal(t, "ready", b.Status)
		require.Equal(t, 2, b.Items[0].MadeQty)
	})
}

// An order of two nightstands: the first made ships while the second is in
// production (partially shipped); once the second is made the order is
// ready again, journalled as order.status_changed for the shop, and ships.
func TestFloor_ReadyAgainAfterPartialShipment(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		orderID, items := receive(t, env, line{"TMB-PRIK-450", 2})
		o := launch(t, env, map[string]any{"items": items})
		makeUnit(t, env, o.ID, items[0], 2)
		env.Dispatch()
		so := salesOf(t, env, orderID)
		require.Equal(t, "in_production", so.Status)
		require.Equal(t, "in_production", so.Items[0].Status)
		require.Equal(t, 1, so.Items[0].MadeQty)
		r := shipItem(env, orderID, items[0], 2)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "one made: %s", r.Body)
		require.Contains(t, string(r.Body), `"field":"items[0].qty"`)
		r = shipItem(env, orderID, items[0], 1)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		require.Equal(t, "partially_shipped", salesOf(t, env, orderID).Status)

		makeUnit(t, env, o.ID, items[0], 1)
		env.Dispatch()
		so = salesOf(t, env, orderID)
		require.Equal(t, "ready", so.Status)
		require.Equal(t, 2, so.Items[0].MadeQty)
		changes := eventsOfOrder(t, env, "order.status_changed", orderID)
		last := changes[len(changes)-1]
		require.Equal(t, "ready", last.Payload["status"])
		require.Equal(t, "partially_shipped", last.Payload["previous_status"])
		r = shipItem(env, orderID, items[0], 1)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		require.Equal(t, "shipped", salesOf(t, env, orderID).Status)
	})
}

// Two wardrobes: the first made, the second's 13 parts cut and edged and 5
// of them drilled when the order is closed short, the rest back in the
// backlog. Relaunching the item takes those parts over where they were:
// their codes and done steps stay, and the new order counts only the rest
// (8 drillings, assembly and packing: 10 operations). Finishing it by scans
// makes the item whole.
func TestFloor_CloseShortAndRelaunchReusesDrilledParts(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		orderID, ids := receive(t, env, line{"SHK-KUPE-1600", 2})
		o := launch(t, env, map[string]any{"items": ids})
		require.Equal(t, 26*3+2*2, o.OpsCount)
		progressUnit := func(seq, qty, unit int) {
			t.Helper()
			r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", o.ID), map[string]any{"seq": seq, "qty": qty, "unit": unit})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
		for seq := 1; seq <= 3; seq++ {
			progressUnit(seq, 13, 1)
		}
		progressUnit(4, 1, 1)
		progressUnit(5, 1, 1)
		progressUnit(1, 13, 2)
		progressUnit(2, 13, 2)
		progressUnit(3, 5, 2)
		second := partsOf(t, env, o.ID, "&unit=2")
		require.Len(t, second, 13)
		closed := closeOrder(t, env, o.ID, map[string]any{"reason": "срочный заказ вперёд", "rest": "backlog"})
		require.Equal(t, intp(1), closed.Items[0].MadeQty)
		require.Equal(t, intp(1), closed.Items[0].ReturnedQty)
		env.Dispatch()

		again := launch(t, env, map[string]any{"items": ids})
		require.Equal(t, 13, again.PartsCount)
		require.Equal(t, 8+2, again.OpsCount, "only what is left: 8 drillings, assembly, packing")
		require.Len(t, prodOrderOf(t, env, again.ID).Operations, 10)
		launched := eventsOf(t, env, "prod_order.launched", again.ID)
		require.EqualValues(t, 1, launched[0].Payload["carried_units"])
		require.EqualValues(t, 13, launched[0].Payload["carried_parts"])

		parts := partsOf(t, env, again.ID, "")
		require.Len(t, parts, 13)
		drilled := 0
		for i, p := range parts {
			require.Equal(t, second[i].Code, p.Code, "the part keeps its code and label")
			require.Equal(t, 1, p.Unit)
			if p.State == "done" {
				drilled++
			} else {
				require.Equal(t, 3, *p.AtSeq)
			}
		}
		require.Equal(t, 5, drilled)
		require.Len(t, partsOf(t, env, again.ID, "&step=3&state=pending"), 8)

		master := env.UserToken("Мастер участка", "master")
		for _, p := range parts {
			s := scanOK(t, env, master, p.Code, 3)
			require.Equal(t, p.State == "done", s.Repeated)
		}
		scanOK(t, env, master, parts[0].UnitCode, 4)
		s := scanOK(t, env, master, parts[0].UnitCode, 5)
		require.True(t, s.UnitMade)
		require.Equal(t, "done", s.Status)
		env.Dispatch()
		so := salesOf(t, env, orderID)
		require.Equal(t, "ready", so.Status)
		require.Equal(t, 2, so.Items[0].MadeQty)
	})
}

// The labels of a wardrobe's parts: a PDF of one 58 × 40 mm label per part,
// or A4 sheets of 21, every barcode read back by zbar in id order; ZPL for
// a thermal printer by Accept or format; a customer's emoji prints as a
// replacement, not a 500; a layout, format or dpi the route does not take
// is a 422 naming it. LABELS_DIR, when set, keeps the PDFs for a look.
func TestFloor_Labels(t *testing.T) {
	t.Parallel()
	scantest.Tools(t)
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		_, ids := receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Мария 🌸"}, "items": []line{{"SHK-KUPE-1600", 2}}})
		o := launch(t, env, map[string]any{"items": ids})
		var codes [][]string
		for _, p := range partsOf(t, env, o.ID, "") {
			codes = append(codes, []string{p.Code})
		}
		require.Len(t, codes, 26)
		for layout, pages := range map[string]int{"": 26, "label": 26, "a4": 2} {
			r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d/labels?layout=%s", o.ID, layout), nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			require.Equal(t, "application/pdf", r.Header.Get("Content-Type"))
			require.True(t, strings.HasPrefix(string(r.Body), "%PDF-"))
			require.Equal(t, pages, strings.Count(string(r.Body), "/Type /Page\n"), "layout %q", layout)
			if dir := os.Getenv("LABELS_DIR"); dir != "" && layout != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("labels-%s-%s.pdf", env.Dialect, layout)), r.Body, 0o644))
			}
			if layout == "label" {
				require.Equal(t, codes, scantest.DecodePDF(t, r.Body, 203), "every label reads, in id order")
			}
		}
		for _, ask := range []struct{ accept, query string }{{"application/zpl", ""}, {"", "?format=zpl"}, {"", "?format=zpl&dpi=300&layout=label"}} {
			r := env.Do(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d/labels%s", o.ID, ask.query), nil, apptest.AdminToken, "Accept", ask.accept)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			require.Equal(t, "application/zpl", r.Header.Get("Content-Type"))
			require.Equal(t, 26, strings.Count(string(r.Body), "^XA"))
			require.Contains(t, string(r.Body), "^FD"+codes[0][0]+"^FS")
		}
		for query, field := range map[string]string{"?layout=a5": "layout", "?format=xml": "format", "?format=zpl&dpi=600": "dpi",
			"?format=zpl&layout=a4": "layout", "?dpi=300": "dpi"} {
			requireProblem(t, env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d/labels%s", o.ID, query), nil), http.StatusUnprocessableEntity, field)
		}
		requireProblem(t, env.Do(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d/labels", o.ID), nil, apptest.AdminToken, "Accept", "text/html"), http.StatusNotAcceptable)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/production-orders/999999/labels", nil), http.StatusNotFound)
	})
}
