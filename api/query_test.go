package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// A query parameter an endpoint does not declare in the OpenAPI document is a
// 400 problem naming it, never a list that ignored it; declared ones pass.
func TestQuery_UnknownParametersAreRefused(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		runRefusals(t, env, []refusal{
			{name: "misspelt filter", req: get("/api/v1/orders?stauts=shipped"), status: http.StatusBadRequest, typ: "bad_request", fields: []string{"stauts"}},
			{name: "two at once", req: get("/api/v1/events?typ=order.received&limit=5&page=2"), status: http.StatusBadRequest, typ: "bad_request", fields: []string{"page", "typ"}},
			{name: "on a path with an id", req: get("/api/v1/orders/1?expand=items"), status: http.StatusBadRequest, typ: "bad_request", fields: []string{"expand"}},
			{name: "on a write", req: post("/api/v1/orders?dry_run=true", okOrder("note", `""`)), status: http.StatusBadRequest, typ: "bad_request", fields: []string{"dry_run"}},
		})
		r := send(env, newRequest(http.MethodHead, "/api/v1/orders?stauts=x", nil, asAdmin...))
		require.Equal(t, http.StatusBadRequest, r.Status)
		for _, path := range []string{"/api/v1/orders?status=received&limit=5", "/api/v1/events?type=order.received", "/api/v1/products?limit=1"} {
			r := env.Admin(http.MethodGet, path, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
		}
	})
}
