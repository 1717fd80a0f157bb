package apptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/tsekh/tsekh/docs"
)

// contract is the OpenAPI 3.1 document the service publishes
// (docs/openapi.json, embedded in the docs package), loaded and routed once
// per test binary: every response a test gets through Env.Do is checked
// against it (checkResponse).
var contract = sync.OnceValues(loadContract)

// document is the loaded contract and its router.
type document struct {
	doc    *openapi3.T
	router routers.Router
}

func loadContract() (*document, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(docs.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("apptest: docs/openapi.json: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("apptest: docs/openapi.json is not valid: %w", err)
	}
	closeObjects(doc)
	// openapi3filter validates the bodies of a 3.1 document by compiling
	// the schema for JSON Schema 2020-12 on every call, then, for a schema
	// that refers to components and uses no keyword of 2020-12's own (every
	// schema of this document), drops it and validates with kin-openapi's
	// own validator: a few milliseconds a response spent for nothing,
	// many times that under the race detector. The routes are those of a
	// copy that says 3.0.3, so that the own validator runs at once; it reads
	// the 3.1 forms the document uses (types with null, anyOf with null).
	doc30 := *doc
	doc30.OpenAPI = "3.0.3"
	router, err := gorillamux.NewRouter(&doc30)
	if err != nil {
		return nil, fmt.Errorf("apptest: routing docs/openapi.json: %w", err)
	}
	return &document{doc: doc, router: router}, nil
}

// closeObjects makes every object schema of the document that lists its
// members take no others, so that a member a handler sends and the document
// does not describe fails the test: clients that decode strictly would
// refuse it. The published document leaves them open, as clients should
// ignore members they do not know of.
func closeObjects(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(*openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			s.AdditionalProperties.Has = openapi3.Ptr(false)
		}
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
		walk(s.AdditionalProperties.Schema)
		for _, l := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range l {
				walk(sub)
			}
		}
	}
	for _, s := range doc.Components.Schemas {
		walk(s)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, r := range op.Responses.Map() {
				for _, mt := range r.Value.Content {
					walk(mt.Schema)
				}
			}
		}
	}
}

// sentRequest is what checkResponse needs of a request: it is rebuilt from
// these, as the handler has read the body and may have changed the request.
type sentRequest struct {
	method, path string
	header       http.Header
	body         []byte
}

// checkResponse returns why the response breaks the document, or nil: its
// status must be one the operation declares, its Content-Type one of the
// media types declared for that status (none when it declares none), its
// declared headers present and valid, and a JSON body valid against the
// declared schema. Other bodies (CSV, PDF, ZPL, SVG, HTML, the event stream)
// are checked for their media type only. A HEAD request is checked as the
// GET it is answered as, without a body. A request the document has no
// operation for (an unknown path or method, the Swagger UI, the metrics) is
// only held to answering its errors as problems. The request is validated
// too, and note told when the document refuses one the handler took.
func checkResponse(req sentRequest, status int, header http.Header, body []byte, note func(error)) error {
	d, err := contract()
	if err != nil {
		return err
	}
	method := req.method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	r, err := http.NewRequestWithContext(context.Background(), method, req.path, bytes.NewReader(req.body))
	if err != nil {
		return err
	}
	r.Header = req.header.Clone()
	route, params, err := d.router.FindRoute(r)
	if err != nil {
		var re *routers.RouteError
		if !errors.As(err, &re) {
			return err
		}
		if status >= 400 && mediaType(header) != "application/problem+json" {
			return fmt.Errorf("an error of a path the document does not describe is not a problem: %d %s", status, header.Get("Content-Type"))
		}
		return nil
	}
	res := route.Operation.Responses.Status(status)
	if res == nil || res.Value == nil {
		return fmt.Errorf("%s %s (%s) does not declare the status %d", method, route.Path, route.Operation.OperationID, status)
	}
	got := mediaType(header)
	json := got == "application/json" || strings.HasSuffix(got, "+json")
	switch declared := res.Value.Content; {
	case len(declared) == 0 && (got != "" || len(body) > 0):
		return fmt.Errorf("%s: %d declares no body, but the response has %q (%d bytes)", route.Operation.OperationID, status, got, len(body))
	case len(declared) > 0 && declared.Get(header.Get("Content-Type")) == nil:
		return fmt.Errorf("%s: %d declares %s, not %q", route.Operation.OperationID, status, strings.Join(mediaTypes(declared), ", "), got)
	}
	reqIn := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: &openapi3filter.Options{
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, // the app judges the token
		MultiError:         true,
	}}
	// Tests send requests the document refuses on purpose, to see them
	// refused, so a request is never at fault. One the document refuses
	// and the handler took is noted: the handler takes more than the
	// document promises (a cursor of "", a shop's price as a string), which
	// is no break of it, or the document is wrong.
	if err := openapi3filter.ValidateRequest(context.Background(), reqIn); err != nil && status < 300 {
		note(fmt.Errorf("%s: the document refuses the request, yet the answer is %d: %w", route.Operation.OperationID, status, err))
	}
	r.Body = http.NoBody
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			ExcludeResponseBody:   !json || req.method == http.MethodHead,
			MultiError:            true,
		},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s: %w", route.Operation.OperationID, err)
	}
	return nil
}

// mediaType is the response's media type without its parameters.
func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return h.Get("Content-Type")
	}
	return mt
}

func mediaTypes(c openapi3.Content) []string {
	out := make([]string, 0, len(c))
	for mt := range c {
		out = append(out, mt)
	}
	return out
}
