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

// A single replica killed with kill -9 in the middle of its batches and
// started again takes back its own lanes at once: it proves the old owner
// gone (same machine, its pid no longer runs), so the leases, ten minutes
// long here, are not waited for. Nothing is lost, and no local effect is
// applied twice.
func TestCrash_RestartedReplicaTakesBackItsLanesAtOnce(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			pdb := newProcDB(t, d)
			s := newSink(t)
			ids := writeEvents(t, pdb.db, 400, 20)
			const lease = "HELPER_LEASE=10m"
			victim := startHelperWith(t, pdb, s, 5*time.Millisecond, 100, "ledger,sink", lease)
			deadline := time.Now().Add(60 * time.Second)
			for s.calls() < 30 {
				require.True(t, time.Now().Before(deadline), "the victim did not start delivering")
				time.Sleep(time.Millisecond)
			}
			victim.kill9(t)
			var held []string
			require.NoError(t, pdb.db.Raw(`SELECT DISTINCT owner FROM events_lanes WHERE owner IS NOT NULL AND lease_until > `+
				database.NowPlus(pdb.db, 5*time.Minute)).Scan(&held).Error)
			require.Len(t, held, 1, "the killed replica left leases that run for minutes yet")
			require.Less(t, sinkPassed(t, pdb), int64(len(ids)), "killed before the outside subscriber's lanes finished")

			startHelperWith(t, pdb, s, 0, 100, "ledger,sink", lease)
			waitAllDone(t, pdb, s, ids) // within 120 s, the old leases run for 10 min
			requireExactlyOnce(t, pdb, ids)
			var stale int64
			require.NoError(t, pdb.db.Raw(`SELECT count(*) FROM events_lanes WHERE owner = ?`, held[0]).Scan(&stale).Error)
			require.Zero(t, stale, "no lane is left to the dead owner")
		})
	}
}

// oneInEachPartition returns an object id of "things" in each partition.
func oneInEachPartition() map[int]int64 {
	out := map[int]int64{}
	for id := int64(1); len(out) < events.Partitions; id++ {
		if _, ok := out[events.PartitionOf("things", id)]; !ok {
			out[events.PartitionOf("things", id)] = id
		}
	}
	return out
}

// A session holding one lane's row (a batch transaction whose client went
// silent, kept by the server until it hears of it) stops that lane only.
// The lease renewer, which extends every lane of its dispatcher in one
// statement, used to wait for that row while holding the others, and every
// other lane's batch then waited behind it: a crawl, with sessions waiting
// on locks, until the stuck one was gone.
func TestLanes_LockedLaneRowHoldsOnlyItsLane(t *testing.T) {
	t.Parallel()
	db := dbtest.New(t, database.Postgres)
	f := newFixture(t, db)
	d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 100, Timeout: 2 * time.Second, Lease: 3 * time.Second, Linger: time.Minute})
	r := events.NewRunner(d, events.RunnerOptions{Interval: time.Second, Poll: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); r.Wait() })
	require.NoError(t, r.Start(ctx))
	objs := oneInEachPartition()
	for _, id := range objs {
		add(t, db, "thing.created", id)
	}
	require.Eventually(t, func() bool { return effects(t, db, "recorder") == events.Partitions }, 30*time.Second, 10*time.Millisecond)
	var owned int64
	require.NoError(t, db.Raw(`SELECT count(*) FROM events_lanes WHERE subscriber = 'recorder' AND owner = ?`, d.Owner()).Scan(&owned).Error)
	require.EqualValues(t, events.Partitions, owned, "every lane lingers with its lease")

	// The row the renewer reaches last, so that, were it to wait for it, it
	// would hold every other lane's row meanwhile.
	var stuck int
	require.NoError(t, db.Raw(`SELECT partition FROM events_lanes WHERE subscriber = 'recorder' ORDER BY ctid DESC LIMIT 1`).Scan(&stuck).Error)
	tx := db.Begin()
	require.NoError(t, tx.Error)
	require.NoError(t, tx.Exec(`SELECT 1 FROM events_lanes WHERE subscriber = 'recorder' AND partition = ? FOR UPDATE`, stuck).Error)
	var holder int
	require.NoError(t, tx.Raw(`SELECT pg_backend_pid()`).Scan(&holder).Error) // the lock is taken
	defer tx.Rollback()
	blocked := func() int64 { // the sessions waiting for the held row, and those waiting for them
		var n int64
		require.NoError(t, db.Raw(`WITH RECURSIVE w(pid) AS (SELECT pid FROM pg_stat_activity WHERE ? = ANY (pg_blocking_pids(pid))
  UNION SELECT a.pid FROM pg_stat_activity a JOIN w ON w.pid = ANY (pg_blocking_pids(a.pid)))
SELECT count(*) FROM w`, holder).Scan(&n).Error)
		return n
	}
	// Over three renewals (every Lease/3), no session of the dispatcher
	// waits for a lock.
	waits := 0
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if blocked() > 0 {
			waits++
		}
	}
	require.Zero(t, waits, "samples with a session waiting on a lock while one lane's row is held")

	for p, id := range objs {
		if p != stuck {
			add(t, db, "thing.created", id)
		}
	}
	require.Eventually(t, func() bool { return effects(t, db, "recorder") == 2*events.Partitions-1 }, 10*time.Second, 10*time.Millisecond,
		"the other lanes go on while one lane's row is held")
	require.Zero(t, blocked(), "no session waits behind the held row")
}
