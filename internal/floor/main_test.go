package floor

import (
	"os"
	"testing"

	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// TestMain reuses the tests' PostgreSQL schemas, put back as the template
// left them, and drops them when the tests end (dbtest.Run).
func TestMain(m *testing.M) {
	os.Exit(dbtest.Run(m))
}
