package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// Every resource that can be replaced makes the round trip: what GET gives,
// sent back with PUT as it was read (ids, an operation's seq, a material's
// unit and all), is taken and changes nothing; a read-only member that
// contradicts the resource is a 422 naming it, and nothing changes.
func TestCatalog_RoundTrip(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		for _, list := range []string{"/api/v1/work-centers", "/api/v1/routes", "/api/v1/products", "/api/v1/materials"} {
			var page struct {
				Items []json.RawMessage `json:"items"`
			}
			env.Admin(http.MethodGet, list+"?limit=500", nil).JSON(t, &page)
			require.NotEmpty(t, page.Items, list)
			for _, raw := range page.Items {
				var head struct {
					ID int64 `json:"id"`
				}
				require.NoError(t, json.Unmarshal(raw, &head))
				path := fmt.Sprintf("%s/%d", list, head.ID)
				read := env.Admin(http.MethodGet, path, nil)
				require.Equal(t, http.StatusOK, read.Status, "%s", read.Body)
				put := env.Admin(http.MethodPut, path, read.Body)
				require.Equal(t, http.StatusOK, put.Status, "PUT %s as read: %s", path, put.Body)
				require.JSONEq(t, string(read.Body), string(put.Body), path)
			}
		}

		route := env.Admin(http.MethodGet, "/api/v1/routes/1", nil).Map(t)
		before := env.Admin(http.MethodGet, "/api/v1/routes/1", nil).Body
		t.Run("ErrContradictingSeq", func(t *testing.T) {
			ops := route["operations"].([]any)
			ops[0], ops[1] = ops[1], ops[0] // moved, each keeping its old seq
			requireProblem(t, env.Admin(http.MethodPut, "/api/v1/routes/1", route), http.StatusUnprocessableEntity,
				"operations[0].seq", "operations[1].seq")
			ops[0], ops[1] = ops[1], ops[0]
		})
		t.Run("ErrContradictingID", func(t *testing.T) {
			route["id"] = 2
			requireProblem(t, env.Admin(http.MethodPut, "/api/v1/routes/1", route), http.StatusUnprocessableEntity, "id")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/routes", route), http.StatusUnprocessableEntity, "id")
			route["id"] = 1
		})
		require.JSONEq(t, string(before), string(env.Admin(http.MethodGet, "/api/v1/routes/1", nil).Body), "nothing changed")

		t.Run("ErrContradictingUnit", func(t *testing.T) {
			m := env.Admin(http.MethodGet, "/api/v1/materials/1", nil).Map(t)
			m["unit"] = map[string]string{"sheet": "pcs", "m": "sheet", "pcs": "m"}[m["unit"].(string)]
			requireProblem(t, env.Admin(http.MethodPut, "/api/v1/materials/1", m), http.StatusUnprocessableEntity, "unit")
		})
		t.Run("ErrContradictingCodeDuplicate", func(t *testing.T) {
			wc := env.Admin(http.MethodGet, "/api/v1/work-centers/1", nil).Map(t)
			wc["code_duplicate"] = true
			requireProblem(t, env.Admin(http.MethodPut, "/api/v1/work-centers/1", wc), http.StatusUnprocessableEntity, "code_duplicate")
		})
		t.Run("ErrProductID", func(t *testing.T) {
			p := env.Admin(http.MethodGet, "/api/v1/products/1", nil).Map(t)
			p["id"] = 7
			requireProblem(t, env.Admin(http.MethodPut, "/api/v1/products/1", p), http.StatusUnprocessableEntity, "id")
		})
	})
}

// route_id 0 on a launch names no route: a 422, never the default route in
// disguise; left out, the products' default route is taken.
func TestProdOrders_LaunchRouteZero(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		r := env.Admin(http.MethodPost, "/api/v1/orders", validOrder)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var o struct {
			Items []struct {
				ID int64 `json:"id"`
			} `json:"items"`
		}
		r.JSON(t, &o)
		env.Dispatch()
		item := o.Items[0].ID
		requireProblem(t, env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": []int64{item}, "route_id": 0}),
			http.StatusUnprocessableEntity, "route_id")
		requireProblem(t, env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": []int64{item}, "route_id": -1}),
			http.StatusUnprocessableEntity, "route_id")
		r = env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": []int64{item}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	})
}
