package docs

import _ "embed" // the OpenAPI 3.1 document

// OpenAPI is the OpenAPI 3.1 document, openapi.json: the contract the
// service serves at /openapi.json and the tests check every response
// against. make docs writes it (scripts/openapi3).
//
//go:embed openapi.json
var OpenAPI []byte
