package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app"
	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// syncBuffer is a log's output that handlers write from the server's
// goroutines while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// records are the log's JSON records with the message.
func (s *syncBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// panickyApp is the app, logging as JSON into a buffer, with routes of the
// test's own that panic: in a handler before it answers (with text, with
// an apperr error that would be a 422 if it were returned, with an
// echo.HTTPError), in a route's middleware, and in a handler that has sent
// its status and part of its body.
func panickyApp(t *testing.T, d database.Dialect) (*echo.Echo, *syncBuffer) {
	t.Helper()
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	logs := &syncBuffer{}
	a, err := app.New(dbtest.New(t, d), cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	require.NoError(t, err)
	t.Cleanup(a.Stream.Close)
	e := a.HTTP()
	e.GET("/test/panic/text", func(echo.Context) error { panic("the secret of the panic") })
	e.POST("/test/panic/apperr", func(echo.Context) error {
		panic(apperr.Invalid("the secret of the panic", apperr.Field("qty", "x")))
	})
	e.GET("/test/panic/http-error", func(echo.Context) error { panic(echo.NewHTTPError(http.StatusTeapot, "the secret of the panic")) })
	e.GET("/test/panic/middleware", func(c echo.Context) error { return c.String(http.StatusOK, "never") },
		func(echo.HandlerFunc) echo.HandlerFunc {
			return func(echo.Context) error { panic(errors.New("the secret of the panic")) }
		})
	e.GET("/test/panic/after", func(c echo.Context) error {
		res := c.Response()
		res.Header().Set(echo.HeaderContentType, "text/csv")
		res.WriteHeader(http.StatusOK)
		_, _ = res.Write([]byte("a;b\n1;2\n"))
		res.Flush()
		panic("the secret of the panic, mid-answer")
	})
	return e, logs
}

// No request can take the process down or answer a bare 500: a panic
// before the answer begins is a 500 problem+json that shows nothing of the
// panic, and is logged with the panic and its stack; one after the answer
// has begun breaks the connection off, so that the client cannot take the
// answer for a whole one; the server goes on serving.
func TestRecover_PanicsAreLoggedAndAnsweredCleanly(t *testing.T) {
	t.Parallel()
	for _, d := range apptest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e, logs := panickyApp(t, d)

			paths := []struct{ method, path string }{
				{http.MethodGet, "/test/panic/text"}, {http.MethodPost, "/test/panic/apperr"},
				{http.MethodGet, "/test/panic/http-error"}, {http.MethodGet, "/test/panic/middleware"},
				{http.MethodHead, "/test/panic/text"},
			}
			for _, p := range paths {
				r := httptest.NewRecorder()
				e.ServeHTTP(r, newRequest(p.method, p.path, nil, "X-Request-Id", "panic-1"))
				require.Equal(t, http.StatusInternalServerError, r.Code, "%s %s: %s", p.method, p.path, r.Body)
				require.Equal(t, "application/problem+json", r.Header().Get("Content-Type"), p.path)
				require.Equal(t, "nosniff", r.Header().Get("X-Content-Type-Options"), "the hardening headers stay")
				require.Equal(t, "panic-1", r.Header().Get("X-Request-Id"))
				if p.method == http.MethodHead {
					require.Empty(t, r.Body.Bytes())
					continue
				}
				var pr struct {
					Type, Detail string
					RequestID    string `json:"request_id"`
					Status       int
					Errors       []any
				}
				require.NoError(t, json.Unmarshal(r.Body.Bytes(), &pr), "%s", r.Body)
				require.Equal(t, "urn:tsekh:problem:internal", pr.Type, "%s", r.Body)
				require.Equal(t, http.StatusInternalServerError, pr.Status)
				require.Equal(t, "panic-1", pr.RequestID)
				require.Empty(t, pr.Errors)
				require.NotContains(t, r.Body.String(), "secret", "the panic's text is never shown")
			}
			panics := logs.records(t, "request panicked")
			require.Len(t, panics, len(paths))
			for i, rec := range panics {
				require.Contains(t, rec["panic"], "the secret of the panic", "%v", rec)
				require.Equal(t, paths[i].path, rec["path"])
				require.Equal(t, paths[i].method, rec["method"])
				require.Equal(t, "panic-1", rec["request_id"])
				require.Equal(t, false, rec["answer_begun"])
				require.Contains(t, rec["stack"], "recover_test.go", "the stack of the goroutine that panicked")
			}

			// After the answer has begun: the status is sent, the body is
			// cut off before its end, and the server serves on.
			srv := httptest.NewServer(e)
			t.Cleanup(srv.Close)
			res, err := srv.Client().Get(srv.URL + "/test/panic/after")
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, res.StatusCode)
			body, err := io.ReadAll(res.Body)
			_ = res.Body.Close()
			require.ErrorIs(t, err, io.ErrUnexpectedEOF, "the answer is broken off, not ended: %q", body)
			panics = logs.records(t, "request panicked")
			require.Len(t, panics, len(paths)+1)
			require.Equal(t, true, panics[len(paths)]["answer_begun"])
			require.Contains(t, panics[len(paths)]["stack"], "recover_test.go")
			res, err = srv.Client().Get(srv.URL + "/healthz")
			require.NoError(t, err)
			_ = res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode)
		})
	}
}
