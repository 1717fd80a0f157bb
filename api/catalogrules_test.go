package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
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
