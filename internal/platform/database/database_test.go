package database_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// A crashed server resets its connections: a request caught in one must be
// told "unavailable" (503), like one that finds the server gone.
func TestIsUnavailable(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, err := range []error{
		fmt.Errorf("commit: %w", reset),
		reset,
		fmt.Errorf("query: %w", io.ErrUnexpectedEOF),
		&pgconn.PgError{Code: "57P02", Message: "terminating connection because of crash of another server process"},
		&pgconn.PgError{Code: "08006"},
		fmt.Errorf("write: %w", syscall.EPIPE),
	} {
		require.True(t, database.IsUnavailable(err), "%v", err)
	}
	for _, err := range []error{
		nil,
		errors.New("boom"),
		&pgconn.PgError{Code: "23505", Message: "duplicate key"},
	} {
		require.False(t, database.IsUnavailable(err), "%v", err)
	}
}
