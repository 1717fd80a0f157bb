package api_test

// Fuzz targets for the bodies of the materials catalogue, stock documents,
// the shop floor's scans and scrap, cutting plans and the intake inbox's
// edits, as api/fuzz_test.go's: through the real app on both databases, no
// answer a 5xx, every 4xx problem+json, a refused request writing nothing.
// Their seeds hold the third hardening round's inputs (whole numbers beyond
// their columns, members twice, look-alike codes, quantities that mean
// nothing, formats emptied); `make fuzz` runs each for FUZZ_TIME (CI: .ci/run).

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// bodyTarget is an endpoint a body fuzz input may be sent to.
type bodyTarget struct{ method, path string }

// fuzzBodies runs the fuzz target: each input's body goes, with its
// Content-Type, to the target it picks, as the administrator, on a pair of
// services that setUp prepared.
func fuzzBodies(f *testing.F, targets []bodyTarget, setUp func(*apptest.Env)) {
	f.Helper()
	envs := fuzzEnvs(f, nil)
	if setUp != nil {
		for _, env := range envs.all {
			setUp(env)
		}
	}
	f.Fuzz(func(t *testing.T, target uint8, body []byte, contentType string) {
		tg := targets[int(target)%len(targets)]
		envs.each(t, func(t *testing.T, env *apptest.Env) {
			fuzzSend(t, env, bodyRequest(tg.method, tg.path, body, contentType, false, asAdmin...))
		})
	})
}

// launchOne receives a nightstand and launches it (production order 1,
// parts P1-1 …), so that the floor's bodies have parts to name.
func launchOne(env *apptest.Env) {
	t := env.T
	r := env.Admin(http.MethodPost, "/api/v1/orders", map[string]any{"customer": map[string]any{"name": "Фаззер"},
		"items": []map[string]any{{"sku": "TMB-PRIK-450", "qty": 1}}})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var o struct{ Items []struct{ ID int64 } }
	r.JSON(t, &o)
	env.Dispatch()
	r = env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": []int64{o.Items[0].ID}})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
}

func FuzzMaterials(f *testing.F) {
	board := func(code, formats, bands string) []byte {
		return []byte(`{"kind": "board", "code": ` + code + `, "name": "ЛДСП 16 мм Белый", "decor": "Белый", "thickness_mm": 16, "formats": ` + formats +
			`, "trim": {"l1": 10, "l2": 10, "w1": 10, "w2": 10}, "bands": ` + bands + `, "reorder_point": 10}`)
	}
	band := func(code, width, reorder string) []byte {
		return []byte(`{"kind": "band", "code": ` + code + `, "name": "Кромка", "thickness_mm": 2, "width_mm": ` + width + `, "reorder_point": ` + reorder + `}`)
	}
	format := `[{"length_mm": 2800, "width_mm": 2070}]`
	white := `"LDSP16-WHITE"`
	// Targets: 0 a new material, 1 the band PVC04-WHITE, 7 the board LDSP16-WHITE.
	f.Add(uint8(0), board(`"LDSP18-NEW"`, format, `["PVC2-WHITE"]`), ctJSON)
	f.Add(uint8(0), band(`"ABS1-NEW"`, "22", "100.5"), ctJSON)
	f.Add(uint8(0), []byte(`{"kind": "fitting", "code": "HOOK-1", "name": "Крючок", "reorder_point": 5}`), ctJSON)
	f.Add(uint8(2), board(white, format, `["PVC04-WHITE", "PVC2-WHITE"]`), ctJSON)
	f.Add(uint8(2), board(white, `[]`, `["PVC04-WHITE", "PVC2-WHITE"]`), ctJSON)
	f.Add(uint8(2), board(white, `[{"length_mm": 1000, "width_mm": 1000}]`, `[]`), ctJSON)
	f.Add(uint8(2), board(white, format, `["PVC04-WHITE"]`), ctJSON)
	f.Add(uint8(1), band(`"PVC04-WHITE"`, "1", "500"), ctJSON)
	f.Add(uint8(1), band(`"PVC04-WHITE"`, "19", "-0.0"), ctJSON)
	f.Add(uint8(1), band(`"PVC04-WHITE"`, "19", "1e-300"), ctJSON)
	f.Add(uint8(1), band(`"PVC04-WHITE"`, "2147483648", "4e-7"), ctJSON)
	for _, code := range []string{`"LDSP16\u200b-WHITE"`, `"\ufeffX"`, `"A\u202eB"`, `"A\uffffB"`, `"LDSP16-WH\u0406TE"`, `"ＬＤＳＰ16-WHITE"`, `"ſ-BOARD"`,
		`"S-BOARD"`, `"🌸"`, `"match-1"`, `"` + strings.Repeat("A", 33) + `"`, `""`} {
		f.Add(uint8(0), board(code, format, `[]`), ctJSON)
	}
	for _, s := range badStrings {
		f.Add(uint8(0), board(s, format, `[]`), ctJSON)
		f.Add(uint8(0), band(s, "19", "1"), ctJSON)
		f.Add(uint8(2), board(white, format, `[`+s+`]`), ctJSON)
	}
	f.Add(uint8(0), []byte(`{"kind": "fitting", "code": "A", "code": "B", "name": "x"}`), ctJSON)
	f.Add(uint8(2), []byte(`{"kind": "board", "code": "LDSP16-WHITE", "name": "x", "thickness_mm": 16, "trim": {"l1": 2147483648}}`), ctJSON)
	f.Add(uint8(2), []byte(`{"kind": "board", "code": "LDSP16-WHITE", "name": "x", "thickness_mm": 1e400}`), ctJSON)
	f.Add(uint8(0), []byte(`{"kind": "board"`), ctJSON)
	f.Add(uint8(0), board(`"X"`, format, `[]`), "text/plain")
	fuzzBodies(f, []bodyTarget{{http.MethodPost, "/api/v1/materials"}, {http.MethodPut, "/api/v1/materials/1"}, {http.MethodPut, "/api/v1/materials/7"}}, nil)
}

func FuzzStockDocuments(f *testing.F) {
	lines := func(code, qty string) string { return `"lines": [{"code": ` + code + `, "qty": ` + qty + `}]` }
	// Targets: 0 receipts, 1 counts, 2 write-offs.
	for _, l := range []string{
		lines(`"LDSP16-WHITE"`, "20"), lines(`"PVC2-WHITE"`, "100.5"), lines(`"PVC2-WHITE"`, "1e-300"), lines(`"PVC2-WHITE"`, "4e-7"),
		lines(`"PVC2-WHITE"`, "-0.0"), lines(`"LDSP16-WHITE"`, "1.5"), lines(`"LDSP16-WHITE"`, "1e400"), lines(`"HINGE-110"`, "-1"),
		lines(`"ＬＤＳＰ16-white"`, "1"), lines(`"ſ-BOARD"`, "1"), lines(`"LDSP16\u200b-WHITE"`, "1"), lines(`"O1-1-1"`, "1"), lines(`""`, "1"),
		`"lines": [{"code": "LDSP16-WHITE", "qty": 1}, {"code": "ldsp16-white", "qty": 1}]`, `"lines": []`,
		`"lines": [{"code": "LDSP16-WHITE", "qty": 1, "qty": 2}]`, `"lines": [{"code": "LDSP16-WHITE", "qty": "1"}]`,
	} {
		f.Add(uint8(0), []byte(`{`+l+`, "note": "накладная 1542"}`), ctJSON)
		f.Add(uint8(1), []byte(`{`+l+`, "reason": "инвентаризация"}`), ctJSON)
		f.Add(uint8(2), []byte(`{`+l+`, "reason": "брак"}`), ctJSON)
	}
	for _, s := range badStrings {
		f.Add(uint8(0), []byte(`{`+lines(s, "1")+`, "note": `+s+`}`), ctJSON)
		f.Add(uint8(1), []byte(`{`+lines(`"LDSP16-WHITE"`, "1")+`, "reason": `+s+`}`), ctJSON)
	}
	f.Add(uint8(0), []byte(`{"lines": [`+strings.Repeat(`{"code": "LDSP16-WHITE", "qty": 1},`, 200)+`{"code": "HINGE-110", "qty": 1}]}`), ctJSON)
	f.Add(uint8(2), []byte(`{"lines": [{"code": "LDSP16-WHITE"`), ctJSON)
	f.Add(uint8(1), []byte(`{}`), "text/plain")
	fuzzBodies(f, []bodyTarget{{http.MethodPost, "/api/v1/stock/receipts"}, {http.MethodPost, "/api/v1/stock/counts"}, {http.MethodPost, "/api/v1/stock/write-offs"}}, nil)
}

func FuzzFloor(f *testing.F) {
	// Targets: 0 scans, 1 scrap.
	for _, b := range []string{
		`{"code": "P1-1", "step": 1}`, `{"code": "p1-1 ", "step": 1, "prod_order_id": 1}`, `{"code": "Ｐ1-1", "step": 1}`, `{"code": "U1-1", "step": 4}`,
		`{"code": "P1-1", "step": 2147483648}`, `{"code": "P1-1", "step": -2147483649}`, `{"code": "P1-1", "step": 9223372036854775808}`,
		`{"code": "P1-1", "step": 1, "prod_order_id": 9223372036854775807}`, `{"code": "P1-1", "step": 1.5}`, `{"code": "P1-1", "step": "1"}`,
		`{"code": "P1-1", "code": "P1-2", "step": 1}`, `{"code": "", "step": 0}`, `{"code": "P1-1\u200b", "step": 1}`,
	} {
		f.Add(uint8(0), []byte(b), ctJSON)
	}
	for _, b := range []string{
		`{"code": "P1-2", "reason": "chipped"}`, `{"part_id": 3, "step": 1, "reason": "drilling_error", "note": "присадка"}`, `{"code": "P1-2", "part_id": 2, "reason": "chipped"}`,
		`{"part_id": 9223372036854775807, "reason": "chipped"}`, `{"code": "P1-4", "step": 2147483648, "reason": "chipped"}`, `{"code": "P1-4", "reason": "no-such"}`,
		`{"code": "P1-4", "reason": "chipped", "reason": "other"}`, `{"code": "P1-4", "reason": "chipped", "note": "` + strings.Repeat("n", 1001) + `"}`,
	} {
		f.Add(uint8(1), []byte(b), ctJSON)
	}
	for _, s := range badStrings {
		f.Add(uint8(0), []byte(`{"code": `+s+`, "step": 1}`), ctJSON)
		f.Add(uint8(1), []byte(`{"code": "P1-5", "reason": "chipped", "note": `+s+`}`), ctJSON)
	}
	f.Add(uint8(0), []byte(`{"code": "P1-1"`), ctJSON)
	f.Add(uint8(1), []byte(`{"code": "P1-1", "reason": "chipped"}`), "text/plain")
	fuzzBodies(f, []bodyTarget{{http.MethodPost, "/api/v1/floor/scans"}, {http.MethodPost, "/api/v1/floor/scrap"}}, launchOne)
}

func FuzzCuttingPlans(f *testing.F) {
	for _, b := range []string{
		`{"prod_orders": [1]}`, `{"prod_orders": []}`, `{"prod_orders": [1, 1]}`, `{"prod_orders": [0]}`, `{"prod_orders": [-1]}`,
		`{"prod_orders": [9223372036854775807]}`, `{"prod_orders": [9223372036854775808]}`, `{"prod_orders": [1.5]}`, `{"prod_orders": ["1"]}`,
		`{"prod_orders": [1], "prod_orders": [2]}`, `{"prod_orders": 1}`, `{"prod_orders": null}`, `{"prod_orders": [1], "x": 1}`,
		`{"prod_orders": [` + strings.Repeat("1,", 200) + `1]}`, `{"prod_orders": [1]`,
	} {
		f.Add(uint8(0), []byte(b), ctJSON)
	}
	f.Add(uint8(0), []byte(`{"prod_orders": [1]}`), "text/plain")
	f.Add(uint8(0), []byte(`{"prod_orders": [1]}`), "")
	fuzzBodies(f, []bodyTarget{{http.MethodPost, "/api/v1/cutting-plans"}}, launchOne)
}

func FuzzInbox(f *testing.F) {
	for _, b := range []string{
		`{"reason": "дубль заказа"}`, `{"reason": ""}`, `{"reason": "` + strings.Repeat("Ж", 1001) + `"}`, `{"reason": "a", "reason": "b"}`,
		`{"reason": 1}`, `{"Reason": "x"}`, `{}`, ``, `   `, `{"reason": "x"`, `[]`,
	} {
		f.Add(uint8(0), []byte(b), ctJSON)
	}
	for _, s := range badStrings {
		f.Add(uint8(0), []byte(`{"reason": `+s+`}`), ctJSON)
	}
	f.Add(uint8(0), []byte(`{"reason": "x"}`), "text/plain")
	keepOne := func(env *apptest.Env) {
		// A CRM row naming an SKU the catalogue has not is kept: rejection 1.
		r := env.Admin(http.MethodPost, "/api/v1/imports/crm/orders", map[string]any{"orders": []map[string]any{
			{"crm_order_id": 1, "customer": map[string]any{"name": "x"}, "items": []map[string]any{{"sku": "NO-SUCH", "qty": 1}}}}})
		require.Equal(env.T, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(env.T, int64(1), env.Count("sales_intake_rejections"))
	}
	fuzzBodies(f, []bodyTarget{{http.MethodPost, "/api/v1/intake/rejections/1/dismiss"}}, keepOne)
}
