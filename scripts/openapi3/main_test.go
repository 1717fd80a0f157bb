package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

// The committed OpenAPI 3.1 document is the one the committed Swagger 2.0
// document converts to, so that neither is changed without the other.
func TestCommittedDocumentIsCurrent(t *testing.T) {
	t.Parallel()
	swagger, err := os.ReadFile("../../docs/swagger.json")
	require.NoError(t, err)
	js, yml, err := Generate(swagger)
	require.NoError(t, err)
	for name, want := range map[string][]byte{"openapi.json": js, "openapi.yaml": yml} {
		got, err := os.ReadFile("../../docs/" + name)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "docs/%s is not what docs/swagger.json converts to: run make docs", name)
	}
}

// The document says what clients need to generate without hand fixes: every
// error as a problem, no number a generator would narrow, bearer
// authentication, nullability as 3.1 writes it, and the statuses the
// middleware answers on every operation they apply to.
func TestDocumentIsComplete(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromFile("../../docs/openapi.json")
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	require.Equal(t, Version, doc.OpenAPI)
	bearer := doc.Components.SecuritySchemes["BearerAuth"].Value
	require.Equal(t, "http", bearer.Type)
	require.Equal(t, "bearer", bearer.Scheme)

	var problems []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			for _, code := range []string{"413", "431", "500"} {
				if op.Responses.Value(code) == nil {
					problems = append(problems, where+": no "+code)
				}
			}
			if negotiated(op) != (op.Responses.Value("406") != nil) {
				problems = append(problems, where+": declares 406 if and only if it answers with a body")
			}
			if authenticated(op) && (op.Responses.Value("401") == nil || op.Responses.Value("503") == nil) {
				problems = append(problems, where+": takes a token, so may answer 401 and 503")
			}
			for code, r := range op.Responses.Map() {
				if code < "400" {
					continue
				}
				mt := r.Value.Content[ProblemMediaType]
				if len(r.Value.Content) != 1 || mt == nil || mt.Schema.Ref != problemRef {
					problems = append(problems, where+": "+code+" is not "+ProblemMediaType+" with "+problemRef)
				}
			}
			for _, p := range op.Parameters {
				problems = append(problems, schemaProblems(where+" "+p.Value.Name, p.Value.Schema, map[*openapi3.Schema]bool{})...)
			}
		}
	}
	for name, s := range doc.Components.Schemas {
		problems = append(problems, schemaProblems(name, s, map[*openapi3.Schema]bool{})...)
	}
	require.Empty(t, problems)
	raw, err := os.ReadFile("../../docs/openapi.json")
	require.NoError(t, err)
	require.NotContains(t, string(raw), `"nullable"`, "3.1 says null with a type, not nullable")
}

func schemaProblems(where string, ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) []string {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return nil
	}
	s := ref.Value
	seen[s] = true
	var out []string
	switch {
	case s.Type.Includes(openapi3.TypeNumber) && s.Format != "double",
		s.Type.Includes(openapi3.TypeInteger) && s.Format != "int64" && s.Format != "int32":
		out = append(out, where+": "+strings.Join(s.Type.Slice(), ",")+" of format "+s.Format)
	}
	for name, p := range s.Properties {
		out = append(out, schemaProblems(where+"."+name, p, seen)...)
	}
	out = append(out, schemaProblems(where+"[]", s.Items, seen)...)
	for _, l := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range l {
			out = append(out, schemaProblems(where, sub, seen)...)
		}
	}
	return out
}

// A nullable reference (swag's allOf with x-nullable) becomes a choice of
// the reference and null, and a nullable string a type array.
func TestConvert_Nullable(t *testing.T) {
	t.Parallel()
	doc, err := Convert([]byte(`{"swagger": "2.0", "info": {"title": "t", "version": "1"},
		"paths": {},
		"securityDefinitions": {"BearerAuth": {"type": "apiKey", "in": "header", "name": "Authorization"}},
		"definitions": {
			"api.Problem": {"type": "object"},
			"A": {"type": "object", "properties": {"n": {"type": "number"}}},
			"B": {"type": "object", "properties": {
				"a": {"allOf": [{"$ref": "#/definitions/A"}], "x-nullable": true},
				"s": {"type": "string", "x-nullable": true}}}}}`))
	require.NoError(t, err)
	b := doc.Components.Schemas["B"].Value
	require.Empty(t, b.Properties["a"].Value.AllOf)
	require.Len(t, b.Properties["a"].Value.AnyOf, 2)
	require.Equal(t, "#/components/schemas/A", b.Properties["a"].Value.AnyOf[0].Ref)
	require.True(t, b.Properties["a"].Value.AnyOf[1].Value.Type.Is(openapi3.TypeNull))
	require.Equal(t, []string{"string", "null"}, b.Properties["s"].Value.Type.Slice())
	require.Equal(t, "double", doc.Components.Schemas["A"].Value.Properties["n"].Value.Format)
}
