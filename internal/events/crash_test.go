package events_test

// Tests with real dispatcher processes: several replicas on one database,
// kill -9 in the middle of a batch, SIGTERM while a slow outside subscriber
// is at work, a replica restarted after kill -9. The processes are this
// test binary run again with TSEKH_EVENTS_HELPER set (process_test.go).

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/page"
)

func TestReplicas_ThreeProcessesDeliverEachEventOnce(t *testing.T) {
	t.Parallel()
	pdb := newProcDB(t, database.Postgres)
	s := newSink(t)
	var procs []*proc
	for range 3 {
		procs = append(procs, startHelper(t, pdb, s, 0, 100))
	}
	// Writers go on while the three dispatch.
	const n = 3000
	start := time.Now()
	var ids []int64
	var mu sync.Mutex
	var w sync.WaitGroup
	for range 3 {
		w.Add(1)
		go func() {
			defer w.Done()
			got := writeEvents(t, pdb.db, n/3, 300)
			mu.Lock()
			ids = append(ids, got...)
			mu.Unlock()
		}()
	}
	w.Wait()
	t.Logf("%d events written in %s", n, time.Since(start))
	waitAllDone(t, pdb, s, ids)
	t.Logf("all delivered %s after the start", time.Since(start))
	for _, p := range procs {
		p.stop(t)
	}
	t.Logf("stopped %s after the start", time.Since(start))
	requireExactlyOnce(t, pdb, ids)
	var byProcess []struct {
		Pid int
		N   int
	}
	require.NoError(t, database.Scan(pdb.db.Raw("SELECT pid, count(*) AS n FROM crash_effects GROUP BY pid ORDER BY pid"), &byProcess))
	t.Logf("local effects by process: %+v; outside deliveries: %d for %d events", byProcess, s.calls(), n)
	require.GreaterOrEqual(t, s.calls(), n, "at least once outside")
}

// The kill lands while the local subscriber's batch transaction is open with
// effects applied in it (the ledger holds in its 150th call, its effect applied) and while the
// slow outside subscriber's lanes are part way. The open batch's effects are
// rolled back with the process, and the restarted dispatcher applies every
// event's effect exactly once and delivers every event outside at least once.
func TestCrash_KillMidBatchLosesNothing(t *testing.T) {
	eachProcDB(t, func(t *testing.T, pdb procDB, s *sink) {
		ids := writeEvents(t, pdb.db, 400, 20)
		victim := startHelperWith(t, pdb, s, 5*time.Millisecond, 100, "ledger,sink", "HELPER_HOLD_AFTER=150")
		var held int64
		select {
		case held = <-victim.holding:
		case <-time.After(60 * time.Second):
			t.Fatal("the ledger did not reach its hold")
		}
		deadline := time.Now().Add(30 * time.Second)
		for s.calls() < 30 {
			require.True(t, time.Now().Before(deadline), "the outside subscriber did not start delivering")
			time.Sleep(time.Millisecond)
		}
		require.Less(t, sinkPassed(t, pdb), int64(len(ids)), "the outside subscriber's lanes are not finished")
		victim.kill9(t)
		before := s.calls()
		var committed, heldEffect int64
		require.NoError(t, database.Scan(pdb.db.Raw("SELECT count(*) FROM crash_effects"), &committed))
		require.NoError(t, database.Scan(pdb.db.Raw("SELECT count(*) FROM crash_effects WHERE event_id = ?", held), &heldEffect))
		require.Zero(t, heldEffect, "the effect applied in the open batch transaction died with the process")
		require.Less(t, committed, int64(len(ids)))

		// The partitions it held come back once their lease runs out (at
		// once here: the restarted replica sees its predecessor is gone).
		startHelper(t, pdb, s, 0, 100)
		waitAllDone(t, pdb, s, ids)
		requireExactlyOnce(t, pdb, ids)
		dups := 0
		for _, c := range s.snapshot() {
			dups += c - 1
		}
		t.Logf("killed holding event %d's effect, with %d local effects committed, after %d outside deliveries; %d outside deliveries repeated after the restart",
			held, committed, before, dups)
	})
}

// A rolling deploy: one replica runs the ledger only, another the ledger
// and the sink. Events written while only the first runs wait in the
// sink's lanes, visibly, and reach the sink once a replica that runs it
// comes back; with both running, each replica moves only its own
// subscribers' lanes. Nothing is lost for the sink, and the ledger's
// effects apply once.
func TestReplicas_DifferentSubscriberSetsLoseNothing(t *testing.T) {
	eachProcDB(t, func(t *testing.T, pdb procDB, s *sink) {
		full := startHelperWith(t, pdb, s, 0, 20, "ledger,sink")
		require.Eventually(t, func() bool {
			var n int64
			return database.Scan(pdb.db.Raw("SELECT count(*) FROM events_lanes WHERE subscriber = 'sink'"), &n) == nil && n == events.Partitions
		}, 30*time.Second, 10*time.Millisecond, "the sink is registered with its lanes")
		full.stop(t)

		startHelperWith(t, pdb, s, 0, 20, "ledger")
		first := writeEvents(t, pdb.db, 60, 10)
		require.Eventually(t, func() bool {
			var n int64
			return database.Scan(pdb.db.Raw("SELECT count(DISTINCT event_id) FROM crash_effects"), &n) == nil && n == int64(len(first))
		}, 60*time.Second, 10*time.Millisecond, "the ledger-only replica dispatches the ledger")
		require.Zero(t, s.calls(), "no replica runs the sink")
		require.Zero(t, sinkPassed(t, pdb), "the sink's lanes wait where they were")
		reg := events.NewRegistry()
		reg.AddTypes(events.Type{Type: "thing.created", Owner: "test", AggregateType: "things"})
		pending, _, err := events.NewJournal(pdb.db, reg).List(context.Background(), events.Filter{Status: events.StatusPending}, page.Request{Limit: 500})
		require.NoError(t, err)
		require.Len(t, pending, len(first), "the journal shows them waiting for the sink")

		startHelperWith(t, pdb, s, 0, 20, "ledger,sink")
		second := writeEvents(t, pdb.db, 60, 10)
		all := append(append([]int64(nil), first...), second...)
		waitAllDone(t, pdb, s, all)
		requireExactlyOnce(t, pdb, all)
	})
}

func TestShutdown_SIGTERMFinishesTheBatchInHand(t *testing.T) {
	eachProcDB(t, func(t *testing.T, pdb procDB, s *sink) {
		// One object: one partition, batches of 10 events taking half a second each.
		ids := writeEvents(t, pdb.db, 40, 1)
		p := startHelper(t, pdb, s, 50*time.Millisecond, 10)
		deadline := time.Now().Add(60 * time.Second)
		for s.calls() < 3 {
			require.True(t, time.Now().Before(deadline), "no delivery began")
			time.Sleep(time.Millisecond)
		}
		p.stop(t)
		seen := s.snapshot()
		// The outside subscriber's lane: what it passed is what was
		// delivered before the stop, in whole batches.
		var recorded []int64
		require.NoError(t, database.Scan(pdb.db.Raw(`SELECT e.id FROM events e JOIN events_lanes l ON l.subscriber = 'sink' AND l.partition = e.partition
WHERE e.id <= l.position ORDER BY e.id`), &recorded))
		require.NotEmpty(t, recorded)
		require.Len(t, seen, len(recorded), "each event delivered outside before the stop was recorded with its batch, and no other")
		for _, id := range recorded {
			require.Equal(t, 1, seen[id], "event %d delivered once", id)
		}
		require.Zero(t, len(recorded)%10, "whole batches: %d events", len(recorded))

		// A new process delivers the rest, and nothing of the first one's again.
		startHelper(t, pdb, s, 0, 10)
		waitAllDone(t, pdb, s, ids)
		requireExactlyOnce(t, pdb, ids)
		for id, c := range s.snapshot() {
			require.Equal(t, 1, c, "event %d delivered outside once", id)
		}
	})
}

// A single replica killed with kill -9 in the middle of its batches and
// started again takes back its own lanes at once: it proves the old owner
// gone (same machine, its pid no longer runs), so the leases, ten minutes
// long here, are not waited for. Nothing is lost, and no local effect is
// applied twice.
func TestCrash_RestartedReplicaTakesBackItsLanesAtOnce(t *testing.T) {
	eachProcDB(t, func(t *testing.T, pdb procDB, s *sink) {
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
		require.NoError(t, database.Scan(pdb.db.Raw(`SELECT DISTINCT owner FROM events_lanes WHERE owner IS NOT NULL AND lease_until > `+
			database.NowPlus(pdb.db, 5*time.Minute)), &held))
		require.Len(t, held, 1, "the killed replica left leases that run for minutes yet")
		require.Less(t, sinkPassed(t, pdb), int64(len(ids)), "killed before the outside subscriber's lanes finished")

		startHelperWith(t, pdb, s, 0, 100, "ledger,sink", lease)
		waitAllDone(t, pdb, s, ids) // within 120 s, the old leases run for 10 min
		requireExactlyOnce(t, pdb, ids)
		var stale int64
		require.NoError(t, database.Scan(pdb.db.Raw(`SELECT count(*) FROM events_lanes WHERE owner = ?`, held[0]), &stale))
		require.Zero(t, stale, "no lane is left to the dead owner")
	})
}
