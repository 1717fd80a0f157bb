package apptest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// The check Env.Do makes of every response fails a response that breaks
// docs/openapi.json, and passes one that keeps it.
func TestCheckResponse(t *testing.T) {
	t.Parallel()
	const (
		problem = `{"type": "urn:tsekh:problem:unavailable", "title": "Service unavailable", "status": 503, "detail": "try again"}`
		user    = `{"id": 1, "name": "Ольга", "role": "planner", "created_at": "2026-12-04T10:00:00Z", "email": %s, "deactivated_at": null}`
	)
	users := `{"next_cursor": "", "items": [` + user + `]}`
	header := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	js, problemJSON := "application/json", "application/problem+json"
	for _, c := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		breaks             bool
	}{
		{"a body as declared", "GET", "/healthz", 200, header("Content-Type", js), `{"status": "ok"}`, false},
		{"a member of the wrong type", "GET", "/healthz", 200, header("Content-Type", js), `{"status": 1}`, true},
		{"a required member missing", "GET", "/healthz", 200, header("Content-Type", js), `{}`, true},
		{"a member the document does not describe", "GET", "/healthz", 200, header("Content-Type", js), `{"status": "ok", "uptime": 5}`, true},
		{"a media type not declared", "GET", "/healthz", 200, header("Content-Type", "text/plain"), `ok`, true},
		{"a status not declared", "GET", "/healthz", 418, header("Content-Type", problemJSON), problem, true},
		{"an error that is not a problem", "GET", "/healthz", 413, header("Content-Type", js), problem, true},
		{"an error as a problem", "GET", "/healthz", 413, header("Content-Type", problemJSON), problem, false},
		{"a problem of the wrong shape", "GET", "/healthz", 413, header("Content-Type", problemJSON), `{"error": "too large"}`, true},
		{"HEAD, as its GET without the body", "HEAD", "/healthz", 200, header("Content-Type", js), ``, false},
		{"a 503 with Retry-After", "GET", "/api/v1/users", 503, header("Content-Type", problemJSON, "Retry-After", "5"), problem, false},
		{"a 503 without Retry-After", "GET", "/api/v1/users", 503, header("Content-Type", problemJSON), problem, true},
		{"null where the member is nullable", "GET", "/api/v1/users", 200, header("Content-Type", js), fmt.Sprintf(users, `null`), false},
		{"a string where the member is nullable", "GET", "/api/v1/users", 200, header("Content-Type", js), fmt.Sprintf(users, `"olga@example.com"`), false},
		{"a number where the member is nullable", "GET", "/api/v1/users", 200, header("Content-Type", js), fmt.Sprintf(users, `7`), true},
		{"no body where none is declared", "DELETE", "/api/v1/subscribers/x", 204, header(), ``, false},
		{"a body where none is declared", "DELETE", "/api/v1/subscribers/x", 204, header("Content-Type", js), `{}`, true},
		{"an unknown path's error as a problem", "GET", "/nowhere", 404, header("Content-Type", problemJSON), problem, false},
		{"an unknown path's error not a problem", "GET", "/nowhere", 404, header("Content-Type", "text/plain"), `not found`, true},
	} {
		req := sentRequest{method: c.method, path: c.path, header: http.Header{}}
		err := checkResponse(req, c.status, c.header, []byte(c.body), func(error) {})
		if c.breaks {
			require.Error(t, err, c.name)
		} else {
			require.NoError(t, err, c.name)
		}
	}
}
