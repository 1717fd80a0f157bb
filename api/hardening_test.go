package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/config"
)

func TestHTTP_HardeningHeaders(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		for _, r := range []apptest.Response{
			env.Admin(http.MethodGet, "/api/v1/me", nil),
			env.Admin(http.MethodGet, "/api/v1/no-such-thing", nil),
			env.Do(http.MethodGet, "/api/v1/me", nil, ""),
			env.Do(http.MethodGet, "/healthz", nil, ""),
			env.Do(http.MethodGet, "/swagger/index.html", nil, ""),
			env.Admin(http.MethodDelete, "/api/v1/orders", nil),
		} {
			require.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"), "%d %s", r.Status, r.Body)
			require.Equal(t, "DENY", r.Header.Get("X-Frame-Options"))
		}
		// A response that carries a token is never cached.
		u := createUser(t, env, "Ольга", "planner")
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/users/%d/tokens", u.ID), map[string]any{"name": "x"})
		require.Equal(t, http.StatusCreated, r.Status)
		require.Equal(t, "no-store", r.Header.Get("Cache-Control"))
	})
}

// Without METRICS_ADDR the API port serves /metrics to administrators only.
func TestMetrics_OnTheAPIPortForAdmins(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		requireProblem(t, env.Do(http.MethodGet, "/metrics", nil, ""), http.StatusUnauthorized)
		requireProblem(t, env.Do(http.MethodGet, "/metrics", nil, env.UserToken("Пётр", "viewer")), http.StatusForbidden)
		m := env.Admin(http.MethodGet, "/metrics", nil)
		require.Equal(t, http.StatusOK, m.Status)
		require.Contains(t, string(m.Body), "tsekh_events_pending")
		require.Equal(t, "nosniff", m.Header.Get("X-Content-Type-Options"))
	})
}

// With METRICS_ADDR the metrics, the dispatcher's included, are on their own
// listener, and the API port does not serve them at all.
func TestMetrics_OnTheirOwnAddress(t *testing.T) {
	t.Parallel()
	for _, d := range apptest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := apptest.New(t, d, func(c *config.Config) { c.MetricsAddr = "127.0.0.1:9090" })
			requireProblem(t, env.Admin(http.MethodGet, "/metrics", nil), http.StatusNotFound)
			rec := httptest.NewRecorder()
			env.App.MetricsHTTP().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			require.Equal(t, http.StatusOK, rec.Code)
			require.Contains(t, rec.Body.String(), "tsekh_events_pending")
			require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
			rec = httptest.NewRecorder()
			env.App.MetricsHTTP().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/me", nil))
			require.Equal(t, http.StatusNotFound, rec.Code, "only the metrics there")
		})
	}
}
