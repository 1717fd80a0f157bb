package dbtest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// sessionState is what a session may carry from one test to the next.
type sessionState struct {
	Pid              int64
	Schema           string
	StatementTimeout string
	AdvisoryLocks    int64
	Listening        int64
}

func sessionOf(t *testing.T, db *gorm.DB) sessionState {
	t.Helper()
	var s sessionState
	require.NoError(t, database.Scan(db.Raw(`SELECT pg_backend_pid() AS pid, current_schema() AS schema,
		current_setting('statement_timeout') AS statement_timeout,
		(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS advisory_locks,
		(SELECT count(*) FROM pg_listening_channels()) AS listening`), &s))
	return s
}

// The next test of a schema opens its connections from the sessions the
// last one left, put back as they started; the last test's pool is closed
// all the same.
func TestSessions_KeptForTheNextTestOfTheSchema(t *testing.T) {
	// Not parallel: the subtests take the pool's schemas in turn.
	var first sessionState
	var firstPool *sql.DB
	t.Run("leaves its session changed", func(t *testing.T) {
		db := New(t, database.Postgres)
		var err error
		firstPool, err = db.DB()
		require.NoError(t, err)
		firstPool.SetMaxOpenConns(1) // one session, to find it again
		require.NoError(t, db.Connection(func(tx *gorm.DB) error {
			for _, q := range []string{"SET statement_timeout = '1234ms'", "SELECT pg_advisory_lock(4242)", "LISTEN tsekh_test"} {
				if err := tx.Exec(q).Error; err != nil {
					return err
				}
			}
			first = sessionOf(t, tx)
			return nil
		}))
		require.Equal(t, sessionState{Pid: first.Pid, Schema: first.Schema, StatementTimeout: "1234ms", AdvisoryLocks: 1, Listening: 1}, first)
	})
	t.Run("finds it as it started", func(t *testing.T) {
		db := New(t, database.Postgres)
		now := sessionOf(t, db)
		require.Equal(t, sessionState{Pid: first.Pid, Schema: first.Schema, StatementTimeout: "0"}, now,
			"the same session, with no setting, lock or LISTEN of the last test")
		require.ErrorContains(t, firstPool.Ping(), "database is closed", "the last test's pool is closed")
	})
}

// A binary keeps at most maxKept idle sessions; the sweep ends those kept
// too long and closing a schema's sessions ends the rest, and both give
// their places back.
func TestSessions_AtMostMaxKept(t *testing.T) {
	// Not parallel: kept counts the binary's sessions.
	kept.mu.Lock()
	before := kept.n
	kept.mu.Unlock()
	s := &sessions{}
	opts := Options(t, database.Postgres)
	opts.MaxConns = maxKept + 4
	opts.WrapConnector = s.wrap
	db, err := database.Open(context.Background(), opts)
	require.NoError(t, err)
	pool, err := db.DB()
	require.NoError(t, err)
	var conns []*sql.Conn
	for range maxKept + 4 {
		c, err := pool.Conn(context.Background())
		require.NoError(t, err)
		conns = append(conns, c)
	}
	for _, c := range conns {
		require.NoError(t, c.Close())
	}
	require.NoError(t, database.Close(db))
	require.Len(t, s.idle, maxKept-before)
	kept.mu.Lock()
	require.Equal(t, maxKept, kept.n)
	kept.mu.Unlock()
	s.endStale(time.Now().Add(-time.Minute))
	require.Len(t, s.idle, maxKept-before, "none was kept a minute ago")
	s.endStale(time.Now())
	require.Empty(t, s.idle, "the sweep ends the sessions kept before its time")
	kept.mu.Lock()
	require.Equal(t, before, kept.n, "and gives their places back")
	kept.mu.Unlock()
	s.close()
	kept.mu.Lock()
	require.Equal(t, before, kept.n)
	kept.mu.Unlock()
	require.Empty(t, s.idle)
}
