package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// recoverPanics is the one guard against a panic anywhere in a request's
// handling, the other middleware included (it runs first): the panic is
// logged with its value and the stack of the goroutine that panicked, and
// the request ends without taking the process down. Before the answer has
// begun it is a 500 problem+json like any internal error: whatever the
// panic carried (an apperr error, an echo.HTTPError, text) is logged, never
// shown. Once the status is sent it cannot change: the connection is broken
// off (http.ErrAbortHandler, which net/http neither logs nor survives into
// other requests), so that the client sees the answer cut short rather than
// a truncated body that looks whole (a CSV missing its last rows).
func recoverPanics(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			defer func() {
				r := recover()
				if r == nil {
					return
				}
				if r == http.ErrAbortHandler { //nolint:errorlint // net/http compares it so too
					panic(r) // a deliberate abort: net/http's to handle
				}
				res := c.Response()
				log.ErrorContext(c.Request().Context(), "request panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()),
					"request_id", res.Header().Get(echo.HeaderXRequestID), "method", methodOf(c), "path", c.Request().URL.Path,
					"answer_begun", res.Committed)
				if res.Committed {
					panic(http.ErrAbortHandler)
				}
				err = &apperr.Error{Code: apperr.EINTERNAL, Message: "the request's handling panicked", Err: fmt.Errorf("panic: %v", r)}
			}()
			return next(c)
		}
	}
}
