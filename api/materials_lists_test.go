package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

type fullCuttingList struct {
	Materials []struct {
		Board, Decor, Material string
		ThicknessMM            int `json:"thickness_mm"`
		Qty, Sheets            int
		Parts                  []struct {
			Name         string
			LengthMM     int `json:"length_mm"`
			Qty          int
			Grain, Where string
			Edges        struct{ L1, L2, W1, W2 string }
		}
	}
	Bands []struct {
		Band   string
		Sides  int
		Metres float64
	}
	EdgeOverhangMM int `json:"edge_overhang_mm"`
	Fittings       []struct {
		ProdOrderID int64 `json:"prod_order_id"`
		Code        string
		Qty         int
	}
}

// An item of a shop order chooses its decors; the choices travel with the
// order, the backlog row and order.received to the launch, and the saw's
// list cuts each part from the board its slot chose, with its bands and
// their metres (checked by hand) and the fittings.
func TestMaterials_DecorReachesTheSaw(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		// The shop's refused deliveries are kept in the intake inbox (and
		// the shop's user made with the first); nothing else is written.
		other := func() int64 {
			var n int64
			require.NoError(t, database.Scan(env.App.DB.Raw("SELECT count(*) FROM events WHERE type NOT LIKE 'intake.%' AND aggregate_type <> 'auth_users'"), &n))
			return n
		}
		events := other()
		for _, c := range []struct{ options, field string }{
			{`{"корпус": "Венге"}`, "items[0].options.корпус"},
			{`{"крышка": "Белый"}`, "items[0].options.крышка"},
			{`{"задняя стенка": "LDSP16-WHITE"}`, "items[0].options.задняя стенка"},
		} {
			r := deliver(env, shopBody("opt-bad", `{"sku": "TMB-PRIK-450", "qty": 1, "options": `+c.options+`}`), time.Now())
			p := requireProblem(t, r, http.StatusUnprocessableEntity, c.field)
			require.Contains(t, p.Errors[0].Message, "TMB-PRIK-450")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/orders", map[string]any{"customer": map[string]any{"name": "Иван"},
				"items": []map[string]any{{"sku": "TMB-PRIK-450", "qty": 1, "options": map[string]string{"корпус": "Венге"}}}}),
				http.StatusUnprocessableEntity, "items[0].options.корпус")
		}
		require.Equal(t, events, other(), "no order written")
		var kept struct {
			N       int64
			Reasons string
		}
		require.NoError(t, database.Scan(env.App.DB.Raw("SELECT count(*) AS n, max(reasons) AS reasons FROM sales_intake_rejections WHERE status = 'open'"), &kept))
		require.EqualValues(t, 1, kept.N, "the refused shop order is kept once in the inbox")
		require.Contains(t, kept.Reasons, "unknown_decor")

		r := deliver(env, shopBody("opt-1", `{"sku": "TMB-PRIK-450", "qty": 2, "options": {"Корпус": "дуб сонома", "фасад": "LDSP16-SHIMO"}}`), time.Now())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		orderID := orderIDOf(t, r)
		var o struct {
			Items []struct {
				ID      int64
				Options map[string]string
			}
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", orderID), nil).JSON(t, &o)
		chosen := map[string]string{"корпус": "LDSP16-SONOMA", "фасад": "LDSP16-SHIMO"}
		require.Equal(t, chosen, o.Items[0].Options, "by decor or code, regardless of case, as the slots' codes")
		received := catalogEvents(t, env, "order.received", "sales_orders", orderID)
		require.Len(t, received, 1)
		require.Equal(t, map[string]any{"корпус": "LDSP16-SONOMA", "фасад": "LDSP16-SHIMO"}, received[0].Payload["items"].([]any)[0].(map[string]any)["options"])
		env.Dispatch()
		var backlog struct {
			Items []struct {
				ItemID  int64 `json:"item_id"`
				Options map[string]string
			}
		}
		env.Admin(http.MethodGet, "/api/v1/plan/backlog", nil).JSON(t, &backlog)
		i := slices.IndexFunc(backlog.Items, func(b struct {
			ItemID  int64 `json:"item_id"`
			Options map[string]string
		}) bool {
			return b.ItemID == o.Items[0].ID
		})
		require.GreaterOrEqual(t, i, 0)
		require.Equal(t, chosen, backlog.Items[i].Options)

		po := launch(t, env, map[string]any{"items": []int64{o.Items[0].ID}})
		l := cuttingListOf(t, env, po.ID)
		boards := map[string]int{}
		for _, m := range l.Materials {
			boards[m.Board] = m.Qty
			switch m.Board {
			case "LDSP16-SONOMA":
				require.Equal(t, "Дуб сонома", m.Decor)
				require.Equal(t, 16, m.ThicknessMM)
				require.Equal(t, 1, m.Sheets, "1.49 m² of a 2780 × 2050 usable sheet")
				for _, p := range m.Parts {
					require.Equal(t, "length", p.Grain, "the sonoma oak has a grain")
					if p.Name == "Боковина" {
						require.Equal(t, 4, p.Qty)
						require.Equal(t, fmt.Sprintf("№%d ×4", orderID), p.Where)
						require.Equal(t, "PVC2-SONOMA", p.Edges.L1, "match:2 of the chosen board")
						require.Empty(t, p.Edges.W1)
					}
				}
			case "LDSP16-SHIMO":
				require.Equal(t, "Ясень шимо", m.Decor)
				require.Equal(t, "Фасад ящика", m.Parts[0].Name)
			}
		}
		require.Equal(t, map[string]int{"LDSP16-SONOMA": 8, "LDSP16-SHIMO": 2, "HDF3-WHITE": 2}, boards, "nothing cut from the default white")

		// The band metres, by hand, with the 30 mm overhang per side, for two nightstands:
		// sides 500 × 400, l1 in 2 mm: 4 × (500 + 30) = 2120 mm; top 450 × 400 all round in 2 mm:
		// 2 × (2 × 480 + 2 × 430) = 3640 mm; so PVC2-SONOMA 5.76 m over 12 sides;
		// bottom 418 × 400, l1 in 0.4 mm: 2 × 448 = 896 mm, PVC04-SONOMA 0.9 m;
		// front 446 × 220 all round in 2 mm of the ash: 2 × (2 × 476 + 2 × 250) = 2904 mm, PVC2-SHIMO 2.9 m.
		require.Equal(t, 30, l.EdgeOverhangMM)
		bands := map[string]float64{}
		sides := map[string]int{}
		for _, b := range l.Bands {
			bands[b.Band], sides[b.Band] = b.Metres, b.Sides
		}
		require.Equal(t, map[string]float64{"PVC2-SONOMA": 5.76, "PVC04-SONOMA": 0.9, "PVC2-SHIMO": 2.9}, bands)
		require.Equal(t, map[string]int{"PVC2-SONOMA": 12, "PVC04-SONOMA": 2, "PVC2-SHIMO": 8}, sides)
		fittings := map[string]int{}
		for _, f := range l.Fittings {
			require.Equal(t, po.ID, f.ProdOrderID)
			fittings[f.Code] = f.Qty
		}
		require.Equal(t, map[string]int{"SLIDE-450": 2, "HANDLE-128": 2, "CONFIRMAT": 16}, fittings)

		// The optimiser's layout: what tsekh cut reads.
		rows := readCSVSep(t, env, fmt.Sprintf("/api/v1/production-orders/%d/cutting-list?layout=optimiser", po.ID), apptest.AdminToken, ';')
		header := rows[0]
		for _, col := range []string{"id", "board", "thickness_mm", "name", "length_mm", "width_mm", "qty", "grain", "edge_l1", "edge_w2"} {
			column(t, header, col)
		}
		require.Len(t, rows, 1+5)
		requireProblem(t, env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d/cutting-list?layout=xls", po.ID), nil),
			http.StatusUnprocessableEntity, "layout")

		// The production order's parts say their board.
		var detail struct {
			Parts []struct{ Board, Decor, Material string }
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", po.ID), nil).JSON(t, &detail)
		require.NotEmpty(t, detail.Parts)
		for _, p := range detail.Parts {
			require.NotEmpty(t, p.Board)
			if p.Board == "LDSP16-SONOMA" {
				require.Equal(t, "Дуб сонома", p.Decor)
				require.Equal(t, "ЛДСП 16 мм Дуб сонома", p.Material, "the material text follows the board")
			}
		}
	})
}

// cuttingListOf reads a production order's cutting list.
func cuttingListOf(t *testing.T, env *apptest.Env, prodOrderID int64) fullCuttingList {
	t.Helper()
	return adminGet[fullCuttingList](t, env, fmt.Sprintf("/api/v1/production-orders/%d/cutting-list", prodOrderID))
}

// adminGet reads path as the administrator, which must answer 200, into a T.
func adminGet[T any](t *testing.T, env *apptest.Env, path string) T {
	t.Helper()
	var v T
	r := env.Admin(http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &v)
	return v
}
