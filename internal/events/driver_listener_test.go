package events

// The conformance cases of writing an event and of the announcements of
// its commit: the listener on PostgreSQL, none on SQLite (TestListener).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// TestListener runs the cases against both drivers.
func TestListener(t *testing.T) {
	exercise(t, []driverCase{
		{"InsertEvent", testInsertEvent},
		{"Listener", testListener},
		{"WatchCommits", testWatchCommits},
	})
}

func ptr[T any](v T) *T { return &v }

// insertEvent writes every column of the event in its owner's transaction,
// and nothing when that transaction rolls back.
func testInsertEvent(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	cause, _ := writeEvent(t, db, ctx, New{Type: "thing.created", AggregateType: "things", AggregateID: 1})
	row := newEventRow{typ: "thing.changed", aggType: "things", aggID: 42, part: PartitionOf("things", 42), payload: `{"n": 1}`,
		actorID: ptr(int64(7)), actorName: ptr("ann"), causedBy: &cause, correlation: ptr("corr-1"),
		traceparent: ptr("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"), tracestate: ptr("k=v")}
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error { return drv.insertEvent(ctx, tx, row) }))
	id, err := drv.newestID(ctx, db)
	require.NoError(t, err)
	require.Greater(t, id, cause)
	evs, parts, err := drv.eventsWithPartition(ctx, db, []int64{id})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	ev := evs[0]
	require.Equal(t, row.part, parts[id])
	require.Equal(t, "thing.changed", ev.Type)
	require.Equal(t, "things", ev.AggregateType)
	require.Equal(t, int64(42), ev.AggregateID)
	require.JSONEq(t, `{"n": 1}`, string(ev.Payload))
	require.Equal(t, &Actor{ID: 7, Name: "ann"}, ev.Actor)
	require.Equal(t, &cause, ev.CausedBy)
	require.Equal(t, "corr-1", ev.CorrelationID)
	require.Equal(t, *row.traceparent, ev.Traceparent)
	require.Equal(t, "k=v", ev.Tracestate)
	require.WithinDuration(t, time.Now(), ev.CreatedAt, time.Minute, "created by the database clock")

	err = db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, drv.insertEvent(ctx, tx, row))
		return errors.New("the owner's write failed")
	})
	require.Error(t, err)
	after, err := drv.newestID(ctx, db)
	require.NoError(t, err)
	require.Equal(t, id, after, "the event went with its transaction")
}

// PostgreSQL's listener hears the announcements on its channel, says when
// none came before its deadline, and answers a ping; SQLite has none, and
// its runner polls.
func testListener(t *testing.T, db *gorm.DB, drv driver) {
	if database.DialectOf(db) == database.SQLite {
		require.False(t, drv.supportsListener())
		require.Nil(t, drv.listener("tsekh.db"))
		return
	}
	require.True(t, drv.supportsListener())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.Error(t, drv.listener("postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2").connect(ctx),
		"no server there")

	l := drv.listener(testDatabaseURL())
	require.NoError(t, l.connect(ctx))
	defer func() { require.NoError(t, l.close(context.Background())) }()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	mine := hex.EncodeToString(b)
	// Other tests' pools announce on the same channel: wait for this one.
	sqlExec(t, db, `SELECT pg_notify(?, ?)`, database.CommitChannel, mine)
	for {
		payload, err := l.wait(ctx)
		require.NoError(t, err)
		if payload == mine {
			break
		}
	}
	require.NoError(t, l.ping(ctx))
	// A deadline passed: whatever came before it is handed over, then none.
	past, stop := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer stop()
	for {
		_, err := l.wait(past)
		if err != nil {
			require.ErrorIs(t, err, errNoAnnouncement)
			break
		}
	}
}

// A pool's commits that wrote events are announced in process to its
// watchers, until they stop watching, under the pool's announcer id; on
// SQLite they are not announced, and the HTTP layer wakes the runner.
func testWatchCommits(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	var woke atomic.Int64
	stop := drv.watchCommits(db, func() { woke.Add(1) })
	writeEvent(t, db, ctx, New{Type: "a", AggregateType: "things", AggregateID: 1})
	if database.DialectOf(db) == database.SQLite {
		require.Empty(t, drv.announcer(db))
		require.Zero(t, woke.Load())
		stop()
		return
	}
	require.NotEmpty(t, drv.announcer(db))
	require.Equal(t, database.AnnouncerID(db), drv.announcer(db))
	require.EqualValues(t, 1, woke.Load(), "the committing goroutine tells the watcher")
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error { return tx.Exec(`SELECT 1`).Error }))
	require.EqualValues(t, 1, woke.Load(), "a commit that wrote no event is not announced")
	stop()
	writeEvent(t, db, ctx, New{Type: "a", AggregateType: "things", AggregateID: 1})
	require.EqualValues(t, 1, woke.Load(), "no more once stopped")
}

// testDatabaseURL is the PostgreSQL server the tests use.
func testDatabaseURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}
