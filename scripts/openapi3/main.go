// Command openapi3 writes docs/openapi.json and docs/openapi.yaml, the
// OpenAPI 3.1 document that clients generate from, out of the Swagger 2.0
// document swag writes from the annotations (docs/swagger.json, after
// openapifix). Run by `make docs`:
//
//	go run ./scripts/openapi3 docs
//
// kin-openapi's openapi2conv converts the document to OpenAPI 3.0 and
// openapi3conv rewrites its schemas the 3.1 way (nullable as a type array,
// examples); complete then says what the annotations cannot, or would have
// to repeat on every operation:
//
//   - every error response is application/problem+json with the Problem
//     schema, as the error handler (api/errors.go) writes it;
//   - the statuses the middleware may answer before any handler runs are
//     declared on every operation they apply to (see middlewareStatuses);
//   - every number is a double and every integer an int64, so that no
//     generated client narrows them (a number without a format is a float32
//     in Go);
//   - BearerAuth is HTTP bearer authentication, so clients send
//     "Bearer <token>" themselves;
//   - a nullable reference is a choice of the reference and null, which
//     3.1 can say and a type array alone cannot.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3conv"
	"go.yaml.in/yaml/v3"
)

// Version is the OpenAPI version written: oapi-codegen (v2.8) and
// openapi-typescript (v7) both read 3.1, and openapi3conv's own target
// (3.2) is one fewer tools read.
const Version = "3.1.0"

// problemRef is the schema of every error body (api.Problem).
const problemRef = "#/components/schemas/api.Problem"

// ProblemMediaType is the media type of every error body (RFC 9457).
const ProblemMediaType = "application/problem+json"

func main() {
	dir := "docs"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := run(dir); err != nil {
		fmt.Fprintf(os.Stderr, "openapi3: %v\n", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	swagger, err := os.ReadFile(filepath.Join(dir, "swagger.json")) //nolint:gosec // the docs folder the Makefile names
	if err != nil {
		return err
	}
	js, yml, err := Generate(swagger)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), js, 0o644); err != nil { //nolint:gosec // committed docs, readable by all
		return err
	}
	return os.WriteFile(filepath.Join(dir, "openapi.yaml"), yml, 0o644) //nolint:gosec // committed docs, readable by all
}

// Generate converts the Swagger 2.0 document to the OpenAPI 3.1 one, as
// JSON and as YAML.
func Generate(swagger []byte) (js, yml []byte, err error) {
	doc, err := Convert(swagger)
	if err != nil {
		return nil, nil, err
	}
	v, err := doc.MarshalYAML()
	if err != nil {
		return nil, nil, err
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("the document is a %T, not an object", v)
	}
	// The top-level members in the order a reader looks for them; every
	// object below in the order of its keys.
	keys := slices.SortedFunc(maps.Keys(top), func(a, b string) int {
		ia, ib := slices.Index(topOrder, a), slices.Index(topOrder, b)
		if ia < 0 || ib < 0 || ia == ib {
			return cmp.Or(cmp.Compare(ib, ia), cmp.Compare(a, b))
		}
		return cmp.Compare(ia, ib)
	})
	var jb bytes.Buffer
	node := &yaml.Node{Kind: yaml.MappingNode}
	jb.WriteString("{")
	for i, k := range keys {
		// Through JSON, so that the YAML holds what the JSON does.
		member, err := json.MarshalIndent(top[k], "  ", "  ")
		if err != nil {
			return nil, nil, err
		}
		if i > 0 {
			jb.WriteString(",")
		}
		name, _ := json.Marshal(k)
		fmt.Fprintf(&jb, "\n  %s: %s", name, member)
		var plain any
		if err := json.Unmarshal(member, &plain); err != nil {
			return nil, nil, err
		}
		var value yaml.Node
		if err := value.Encode(plain); err != nil {
			return nil, nil, err
		}
		node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &value)
	}
	jb.WriteString("\n}\n")
	var yb bytes.Buffer
	enc := yaml.NewEncoder(&yb)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return nil, nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, nil, err
	}
	return jb.Bytes(), yb.Bytes(), nil
}

// topOrder is the order of the document's top-level members.
var topOrder = []string{"openapi", "info", "servers", "security", "tags", "paths", "webhooks", "components"}

// Convert reads the Swagger 2.0 document and returns its OpenAPI 3.1
// version, completed and validated.
func Convert(swagger []byte) (*openapi3.T, error) {
	var doc2 openapi2.T
	if err := json.Unmarshal(swagger, &doc2); err != nil {
		return nil, fmt.Errorf("reading the Swagger 2.0 document: %w", err)
	}
	doc, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, fmt.Errorf("converting to OpenAPI 3: %w", err)
	}
	if err := complete(doc); err != nil {
		return nil, err
	}
	openapi3conv.Upgrade(doc)
	doc.OpenAPI = Version
	// Reloaded from its JSON, as clients and the tests read it.
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	loaded, err := openapi3.NewLoader().LoadFromData(js)
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI 3.1 document back: %w", err)
	}
	if err := loaded.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the OpenAPI 3.1 document is not valid: %w", err)
	}
	return doc, nil
}

// complete gives the converted (3.0) document what the annotations do not
// say; see the package comment.
func complete(doc *openapi3.T) error {
	if doc.Components.Schemas[problemRef[len("#/components/schemas/"):]] == nil {
		return fmt.Errorf("no schema %s: the error responses need it", problemRef)
	}
	bearer, ok := doc.Components.SecuritySchemes["BearerAuth"]
	if !ok || bearer.Value == nil {
		return fmt.Errorf("no security scheme BearerAuth")
	}
	bearer.Value = &openapi3.SecurityScheme{
		Type:        "http",
		Scheme:      "bearer",
		Description: "An API token (POST /api/v1/users/{id}/tokens), sent as `Authorization: Bearer <token>`.",
	}
	for _, s := range doc.Components.Schemas {
		walkSchema(s, map[*openapi3.Schema]bool{})
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if err := completeOperation(op); err != nil {
				return fmt.Errorf("%s %s: %w", method, path, err)
			}
		}
	}
	return nil
}

// middlewareStatuses are the error statuses the app's middleware (api.New)
// or its error handler may answer on an operation before, or whatever,
// its handler does; each applies where its condition holds.
var middlewareStatuses = []struct {
	status      int
	description string
	applies     func(op *openapi3.Operation) bool
}{
	{400, "a query parameter the operation does not take, or a request it cannot read", always},
	{401, "no token, or one that is unknown, expired or revoked", authenticated},
	{406, "the Accept header allows none of the media types it answers in", negotiated},
	{413, "a request body over 1 MiB", always},
	{422, "a path or query value that is not one line of valid text, named in errors", always},
	{431, "request headers over 64 KiB", always},
	{500, "an unexpected error, logged with the request id", always},
	{503, "the database did not answer in time or is unreachable, or the request collided with others on the same data: retry after Retry-After seconds", authenticated},
}

func always(*openapi3.Operation) bool { return true }

// authenticated: the operation takes a bearer token, which is looked up in
// the database.
func authenticated(op *openapi3.Operation) bool {
	return op.Security == nil || len(*op.Security) > 0
}

// negotiated: the operation succeeds with a body, in media types which the
// Accept header chooses among (api's negotiate).
func negotiated(op *openapi3.Operation) bool {
	for code, r := range op.Responses.Map() {
		if code < "400" && r.Value != nil && len(r.Value.Content) > 0 {
			return true
		}
	}
	return false
}

func completeOperation(op *openapi3.Operation) error {
	for _, m := range middlewareStatuses {
		code := strconv.Itoa(m.status)
		if op.Responses.Value(code) == nil && m.applies(op) {
			op.Responses.Set(code, &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription(m.description)})
		}
	}
	for code, r := range op.Responses.Map() {
		if r.Value == nil {
			return fmt.Errorf("response %s is a reference", code)
		}
		status, err := strconv.Atoi(code)
		if err != nil {
			return fmt.Errorf("response %q: only statuses are declared", code)
		}
		if status < 400 {
			continue
		}
		r.Value.Content = openapi3.Content{ProblemMediaType: &openapi3.MediaType{
			Schema: &openapi3.SchemaRef{Ref: problemRef},
		}}
		if status == 503 {
			r.Value.Headers = openapi3.Headers{"Retry-After": &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
				Description: "seconds to wait before trying again",
				Required:    true,
				Schema:      openapi3.NewInt64Schema().WithMin(0).NewRef(),
			}}}}
		}
	}
	for _, p := range op.Parameters {
		if p.Value == nil {
			continue
		}
		// openapifix wrote a Swagger 2.0 parameter's example as
		// x-example; OpenAPI 3 has example.
		if ex, has := p.Value.Extensions["x-example"]; has {
			p.Value.Example = ex
			delete(p.Value.Extensions, "x-example")
		}
		walkSchema(p.Value.Schema, map[*openapi3.Schema]bool{})
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		delete(op.RequestBody.Value.Extensions, "x-originalParamName")
		for _, mt := range op.RequestBody.Value.Content {
			walkSchema(mt.Schema, map[*openapi3.Schema]bool{})
		}
	}
	for _, r := range op.Responses.Map() {
		for _, mt := range r.Value.Content {
			walkSchema(mt.Schema, map[*openapi3.Schema]bool{})
		}
		for _, h := range r.Value.Headers {
			if h.Value != nil {
				walkSchema(h.Value.Schema, map[*openapi3.Schema]bool{})
			}
		}
	}
	return nil
}

// walkSchema gives every number and integer of the schema a format, and
// turns a nullable single allOf (swag's way of saying "this reference, or
// null") into anyOf the reference and null.
func walkSchema(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Ref != "" || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	switch {
	case s.Type.Is(openapi3.TypeNumber) && s.Format == "":
		s.Format = "double"
	case s.Type.Is(openapi3.TypeInteger) && s.Format == "":
		s.Format = "int64"
	}
	if s.Nullable && s.Type.IsEmpty() && len(s.AllOf) == 1 && len(s.AnyOf) == 0 && len(s.OneOf) == 0 {
		s.AnyOf = openapi3.SchemaRefs{s.AllOf[0], openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeNull}})}
		s.AllOf, s.Nullable = nil, false
	}
	for _, p := range s.Properties {
		walkSchema(p, seen)
	}
	walkSchema(s.Items, seen)
	walkSchema(s.AdditionalProperties.Schema, seen)
	for _, l := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range l {
			walkSchema(sub, seen)
		}
	}
}
