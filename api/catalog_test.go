package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// catalogEvents returns the journal's events of the type about the object.
func catalogEvents(t *testing.T, env *apptest.Env, typ, aggType string, id int64) []journalEvent {
	t.Helper()
	var l struct{ Items []journalEvent }
	env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?type=%s&aggregate_type=%s&aggregate_id=%d", typ, aggType, id), nil).JSON(t, &l)
	return l.Items
}

func TestCatalog_WorkCenters(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		type workCenter struct {
			ID                int64
			Code, Name        string
			CapacityMinPerDay int `json:"capacity_min_per_day"`
			Calendar          struct {
				Weekdays []int
				Holidays []string
			}
		}
		t.Run("OK", func(t *testing.T) {
			r := env.Admin(http.MethodPost, "/api/v1/work-centers", map[string]any{
				"code": "CNC", "name": "Обрабатывающий центр с ЧПУ", "capacity_min_per_day": 900,
				"calendar": map[string]any{"weekdays": []int{6, 1, 2, 3, 4, 5}, "holidays": []string{"2027-01-07", "2026-12-31", "2026-12-31"}}})
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			var wc workCenter
			r.JSON(t, &wc)
			require.Equal(t, []int{1, 2, 3, 4, 5, 6}, wc.Calendar.Weekdays)
			require.Equal(t, []string{"2026-12-31", "2027-01-07"}, wc.Calendar.Holidays)
			created := catalogEvents(t, env, "work_center.created", "catalog_work_centers", wc.ID)
			require.Len(t, created, 1)
			require.Equal(t, "CNC", created[0].Payload["code"])
			require.Equal(t, "Администратор", created[0].Actor.Name)

			// Without a calendar: Monday to Friday, no holidays.
			r = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", wc.ID), map[string]any{
				"code": "CNC", "name": "ЧПУ", "capacity_min_per_day": 480})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var got workCenter
			env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/work-centers/%d", wc.ID), nil).JSON(t, &got)
			require.Equal(t, 480, got.CapacityMinPerDay)
			require.Equal(t, "ЧПУ", got.Name)
			require.Equal(t, []int{1, 2, 3, 4, 5}, got.Calendar.Weekdays)
			require.Empty(t, got.Calendar.Holidays)
			updated := catalogEvents(t, env, "work_center.updated", "catalog_work_centers", wc.ID)
			require.Len(t, updated, 1)
			require.EqualValues(t, 480, updated[0].Payload["capacity_min_per_day"])

			var l struct {
				Items      []workCenter
				NextCursor string `json:"next_cursor"`
			}
			env.Admin(http.MethodGet, "/api/v1/work-centers?limit=7", nil).JSON(t, &l)
			require.Len(t, l.Items, 7)
			require.Equal(t, "CUT", l.Items[0].Code)
			env.Admin(http.MethodGet, "/api/v1/work-centers?cursor="+l.NextCursor, nil).JSON(t, &l)
			require.Equal(t, wc.ID, l.Items[len(l.Items)-1].ID)
		})

		t.Run("ErrInvalid", func(t *testing.T) {
			events := env.Count("events")
			r := env.Admin(http.MethodPost, "/api/v1/work-centers", map[string]any{
				"code": "", "name": " ", "capacity_min_per_day": 0,
				"calendar": map[string]any{"weekdays": []int{1, 8, 1}, "holidays": []string{"31.12.2026"}}})
			requireProblem(t, r, http.StatusUnprocessableEntity, "code", "name", "capacity_min_per_day",
				"calendar.weekdays[1]", "calendar.weekdays[2]", "calendar.holidays[0]")
			r = env.Admin(http.MethodPost, "/api/v1/work-centers", map[string]any{
				"code": "X", "name": "X", "capacity_min_per_day": 60, "calendar": map[string]any{"weekdays": []int{}}})
			requireProblem(t, r, http.StatusUnprocessableEntity, "calendar.weekdays")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/work-centers", `{"code": 1}`), http.StatusUnprocessableEntity, "code")
			require.Equal(t, events, env.Count("events"))
		})

		t.Run("ErrConflict", func(t *testing.T) {
			r := env.Admin(http.MethodPost, "/api/v1/work-centers", map[string]any{"code": "CUT", "name": "Второй раскрой", "capacity_min_per_day": 480})
			requireProblem(t, r, http.StatusConflict)
			r = env.Admin(http.MethodPut, "/api/v1/work-centers/2", map[string]any{"code": "CUT", "name": "Кромка", "capacity_min_per_day": 480})
			requireProblem(t, r, http.StatusConflict)
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			requireProblem(t, env.Admin(http.MethodGet, "/api/v1/work-centers/99999", nil), http.StatusNotFound)
			requireProblem(t, env.Admin(http.MethodPut, "/api/v1/work-centers/99999", map[string]any{"code": "Z", "name": "Z", "capacity_min_per_day": 1}), http.StatusNotFound)
		})

		t.Run("ErrForbidden", func(t *testing.T) {
			body := map[string]any{"code": "PLN", "name": "Участок планировщика", "capacity_min_per_day": 480}
			for _, role := range []string{"viewer", "manager"} {
				tok := env.UserToken("Гость "+role, role)
				requireProblem(t, env.Do(http.MethodPost, "/api/v1/work-centers", body, tok), http.StatusForbidden)
				require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/api/v1/work-centers", nil, tok).Status)
			}
			planner := env.UserToken("Ольга Планова", "planner")
			require.Equal(t, http.StatusCreated, env.Do(http.MethodPost, "/api/v1/work-centers", body, planner).Status)
		})
	})
}

func TestCatalog_RoutesAndProducts(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		type route struct {
			ID         int64
			Name, Kind string
			Operations []struct {
				Seq          int
				Name, Scope  string
				WorkCenterID int64 `json:"work_center_id"`
				Minutes      float64
			}
		}
		type product struct {
			ID      int64
			SKU     string
			Kind    string
			RouteID int64 `json:"route_id"`
			Parts   []struct {
				Name string
				Qty  int
			}
		}
		var routes struct{ Items []route }
		env.Admin(http.MethodGet, "/api/v1/routes", nil).JSON(t, &routes)
		require.Len(t, routes.Items, 2)
		require.Equal(t, "Корпус ЛДСП (типовой)", routes.Items[0].Name)
		require.Len(t, routes.Items[0].Operations, 5)
		require.Equal(t, 4.0, routes.Items[0].Operations[0].Minutes)
		require.Equal(t, "Мягкая мебель (типовой)", routes.Items[1].Name)

		newRoute := map[string]any{"name": "Корпус ЛДСП (фасады МДФ)", "kind": "case", "operations": []map[string]any{
			{"name": "Раскрой", "work_center_id": 1, "scope": "part", "minutes": 4.5},
			{"name": "Сборка", "work_center_id": 4, "scope": "item", "minutes": 60},
		}}
		var r route
		t.Run("RouteOK", func(t *testing.T) {
			res := env.Admin(http.MethodPost, "/api/v1/routes", newRoute)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			res.JSON(t, &r)
			require.Len(t, r.Operations, 2)
			require.Equal(t, 2, r.Operations[1].Seq)
			require.Equal(t, 4.5, r.Operations[0].Minutes)
			require.Len(t, catalogEvents(t, env, "route.created", "catalog_routes", r.ID), 1)

			newRoute["operations"] = append(newRoute["operations"].([]map[string]any), map[string]any{"name": "Упаковка", "work_center_id": 7, "scope": "item", "minutes": 15})
			res = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/routes/%d", r.ID), newRoute)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var got route
			env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/routes/%d", r.ID), nil).JSON(t, &got)
			require.Len(t, got.Operations, 3)
			require.Equal(t, "Упаковка", got.Operations[2].Name)
			updated := catalogEvents(t, env, "route.updated", "catalog_routes", r.ID)
			require.Len(t, updated, 1)
			require.EqualValues(t, 1, updated[0].Payload["part_operations"])
			require.EqualValues(t, 2, updated[0].Payload["item_operations"])
		})

		t.Run("RouteErrInvalid", func(t *testing.T) {
			events := env.Count("events")
			res := env.Admin(http.MethodPost, "/api/v1/routes", map[string]any{"name": "", "kind": "chair", "operations": []map[string]any{
				{"name": "", "work_center_id": 999, "scope": "unit", "minutes": 0}}})
			requireProblem(t, res, http.StatusUnprocessableEntity, "name", "kind", "operations[0].name",
				"operations[0].work_center_id", "operations[0].scope", "operations[0].minutes")
			res = env.Admin(http.MethodPost, "/api/v1/routes", map[string]any{"name": "Пустой", "kind": "case", "operations": []any{}})
			requireProblem(t, res, http.StatusUnprocessableEntity, "operations")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/routes", newRoute), http.StatusConflict)
			requireProblem(t, env.Admin(http.MethodPut, "/api/v1/routes/99999", newRoute), http.StatusNotFound)
			// The case route serves case products: it cannot become upholstered.
			caseRoute := map[string]any{"name": routes.Items[0].Name, "kind": "upholstered", "operations": []map[string]any{
				{"name": "Раскрой", "work_center_id": 1, "scope": "part", "minutes": 4}}}
			requireProblem(t, env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/routes/%d", routes.Items[0].ID), caseRoute), http.StatusUnprocessableEntity, "kind")
			require.Equal(t, events, env.Count("events"))
		})

		newProduct := map[string]any{"sku": "KOM-4", "name": "Комод четырёхъящичный", "kind": "case", "route_id": routes.Items[0].ID,
			"parts": []map[string]any{
				{"name": "Боковина", "material": "ЛДСП 16 мм Белый", "length_mm": 850, "width_mm": 450, "thickness_mm": 16, "edging": "ПВХ 2 мм", "qty": 2},
				{"name": "Фасад ящика", "board": "PLY18", "length_mm": 800, "width_mm": 200, "thickness_mm": 18, "qty": 4},
			}}
		t.Run("ProductOK", func(t *testing.T) {
			res := env.Admin(http.MethodPost, "/api/v1/products", newProduct)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			var p product
			res.JSON(t, &p)
			require.Len(t, p.Parts, 2)
			created := catalogEvents(t, env, "product.created", "catalog_products", p.ID)
			require.Len(t, created, 1)
			require.EqualValues(t, 6, created[0].Payload["parts_per_unit"])

			// A launch of the new product: 6 parts × 3 part operations + 2 item operations.
			_, ids := receive(t, env, line{"KOM-4", 1})
			o := launch(t, env, map[string]any{"items": ids})
			require.Equal(t, 6, o.PartsCount)
			require.Equal(t, 20, o.OpsCount)

			// Moved to the new route, with one more part: a later launch follows it.
			newProduct["route_id"] = r.ID
			newProduct["parts"] = append(newProduct["parts"].([]map[string]any), map[string]any{
				"name": "Задняя стенка", "material": "ХДФ 3 мм Белый", "length_mm": 830, "width_mm": 780, "thickness_mm": 3, "qty": 1})
			res = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/products/%d", p.ID), newProduct)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var got product
			env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/products/%d", p.ID), nil).JSON(t, &got)
			require.Equal(t, r.ID, got.RouteID)
			require.Len(t, got.Parts, 3)
			require.Len(t, catalogEvents(t, env, "product.updated", "catalog_products", p.ID), 1)
			_, ids = receive(t, env, line{"KOM-4", 2})
			o = launch(t, env, map[string]any{"items": ids})
			require.Equal(t, "Корпус ЛДСП (фасады МДФ)", o.Route.Name)
			require.Equal(t, 14, o.PartsCount)
			require.Equal(t, 14*1+2*2, o.OpsCount)
		})

		t.Run("ProductErrInvalid", func(t *testing.T) {
			events := env.Count("events")
			res := env.Admin(http.MethodPost, "/api/v1/products", map[string]any{"sku": " ", "name": "Кресло", "kind": "upholstered", "route_id": routes.Items[0].ID,
				"parts": []map[string]any{{"name": "Каркас", "material": "", "length_mm": 0, "width_mm": 10, "thickness_mm": 10, "qty": 0}}})
			requireProblem(t, res, http.StatusUnprocessableEntity, "sku", "route_id", "parts[0].material", "parts[0].length_mm", "parts[0].qty")
			res = env.Admin(http.MethodPost, "/api/v1/products", map[string]any{"sku": "NEW-1", "name": "Новое", "kind": "case", "route_id": 99999, "parts": []any{}})
			requireProblem(t, res, http.StatusUnprocessableEntity, "route_id", "parts")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/products", newProduct), http.StatusConflict)
			requireProblem(t, env.Admin(http.MethodPut, "/api/v1/products/99999", newProduct), http.StatusNotFound)
			require.Equal(t, events, env.Count("events"))
			tok := env.UserToken("Менеджер", "manager")
			requireProblem(t, env.Do(http.MethodPost, "/api/v1/products", newProduct, tok), http.StatusForbidden)
			requireProblem(t, env.Do(http.MethodPut, "/api/v1/routes/1", newRoute, tok), http.StatusForbidden)
		})
	})
}
