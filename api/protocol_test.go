package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// paddedOrder is a valid manual order padded with spaces to exactly size bytes.
func paddedOrder(t *testing.T, size int) []byte {
	t.Helper()
	b, err := json.Marshal(validOrder)
	require.NoError(t, err)
	require.Less(t, len(b), size)
	return append(b, bytes.Repeat([]byte(" "), size-len(b))...)
}

// Item 5: the body limit is exactly 1 MiB, and over it is 413 however the
// body is sent.
func TestHTTP_BodyLimitIsOneMiB(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		t.Run("OKExactly1MiB", func(t *testing.T) {
			r := send(env, newRequest(http.MethodPost, "/api/v1/orders", paddedOrder(t, 1<<20), jsonAdmin...))
			require.Equal(t, http.StatusCreated, r.Status, "%.300s", r.Body)
		})
		t.Run("ErrOneByteMore", func(t *testing.T) {
			before := rowCounts(t, env)
			r := send(env, newRequest(http.MethodPost, "/api/v1/orders", paddedOrder(t, 1<<20+1), jsonAdmin...))
			requireProblemType(t, r, http.StatusRequestEntityTooLarge, "too_large")
			requireRefusedCleanly(t, r, before, rowCounts(t, env))
		})
		t.Run("ErrChunkedOverTheLimit", func(t *testing.T) {
			// Through a real server: a body of unknown length goes in chunks.
			var seen []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen = r.TransferEncoding
				env.Echo.ServeHTTP(w, r)
			}))
			defer srv.Close()
			for _, path := range []string{"/api/v1/orders", "/api/v1/imports/crm/orders", "/api/v1/work-centers", webhookPath} {
				before := rowCounts(t, env)
				body := io.MultiReader(bytes.NewReader(paddedOrder(t, 1<<20)), strings.NewReader(" "))
				req, err := http.NewRequest(http.MethodPost, srv.URL+path, io.NopCloser(body))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
				res, err := srv.Client().Do(req)
				require.NoError(t, err)
				got, err := io.ReadAll(res.Body)
				require.NoError(t, err)
				_ = res.Body.Close()
				require.Equal(t, []string{"chunked"}, seen, "sent in chunks")
				if path == webhookPath {
					// Not configured in this test: it refuses before it reads.
					require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "%s", got)
					continue
				}
				r := apptest.Response{Status: res.StatusCode, Header: res.Header, Body: got}
				requireProblemType(t, r, http.StatusRequestEntityTooLarge, "too_large")
				requireRefusedCleanly(t, r, before, rowCounts(t, env))
			}
		})
		t.Run("ErrDeclaredOverTheLimit", func(t *testing.T) {
			req := newRequest(http.MethodPost, "/api/v1/orders", []byte(`{}`), jsonAdmin...)
			req.ContentLength = 1<<20 + 1
			requireProblemType(t, send(env, req), http.StatusRequestEntityTooLarge, "too_large")
		})
	})
}

// Item 8: HEAD answers on every GET route as GET does, without a body; a 405
// is a problem of its own type.
func TestHTTP_HeadAndMethodNotAllowed(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		for _, path := range []string{"/healthz", "/readyz", "/swagger/index.html", "/swagger/doc.json",
			"/api/v1/me", "/api/v1/orders", "/api/v1/orders?status=received", "/api/v1/events", "/api/v1/event-types",
			"/api/v1/subscribers", "/api/v1/work-centers", "/api/v1/work-centers/1", "/api/v1/routes", "/api/v1/routes/1",
			"/api/v1/products", "/api/v1/products/1", "/api/v1/plan/backlog", "/api/v1/plan/schedule", "/api/v1/production-orders"} {
			t.Run("OK"+path, func(t *testing.T) {
				g := send(env, newRequest(http.MethodGet, path, nil, asAdmin...))
				require.Equal(t, http.StatusOK, g.Status, "%.300s", g.Body)
				require.NotEmpty(t, g.Body)
				h := send(env, newRequest(http.MethodHead, path, nil, asAdmin...))
				require.Equal(t, http.StatusOK, h.Status)
				require.Empty(t, h.Body)
				require.Equal(t, g.Header.Get("Content-Type"), h.Header.Get("Content-Type"))
				require.NotEmpty(t, h.Header.Get("X-Request-Id"))
			})
		}
		t.Run("OKThroughAServer", func(t *testing.T) {
			srv := httptest.NewServer(env.Echo)
			defer srv.Close()
			res, err := srv.Client().Head(srv.URL + "/healthz")
			require.NoError(t, err)
			_ = res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.NotEqual(t, "0", res.Header.Get("Content-Length"), "a HEAD does not claim an empty GET")
		})
		t.Run("ErrHeadAsGetWould", func(t *testing.T) {
			r := send(env, newRequest(http.MethodHead, "/api/v1/orders", nil))
			require.Equal(t, http.StatusUnauthorized, r.Status)
			require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
			require.Empty(t, r.Body)
			r = send(env, newRequest(http.MethodHead, "/api/v1/orders/424242", nil, asAdmin...))
			require.Equal(t, http.StatusNotFound, r.Status)
			require.Empty(t, r.Body)
			r = send(env, newRequest(http.MethodHead, "/api/v1/orders/1/cancel", nil, asAdmin...))
			require.Equal(t, http.StatusMethodNotAllowed, r.Status)
			require.Empty(t, r.Body)
		})
		t.Run("ErrMethodNotAllowed", func(t *testing.T) {
			for _, c := range []struct{ method, path string }{
				{http.MethodDelete, "/api/v1/orders"}, {http.MethodPut, "/api/v1/orders/1"}, {http.MethodGet, "/api/v1/orders/1/cancel"},
				{http.MethodPost, "/healthz"}, {http.MethodPatch, "/api/v1/work-centers/1"},
			} {
				r := send(env, newRequest(c.method, c.path, nil, asAdmin...))
				p := requireProblemType(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
				require.Equal(t, "Method not allowed", p.Title)
				require.Contains(t, p.Detail, c.method)
				require.NotEmpty(t, r.Header.Get("Allow"))
			}
		})
	})
}

// Item 9: more than one Idempotency-Key header is a 400, never a replay.
func TestHTTP_IdempotencyKeyOnce(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		body, err := json.Marshal(validOrder)
		require.NoError(t, err)
		first := send(env, newRequest(http.MethodPost, "/api/v1/orders", body, append(jsonAdmin, "Idempotency-Key", "a,b")...))
		require.Equal(t, http.StatusCreated, first.Status, "%s", first.Body)
		before := rowCounts(t, env)
		// Joined with a comma, these two would read as the key above and replay its order.
		r := send(env, newRequest(http.MethodPost, "/api/v1/orders", body, append(jsonAdmin, "Idempotency-Key", "a", "Idempotency-Key", "b")...))
		p := requireProblemType(t, r, http.StatusBadRequest, "bad_request")
		require.Contains(t, p.Detail, "one Idempotency-Key")
		require.Empty(t, r.Header.Get("Idempotent-Replayed"))
		requireRefusedCleanly(t, r, before, rowCounts(t, env))
		r = send(env, newRequest(http.MethodPost, "/api/v1/orders", body, append(jsonAdmin, "Idempotency-Key", "k1", "Idempotency-Key", "k1")...))
		requireProblemType(t, r, http.StatusBadRequest, "bad_request")
		requireRefusedCleanly(t, r, before, rowCounts(t, env))
	})
}

// Item 10: a body must say it is application/json; anything else is 415.
func TestHTTP_ContentTypeIsJSON(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		body, err := json.Marshal(validOrder)
		require.NoError(t, err)
		for _, ct := range []string{"application/jsonxyz", "application/json-seq", "text/plain", "application/x-www-form-urlencoded",
			"application/problem+json", "application/json; charset=latin1", "application/json;;", "json", ""} {
			t.Run(fmt.Sprintf("Err%q", ct), func(t *testing.T) {
				before := rowCounts(t, env)
				headers := asAdmin
				if ct != "" {
					headers = append([]string{"Content-Type", ct}, asAdmin...)
				}
				r := send(env, newRequest(http.MethodPost, "/api/v1/orders", body, headers...))
				p := requireProblemType(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
				require.Equal(t, "Unsupported media type", p.Title)
				requireRefusedCleanly(t, r, before, rowCounts(t, env))
			})
		}
		t.Run("ErrEveryJSONRoute", func(t *testing.T) {
			for _, path := range []string{"/api/v1/imports/crm/orders", "/api/v1/work-centers", "/api/v1/routes", "/api/v1/products",
				"/api/v1/users", "/api/v1/production-orders"} {
				r := send(env, newRequest(http.MethodPost, path, []byte(`{}`), append([]string{"Content-Type", "application/jsonxyz"}, asAdmin...)...))
				requireProblemType(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
			}
			wh := shopDelivery([]byte(shopBody("ct")))
			wh.Header.Set("Content-Type", "text/plain")
			requireProblemType(t, send(env, wh), http.StatusUnsupportedMediaType, "unsupported_media_type")
			twice := newRequest(http.MethodPost, "/api/v1/orders", body, append(jsonAdmin, "Content-Type", "application/json")...)
			requireProblemType(t, send(env, twice), http.StatusUnsupportedMediaType, "unsupported_media_type")
		})
		for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON; charset=UTF-8"} {
			t.Run(fmt.Sprintf("OK%q", ct), func(t *testing.T) {
				r := send(env, newRequest(http.MethodPost, "/api/v1/orders", body, append([]string{"Content-Type", ct}, asAdmin...)...))
				require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			})
		}
		t.Run("OKNoBodyNoType", func(t *testing.T) {
			r := send(env, newRequest(http.MethodPost, "/api/v1/users/1/tokens", nil, asAdmin...))
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		})
	})
}

// Item 12: a client's X-Request-Id is kept only when it is short and plain.
func TestHTTP_RequestIDIsPlain(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		plain := regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
		for _, id := range []string{"abc-123_X.y", "0123456789abcdef0123456789abcdef", strings.Repeat("a", 128)} {
			r := send(env, newRequest(http.MethodGet, "/healthz", nil, "X-Request-Id", id))
			require.Equal(t, id, r.Header.Get("X-Request-Id"))
		}
		for _, id := range []string{strings.Repeat("a", 129), strings.Repeat("x", 8000), "<script>alert(1)</script>", "a b", "a/b", "ид", `"q"`, "a\tb"} {
			r := send(env, newRequest(http.MethodGet, "/healthz", nil, "X-Request-Id", id))
			got := r.Header.Get("X-Request-Id")
			require.NotEqual(t, id, got)
			require.Regexp(t, plain, got)
		}
		twice := send(env, newRequest(http.MethodGet, "/healthz", nil, "X-Request-Id", "a", "X-Request-Id", "b"))
		require.Regexp(t, plain, twice.Header.Get("X-Request-Id"))
		require.NotContains(t, []string{"a", "b"}, twice.Header.Get("X-Request-Id"))
		// The problem names the id it was answered with.
		r := send(env, newRequest(http.MethodGet, "/api/v1/orders/x", nil, append(asAdmin, "X-Request-Id", strings.Repeat("<", 200))...))
		var p struct {
			RequestID string `json:"request_id"`
		}
		r.JSON(t, &p)
		require.Equal(t, r.Header.Get("X-Request-Id"), p.RequestID)
		require.Regexp(t, plain, p.RequestID)
	})
}
