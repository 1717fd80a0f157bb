package api_test

import (
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// The OpenAPI 3.1 document is served without a token, as committed, and the
// Swagger UI's document links to it.
func TestOpenAPI_ServedAndLinked(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, database.SQLite, nil)
	r := env.Do(http.MethodGet, "/openapi.json", nil, "")
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	committed, err := os.ReadFile("../docs/openapi.json")
	require.NoError(t, err)
	require.Equal(t, string(committed), string(r.Body), "the service serves the committed document")
	var doc struct{ OpenAPI string }
	r.JSON(t, &doc)
	require.Equal(t, "3.1.0", doc.OpenAPI)

	r = env.Do(http.MethodGet, "/swagger/doc.json", nil, "")
	require.Equal(t, http.StatusOK, r.Status)
	var swagger struct{ Info struct{ Description string } }
	r.JSON(t, &swagger)
	require.Contains(t, swagger.Info.Description, "[/openapi.json](/openapi.json)")
}

// Readers of the Swagger UI's document at the same time each get it whole
// (under the race detector: swag rewrites the document on every read).
func TestOpenAPI_SwaggerDocReadAtOnce(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, database.SQLite, nil)
	var wg sync.WaitGroup
	status := make([]int, 8)
	for i := range status {
		wg.Go(func() { status[i] = env.Do(http.MethodGet, "/swagger/doc.json", nil, "").Status })
	}
	wg.Wait()
	for i, s := range status {
		require.Equal(t, http.StatusOK, s, "reader %d", i)
	}
}
