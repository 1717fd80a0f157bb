package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
	"github.com/swaggo/swag"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// queryParams maps "METHOD /path/{param}" to the query parameters the OpenAPI
// document declares for that operation. It is read from the generated
// document, so that what a route accepts is exactly what its contract says.
type queryParams map[string][]string

// declaredQueryParams reads the query parameters of every operation from the
// OpenAPI document (docs/, generated from the swag annotations), once:
// swag.ReadDoc rewrites the registered document's fields as it renders it,
// so two servers built at the same time (tests) must not both call it.
var declaredQueryParams = sync.OnceValues(readDeclaredQueryParams)

func readDeclaredQueryParams() (queryParams, error) {
	doc, err := swag.ReadDoc()
	if err != nil {
		return nil, err
	}
	var spec struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal([]byte(doc), &spec); err != nil {
		return nil, err
	}
	q := queryParams{}
	for path, ops := range spec.Paths {
		for method, op := range ops {
			names := []string{}
			for _, p := range op.Parameters {
				if p.In == "query" {
					names = append(names, p.Name)
				}
			}
			q[strings.ToUpper(method)+" "+path] = names
		}
	}
	return q, nil
}

// onlyDeclaredQuery refuses, with a 400 problem naming them, the query
// parameters an operation does not declare: a misspelt filter must never come
// back as an unfiltered list. Routes the document does not describe are left
// alone.
func (q queryParams) onlyDeclaredQuery(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().URL.RawQuery == "" {
			return next(c)
		}
		method := c.Request().Method
		if method == http.MethodHead {
			method = http.MethodGet
		}
		known, ok := q[method+" "+openAPIPath(c.Path())]
		if !ok {
			return next(c)
		}
		var unknown []string
		for name := range c.QueryParams() {
			if !slices.Contains(known, name) {
				unknown = append(unknown, name)
			}
		}
		if len(unknown) == 0 {
			return next(c)
		}
		sort.Strings(unknown)
		if len(unknown) > maxParamProblems {
			unknown = unknown[:maxParamProblems]
		}
		takes := "no query parameters"
		if len(known) > 0 {
			takes = "only " + strings.Join(known, ", ")
		}
		fields := make([]apperr.FieldError, 0, len(unknown))
		for _, name := range unknown {
			fields = append(fields, apperr.Field(printableHeader(name), "is not a query parameter of this endpoint, which takes %s", takes))
		}
		e := apperr.Invalid("unknown query parameter: "+printableHeader(strings.Join(unknown, ", ")), fields...)
		e.Code = apperr.EBADREQUEST
		return e
	}
}

// openAPIPath turns an Echo route ("/orders/:id") into its OpenAPI path
// ("/orders/{id}").
func openAPIPath(route string) string {
	parts := strings.Split(route, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}
