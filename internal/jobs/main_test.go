package jobs

import (
	"os"
	"testing"

	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// TestMain reuses the tests' PostgreSQL schemas (dbtest.Run).
func TestMain(m *testing.M) {
	os.Exit(dbtest.Run(m))
}

// kill stops the runner as a process that dies stops: its jobs' handlers
// are cancelled, and nothing is written of them (no requeue, no end).
func (r *Runner) kill() {
	r.mu.Lock()
	r.killed = true
	r.mu.Unlock()
	r.stop()
	r.Wait()
}
