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

// contract is what the OpenAPI document says of every operation that the
// app enforces: the query parameters it takes and the media types it
// answers in, by "METHOD /path/{param}".
type contract struct {
	query    queryParams
	produces map[string][]string
}

// declaredContract reads, once per process, the query parameters and media
// types of every operation from the OpenAPI document (docs/, generated from
// the swag annotations). (swag.ReadDoc renders the document from shared
// state, so it must not run for two apps at once.)
var declaredContract = sync.OnceValues(readContract)

func readContract() (contract, error) {
	doc, err := swag.ReadDoc()
	if err != nil {
		return contract{}, err
	}
	var spec struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
			Produces []string `json:"produces"`
		} `json:"paths"`
	}
	if err := json.Unmarshal([]byte(doc), &spec); err != nil {
		return contract{}, err
	}
	d := contract{query: queryParams{}, produces: map[string][]string{}}
	for path, ops := range spec.Paths {
		for method, op := range ops {
			names := []string{}
			for _, p := range op.Parameters {
				if p.In == "query" {
					names = append(names, p.Name)
				}
			}
			key := strings.ToUpper(method) + " " + path
			d.query[key] = names
			d.produces[key] = op.Produces
		}
	}
	return d, nil
}

// operationKey names the request's operation as the contract does; HEAD is
// the GET it is answered as.
func operationKey(c echo.Context) string {
	method := c.Request().Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	return method + " " + openAPIPath(c.Path())
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
		known, ok := q[operationKey(c)]
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
