package events_test

// Replicas in one process: a dead dispatcher's leases are taken over once
// they run out, and a stalled one is fenced off from committing afterwards.

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

func TestReplicas_LeaseOfDeadDispatcherIsReclaimed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		for i := range 30 {
			add(t, db, "thing.created", int64(i))
		}
		// A dispatcher that died holding every partition, its lease running
		// a few more seconds.
		require.NoError(t, db.Exec("UPDATE events_lanes SET owner = 'dead-replica', lease_until = "+database.NowPlus(db, 4*time.Second)).Error)
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{Lease: time.Second})
		st, err := d.RunOnce(context.Background())
		require.NoError(t, err)
		require.Zero(t, st.Events, "partitions under a live lease are left alone")
		settle(t, d, "lease reclaimed", func() bool { return f.calls0("recorder") == 30 })
		var owners int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM events_lanes WHERE owner IS NOT NULL"), &owners))
		require.Zero(t, owners, "leases are released after the pass")
	})
}

// A dispatcher whose lease ran out while it was stalled must not commit its
// batch over the work of the one that took the partition over.
func TestReplicas_StalledDispatcherIsFencedOff(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		stall := make(chan struct{})
		var stalls atomic.Int64
		f := newFixture(t, db, events.Subscriber{Name: "slow-outside", Types: []string{"thing.created"},
			Handle: func(ctx context.Context, ev events.Event) error {
				if stalls.Add(1) == 1 {
					<-stall
				}
				return nil
			}})
		id := add(t, db, "thing.created", 1)
		slow := events.NewDispatcher(db, f.reg, events.DispatcherOptions{Lease: time.Second, Timeout: time.Minute, Owner: "slow"})
		done := make(chan error, 1)
		go func() { _, err := slow.RunOnce(context.Background()); done <- err }()
		// The stalled dispatcher's lease ran out (as a frozen process's would)
		// and someone else claimed the partition meanwhile.
		require.Eventually(t, func() bool { return stalls.Load() == 1 }, 20*time.Second, 5*time.Millisecond)
		require.NoError(t, db.Exec("UPDATE events_lanes SET owner = 'gone', lease_until = "+database.NowPlus(db, -time.Second)+" WHERE owner = 'slow'").Error)
		fresh := events.NewDispatcher(db, f.reg, events.DispatcherOptions{Lease: time.Second, Owner: "fresh"})
		settle(t, fresh, "taken over", func() bool { return statusOf(t, f.journal, id) == events.StatusProcessed })
		close(stall)
		select {
		case err := <-done:
			require.ErrorContains(t, err, "lease lost", "the stalled dispatcher's commit is refused")
		case <-time.After(20 * time.Second):
			t.Fatal("the stalled dispatcher did not finish")
		}
		var effects int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM test_effects WHERE event_id = ?", id), &effects))
		require.EqualValues(t, 1, effects, "the local effect committed once, by the dispatcher that held the lease")
	})
}

// A dispatcher frozen between reading a local subscriber's batch and opening
// its transaction (here: waiting for its one database slot, which a stalled
// call on another lane holds) while its lease runs out and another
// dispatcher takes the lane over and moves it on past a later event. When it
// wakes, the lane-move fence at the start of the batch transaction (its
// owner and the position it read) alone must refuse the batch, so that no
// effect is applied twice and the lane is not moved back. The batches are
// cut so that the frozen one's batch ends on an event where none of the
// other's does: no unique key of the batch records refuses it in the fence's
// place. PostgreSQL only: on SQLite a stalled batch holds the database's one
// write lock, so no other dispatcher can take a lane over meanwhile.
func TestReplicas_StalledLocalSubscriberIsFencedOff(t *testing.T) {
	t.Parallel()
	db := dbtest.New(t, database.Postgres)
	const blocker, victim = 1, 2
	require.NotEqual(t, events.PartitionOf("things", blocker), events.PartitionOf("things", victim))
	stall, stalled := make(chan struct{}), make(chan struct{})
	f := newFixture(t, db, events.Subscriber{Name: "slow-local", Types: []string{"thing.created", "thing.changed"},
		HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
			if ev.Type == "thing.changed" {
				close(stalled)
				<-stall
			}
			return tx.Exec("INSERT INTO test_effects (event_id, subscriber) VALUES (?, 'slow-local')", ev.ID).Error
		}})
	block := add(t, db, "thing.changed", blocker)
	// One database slot; a lease long enough that the frozen dispatcher's
	// renewer does not come round while the test runs.
	slow := events.NewDispatcher(db, f.reg, events.DispatcherOptions{Workers: 1, Lease: time.Hour, Timeout: time.Hour, Owner: "slow"})
	var passes sync.WaitGroup
	pass := func() {
		passes.Add(1)
		go func() {
			defer passes.Done()
			_, err := slow.RunOnce(context.Background())
			t.Logf("a pass of the frozen dispatcher: %v", err)
		}()
	}
	pass()
	select {
	case <-stalled:
	case <-time.After(20 * time.Second):
		t.Fatal("the blocking call did not start")
	}
	// A second pass claims the victim's lane and reads its batch (the claim
	// reads it), then waits for the slot.
	ids := []int64{add(t, db, "thing.created", victim), add(t, db, "thing.created", victim), add(t, db, "thing.created", victim)}
	pass()
	require.Eventually(t, func() bool {
		var n int64
		return database.Scan(db.Raw("SELECT count(*) FROM events_lanes WHERE subscriber = 'slow-local' AND partition = ? AND owner = 'slow'",
			events.PartitionOf("things", victim)), &n) ==
			nil && n == 1
	}, 20*time.Second, 5*time.Millisecond)
	ids = append(ids, add(t, db, "thing.created", victim))
	require.NoError(t, db.Exec("UPDATE events_lanes SET lease_until = "+database.NowPlus(db, -time.Second)+
		" WHERE owner = 'slow' AND partition = ?", events.PartitionOf("things", victim)).Error,
		"the frozen dispatcher's leases of the victim's partition run out")
	// Batches of two: a b, then c d.
	fresh := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 2, Lease: time.Minute, Owner: "fresh"})
	settle(t, fresh, "taken over", func() bool { return statusOf(t, f.journal, ids[3]) == events.StatusProcessed })
	close(stall)
	passed := make(chan struct{})
	go func() { passes.Wait(); close(passed) }()
	select {
	case <-passed:
	case <-time.After(20 * time.Second):
		t.Fatal("the frozen dispatcher did not finish")
	}
	var effects []int64
	require.NoError(t, database.Scan(db.Raw(`SELECT event_id FROM test_effects WHERE subscriber = 'slow-local' AND event_id <> ? ORDER BY event_id`, block), &effects))
	require.Equal(t, ids, effects, "each effect committed once, by the dispatcher that held the lease")
	var pos int64
	require.NoError(t, database.Scan(db.Raw("SELECT position FROM events_lanes WHERE subscriber = 'slow-local' AND partition = ?",
		events.PartitionOf("things", victim)), &pos))
	require.Equal(t, ids[3], pos, "the lane stays where the dispatcher holding it moved it")
}
