package database_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/platform/faultnet"
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
		fmt.Errorf("connect: %w", &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}),
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

// On a silent link (bytes go nowhere, the connection stays open), a
// statement fails within the statement timeout and a little more, even
// with no context to end it (the dispatcher's own statements have none),
// and one whose context ends fails within database.CancelGrace of it; the
// pool works again once the link is back.
func TestOpen_SilentLinkBoundsEveryStatement(t *testing.T) {
	t.Parallel()
	opts := dbtest.Options(t, database.Postgres)
	u, err := url.Parse(opts.PostgresURL)
	require.NoError(t, err)
	p := faultnet.New(t, u.Host)
	u.Host = p.Addr()
	opts.PostgresURL, opts.StatementTimeout, opts.ConnectTimeout, opts.MaxConns = u.String(), 500*time.Millisecond, time.Second, 2
	db, err := database.Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = database.Close(db) })
	require.NoError(t, db.Exec(`SELECT 1`).Error)

	p.Silence()
	within := func(d time.Duration, ctx context.Context) error {
		t.Helper()
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- db.WithContext(ctx).Exec(`SELECT 1`).Error }()
		select {
		case err := <-done:
			require.Less(t, time.Since(start), d)
			return err
		case <-time.After(time.Minute):
			t.Fatal("the statement still waits after a minute")
			return nil
		}
	}
	err = within(10*time.Second, context.Background())
	require.Error(t, err, "no context: the statement fails past its timeout")
	require.True(t, database.IsUnavailable(err) || database.IsTimeout(err), "%v", err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	require.Error(t, within(200*time.Millisecond+database.CancelGrace+2*time.Second, ctx), "the context ends it")

	p.Restore()
	require.Eventually(t, func() bool { return db.Exec(`SELECT 1`).Error == nil }, 30*time.Second, 50*time.Millisecond)
}

func TestWithParams(t *testing.T) {
	t.Parallel()
	u, err := database.WithParams("postgres://u:p%40ss@db:5432/tsekh?sslmode=disable&application_name=a+b",
		"options", "-c synchronous_commit=off", "search_path", "t_1")
	require.NoError(t, err)
	require.Equal(t, "postgres://u:p%40ss@db:5432/tsekh?application_name=a%20b&options=-c%20synchronous_commit%3Doff&search_path=t_1&sslmode=disable", u,
		"spaces as %20, the other parameters and the password kept")

	// The server takes the options as the session's settings.
	db, err := database.Open(context.Background(), database.Options{PostgresURL: mustParams(t, dbtest.PostgresURL(), "options", "-c work_mem=1234kB"), MaxConns: 1})
	require.NoError(t, err)
	defer func() { _ = database.Close(db) }()
	var mem string
	require.NoError(t, database.Scan(db.Raw("SHOW work_mem"), &mem))
	require.Equal(t, "1234kB", mem)

	_, err = database.WithParams("postgres://db:bad port/x", "search_path", "t")
	require.Error(t, err)
}

func mustParams(t *testing.T, raw string, kv ...string) string {
	t.Helper()
	u, err := database.WithParams(raw, kv...)
	require.NoError(t, err)
	return u
}

// The readiness check says so while migrations are pending, and once the
// database has them all, it only pings: a probe asked every few seconds
// does not read the migrations' table again.
func TestReadiness(t *testing.T) {
	t.Parallel()
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.At(t, d, 20)
			r := database.NewReadiness(db)
			require.ErrorContains(t, r.Check(ctx), "migrations pending")
			require.ErrorContains(t, r.Check(ctx), "migrations pending", "asked again")
			_, err := database.Migrate(ctx, db)
			require.NoError(t, err)
			require.NoError(t, r.Check(ctx))

			require.NoError(t, db.Exec("ALTER TABLE goose_db_version RENAME TO goose_db_version_gone").Error)
			require.NoError(t, r.Check(ctx), "migrated once seen so: the table is not read again")
			require.ErrorContains(t, database.NewReadiness(db).Check(ctx), "migrations pending", "a new check reads it, and finds none")

			sqlDB, err := db.DB()
			require.NoError(t, err)
			require.NoError(t, sqlDB.Close())
			require.ErrorContains(t, r.Check(ctx), "not reachable", "and every check pings")
		})
	}
}
