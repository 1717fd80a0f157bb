package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// materialBody finds the material with the code and returns its id and the
// body that PUT /api/v1/materials/{id} takes to replace it as it is.
func materialBody(t *testing.T, env *apptest.Env, code string) (int64, map[string]any) {
	t.Helper()
	var l struct{ Items []map[string]any }
	r := env.Admin(http.MethodGet, "/api/v1/materials?limit=500&q="+url.QueryEscape(code), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &l)
	for _, m := range l.Items {
		if m["code"] == code {
			body := map[string]any{}
			for _, k := range []string{"kind", "code", "name", "decor", "thickness_mm", "width_mm", "grain", "formats", "trim", "bands", "reorder_point"} {
				body[k] = m[k]
			}
			return int64(m["id"].(float64)), body
		}
	}
	require.Failf(t, "no such material", "%s", code)
	return 0, nil
}

// with is a copy of the body with the members given as name, value pairs.
func with(body map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// A material may not change so that a product's part would be refused from
// the product's side: a board's formats emptied (the cutting list would
// show no sheets, a launch reserve nothing, every plan be a 422), a band
// narrowed below the parts it edges, a band's thickness or a board's
// matching bands changed so that a banded side has no band. Each is a 422
// naming the member; the same changes of materials no product uses pass.
func TestMaterials_ChangesThatWouldBreakProducts(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		white, whiteBody := materialBody(t, env, "LDSP16-WHITE")
		band, bandBody := materialBody(t, env, "PVC2-WHITE")
		for _, tc := range []struct {
			id    int64
			body  map[string]any
			field string
			says  string
		}{
			{white, with(whiteBody, "formats", []any{}), "formats", "keeps at least one sheet format"},
			{white, with(whiteBody, "formats", nil), "formats", "keeps at least one sheet format"},
			{white, with(whiteBody, "formats", []map[string]any{{"length_mm": 2000, "width_mm": 1000}}), "formats", "would fit no sheet"},
			{white, with(whiteBody, "bands", []string{"PVC04-WHITE"}), "bands", "no matching edge band 2 mm thick"},
			{band, with(bandBody, "width_mm", 1), "width_mm", "narrower than part"},
			{band, with(bandBody, "width_mm", 15), "width_mm", "16 mm thick"},
			{band, with(bandBody, "thickness_mm", 1), "thickness_mm", "would have no band"},
		} {
			before := rowCounts(t, env)
			r := env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/materials/%d", tc.id), tc.body)
			requireRefusedCleanly(t, r, before, rowCounts(t, env))
			p := requireProblem(t, r, http.StatusUnprocessableEntity, tc.field)
			require.Contains(t, p.Errors[0].Message, tc.says)
		}
		// What products do not depend on may change.
		r := env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/materials/%d", band), with(bandBody, "width_mm", 16, "reorder_point", 150))
		require.Equal(t, http.StatusOK, r.Status, "as wide as the parts are thick: %s", r.Body)
		r = env.Admin(http.MethodPost, "/api/v1/materials", map[string]any{"kind": "band", "code": "ABS1-GREY", "name": "Кромка ABS серая", "thickness_mm": 1, "width_mm": 22})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		grey, greyBody := materialBody(t, env, "ABS1-GREY")
		r = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/materials/%d", grey), with(greyBody, "width_mm", 1))
		require.Equal(t, http.StatusOK, r.Status, "no part is edged with it: %s", r.Body)
		r = env.Admin(http.MethodPost, "/api/v1/materials", map[string]any{"kind": "board", "code": "MDF10", "name": "МДФ 10 мм", "thickness_mm": 10,
			"formats": []map[string]any{{"length_mm": 2800, "width_mm": 2070}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		mdf, mdfBody := materialBody(t, env, "MDF10")
		r = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/materials/%d", mdf), with(mdfBody, "formats", []any{}))
		require.Equal(t, http.StatusOK, r.Status, "no product is made of it: %s", r.Body)
	})
}

// A board's formats shrunk and a product made with a part that fits only
// the old ones, at the same moment: one of the two is refused, never both
// committed, round after round (on PostgreSQL the two transactions run side
// by side; each would miss the other's rows uncommitted).
func TestMaterials_ShrinkAndMakeAtOnce(t *testing.T) {
	t.Parallel()
	rounds := map[database.Dialect]int{database.Postgres: 40, database.SQLite: 5}
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		products, _ := catalogOf(t, env)
		route := products["TMB-PRIK-450"].RouteID
		shrunkFirst := map[bool]int{}
		for i := range rounds[env.Dialect] {
			code := fmt.Sprintf("RACE-%d", i)
			r := env.Admin(http.MethodPost, "/api/v1/materials", map[string]any{"kind": "board", "code": code, "name": "Плита " + code, "thickness_mm": 16,
				"formats": []map[string]any{{"length_mm": 2800, "width_mm": 2070}}})
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			id, body := materialBody(t, env, code)
			var shrink, made apptest.Response
			start := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				shrink = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/materials/%d", id), with(body, "formats", []map[string]any{{"length_mm": 1000, "width_mm": 1000}}))
			}()
			go func() {
				defer wg.Done()
				<-start
				made = env.Admin(http.MethodPost, "/api/v1/products", map[string]any{"sku": "RACE-" + code, "name": "Стеллаж " + code, "kind": "case", "route_id": route,
					"parts": []map[string]any{{"name": "Стойка", "board": code, "length_mm": 2000, "width_mm": 300, "qty": 2}}})
			}()
			close(start)
			wg.Wait()
			require.False(t, shrink.Status == http.StatusOK && made.Status == http.StatusCreated, "round %d: both committed, a part fits no sheet: %s %s", i, shrink.Body, made.Body)
			switch {
			case shrink.Status == http.StatusOK:
				requireProblem(t, made, http.StatusUnprocessableEntity, "parts[0].length_mm")
			case made.Status == http.StatusCreated:
				requireProblem(t, shrink, http.StatusUnprocessableEntity, "formats")
			default:
				require.Failf(t, "neither committed", "round %d: %d %s; %d %s", i, shrink.Status, shrink.Body, made.Status, made.Body)
			}
			shrunkFirst[shrink.Status == http.StatusOK]++
		}
		t.Logf("%s: rounds the shrink won (true) and the product won (false): %v", env.Dialect, shrunkFirst)
	})
}

// A material's code is read in NFKC and holds ASCII letters, digits and
// "-_./" only: invisible, direction and non-characters, letters of other
// scripts that look Latin, and emoji are 422s naming code, so that no
// second material looks like another. Codes are equal by one rule, in the
// catalogue and in every lookup: a fullwidth or long-s spelling is the
// code it stands for, taken or found.
func TestMaterials_CodesLookAlikeNoMore(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		fitting := func(code string) map[string]any {
			return map[string]any{"kind": "fitting", "code": code, "name": "Петля"}
		}
		for _, code := range []string{"LDSP16\u200b-WHITE", "\ufeffHINGE", "HINGE\u202e-OLD", "HINGE\uffff", "LDSP16-WH\u0406TE", "HINGE-🌸", "HINGE 2", "HINGE,2", "ЛДСП16"} {
			before := rowCounts(t, env)
			r := env.Admin(http.MethodPost, "/api/v1/materials", fitting(code))
			requireRefusedCleanly(t, r, before, rowCounts(t, env))
			p := requireProblem(t, r, http.StatusUnprocessableEntity, "code")
			require.Contains(t, p.Errors[0].Message, "letters A–Z and a–z", "%q", code)
		}
		// Fullwidth letters are the letters they stand for: LDSP16-WHITE is taken.
		requireProblem(t, env.Admin(http.MethodPost, "/api/v1/materials", fitting("ＬＤＳＰ１６－ＷＨＩＴＥ")), http.StatusConflict)
		r := env.Admin(http.MethodPost, "/api/v1/materials", fitting("ＨＩＮＧＥ-95"))
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		require.Equal(t, "HINGE-95", r.Map(t)["code"], "kept in its normal form")

		// ſ is s: "ſ-BOARD" is S-BOARD, which is then taken, and found by a receipt either way.
		r = env.Admin(http.MethodPost, "/api/v1/materials", fitting("ſ-BOARD"))
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		require.Equal(t, "s-BOARD", r.Map(t)["code"])
		requireProblem(t, env.Admin(http.MethodPost, "/api/v1/materials", fitting("S-BOARD")), http.StatusConflict)
		for _, code := range []string{"S-BOARD", "ſ-board", " ｓ-board "} {
			r = env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{{"code": code, "qty": 2}}})
			require.Equal(t, http.StatusCreated, r.Status, "%q: %s", code, r.Body)
			var rec struct{ Lines []stockLevel }
			r.JSON(t, &rec)
			require.Equal(t, "s-BOARD", rec.Lines[0].Code, "%q", code)
		}
		requireProblem(t, env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{{"code": "S-BOARD", "qty": 1}, {"code": "ſ-BOARD", "qty": 1}}}),
			http.StatusUnprocessableEntity, "lines[1].code")

		// A product names its board fullwidth or in lower case; a scanner
		// reads a part's code fullwidth.
		products, _ := catalogOf(t, env)
		r = env.Admin(http.MethodPost, "/api/v1/products", map[string]any{"sku": "POLKA-1", "name": "Полка", "kind": "case", "route_id": products["TMB-PRIK-450"].RouteID,
			"parts": []map[string]any{{"name": "Полка", "board": "ｌｄｓｐ16-white", "length_mm": 600, "width_mm": 300, "qty": 1}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var prod struct{ Parts []struct{ Board string } }
		r.JSON(t, &prod)
		require.Equal(t, "LDSP16-WHITE", prod.Parts[0].Board)
		_, ids := receive(t, env, line{"POLKA-1", 1})
		po := launch(t, env, map[string]any{"items": ids})
		code := partsOf(t, env, po.ID, "")[0].Code
		fullwidth := ""
		for _, c := range code {
			fullwidth += string(c - 0x21 + 0xFF01) // P → Ｐ, 1 → １, - → －
		}
		got := scanOK(t, env, apptest.AdminToken, " "+fullwidth+" ", 1)
		require.Equal(t, code, got.Code)
	})
}

// Quantities are on their unit's step: whole sheets and pieces, metres to
// the centimetre; 1e-300 or 4e-7 m is not a quantity, and -0 is 0.
func TestStock_QuantitiesOnTheirStep(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		for _, tc := range []struct {
			path string
			body string
		}{
			{"/api/v1/stock/receipts", `{"lines": [{"code": "PVC2-WHITE", "qty": 1e-300}]}`},
			{"/api/v1/stock/receipts", `{"lines": [{"code": "PVC2-WHITE", "qty": 4e-7}]}`},
			{"/api/v1/stock/receipts", `{"lines": [{"code": "PVC2-WHITE", "qty": 0.005}]}`},
			{"/api/v1/stock/receipts", `{"lines": [{"code": "PVC2-WHITE", "qty": 12.345}]}`},
			{"/api/v1/stock/receipts", `{"lines": [{"code": "LDSP16-WHITE", "qty": 1e-300}]}`},
			{"/api/v1/stock/counts", `{"lines": [{"code": "PVC2-WHITE", "qty": 1e-300}], "reason": "инвентаризация"}`},
			{"/api/v1/stock/write-offs", `{"lines": [{"code": "HINGE-110", "qty": 0.5}], "reason": "брак"}`},
		} {
			before := rowCounts(t, env)
			r := send(env, newRequest(http.MethodPost, tc.path, []byte(tc.body), jsonAdmin...))
			requireRefusedCleanly(t, r, before, rowCounts(t, env))
			requireProblem(t, r, http.StatusUnprocessableEntity, "lines[0].qty")
		}
		r := env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{{"code": "PVC2-WHITE", "qty": 0.07}, {"code": "PVC04-WHITE", "qty": 100.5}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		r = send(env, newRequest(http.MethodPost, "/api/v1/stock/counts", []byte(`{"lines": [{"code": "PVC2-WHITE", "qty": -0.0}], "reason": "пусто"}`), jsonAdmin...))
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		require.NotContains(t, string(r.Body), "-0", "-0 is 0")

		// The catalogue's reorder points alike.
		id, body := materialBody(t, env, "PVC2-WHITE")
		for _, q := range []any{1e-300, 4e-7, 0.001} {
			requireProblem(t, env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/materials/%d", id), with(body, "reorder_point", q)), http.StatusUnprocessableEntity, "reorder_point")
		}
		r = send(env, newRequest(http.MethodPost, "/api/v1/materials", []byte(`{"kind": "fitting", "code": "HOOK-1", "name": "Крючок", "reorder_point": -0.0}`), jsonAdmin...))
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		require.Contains(t, string(r.Body), `"reorder_point":0}`)
		r = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/materials/%d", id), with(body, "reorder_point", 12.5))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	})
}
