package events_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// journalView is what the journal says of every event: its status, its
// processed_at and each subscriber's delivery status.
func journalView(t *testing.T, j *events.Journal) map[int64]string {
	t.Helper()
	entries, next, err := j.List(context.Background(), events.Filter{}, page.Request{Limit: 500})
	require.NoError(t, err)
	require.Empty(t, next)
	out := map[int64]string{}
	for _, e := range entries {
		v := e.Status
		if e.ProcessedAt != nil {
			v += " " + e.ProcessedAt.Format(time.RFC3339Nano)
		}
		for _, d := range e.Deliveries {
			v += " " + d.Subscriber + ":" + d.Status
		}
		out[e.ID] = v
	}
	return out
}

func batchRows(t *testing.T, db *gorm.DB) int64 {
	t.Helper()
	var n int64
	require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM events_batches"), &n))
	return n
}

// clockPastBatches waits until the database clock, which times the
// batches, is past every batch recorded so far.
func clockPastBatches(t *testing.T, db *gorm.DB) {
	t.Helper()
	require.Eventually(t, func() bool {
		var n int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM events_batches WHERE dispatched_at >= "+database.Now(db)), &n))
		return n == 0
	}, 10*time.Second, time.Millisecond)
}

// Compaction folds the subscribers' batch rows into fewer shared ones, and
// the journal reads the same before and after: every event's status,
// processed_at and deliveries. The two subscribers are dispatched at
// different moments and receive different types, so an event's time is its
// own subscribers', not any subscriber's.
func TestCompactBatches_TheJournalReadsTheSame(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var fail atomic.Bool
		cb := events.Subscriber{Name: "cb", Types: []string{"thing.created"},
			Handle: func(ctx context.Context, ev events.Event) error {
				if ev.AggregateID == 3 && fail.Load() {
					return errors.New("down")
				}
				return nil
			}}
		f := newFixture(t, db, cb)
		only := func(name string) *events.Dispatcher {
			reg := events.NewRegistry()
			reg.AddTypes(f.reg.Types()...)
			reg.MustSubscribe(*f.reg.Subscriber(name))
			return events.NewDispatcher(db, reg, events.DispatcherOptions{BatchSize: 7, BackoffBase: time.Hour, BackoffMax: time.Hour})
		}
		recorder, outside := only("recorder"), only("cb")
		ctx := context.Background()
		round := func(n int) {
			for i := range n {
				typ := "thing.created"
				if i%3 == 1 {
					typ = "thing.changed" // the recorder's only
				}
				add(t, db, typ, int64(i%5))
			}
			drain(t, recorder)
			clockPastBatches(t, db) // the outside lane's batches come later
			drain(t, outside)
		}
		fail.Store(true)
		round(40)
		fail.Store(false)
		require.NoError(t, db.Exec("UPDATE events_deliveries SET next_attempt_at = "+database.Now(db)+" WHERE status = 'retrying'").Error)
		drain(t, outside)
		round(25)

		before := journalView(t, f.journal)
		rows := batchRows(t, db)
		removed, err := events.CompactBatches(ctx, db, 0)
		require.NoError(t, err)
		require.Positive(t, removed)
		require.Equal(t, rows-removed, batchRows(t, db))
		require.Less(t, batchRows(t, db), int64(events.Partitions), "at most one row per partition is left, where one lane is ahead of the other")
		require.Equal(t, before, journalView(t, f.journal), "the journal reads the same after compaction")

		// Again after more events: only what came since is compacted.
		round(30)
		before = journalView(t, f.journal)
		_, err = events.CompactBatches(ctx, db, 10)
		require.NoError(t, err)
		require.Equal(t, before, journalView(t, f.journal))
		_, err = events.CompactBatches(ctx, db, 0)
		require.NoError(t, err)
		require.Equal(t, before, journalView(t, f.journal))
		n, err := events.CompactBatches(ctx, db, 0)
		require.NoError(t, err)
		require.Zero(t, n, "nothing left to compact")
	})
}
