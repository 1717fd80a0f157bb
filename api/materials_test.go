package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

type material struct {
	ID          int64
	Kind, Code  string
	Name, Decor string
	ThicknessMM float64 `json:"thickness_mm"`
	WidthMM     int     `json:"width_mm"`
	Unit        string
	Grain       bool
	Formats     []struct {
		LengthMM int `json:"length_mm"`
		WidthMM  int `json:"width_mm"`
	}
	Trim  struct{ L1, L2, W1, W2 int }
	Bands []string
}

func TestMaterials_Catalogue(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		band := map[string]any{"kind": "band", "code": "ABS1-WENGE", "name": "Кромка ABS 1×22 Венге", "decor": "Венге", "thickness_mm": 1, "width_mm": 22}
		board := map[string]any{"kind": "board", "code": "LDSP18-WENGE", "name": "ЛДСП 18 мм Венге", "decor": "Венге", "thickness_mm": 18, "grain": true,
			"formats": []map[string]any{{"length_mm": 2800, "width_mm": 2070}}, "trim": map[string]any{"l1": 10, "l2": 10, "w1": 15, "w2": 15},
			"bands": []string{"abs1-wenge"}, "reorder_point": 12}

		t.Run("OK", func(t *testing.T) {
			r := env.Admin(http.MethodPost, "/api/v1/materials", band)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			var b material
			r.JSON(t, &b)
			require.Equal(t, "m", b.Unit)
			r = env.Admin(http.MethodPost, "/api/v1/materials", board)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			var m material
			r.JSON(t, &m)
			require.Equal(t, "sheet", m.Unit)
			require.Equal(t, []string{"abs1-wenge"}, m.Bands)
			require.Equal(t, 15, m.Trim.W1)
			created := catalogEvents(t, env, "material.created", "catalog_materials", m.ID)
			require.Len(t, created, 1)
			require.Equal(t, "LDSP18-WENGE", created[0].Payload["code"])
			require.Equal(t, "Администратор", created[0].Actor.Name)

			board["reorder_point"] = 20
			r = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/materials/%d", m.ID), board)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			require.Len(t, catalogEvents(t, env, "material.updated", "catalog_materials", m.ID), 1)

			var l struct {
				Items []material
			}
			env.Admin(http.MethodGet, "/api/v1/materials?kind=board&decor=%D0%B2%D0%B5%D0%BD%D0%B3%D0%B5", nil).JSON(t, &l)
			require.Len(t, l.Items, 1, "decor regardless of case")
			require.Equal(t, "LDSP18-WENGE", l.Items[0].Code)
			env.Admin(http.MethodGet, "/api/v1/materials?kind=fitting&limit=3", nil).JSON(t, &l)
			require.Len(t, l.Items, 3)
			for _, it := range l.Items {
				require.Equal(t, "pcs", it.Unit)
			}
			var all []material
			next := "/api/v1/materials?limit=4"
			for next != "" {
				var page struct {
					Items      []material
					NextCursor string `json:"next_cursor"`
				}
				env.Admin(http.MethodGet, next, nil).JSON(t, &page)
				all = append(all, page.Items...)
				next = ""
				if page.NextCursor != "" {
					next = "/api/v1/materials?limit=4&cursor=" + page.NextCursor
				}
			}
			require.Len(t, all, int(env.Count("catalog_materials")), "keyset pages cover the list once")
		})

		t.Run("ErrInvalid", func(t *testing.T) {
			events := env.Count("events")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/materials", map[string]any{"kind": "board", "code": "B1", "name": "Плита",
				"thickness_mm": 16, "bands": []string{"NO-SUCH", "LDSP16-WHITE"}, "formats": []map[string]any{{"length_mm": 15, "width_mm": 2070}},
				"trim": map[string]any{"w1": 10, "w2": 10}, "reorder_point": 1.5}),
				http.StatusUnprocessableEntity, "bands[0]", "bands[1]", "formats[0]", "reorder_point")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/materials", map[string]any{"kind": "fitting", "code": "F 1", "name": "Петля",
				"thickness_mm": 2, "grain": true}), http.StatusUnprocessableEntity, "code", "thickness_mm", "grain")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/materials", map[string]any{"kind": "band", "code": "E1", "name": "Кромка",
				"thickness_mm": 0, "width_mm": 0}), http.StatusUnprocessableEntity, "thickness_mm", "width_mm")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/materials", map[string]any{"kind": "wood", "code": "W", "name": "Дерево"}),
				http.StatusUnprocessableEntity, "kind")
			requireProblem(t, env.Admin(http.MethodGet, "/api/v1/materials?kind=wood", nil), http.StatusUnprocessableEntity, "kind")
			// The code is one regardless of case, and never changes.
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/materials", map[string]any{"kind": "fitting", "code": "hinge-110", "name": "Петля"}),
				http.StatusConflict)
			var l struct{ Items []material }
			env.Admin(http.MethodGet, "/api/v1/materials?q=LDSP16-WHITE", nil).JSON(t, &l)
			require.Len(t, l.Items, 1)
			white := l.Items[0]
			requireProblem(t, env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/materials/%d", white.ID), map[string]any{"kind": "band", "code": "LDSP16-W",
				"name": "x", "thickness_mm": 1, "width_mm": 20}), http.StatusUnprocessableEntity, "code", "kind")
			// A smaller format would leave the wardrobe's sides (2200 mm) without a sheet.
			requireProblem(t, env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/materials/%d", white.ID), map[string]any{"kind": "board", "code": "LDSP16-WHITE",
				"name": "ЛДСП 16 мм Белый", "thickness_mm": 16, "formats": []map[string]any{{"length_mm": 2000, "width_mm": 1000}}}),
				http.StatusUnprocessableEntity, "formats")
			requireProblem(t, env.Admin(http.MethodPut, "/api/v1/materials/99999", board), http.StatusNotFound)
			require.Equal(t, events, env.Count("events"), "nothing written")
		})
	})
}

func TestMaterials_ProductParts(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		demo, _ := catalogOf(t, env)
		route := demo["TMB-PRIK-450"].RouteID
		product := func(parts []map[string]any, slots []map[string]any, fittings []map[string]any) map[string]any {
			return map[string]any{"sku": "POLKA-800", "name": "Полка навесная 800", "kind": "case", "route_id": route,
				"parts": parts, "slots": slots, "fittings": fittings}
		}
		slots := []map[string]any{{"name": "корпус", "boards": []string{"LDSP16-WHITE", "ldsp16-sonoma"}, "default": "LDSP16-SONOMA"}}
		t.Run("ErrInvalid", func(t *testing.T) {
			events := env.Count("events")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/products", product([]map[string]any{
				{"name": "Бок", "board": "NO-SUCH", "length_mm": 300, "width_mm": 200, "qty": 2},
				{"name": "Полка", "slot": "корпус", "length_mm": 3000, "width_mm": 200, "qty": 1, "grain": "length"},
				{"name": "Дно", "slot": "фасад", "length_mm": 300, "width_mm": 200, "qty": 1},
				{"name": "Крышка", "board": "LDSP16-WHITE", "length_mm": 300, "width_mm": 200, "qty": 1, "edges": map[string]any{"l1": "PVC2-SHIMO", "w2": "match:1"}},
				{"name": "Планка", "board": "LDSP16-WHITE", "thickness_mm": 18, "length_mm": 300, "width_mm": 200, "qty": 1, "grain": "diagonal"},
				{"name": "Фасад", "board": "HINGE-110", "length_mm": 300, "width_mm": 200, "qty": 1},
			}, slots, []map[string]any{{"code": "LDSP16-WHITE", "qty": 2}, {"code": "HINGE-110", "qty": 0}})),
				http.StatusUnprocessableEntity, "parts[0].board", "parts[1].length_mm", "parts[2].slot", "parts[4].thickness_mm",
				"parts[4].grain", "parts[5].board", "parts[3].edges.w2", "fittings[0].code", "fittings[1].qty")
			require.Equal(t, events, env.Count("events"), "nothing written")
			// A band narrower than the part is thick: PLY18 is 18 mm, the white band 19 mm, a 12 mm band is too narrow.
			r := env.Admin(http.MethodPost, "/api/v1/materials", map[string]any{"kind": "band", "code": "PVC-12", "name": "Кромка 12 мм", "thickness_mm": 0.4, "width_mm": 12})
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			events = env.Count("events")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/products", product([]map[string]any{
				{"name": "Бок", "board": "PLY18", "length_mm": 300, "width_mm": 200, "qty": 2, "edges": map[string]any{"l1": "PVC-12"}},
			}, nil, nil)), http.StatusUnprocessableEntity, "parts[0].edges.l1")
			require.Equal(t, events, env.Count("events"), "nothing written")
		})
		t.Run("OK", func(t *testing.T) {
			r := env.Admin(http.MethodPost, "/api/v1/products", product([]map[string]any{
				{"name": "Бок", "slot": "Корпус", "length_mm": 300, "width_mm": 200, "qty": 2, "edges": map[string]any{"l1": "match:2", "w1": "none"}},
				{"name": "Задник", "board": "HDF3-WHITE", "length_mm": 780, "width_mm": 300, "qty": 1},
			}, slots, []map[string]any{{"code": "HINGE-110", "qty": 2}}))
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			var p struct {
				Parts []struct {
					Name, Material, Board, Slot, Grain, Edging string
					ThicknessMM                                int `json:"thickness_mm"`
					Edges                                      struct{ L1, L2, W1, W2 string }
				}
				Slots []struct {
					Name, Default string
					Boards        []string
				}
				Fittings []struct {
					Code string
					Qty  int
				}
			}
			r.JSON(t, &p)
			require.Equal(t, "корпус", p.Parts[0].Slot)
			require.Equal(t, "ЛДСП 16 мм Дуб сонома", p.Parts[0].Material, "the slot's default board")
			require.Equal(t, 16, p.Parts[0].ThicknessMM)
			require.Equal(t, "length", p.Parts[0].Grain, "the sonoma oak has a grain")
			require.Equal(t, "match:2", p.Parts[0].Edges.L1)
			require.Empty(t, p.Parts[0].Edges.W1)
			require.Equal(t, "l1: match:2", p.Parts[0].Edging)
			require.Equal(t, "HDF3-WHITE", p.Parts[1].Board)
			require.Equal(t, 3, p.Parts[1].ThicknessMM)
			require.Equal(t, "none", p.Parts[1].Grain)
			require.Equal(t, []string{"LDSP16-WHITE", "LDSP16-SONOMA"}, p.Slots[0].Boards)
			require.Equal(t, "LDSP16-SONOMA", p.Slots[0].Default)
			require.Equal(t, "HINGE-110", p.Fittings[0].Code)
		})
	})
}
