package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// bindJSON decodes the request body into v, refusing what is not one JSON
// object with a problem that says where it went wrong.
func bindJSON(c echo.Context, v any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	return decodeJSON(body, v)
}

func readBody(c echo.Context) ([]byte, error) {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	if ct != "" && !strings.HasPrefix(ct, echo.MIMEApplicationJSON) {
		return nil, apperr.Errorf(apperr.EBADREQUEST, "the body must be JSON (Content-Type: application/json), not %s", ct)
	}
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, MaxBodyBytes+1))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, apperr.Errorf(apperr.ETOOLARGE, "the request body is larger than %d bytes", MaxBodyBytes)
		}
		return nil, apperr.Errorf(apperr.EBADREQUEST, "the request body could not be read")
	}
	if len(body) > MaxBodyBytes {
		return nil, apperr.Errorf(apperr.ETOOLARGE, "the request body is larger than %d bytes", MaxBodyBytes)
	}
	return body, nil
}

// decodeJSON decodes one JSON object into v.
func decodeJSON(body []byte, v any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return apperr.Errorf(apperr.EBADREQUEST, "the request body is empty; a JSON object is expected")
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if err := dec.Decode(v); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typ) && typ.Field != "":
			return apperr.Invalid("the request body has a field of the wrong type",
				apperr.Field(typ.Field, "must be %s, not %s", jsonKind(typ.Type.Kind().String()), typ.Value))
		case errors.As(err, &typ):
			return apperr.Errorf(apperr.EBADREQUEST, "the request body must be a JSON object")
		case errors.As(err, &syn):
			return apperr.Errorf(apperr.EBADREQUEST, "the request body is not valid JSON (at byte %d)", syn.Offset)
		default:
			return apperr.Errorf(apperr.EBADREQUEST, "the request body is not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	if dec.More() {
		return apperr.Errorf(apperr.EBADREQUEST, "the request body must hold one JSON object")
	}
	return nil
}

func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "a whole number"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "string":
		return "a string"
	case k == "bool":
		return "true or false"
	case k == "slice":
		return "an array"
	case k == "struct", k == "map":
		return "an object"
	}
	return k
}

// pathID reads a positive integer path parameter.
func pathID(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, apperr.Invalid("invalid path", apperr.Field(name, "must be a positive whole number"))
	}
	return id, nil
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

func pageOf(c echo.Context) (page.Request, error) {
	return page.Parse(c.QueryParam("limit"), c.QueryParam("cursor"))
}

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
