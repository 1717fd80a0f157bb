package events_test

// The runner: what wakes it (a commit of this process, of a pool it
// watches, of another process; a retry falling due), lanes that linger
// with their lease between events, and a graceful stop.

import (
	"context"
	"errors"
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

// startRunner starts a Runner over d that only a commit can wake (NOTIFY on
// PostgreSQL, a poll of the journal on SQLite): its tick is an hour away.
func startRunner(t *testing.T, db *gorm.DB, d *events.Dispatcher) *events.Runner {
	t.Helper()
	opt := events.RunnerOptions{Interval: time.Hour}
	if database.DialectOf(db) == database.Postgres {
		opt.ListenURL = pgURLOf(t, db)
	} else {
		opt.Poll = 20 * time.Millisecond
	}
	r := events.NewRunner(d, opt)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, r.Start(ctx))
	t.Cleanup(func() { cancel(); r.Wait() })
	runnerReady(t, r)
	return r
}

// runnerReady waits until r listens (or polls), past its start-up pass:
// what is written afterwards reaches it only by a wake-up.
func runnerReady(t *testing.T, r *events.Runner) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, events.RunnerReady(ctx, r), "the runner listens, or polls, past its start-up pass")
}

// everyPartition writes one event about an object of each partition and
// waits until the recorder has them: afterwards every lane of a runner
// whose lanes linger runs, and its passes no longer list the lanes.
func everyPartition(t *testing.T, db *gorm.DB) {
	t.Helper()
	seen := map[int]bool{}
	n := effects(t, db, "recorder")
	for id := int64(1000); len(seen) < events.Partitions; id++ {
		if p := events.PartitionOf("things", id); !seen[p] {
			seen[p] = true
			add(t, db, "thing.created", id)
			n++
		}
	}
	require.Eventually(t, func() bool { return effects(t, db, "recorder") == n }, 20*time.Second, time.Millisecond)
}

// countLaneUpdates makes the database count every update of a lane's row
// in test_lane_updates.
func countLaneUpdates(t *testing.T, db *gorm.DB) func(sub string) int64 {
	t.Helper()
	require.NoError(t, db.Exec(`CREATE TABLE test_lane_updates (subscriber text NOT NULL)`).Error)
	if database.DialectOf(db) == database.Postgres {
		require.NoError(t, db.Exec(`CREATE FUNCTION test_count_lane_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO test_lane_updates VALUES (NEW.subscriber); RETURN NEW; END $$`).Error)
		require.NoError(t, db.Exec(`CREATE TRIGGER test_lane_update AFTER UPDATE ON events_lanes
FOR EACH ROW EXECUTE FUNCTION test_count_lane_update()`).Error)
	} else {
		require.NoError(t, db.Exec(`CREATE TRIGGER test_lane_update AFTER UPDATE ON events_lanes
BEGIN INSERT INTO test_lane_updates VALUES (NEW.subscriber); END`).Error)
	}
	return func(sub string) int64 {
		var n int64
		require.NoError(t, database.Scan(db.Raw(`SELECT count(*) FROM test_lane_updates WHERE subscriber = ?`, sub), &n))
		return n
	}
}

// Events written one after the other, each dispatched before the next is
// written, move a running lane's row once each: the lane keeps its lease
// between them (Linger) rather than claiming and releasing it for every
// event. Every update of the row is a row version that a session holding
// an old snapshot keeps alive.
func TestRunner_LaneKeepsItsLeaseBetweenEvents(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		updates := countLaneUpdates(t, db)
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{Linger: time.Minute})
		startRunner(t, db, d)
		everyPartition(t, db)
		// Each lane was claimed and moved once, or twice when the runner's
		// first pass, at its start, still held it as the first event came.
		before := updates("recorder")
		require.LessOrEqual(t, before, int64(3*events.Partitions))
		const n = 20
		done := effects(t, db, "recorder")
		for i := range n {
			add(t, db, "thing.created", 7) // one object: one partition, one lane
			require.Eventually(t, func() bool { return effects(t, db, "recorder") == done+int64(i+1) }, 20*time.Second, time.Millisecond)
		}
		require.Equal(t, int64(n), updates("recorder")-before, "one move per event")
		requireOnce(t, db)
	})
}

// A replay reaches a lane that lingers with its lease: the replay takes the
// lease back, and the next pass tells the lane to claim it again where the
// replay left it. Neither the tick (an hour away) nor the end of the linger
// (an hour too) can be what delivers the events again.
func TestRunner_ReplayReachesALingeringLane(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var mu sync.Mutex
		calls := map[int64]int{}
		f := newFixture(t, db, events.Subscriber{Name: "a", Types: []string{"thing.created"},
			Handle: func(ctx context.Context, ev events.Event) error {
				mu.Lock()
				calls[ev.ID]++
				mu.Unlock()
				return nil
			}})
		called := func(id int64) int {
			mu.Lock()
			defer mu.Unlock()
			return calls[id]
		}
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{Linger: time.Hour})
		startRunner(t, db, d)
		// Every lane runs: the passes list no lanes, and only the replay's
		// event tells them to look at them again.
		everyPartition(t, db)
		var ids []int64
		for range 10 {
			ids = append(ids, add(t, db, "thing.created", 3))
		}
		// Recorded too: a replay that comes between the calls and their
		// record delivers them again, as it should.
		require.Eventually(t, func() bool { return deliveryOf(t, f.journal, ids[9], "a").Status == events.StatusProcessed },
			20*time.Second, time.Millisecond)
		for _, id := range ids {
			require.Equal(t, 1, called(id), "event %d before the replay", id)
		}
		from := ids[5]
		ctx := events.WithActor(context.Background(), events.Actor{ID: 1, Name: "Администратор"})
		_, err := f.journal.Replay(ctx, "a", from)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return called(ids[9]) == 2 }, 20*time.Second, time.Millisecond,
			"the replay reached the lingering lane")
		for _, id := range ids {
			want := 1
			if id >= from {
				want = 2
			}
			require.Equal(t, want, called(id), "event %d", id)
		}
		// The recorder's lanes run on their own: it catches up, and the
		// replay of another subscriber gives it nothing again.
		wantEffects := int64(len(ids) + events.Partitions)
		require.Eventually(t, func() bool { return effects(t, db, "recorder") >= wantEffects }, 20*time.Second, time.Millisecond)
		require.Equal(t, wantEffects, effects(t, db, "recorder"))
	})
}

func TestRunner_StopFinishesTheBatchInHand(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var calls atomic.Int64
		started := make(chan struct{}, 100)
		f := newFixture(t, db, events.Subscriber{Name: "slow", Types: []string{"thing.created"},
			Handle: func(ctx context.Context, ev events.Event) error {
				calls.Add(1)
				started <- struct{}{}
				time.Sleep(100 * time.Millisecond)
				return nil
			}})
		// One object, one partition: one batch of 10 events taking a second.
		var ids []int64
		for range 10 {
			ids = append(ids, add(t, db, "thing.created", 7))
		}
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 10})
		r := events.NewRunner(d, events.RunnerOptions{Interval: time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		require.NoError(t, r.Start(ctx))
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatal("the runner did not start dispatching")
		}
		cancel() // mid-batch
		stopped := make(chan struct{})
		go func() { r.Wait(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(30 * time.Second):
			t.Fatal("the runner did not stop")
		}
		require.EqualValues(t, 10, calls.Load(), "the batch in hand was finished")
		for _, id := range ids {
			require.Equal(t, events.StatusProcessed, statusOf(t, f.journal, id), "event %d delivered and recorded", id)
		}
	})
}

func TestRunner_WakesOnCommit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		// The tick is an hour away: only the commit's announcement (in this
		// process, or a NOTIFY from another on PostgreSQL) or the poll of the
		// journal (SQLite) can wake the dispatcher for a write made with no
		// Wake.
		type writer struct {
			name string
			db   *gorm.DB
		}
		var writers []writer
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{Linger: time.Hour})
		if database.DialectOf(db) == database.Postgres {
			pool := func() *gorm.DB {
				p, err := database.Open(context.Background(), database.Options{PostgresURL: pgURLOf(t, db)})
				require.NoError(t, err)
				t.Cleanup(func() { _ = database.Close(p) })
				return p
			}
			// Another process's pool: its NOTIFY is the only way to wake this
			// runner, which skips those of the pools it watches. Then a pool
			// the runner watches besides its own (the API's), whose NOTIFYs
			// it skips.
			api := pool()
			writers = append(writers, writer{"another process", pool()}, writer{"a watched pool of this process", api})
			r := events.NewRunner(d, events.RunnerOptions{Interval: time.Hour, ListenURL: pgURLOf(t, db), Watch: []*gorm.DB{api}})
			ctx, cancel := context.WithCancel(context.Background())
			require.NoError(t, r.Start(ctx))
			t.Cleanup(func() { cancel(); r.Wait() })
			runnerReady(t, r)
		} else {
			startRunner(t, db, d)
		}
		writers = append(writers, writer{"this process", db})
		// Each event is about an object of a partition of its own, and lanes
		// linger for an hour: no lane lingering after an earlier dispatch,
		// nor its release, finds it.
		obj, used := int64(0), map[int]bool{}
		for _, w := range writers {
			for range 3 {
				for obj++; used[events.PartitionOf("things", obj)]; obj++ {
				}
				used[events.PartitionOf("things", obj)] = true
				id := add(t, w.db, "thing.created", obj)
				start := time.Now()
				require.Eventually(t, func() bool { return statusOf(t, f.journal, id) == events.StatusProcessed }, 20*time.Second, 2*time.Millisecond,
					"event %d, written by %s", id, w.name)
				t.Logf("event %d, written by %s, dispatched %s after its commit", id, w.name, time.Since(start))
			}
		}
	})
}

// pgURLOf is the URL of the test's PostgreSQL schema.
func pgURLOf(t *testing.T, db *gorm.DB) string {
	t.Helper()
	var schema string
	require.NoError(t, database.Scan(db.Raw("SELECT current_schema()"), &schema))
	return dbtest.WithSearchPath(dbtest.PostgresURL(), schema)
}

// A retry falls due long before the next tick: the runner comes back for it.
func TestRunner_RetriesWithoutWaitingForTheTick(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var fails atomic.Int64
		f := newFixture(t, db, events.Subscriber{Name: "flaky", Types: []string{"thing.created"},
			Handle: func(ctx context.Context, ev events.Event) error {
				if fails.Add(1) <= 2 {
					return errors.New("not yet")
				}
				return nil
			}})
		// Retries come 150–600 ms later: after the pass that follows a
		// failure at once has found nothing due.
		opt := fastRetries(10)
		opt.BackoffBase, opt.BackoffMax = 300*time.Millisecond, 600*time.Millisecond
		d := events.NewDispatcher(db, f.reg, opt)
		r := events.NewRunner(d, events.RunnerOptions{Interval: time.Hour})
		id := add(t, db, "thing.created", 1)
		ctx, cancel := context.WithCancel(context.Background())
		require.NoError(t, r.Start(ctx))
		t.Cleanup(func() { cancel(); r.Wait() })
		require.Eventually(t, func() bool { return statusOf(t, f.journal, id) == events.StatusProcessed }, 20*time.Second, 5*time.Millisecond)
		// Three calls, three attempts: none made and left unrecorded (a
		// lane that left the running ones and then gave its lease back
		// cleared the lease of the lane claimed again meanwhile, whose
		// record of the second call was fenced off).
		dl := deliveryOf(t, f.journal, id, "flaky")
		require.Equal(t, 3, dl.Attempts, "%+v", dl)
	})
}
