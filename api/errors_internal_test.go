package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
)

// A deadlock or serialization failure that outlived database.Transaction's
// runs is answered 503 with Retry-After, never 500.
func TestProblem_TxConflictIsUnavailable(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"40P01", "40001"} {
		rec := httptest.NewRecorder()
		c := echo.New().NewContext(httptest.NewRequest(http.MethodPatch, "/api/v1/orders/1", nil), rec)
		p := problemOf(fmt.Errorf("commit: %w", &pgconn.PgError{Code: code, Message: "deadlock detected"}), c)
		require.Equal(t, http.StatusServiceUnavailable, p.Status, code)
		require.Equal(t, "urn:tsekh:problem:unavailable", p.Type)
		require.NotContains(t, p.Detail, "deadlock", "the database's text stays in the log")
		require.Equal(t, "5", rec.Header().Get("Retry-After"))
	}
}
