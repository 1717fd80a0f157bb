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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

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

// Stalls: a call in flight holds only its own object, and a replica
// restarted after kill -9 takes back its own lanes at once.

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
	const lease = 3 * time.Second
	d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 100, Timeout: 2 * time.Second, Lease: lease, Linger: time.Minute})
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
	// waits for a lock. A renewer that waited for the held row would end
	// each renewal in an error at Lease/3, and never count three.
	waits, renewed := 0, events.LeaseRenewals(d)
	for end := time.Now().Add(10 * lease); events.LeaseRenewals(d) < renewed+3 && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if blocked() > 0 {
			waits++
		}
	}
	require.Zero(t, waits, "samples with a session waiting on a lock while one lane's row is held")
	require.GreaterOrEqual(t, events.LeaseRenewals(d), renewed+3, "three renewals while one lane's row is held")

	for p, id := range objs {
		if p != stuck {
			add(t, db, "thing.created", id)
		}
	}
	require.Eventually(t, func() bool { return effects(t, db, "recorder") == 2*events.Partitions-1 }, 10*time.Second, 10*time.Millisecond,
		"the other lanes go on while one lane's row is held")
	require.Zero(t, blocked(), "no session waits behind the held row")
}
