package events_test

// Lanes: each subscriber at its own pace. A slow or hanging subscriber
// delays only itself, a subscriber seen late starts at the journal's end, a
// replay reaches one subscriber only, a retired subscriber no longer holds
// events back, and databases from before lanes migrate with their open
// deliveries.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// effects counts the recorder's committed effects.
func effects(t *testing.T, db *gorm.DB, sub string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM test_effects WHERE subscriber = ?", sub), &n))
	return n
}

// An outside subscriber that sleeps on every call and one that hangs until
// it is let go do not delay the local one: while both are stuck in their
// first call, the local subscriber receives every event. Nothing here is
// timed; the test counts what the local subscriber got while the others
// were stuck.
func TestLanes_SlowAndHangingSubscribersDelayOnlyThemselves(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		letGo := make(chan struct{})
		var hangingIn, hangingOut, sleepyCalls atomic.Int64
		f := newFixture(t, db,
			events.Subscriber{Name: "hanging", Types: []string{"thing.created"},
				Handle: func(ctx context.Context, ev events.Event) error {
					hangingIn.Add(1)
					defer hangingOut.Add(1)
					select {
					case <-letGo:
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				}},
			events.Subscriber{Name: "sleepy", Types: []string{"thing.created"},
				Handle: func(ctx context.Context, ev events.Event) error {
					sleepyCalls.Add(1)
					select {
					case <-letGo:
					case <-time.After(200 * time.Millisecond):
					}
					return nil
				}},
		)
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{Timeout: time.Minute, BatchSize: 10})
		r := events.NewRunner(d, events.RunnerOptions{Interval: time.Hour, Poll: 20 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(func() { cancel(); r.Wait() })
		require.NoError(t, r.Start(ctx))

		const n = 30
		for i := range n {
			add(t, db, "thing.created", int64(i))
			r.Wake()
		}
		require.Eventually(t, func() bool { return effects(t, db, "recorder") == n }, 30*time.Second, 5*time.Millisecond,
			"the local subscriber got every event")
		// Concurrency 1: the hanging subscriber is still in its first call,
		// and the sleepy one has had a few at most.
		require.EqualValues(t, 1, hangingIn.Load())
		require.Zero(t, hangingOut.Load(), "the hanging subscriber never returned meanwhile")
		require.Less(t, sleepyCalls.Load(), int64(n), "the sleepy subscriber is behind")
		close(letGo)
		require.Eventually(t, func() bool { return hangingIn.Load() == n && sleepyCalls.Load() == n }, 30*time.Second, 5*time.Millisecond)
		cancel()
		r.Wait()
		requireOnce(t, db)
		requireSettled(t, db)
	})
}

// An outside subscriber with Concurrency 4 has up to four calls in flight,
// never two for one object, whose events keep their order.
func TestLanes_OutsideConcurrencyKeepsObjectOrder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var (
			mu       sync.Mutex
			inFlight = map[int64]bool{}
			seen     = map[int64][]int64{}
			now, top int
			twice    bool
		)
		f := newFixture(t, db, events.Subscriber{Name: "parallel", Types: []string{"thing.created"}, Concurrency: 4,
			Handle: func(ctx context.Context, ev events.Event) error {
				mu.Lock()
				if inFlight[ev.AggregateID] {
					twice = true
				}
				inFlight[ev.AggregateID] = true
				now++
				top = max(top, now)
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
				mu.Lock()
				inFlight[ev.AggregateID] = false
				now--
				seen[ev.AggregateID] = append(seen[ev.AggregateID], ev.ID)
				mu.Unlock()
				return nil
			}})
		want := map[int64][]int64{}
		for i := range 120 {
			obj := int64(i % 12)
			want[obj] = append(want[obj], add(t, db, "thing.created", obj))
		}
		drain(t, f.disp)
		mu.Lock()
		defer mu.Unlock()
		require.False(t, twice, "two calls in flight for one object")
		require.LessOrEqual(t, top, 4)
		require.Greater(t, top, 1, "calls for different objects overlap")
		require.Equal(t, want, seen, "each object's events in order, each once")
	})
}

// A backlog in every partition has a few of a subscriber's lanes hold a
// batch at once (twice the dispatcher's Workers), not one per partition, so
// that what the dispatcher holds in memory does not grow with the backlog.
// The outside subscriber below may have 64 calls in flight; what bounds the
// partitions it is called for at once is the lanes holding a batch.
func TestLanes_FewLanesOfASubscriberHoldABatchAtOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var (
			mu       sync.Mutex
			inFlight = map[int]int{} // partition → calls in flight
			top      int
			calls    int
		)
		f := newFixture(t, db, events.Subscriber{Name: "wide", Types: []string{"thing.created"}, Concurrency: 64,
			Handle: func(ctx context.Context, ev events.Event) error {
				p := events.PartitionOf(ev.AggregateType, ev.AggregateID)
				mu.Lock()
				inFlight[p]++
				top = max(top, len(inFlight))
				calls++
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				mu.Lock()
				if inFlight[p]--; inFlight[p] == 0 {
					delete(inFlight, p)
				}
				mu.Unlock()
				return nil
			}})
		const n = 320
		for i := range n {
			add(t, db, "thing.created", int64(i%64)) // 64 objects: every partition
		}
		workers := 2
		if database.DialectOf(db) == database.SQLite {
			workers = 1
		}
		drain(t, f.disp)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, n, calls)
		require.LessOrEqual(t, top, 2*workers, "partitions called at once")
		require.EqualValues(t, n, effects(t, db, "recorder"))
		requireOnce(t, db)
	})
}

// A subscriber seen for the first time starts at the journal's end: it gets
// none of the events written before it, all of those after, and the journal
// does not wait for it on the old ones.
func TestLanes_NewSubscriberStartsAtTheEnd(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		old := add(t, db, "thing.created", 1)
		drain(t, f.disp)

		var got []int64
		var mu sync.Mutex
		late := events.Subscriber{Name: "late", Types: []string{"thing.created"},
			Handle: func(ctx context.Context, ev events.Event) error {
				mu.Lock()
				got = append(got, ev.ID)
				mu.Unlock()
				return nil
			}}
		reg := events.NewRegistry()
		reg.AddTypes(f.reg.Types()...)
		reg.MustSubscribe(*f.reg.Subscriber("recorder"))
		reg.MustSubscribe(late)
		d := events.NewDispatcher(db, reg, events.DispatcherOptions{})
		drain(t, d)
		fresh := add(t, db, "thing.created", 1)
		drain(t, d)
		mu.Lock()
		require.Equal(t, []int64{fresh}, got)
		mu.Unlock()
		j := events.NewJournal(db, reg)
		e, err := j.Get(context.Background(), old)
		require.NoError(t, err)
		require.Equal(t, events.StatusProcessed, e.Status)
		require.Len(t, e.Deliveries, 1, "the old event is not the late subscriber's")
		require.Equal(t, events.StatusProcessed, statusOf(t, j, fresh))
		require.Equal(t, events.StatusProcessed, deliveryOf(t, j, fresh, "late").Status)
	})
}

// A replay reaches the one subscriber, from the event id on, and no other;
// it is journalled with its actor, and refused for an unknown, a retired or
// a local subscriber that is not replayable.
func TestLanes_ReplayReachesOneSubscriberOnly(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var mu sync.Mutex
		calls := map[string]map[int64]int{"a": {}, "b": {}}
		outside := func(name string) events.Subscriber {
			return events.Subscriber{Name: name, Types: []string{"thing.created", "thing.changed"},
				Handle: func(ctx context.Context, ev events.Event) error {
					mu.Lock()
					calls[name][ev.ID]++
					mu.Unlock()
					return nil
				}}
		}
		f := newFixture(t, db, outside("a"), outside("b"))
		var ids []int64
		for i := range 20 {
			ids = append(ids, add(t, db, "thing.created", int64(i%5)))
		}
		drain(t, f.disp)
		from := ids[12]
		ctx := events.WithActor(context.Background(), events.Actor{ID: 1, Name: "Администратор"})
		r, err := f.journal.Replay(ctx, "a", from)
		require.NoError(t, err)
		require.Equal(t, events.Replayed{Subscriber: "a", FromEventID: from}, r)
		// Until the dispatcher has passed them again, a's deliveries are pending.
		require.Equal(t, events.StatusPending, deliveryOf(t, f.journal, ids[15], "a").Status)
		require.Equal(t, events.StatusProcessed, deliveryOf(t, f.journal, ids[11], "a").Status)
		drain(t, f.disp)
		mu.Lock()
		for _, id := range ids {
			want := 1
			if id >= from {
				want = 2
			}
			require.Equal(t, want, calls["a"][id], "a, event %d", id)
			require.Equal(t, 1, calls["b"][id], "b, event %d", id)
		}
		mu.Unlock()
		require.EqualValues(t, len(ids), effects(t, db, "recorder"), "the local subscriber is not replayed")
		requireOnce(t, db)
		require.Equal(t, events.StatusProcessed, statusOf(t, f.journal, ids[15]))

		replayed, _, err := f.journal.List(context.Background(), events.Filter{Type: events.EventSubscriberReplayed}, page.Request{Limit: 10})
		require.NoError(t, err)
		require.Len(t, replayed, 1)
		require.JSONEq(t, fmt.Sprintf(`{"subscriber":"a","from_event_id":%d}`, from), string(replayed[0].Payload))
		require.Equal(t, "Администратор", replayed[0].Actor.Name)

		_, err = f.journal.Replay(ctx, "nobody", 1)
		require.Equal(t, apperr.ENOTFOUND, apperr.Code(err))
		_, err = f.journal.Replay(ctx, "recorder", 1)
		require.Equal(t, apperr.ECONFLICT, apperr.Code(err), "a local subscriber that is not replayable")
		_, err = f.journal.Replay(ctx, "a", 0)
		require.Equal(t, apperr.EINVALID, apperr.Code(err))
	})
}

// A subscriber that no replica runs any more keeps the journal's events
// pending, visibly, until an admin retires it; then they are processed, at
// the time the remaining subscribers handled them.
func TestLanes_RetiredSubscriberNoLongerHoldsEvents(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		gone := events.Subscriber{Name: "gone", Types: []string{"thing.created"}, Handle: func(context.Context, events.Event) error { return nil }}
		f := newFixture(t, db, gone) // a replica ran it once
		reg := events.NewRegistry()
		reg.AddTypes(f.reg.Types()...)
		reg.MustSubscribe(*f.reg.Subscriber("recorder"))
		d := events.NewDispatcher(db, reg, events.DispatcherOptions{}) // the replicas now run the recorder only
		id := add(t, db, "thing.created", 1)
		drain(t, d)
		j := events.NewJournal(db, reg)
		e, err := j.Get(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, events.StatusPending, e.Status, "waiting for gone")
		require.Equal(t, events.StatusPending, deliveryOf(t, j, id, "gone").Status)

		err = j.Retire(context.Background(), "gone")
		require.Equal(t, apperr.ECONFLICT, apperr.Code(err), "a replica ran it within the last minute")
		require.NoError(t, db.Exec("UPDATE events_replicas SET seen_at = "+database.NowPlus(db, -2*time.Minute)+" WHERE subscriber = 'gone'").Error)
		subs, err := j.Subscribers(context.Background())
		require.NoError(t, err)
		status := map[string]string{}
		for _, s := range subs {
			status[s.Name] = s.Status
		}
		require.Equal(t, map[string]string{"gone": events.SubscriberWaiting, "recorder": events.SubscriberActive}, status)

		require.NoError(t, j.Retire(context.Background(), "gone"))
		e, err = j.Get(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, events.StatusProcessed, e.Status)
		require.Equal(t, deliveryOf(t, j, id, "recorder").ProcessedAt, e.ProcessedAt)
		require.Equal(t, apperr.ECONFLICT, apperr.Code(j.Retire(context.Background(), "gone")), "retired already")
		require.Equal(t, apperr.ENOTFOUND, apperr.Code(j.Retire(context.Background(), "nobody")))
		subs, err = j.Subscribers(context.Background())
		require.NoError(t, err)
		for _, s := range subs {
			if s.Name == "gone" {
				require.Equal(t, events.SubscriberRetired, s.Status)
			}
		}
	})
}

// A subscriber's retry policy is its own; Permanent fails a delivery at once.
func TestLanes_RetryPolicyAndPermanentErrors(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db,
			events.Subscriber{Name: "twice", Types: []string{"thing.created"}, Retry: events.RetryPolicy{MaxAttempts: 2, Base: time.Hour, Cap: time.Hour},
				Handle: func(context.Context, events.Event) error { return errors.New("down") }},
			events.Subscriber{Name: "refuses", Types: []string{"thing.created"},
				Handle: func(context.Context, events.Event) error {
					return events.Permanent(fmt.Errorf("answered %d", http.StatusUnprocessableEntity))
				}},
			events.Subscriber{Name: "later", Types: []string{"thing.created"}, Retry: events.RetryPolicy{Cap: time.Hour},
				Handle: func(context.Context, events.Event) error {
					return events.RetryAfter(90*time.Second, errors.New("answered 429"))
				}},
		)
		id := add(t, db, "thing.created", 1)
		drain(t, f.disp)
		require.Equal(t, events.StatusRetrying, deliveryOf(t, f.journal, id, "twice").Status)
		ref := deliveryOf(t, f.journal, id, "refuses")
		require.Equal(t, events.StatusFailed, ref.Status, "a permanent error fails at once")
		require.Equal(t, 1, ref.Attempts)
		require.Contains(t, ref.LastError, "answered 422")
		l := deliveryOf(t, f.journal, id, "later")
		require.Equal(t, events.StatusRetrying, l.Status)
		delay := l.NextAttemptAt.Sub(*deliveryOf(t, f.journal, id, "recorder").ProcessedAt)
		require.InDelta(t, 90, delay.Seconds(), 10, "the delay the other side asked for, not the back-off")

		require.NoError(t, db.Exec("UPDATE events_deliveries SET next_attempt_at = "+database.Now(db)+" WHERE subscriber = 'twice'").Error)
		drain(t, f.disp)
		tw := deliveryOf(t, f.journal, id, "twice")
		require.Equal(t, events.StatusFailed, tw.Status, "its own two attempts, not the dispatcher's three")
		require.Equal(t, 2, tw.Attempts)
		require.Equal(t, events.StatusFailed, statusOf(t, f.journal, id))
	})
}

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
	time.Sleep(200 * time.Millisecond) // past the start-up pass, the LISTEN and the poll's first look
	return r
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

// Stalls: a call in flight holds only its own object, and a replica
// restarted after kill -9 takes back its own lanes at once.

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
		require.NoError(t, database.Scan(db.Raw(`SELECT event_id, status, last_error, blocked_by FROM events_deliveries WHERE subscriber = 'relay' ORDER BY event_id`),
			&rows))
		require.Len(t, rows, 2, "only the hanging object's events are open: %+v", rows)
		require.Equal(t, a1, rows[0].EventID)
		require.Equal(t, events.StatusRetrying, rows[0].Status)
		require.Contains(t, rows[0].LastError, "no answer within the call budget")
		left := deliveryOf(t, f.journal, a1, "relay")
		require.Equal(t, 1, left.Attempts, "the call with no answer spent an attempt")
		require.Len(t, left.Failures, 1)
		require.True(t, left.Failures[0].Spent)
		next := left.NextAttemptAt
		require.NotNil(t, next)
		require.True(t, next.After(start.Add(timeout)), "the retry comes after the left call's timeout, so that the two never overlap: due %s, the pass began %s", next, start)
		require.True(t, next.Before(time.Now().Add(timeout+2*time.Second)), "and not much later: due %s", next)
		require.Equal(t, a2, rows[1].EventID)
		require.Equal(t, events.StatusHeld, rows[1].Status, "the object's later event waits behind it")
		require.NotNil(t, rows[1].BlockedBy)
		require.Equal(t, a1, *rows[1].BlockedBy)
		var passed int64
		require.NoError(t, database.Scan(db.Raw(`SELECT position FROM events_lanes WHERE subscriber = 'relay' AND partition = ?`, events.PartitionOf("things", hang)),
			&passed))
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

// A partner that never answers within the call budget ends failed once its
// attempts are used up, each retry after the left call's timeout: a call
// with no answer is a failure like a timed-out one, not a delay the other
// side asked for (which would put it off for a day without spending one).
func TestLanes_HangingPartnerEndsFailed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var calls atomic.Int32
		f := newFixture(t, db, events.Subscriber{Name: "relay", Types: []string{"thing.created"}, Concurrency: 2,
			Handle: func(ctx context.Context, ev events.Event) error {
				calls.Add(1)
				<-ctx.Done()
				return ctx.Err()
			}})
		const timeout, budget = 400 * time.Millisecond, 100 * time.Millisecond
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 100, Timeout: timeout, CallBudget: budget,
			BackoffBase: 10 * time.Millisecond, BackoffMax: 20 * time.Millisecond, MaxAttempts: 3})
		id := add(t, db, "thing.created", 1)

		deadline := time.Now().Add(30 * time.Second)
		for deliveryOf(t, f.journal, id, "relay").Status != events.StatusFailed {
			require.True(t, time.Now().Before(deadline), "still not failed after %d calls: %+v", calls.Load(), deliveryOf(t, f.journal, id, "relay"))
			_, err := d.RunOnce(context.Background())
			require.NoError(t, err)
			time.Sleep(50 * time.Millisecond)
		}
		got := deliveryOf(t, f.journal, id, "relay")
		require.Equal(t, 3, got.Attempts)
		require.Len(t, got.Failures, 3)
		for i, fl := range got.Failures {
			require.True(t, fl.Spent, "failure %d", i)
			require.Contains(t, fl.Error, "no answer within the call budget")
			if i > 0 {
				require.GreaterOrEqual(t, fl.At.Sub(got.Failures[i-1].At), timeout, "each retry came after the left call's timeout")
			}
		}
		require.Equal(t, int32(3), calls.Load(), "one call per attempt")
	})
}

// A call left at the call budget keeps its object's call slot until its
// timeout, even when it never returns: with one slot, the next object is
// called once that timeout has passed, not before (two calls would then be
// in flight) and not never (the slot would be lost).
func TestLanes_LeftCallHoldsItsSlotUntilItsTimeout(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		objs := samePartition(2)
		hang, other := objs[0], objs[1]
		letGo := make(chan struct{})
		t.Cleanup(func() { close(letGo) })
		var (
			mu       sync.Mutex
			calledAt = map[int64]time.Time{}
			deadline = map[int64]time.Time{}
		)
		f := newFixture(t, db, events.Subscriber{Name: "relay", Types: []string{"thing.created"}, Concurrency: 1,
			Handle: func(ctx context.Context, ev events.Event) error {
				mu.Lock()
				calledAt[ev.AggregateID] = time.Now()
				deadline[ev.AggregateID], _ = ctx.Deadline()
				mu.Unlock()
				if ev.AggregateID == hang {
					<-letGo // ignores its context
				}
				return nil
			}})
		const timeout, budget = 1500 * time.Millisecond, time.Second
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 100, Timeout: timeout, CallBudget: budget,
			BackoffBase: time.Hour, BackoffMax: time.Hour, MaxAttempts: 5})
		left := add(t, db, "thing.created", hang)
		next := add(t, db, "thing.created", other)

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := d.RunOnce(ctx)
		require.NoError(t, err, "the pass ends although the left call never returns")
		mu.Lock()
		hungAt, otherAt, otherDue := calledAt[hang], calledAt[other], deadline[other]
		mu.Unlock()
		require.False(t, otherAt.IsZero(), "the other object was called in the same pass")
		require.GreaterOrEqual(t, otherAt.Sub(hungAt), timeout, "with its one slot held by the left call until that call's timeout")
		require.Less(t, otherAt.Sub(hungAt), timeout+1500*time.Millisecond, "and given back then (a slot given back a budget late would make it 3.5 s)")
		require.WithinDuration(t, otherAt.Add(timeout), otherDue, 100*time.Millisecond, "a call's context has its timeout as its deadline")
		require.Equal(t, events.StatusRetrying, deliveryOf(t, f.journal, left, "relay").Status)
		require.Equal(t, events.StatusProcessed, deliveryOf(t, f.journal, next, "relay").Status)
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
	require.NoError(t, database.Scan(db.Raw(`SELECT count(*) FROM events_lanes WHERE subscriber = 'recorder' AND owner = ?`, d.Owner()), &owned))
	require.EqualValues(t, events.Partitions, owned, "every lane lingers with its lease")

	// The row the renewer reaches last, so that, were it to wait for it, it
	// would hold every other lane's row meanwhile.
	var stuck int
	require.NoError(t, database.Scan(db.Raw(`SELECT partition FROM events_lanes WHERE subscriber = 'recorder' ORDER BY ctid DESC LIMIT 1`), &stuck))
	tx := db.Begin()
	require.NoError(t, tx.Error)
	require.NoError(t, tx.Exec(`SELECT 1 FROM events_lanes WHERE subscriber = 'recorder' AND partition = ? FOR UPDATE`, stuck).Error)
	var holder int
	require.NoError(t, database.Scan(tx.Raw(`SELECT pg_backend_pid()`), &holder)) // the lock is taken
	defer tx.Rollback()
	blocked := func() int64 { // the sessions waiting for the held row, and those waiting for them
		var n int64
		require.NoError(t, database.Scan(db.Raw(`WITH RECURSIVE w(pid) AS (SELECT pid FROM pg_stat_activity WHERE ? = ANY (pg_blocking_pids(pid))
  UNION SELECT a.pid FROM pg_stat_activity a JOIN w ON w.pid = ANY (pg_blocking_pids(a.pid)))
SELECT count(*) FROM w`, holder), &n))
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

// isClaim tells a statement that claims lanes.
func isClaim(q string) bool {
	return strings.Contains(q, "UPDATE events_lanes SET owner") && strings.Contains(q, "RETURNING subscriber")
}

// TestLanes_PassWhileRunning: a pass that sees a lane's events while the
// lane is still dispatching them neither claims it nor makes it look again
// afterwards, since the lane has looked up to that pass's horizon itself.
// (Looking again meant claiming the lane, finding nothing and releasing it:
// two more updates of its row for every event written alone, which a
// session holding PostgreSQL's xmin horizon keeps from being cleaned up.)
// PostgreSQL only: SQLite's one connection is held by the blocked batch.
func TestLanes_PassWhileRunning(t *testing.T) {
	t.Parallel()
	db := dbtest.New(t, database.Postgres)
	reg := events.NewRegistry()
	reg.AddTypes(events.Type{Type: "thing.created", Owner: "test", AggregateType: "things"})
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var calls atomic.Int64
	reg.MustSubscribe(events.Subscriber{Name: "held-local", Types: []string{"thing.created"},
		HandleTx: func(context.Context, *gorm.DB, events.Event) error {
			calls.Add(1)
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release
			return nil
		}})
	claims := &statementCounter{match: isClaim}
	d := events.NewDispatcher(db.Session(&gorm.Session{Logger: claims}), reg, events.DispatcherOptions{})
	ctx := context.Background()
	_, err := d.RunOnce(ctx) // registers the subscriber: its lanes start at the journal's end
	require.NoError(t, err)

	add(t, db, "thing.created", 1)
	_, err = d.Start(ctx, ctx)
	require.NoError(t, err)
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the subscriber was not called")
	}
	// The lane's position has not moved yet: this pass sees its event.
	_, err = d.Start(ctx, ctx)
	require.NoError(t, err)
	close(release)
	d.Wait()

	require.EqualValues(t, 1, calls.Load())
	require.EqualValues(t, 1, claims.n.Load(), "the lane was claimed again after it had dispatched what the second pass saw")
	st, err := d.RunOnce(ctx)
	require.NoError(t, err)
	require.Zero(t, st.Events, "nothing is left to dispatch")
}

// statementCounter is a GORM logger that counts the statements match
// accepts, every statement when match is nil.
type statementCounter struct {
	n     atomic.Int64
	match func(sql string) bool
}

func (c *statementCounter) LogMode(logger.LogLevel) logger.Interface { return c }
func (c *statementCounter) Info(context.Context, string, ...any)     {}
func (c *statementCounter) Warn(context.Context, string, ...any)     {}
func (c *statementCounter) Error(context.Context, string, ...any)    {}
func (c *statementCounter) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	if c.match == nil {
		c.n.Add(1)
		return
	}
	if q, _ := fc(); c.match(q) {
		c.n.Add(1)
	}
}

// A retried delivery goes the delivery path of a batch: a pass that retries
// one delivery of a lingering lane costs no more statements than a pass
// that hands the same lane a batch of one event (survey, read, record with
// its fence).
func TestRetries_CostNoMoreStatementsThanABatchOfOne(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var failing atomic.Bool
		failing.Store(true)
		f := newFixture(t, db, events.Subscriber{Name: "ledger", Types: []string{"thing.created"},
			HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
				if failing.Load() {
					return errors.New("ledger refused the first time")
				}
				return tx.Exec("INSERT INTO test_effects (event_id, subscriber) VALUES (?, 'ledger')", ev.ID).Error
			}})
		// Only the ledger: the fixture's recorder would add its own lanes.
		reg := events.NewRegistry()
		reg.AddTypes(events.Type{Type: "thing.created", Owner: "test", AggregateType: "things"})
		reg.MustSubscribe(*f.reg.Subscriber("ledger"))
		count := &statementCounter{}
		d := events.NewDispatcher(db.Session(&gorm.Session{Logger: count}), reg,
			// A lease of an hour: its renewal (every third of it) never
			// falls inside a counted pass.
			events.DispatcherOptions{Linger: time.Hour, Lease: time.Hour, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond})
		ctx, stop := context.WithCancel(context.Background())
		t.Cleanup(func() { stop(); d.Wait() })
		_, err := d.RunOnce(ctx) // registers the subscriber: its lanes start at the journal's end
		require.NoError(t, err)
		effectsOf := func() int64 {
			var n int64
			require.NoError(t, database.Scan(db.Raw(`SELECT count(*) FROM test_effects WHERE subscriber = 'ledger'`), &n))
			return n
		}
		deliveries := func(status string) int64 {
			var n int64
			require.NoError(t, database.Scan(db.Raw(`SELECT count(*) FROM events_deliveries WHERE subscriber = 'ledger' AND status = ?`, status), &n))
			return n
		}
		pass := func(until func() bool) int64 {
			t.Helper()
			count.n.Store(0)
			_, err := d.Start(ctx, ctx)
			require.NoError(t, err)
			require.Eventually(t, until, 10*time.Second, time.Millisecond)
			time.Sleep(50 * time.Millisecond) // anything the lane does after it
			return count.n.Load()
		}
		// The first delivery fails; its lane lingers with its lease.
		add(t, db, "thing.created", 1)
		pass(func() bool { return deliveries("retrying") == 1 })
		failing.Store(false)
		time.Sleep(5 * time.Millisecond) // the retry falls due
		retry := pass(func() bool { return deliveries("processed") == 1 })
		require.Equal(t, int64(1), effectsOf())
		// A batch of one event of the same object: the same lane.
		add(t, db, "thing.created", 1)
		batch := pass(func() bool { return effectsOf() == 2 })
		t.Logf("statements: a pass retrying one delivery %d, a pass with a batch of one %d", retry, batch)
		require.LessOrEqual(t, retry, batch)
		// The counts themselves, so that one statement more on either path
		// shows (docs/outbox.md, "The outbox and its dispatcher").
		want := map[database.Dialect][2]int64{database.Postgres: {5, 5}, database.SQLite: {6, 7}}[database.DialectOf(db)]
		require.Equal(t, want, [2]int64{retry, batch}, "statements of a retry's pass and of a batch's")
		requireOnce(t, db)
	})
}
