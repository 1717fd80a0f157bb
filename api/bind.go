package api

import (
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// bindJSON decodes the request body, one JSON object, into v (see
// input.DecodeObject): what cannot be read is refused with a problem that says
// where it went wrong, and every string of it must be valid UTF-8 without
// control characters other than tab and newline.
func bindJSON(c echo.Context, v any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	return input.DecodeObject(body, v)
}

// readBody reads a JSON request body: one that says it is anything but
// application/json (parameters such as charset=utf-8 allowed), or that comes
// without a Content-Type, is refused with 415; one over MaxBodyBytes with 413.
func readBody(c echo.Context) ([]byte, error) {
	ct := c.Request().Header.Values(echo.HeaderContentType)
	if len(ct) > 0 {
		if err := checkJSONMediaType(ct); err != nil {
			return nil, err
		}
	}
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, MaxBodyBytes+1))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errTooLarge()
		}
		return nil, apperr.Errorf(apperr.EBADREQUEST, "the request body could not be read")
	}
	if len(body) > MaxBodyBytes {
		return nil, errTooLarge()
	}
	if len(ct) == 0 && len(body) > 0 {
		return nil, apperr.Errorf(apperr.EMEDIATYPE, "the request body needs the header Content-Type: application/json")
	}
	return body, nil
}

func errTooLarge() error {
	return apperr.Errorf(apperr.ETOOLARGE, "the request body is larger than %d bytes (1 MiB)", MaxBodyBytes)
}

// checkJSONMediaType accepts one Content-Type header of application/json, in
// UTF-8 if it names a charset.
func checkJSONMediaType(values []string) error {
	if len(values) > 1 {
		return apperr.Errorf(apperr.EMEDIATYPE, "send one Content-Type header, application/json")
	}
	mt, params, err := mime.ParseMediaType(values[0])
	if err != nil || mt != echo.MIMEApplicationJSON {
		return apperr.Errorf(apperr.EMEDIATYPE, "the body must be JSON (Content-Type: application/json), not %q", printableHeader(values[0]))
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return apperr.Errorf(apperr.EMEDIATYPE, "the body must be JSON in UTF-8, not in %q", printableHeader(cs))
	}
	return nil
}

// printableHeader bounds and escapes a header value to quote it back.
func printableHeader(v string) string {
	if len(v) > 100 {
		v = v[:100]
	}
	q := strconv.QuoteToASCII(v)
	return q[1 : len(q)-1]
}

// pathID reads a positive integer path parameter.
func pathID(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, apperr.Invalid("invalid path", apperr.Field(name, "must be a positive whole number"))
	}
	return id, nil
}

// queryText reads an optional free-text query parameter of at most max
// characters (see checkParams for its characters).
func queryText(c echo.Context, name string, max int) (string, []apperr.FieldError) {
	v := c.QueryParam(name)
	return v, input.Line(name, v, max)
}

// maxParamProblems bounds the parameters one refusal names.
const maxParamProblems = 20

// checkParams refuses, for every route, path and query parameters (names
// or values) that are not valid UTF-8 or hold control characters (%00, %FF,
// %C0%AF), and query parameters given more than once (no operation takes a
// list in its query: a handler would read the first and drop the rest),
// naming each: no handler and no database sees them.
func checkParams(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		var fields []apperr.FieldError
		for i, name := range c.ParamNames() {
			if i < len(c.ParamValues()) {
				fields = append(fields, input.Line(name, c.ParamValues()[i], 0)...)
			}
		}
		if c.Request().URL.RawQuery != "" {
			q := c.QueryParams()
			for _, name := range slices.Sorted(maps.Keys(q)) {
				if len(fields) >= maxParamProblems {
					break
				}
				if f := input.Line(printableHeader(name), name, 0); len(f) > 0 {
					fields = append(fields, f...)
					continue
				}
				if n := len(q[name]); n > 1 {
					fields = append(fields, apperr.Field(name, "is given %d times: give it once", n))
					continue
				}
				for _, v := range q[name] {
					if f := input.Line(name, v, 0); len(f) > 0 {
						fields = append(fields, f...)
						break
					}
				}
			}
		}
		if len(fields) > 0 {
			return apperr.Invalid("invalid path or query", fields...)
		}
		return next(c)
	}
}

// queryInt reads an optional positive integer query parameter.
func queryInt(c echo.Context, name string) (int64, error) {
	v := c.QueryParam(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, apperr.Invalid("invalid query", apperr.Field(name, "must be a positive whole number"))
	}
	return n, nil
}

// pageOf reads ?limit= and ?cursor= of a list that has only its default
// order: a cursor this API did not return for the request's list (another
// list's or object's, another sort's, one made by hand) is a 422 naming
// cursor.
func pageOf(c echo.Context) (page.Request, error) {
	pr, err := sortedPageOf(c)
	if err != nil {
		return pr, err
	}
	return pr, pr.Unsorted()
}

// sortedPageOf is pageOf for a list with sorts: the service checks that the
// cursor continues the sort asked for.
func sortedPageOf(c echo.Context) (page.Request, error) {
	return page.ParseList(listName(c), c.QueryParam("limit"), c.QueryParam("cursor"))
}

// pageList is a page of the request's list with the cursor a client sends
// for the next page (see page.ForList).
func pageList[T any](c echo.Context, items []T, next string) List[T] {
	return list(items, page.ForList(listName(c), next))
}

// listName names the list a cursor belongs to: the request's path, with its
// ids (/api/v1/orders/6116/history), not the route's
// (/api/v1/orders/:id/history), so that a cursor of one order's history
// sent for another's is refused, not answered with an empty or a wrong page.
func listName(c echo.Context) string { return c.Request().URL.Path }

// List is a page of items and the cursor of the next page ("" at the end).
type List[T any] struct {
	Items      []T    `json:"items" validate:"required"`
	NextCursor string `json:"next_cursor" validate:"required"`
}

func list[T any](items []T, next string) List[T] {
	if items == nil {
		items = []T{}
	}
	return List[T]{Items: items, NextCursor: next}
}
