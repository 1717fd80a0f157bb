package database_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// listener LISTENs on the commit channel and hands over the notifications
// of one pool.
func listener(t *testing.T, id string) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := database.WaitForRoom(ctx, func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, dbtest.PostgresURL()) })
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "LISTEN "+database.CommitChannel)
	require.NoError(t, err)
	got := make(chan struct{}, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			if n.Payload == id {
				got <- struct{}{}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = conn.Close(context.Background())
	})
	return got
}

// A commit that asked to be announced reaches the pool's watchers before
// the transaction returns, and the other processes by a NOTIFY; a
// transaction rolled back, or one that did not ask, is not announced; Close
// sends the NOTIFY of a commit still pending.
func TestAnnounce_CommitReachesWatchersAndListeners(t *testing.T) {
	t.Parallel()
	opts := dbtest.Options(t, database.Postgres)
	db, err := database.Open(context.Background(), opts)
	require.NoError(t, err)
	require.NoError(t, db.Exec("CREATE TABLE t (n int PRIMARY KEY)").Error)
	id := database.AnnouncerID(db)
	require.NotEmpty(t, id)
	notified := listener(t, id)
	var watched atomic.Int64
	stop := database.WatchCommits(db, func() { watched.Add(1) })
	write := func(n int, announce bool, fail error) error {
		return db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("INSERT INTO t VALUES (?)", n).Error; err != nil {
				return err
			}
			if announce {
				require.True(t, database.AnnounceCommit(tx))
			}
			return fail
		})
	}
	wait := func(what string) {
		select {
		case <-notified:
		case <-time.After(10 * time.Second):
			t.Fatalf("no NOTIFY %s", what)
		}
	}

	require.NoError(t, write(1, true, nil))
	require.Equal(t, int64(1), watched.Load(), "the watchers heard of the commit before it returned")
	wait("after the commit")

	require.Error(t, write(2, true, errors.New("rolled back")))
	require.NoError(t, write(3, false, nil))
	require.Equal(t, int64(1), watched.Load(), "neither a rollback nor a commit that did not ask is announced")

	stop()
	require.NoError(t, write(4, true, nil))
	require.Equal(t, int64(1), watched.Load(), "a watcher stopped hears nothing")
	wait("after the fourth commit")
	// A commit right after another falls, most often, in the spacing that
	// follows the other's NOTIFY; Close does not leave it unannounced.
	require.NoError(t, write(5, true, nil))
	require.NoError(t, database.Close(db))
	wait("for the fifth commit, before Close returned")
}

// AnnounceCommit says false outside a PostgreSQL transaction, and SQLite's
// pools have no announcer.
func TestAnnounce_OnlyPostgresTransactions(t *testing.T) {
	t.Parallel()
	pg := dbtest.New(t, database.Postgres)
	require.False(t, database.AnnounceCommit(pg), "not a transaction")
	lite := dbtest.New(t, database.SQLite)
	require.Empty(t, database.AnnouncerID(lite))
	require.NoError(t, lite.Transaction(func(tx *gorm.DB) error {
		require.False(t, database.AnnounceCommit(tx))
		return nil
	}))
	database.WatchCommits(lite, func() { t.Fatal("SQLite announces nothing") })()
}
