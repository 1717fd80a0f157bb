package events_test

// Stalls: a call in flight holds only its own object, and a replica
// restarted after kill -9 takes back its own lanes at once.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// samePartition returns n object ids of "things" in one partition.
func samePartition(n int) []int64 {
	var ids []int64
	p := events.PartitionOf("things", 1)
	for id := int64(1); len(ids) < n; id++ {
		if events.PartitionOf("things", id) == p {
			ids = append(ids, id)
		}
	}
	return ids
}

// An outside subscriber's call that hangs (a publish to a NATS that stopped
// answering) holds its own object only: the lane stops waiting for it at
// the call budget, records its event as a retry and holds the object's
// later events behind it, and delivers the partition's other objects. Once
// the subscriber answers again, the object's events arrive in order.
func TestLanes_HangingCallHoldsOnlyItsObject(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		objs := samePartition(3)
		hang, other, third := objs[0], objs[1], objs[2]
		letGo := make(chan struct{})
		var (
			mu        sync.Mutex
			delivered = map[int64][]int64{} // object → event ids answered, in order
		)
		f := newFixture(t, db, events.Subscriber{Name: "relay", Types: []string{"thing.created"}, Concurrency: 4,
			Handle: func(ctx context.Context, ev events.Event) error {
				if ev.AggregateID == hang {
					select {
					case <-letGo:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				mu.Lock()
				delivered[ev.AggregateID] = append(delivered[ev.AggregateID], ev.ID)
				mu.Unlock()
				return nil
			}})
		const timeout = 20 * time.Second
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 100, Timeout: timeout, CallBudget: 200 * time.Millisecond,
			BackoffBase: 10 * time.Millisecond, BackoffMax: 20 * time.Millisecond, MaxAttempts: 5})
		a1 := add(t, db, "thing.created", hang)
		b1 := add(t, db, "thing.created", other)
		a2 := add(t, db, "thing.created", hang)
		c1 := add(t, db, "thing.created", third)
		b2 := add(t, db, "thing.created", other)

		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
		defer cancel()
		_, err := d.RunOnce(ctx)
		require.NoError(t, err)
		took := time.Since(start)
		require.Less(t, took, timeout/2, "the pass did not wait for the hanging call's timeout")

		mu.Lock()
		require.Equal(t, []int64{b1, b2}, delivered[other], "the partition's other objects were delivered, in order")
		require.Equal(t, []int64{c1}, delivered[third])
		require.Empty(t, delivered[hang])
		mu.Unlock()
		type row struct {
			EventID   int64
			Status    string
			LastError string
			BlockedBy *int64
		}
		var rows []row
		require.NoError(t, db.Raw(`SELECT event_id, status, last_error, blocked_by FROM events_deliveries WHERE subscriber = 'relay' ORDER BY event_id`).
			Scan(&rows).Error)
		require.Len(t, rows, 2, "only the hanging object's events are open: %+v", rows)
		require.Equal(t, a1, rows[0].EventID)
		require.Equal(t, events.StatusRetrying, rows[0].Status)
		require.Contains(t, rows[0].LastError, "no answer within the call budget")
		require.Equal(t, a2, rows[1].EventID)
		require.Equal(t, events.StatusHeld, rows[1].Status, "the object's later event waits behind it")
		require.NotNil(t, rows[1].BlockedBy)
		require.Equal(t, a1, *rows[1].BlockedBy)
		var passed int64
		require.NoError(t, db.Raw(`SELECT position FROM events_lanes WHERE subscriber = 'relay' AND partition = ?`, events.PartitionOf("things", hang)).
			Scan(&passed).Error)
		require.GreaterOrEqual(t, passed, b2, "the lane moved past the batch")

		// The subscriber answers again; the retry is made due at once (it
		// waits for the call's timeout otherwise).
		close(letGo)
		require.NoError(t, db.Exec(`UPDATE events_deliveries SET next_attempt_at = `+database.Now(db)+` WHERE subscriber = 'relay' AND status = 'retrying'`).Error)
		drain(t, d)
		requireSettled(t, db)
		mu.Lock()
		defer mu.Unlock()
		got := delivered[hang]
		require.NotEmpty(t, got)
		require.Equal(t, a2, got[len(got)-1], "the held event came last")
		require.Contains(t, got[:len(got)-1], a1, "after the first")
	})
}
