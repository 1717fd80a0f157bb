package events_test

// Tests that try hard to break the delivery rules (docs/outbox.md, "Delivery guarantees") inside one
// process: retries, panics and hangs, per-object order under concurrent
// writers with injected failures, held deliveries, and the commit horizon
// against a long transaction elsewhere. replicas_test.go, runner_test.go
// and outside_test.go hold more; crash_test.go does the same with real
// processes.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
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

// fastRetries are options under which a failed delivery is retried within
// milliseconds.
func fastRetries(maxAttempts int) events.DispatcherOptions {
	return events.DispatcherOptions{BatchSize: 50, MaxAttempts: maxAttempts, Timeout: 5 * time.Second,
		BackoffBase: 5 * time.Millisecond, BackoffMax: 20 * time.Millisecond}
}

// settle runs passes until done() holds, failing after 30 seconds.
func settle(t *testing.T, d *events.Dispatcher, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		_, err := d.RunOnce(context.Background())
		require.NoError(t, err)
		if done() {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("not settled in 30s: %s", what)
}

func deliveryOf(t *testing.T, j *events.Journal, id int64, sub string) events.Delivery {
	t.Helper()
	e, err := j.Get(context.Background(), id)
	require.NoError(t, err)
	for _, d := range e.Deliveries {
		if d.Subscriber == sub {
			return d
		}
	}
	t.Fatalf("event %d has no delivery to %s", id, sub)
	return events.Delivery{}
}

func statusOf(t *testing.T, j *events.Journal, id int64) string {
	t.Helper()
	e, err := j.Get(context.Background(), id)
	require.NoError(t, err)
	return e.Status
}

func TestRetries_FailNTimesThenSucceed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		const n = 3
		var outsideFails, localFails atomic.Int64
		f := newFixture(t, db,
			events.Subscriber{Name: "callback", Types: []string{"thing.created"},
				Handle: func(ctx context.Context, ev events.Event) error {
					if ev.AggregateID == 1 {
						if k := outsideFails.Add(1); k <= n {
							return fmt.Errorf("callback answered 502 (try %d)", k)
						}
					}
					return nil
				}},
			events.Subscriber{Name: "ledger", Types: []string{"thing.created"},
				HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
					if err := tx.Exec("INSERT INTO test_effects (event_id, subscriber) VALUES (?, 'ledger')", ev.ID).Error; err != nil {
						return err
					}
					if ev.AggregateID != 1 {
						return nil
					}
					// Fail the first n attempts as the journal counts them.
					var attempts int
					if err := database.Scan(tx.Raw("SELECT coalesce(max(attempts), 0) FROM events_deliveries WHERE event_id = ? AND subscriber = 'ledger'", ev.ID), &attempts); err != nil {
						return err
					}
					if attempts < n {
						localFails.Add(1)
						return fmt.Errorf("ledger refused (try %d)", attempts+1) // its insert is rolled back
					}
					return nil
				}},
		)
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{MaxAttempts: n + 2, BackoffBase: time.Hour, BackoffMax: time.Hour})
		id := add(t, db, "thing.created", 1)
		other := add(t, db, "thing.created", 2)
		drain(t, d)

		// After the first attempt: retrying, with its count and error, while
		// the other object went through.
		cb := deliveryOf(t, f.journal, id, "callback")
		require.Equal(t, "retrying", cb.Status)
		require.Equal(t, 1, cb.Attempts)
		require.Contains(t, cb.LastError, "502 (try 1)")
		require.NotNil(t, cb.NextAttemptAt)
		require.Equal(t, "retrying", deliveryOf(t, f.journal, id, "ledger").Status)
		require.Equal(t, events.StatusProcessed, statusOf(t, f.journal, other))

		// Make the retries due at once, n times: attempts count up.
		for attempt := 2; attempt <= n+1; attempt++ {
			require.NoError(t, db.Exec("UPDATE events_deliveries SET next_attempt_at = "+database.Now(db)+" WHERE status = 'retrying'").Error)
			st, err := d.RunOnce(context.Background())
			require.NoError(t, err)
			if attempt <= n {
				require.Equal(t, events.PassStats{Failed: 2}, events.PassStats{Failed: st.Failed, Delivered: st.Delivered}, "the pass counts both retries failed")
			} else {
				require.Equal(t, events.PassStats{Delivered: 2}, events.PassStats{Failed: st.Failed, Delivered: st.Delivered}, "and both delivered")
			}
			drain(t, d)
			if attempt <= n {
				cb = deliveryOf(t, f.journal, id, "callback")
				require.Equal(t, attempt, cb.Attempts)
				require.Contains(t, cb.LastError, fmt.Sprintf("try %d", attempt))
			}
		}
		e, err := f.journal.Get(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, events.StatusProcessed, e.Status)
		for _, dl := range e.Deliveries {
			require.Equal(t, "processed", dl.Status, dl.Subscriber)
			require.Empty(t, dl.LastError)
		}
		require.Equal(t, n+1, deliveryOf(t, f.journal, id, "callback").Attempts)
		require.Equal(t, n+1, deliveryOf(t, f.journal, id, "ledger").Attempts)
		var effects int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM test_effects WHERE event_id = ? AND subscriber = 'ledger'", id), &effects))
		require.EqualValues(t, 1, effects, "a local effect is applied once, however many attempts failed")
	})
}

func TestRetries_BackoffGrowsWithJitter(t *testing.T) {
	t.Parallel()
	base, maxDelay := 100*time.Millisecond, 10*time.Second
	seen := map[time.Duration]bool{}
	for attempts := 1; attempts <= 40; attempts++ {
		full := maxDelay
		if attempts < 8 {
			full = base << (attempts - 1)
		}
		for range 20 {
			b := events.Backoff(attempts, base, maxDelay)
			require.GreaterOrEqual(t, b, full/2, "attempt %d", attempts)
			require.LessOrEqual(t, b, full, "attempt %d", attempts)
			seen[b] = true
		}
	}
	require.Greater(t, len(seen), 100, "jitter spreads the delays")
}

func TestRetries_PanicAndHangAreFailures(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		f := newFixture(t, db,
			events.Subscriber{Name: "panicky", Types: []string{"thing.created"},
				Handle: func(ctx context.Context, ev events.Event) error {
					if ev.AggregateID == 1 {
						var order []int
						_ = order[ev.AggregateID] // an index out of range: a real runtime panic
					}
					return nil
				}},
			events.Subscriber{Name: "panicky-local", Types: []string{"thing.created"},
				HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
					if ev.AggregateID == 1 {
						panic("local subscriber bug")
					}
					return nil
				}},
			events.Subscriber{Name: "stuck", Types: []string{"thing.created"},
				Handle: func(ctx context.Context, ev events.Event) error {
					if ev.AggregateID == 2 {
						<-release // ignores its context: hangs until the test ends
					}
					return nil
				}},
			events.Subscriber{Name: "stuck-local", Types: []string{"thing.created"},
				HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
					if ev.AggregateID == 3 {
						<-release // ignores its context and keeps the transaction
					}
					return nil
				}},
			// Its statement outlasts the timeout by far: the call's deadline
			// must reach the statements it runs in the batch's transaction,
			// which the server cancels, so that the call returns in time and
			// the transaction goes on. (SQLite's driver does not interrupt a
			// running statement when its context ends.)
			events.Subscriber{Name: "sleepy-local", Types: []string{"thing.created"},
				HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
					if ev.AggregateID != 2 || database.DialectOf(tx) != database.Postgres {
						return nil
					}
					return tx.Exec("SELECT pg_sleep(30)").Error
				}},
			// Its effect is written in time, its answer comes after it: the
			// delivery fails as timed out, and the effect must go with it, or
			// the retry would apply it again.
			events.Subscriber{Name: "late-local", Types: []string{"thing.created"},
				HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
					if err := tx.Exec("INSERT INTO test_effects (event_id, subscriber) VALUES (?, 'late-local')", ev.ID).Error; err != nil {
						return err
					}
					if ev.AggregateID == 2 {
						time.Sleep(1500 * time.Millisecond) // past the timeout, ignoring ctx
					}
					return nil
				}},
			events.Subscriber{Name: "slow-local", Types: []string{"thing.created"},
				HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
					if ev.AggregateID == 2 {
						<-ctx.Done() // waits as long as it is allowed to
						return ctx.Err()
					}
					return nil
				}},
		)
		opt := fastRetries(100)
		// A timeout far above what an ordinary call takes on a busy machine:
		// an ordinary statement cut off by it would be cancelled by the
		// server too, and a cancel that takes longer than
		// database.CancelGrace costs the whole batch its connection.
		opt.Timeout = time.Second
		opt.BackoffBase, opt.BackoffMax = time.Hour, time.Hour
		opt.Logger = slog.New(slog.DiscardHandler) // the panics' stacks
		d := events.NewDispatcher(db, f.reg, opt)
		bad := add(t, db, "thing.created", 1)
		hung := add(t, db, "thing.created", 2)
		stuck := add(t, db, "thing.created", 3)
		var fine []int64
		for i := range 20 {
			fine = append(fine, add(t, db, "thing.created", int64(10+i)))
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			drain(t, d)
		}()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("a hanging subscriber stalled the dispatcher")
		}
		for _, id := range fine {
			require.Equal(t, events.StatusProcessed, statusOf(t, f.journal, id), "event %d of another object", id)
		}
		p := deliveryOf(t, f.journal, bad, "panicky")
		require.Equal(t, "retrying", p.Status)
		require.Contains(t, p.LastError, "panicked")
		require.Contains(t, deliveryOf(t, f.journal, bad, "panicky-local").LastError, "panicked: local subscriber bug")
		require.Equal(t, "processed", deliveryOf(t, f.journal, bad, "stuck").Status)
		h := deliveryOf(t, f.journal, hung, "stuck")
		require.Equal(t, "retrying", h.Status)
		require.Contains(t, h.LastError, "timed out")
		require.Contains(t, deliveryOf(t, f.journal, hung, "slow-local").LastError, "timed out after 1s: context deadline exceeded", "what the call answered is kept")
		if database.DialectOf(db) == database.Postgres {
			sleepy := deliveryOf(t, f.journal, hung, "sleepy-local")
			require.Equal(t, "retrying", sleepy.Status)
			require.Contains(t, sleepy.LastError, "timed out")
			require.NotContains(t, sleepy.LastError, "did not return", "its statement was cancelled at the deadline")
		}
		late := deliveryOf(t, f.journal, hung, "late-local")
		require.Equal(t, "retrying", late.Status)
		require.Contains(t, late.LastError, "timed out after 1s: no error")
		var lateEffects int64
		require.NoError(t, db.Raw("SELECT count(*) FROM test_effects WHERE subscriber = 'late-local' AND event_id = ?", hung).Row().Scan(&lateEffects))
		require.Zero(t, lateEffects, "the late answer's effect was rolled back with its savepoint")
		require.NoError(t, db.Raw("SELECT count(*) FROM test_effects WHERE subscriber = 'late-local'").Row().Scan(&lateEffects))
		require.EqualValues(t, 22, lateEffects, "the other events' effects committed, once each")
		sl := deliveryOf(t, f.journal, stuck, "stuck-local")
		require.Equal(t, "retrying", sl.Status)
		require.Contains(t, sl.LastError, "did not return")
		require.Equal(t, "processed", deliveryOf(t, f.journal, stuck, "recorder").Status, "the batch went on without it")
		var effects, distinct int64
		require.NoError(t, db.Raw("SELECT count(*), count(DISTINCT event_id) FROM test_effects WHERE subscriber = 'recorder'").Row().Scan(&effects, &distinct))
		require.EqualValues(t, 23, effects, "the recorder's effects committed for every event, none lost")
		require.Equal(t, effects, distinct, "and once each")
	})
}

func TestOrdering_PerObjectUnderConcurrentWritersWithFailures(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.Exec(`CREATE TABLE test_order_seen (seq integer PRIMARY KEY, aggregate_id bigint NOT NULL, event_id bigint NOT NULL)`).Error)
		var (
			mu      sync.Mutex
			outside = map[int64][]int64{} // object → event ids, as the outside subscriber saw them
			seq     atomic.Int64
		)
		f := newFixture(t, db,
			events.Subscriber{Name: "outside", Types: []string{"thing.created", "thing.changed"},
				Handle: func(ctx context.Context, ev events.Event) error {
					if rand.Float64() < 0.2 {
						return errors.New("injected outside failure")
					}
					mu.Lock()
					outside[ev.AggregateID] = append(outside[ev.AggregateID], ev.ID)
					mu.Unlock()
					return nil
				}},
			events.Subscriber{Name: "local", Types: []string{"thing.created", "thing.changed"},
				HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
					if rand.Float64() < 0.1 {
						return errors.New("injected local failure")
					}
					// seq comes from the process, so the table records the order
					// of the committed effects, whatever the ids.
					return tx.Exec("INSERT INTO test_order_seen (seq, aggregate_id, event_id) VALUES (?, ?, ?)", seq.Add(1), ev.AggregateID, ev.ID).Error
				}},
		)
		opt := fastRetries(1000)
		a := events.NewDispatcher(db, f.reg, opt)
		opt.BatchSize = 7
		b := events.NewDispatcher(db, f.reg, opt)

		// Writers and two dispatchers at once.
		const writers, perWriter, objects = 4, 40, 4
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var disp sync.WaitGroup
		for _, d := range []*events.Dispatcher{a, b} {
			disp.Add(1)
			go func() {
				defer disp.Done()
				for ctx.Err() == nil {
					if _, err := d.RunOnce(ctx); err != nil && ctx.Err() == nil {
						t.Errorf("dispatch: %v", err)
						return
					}
					time.Sleep(time.Millisecond)
				}
			}()
		}
		var w sync.WaitGroup
		for i := range writers {
			w.Add(1)
			go func() {
				defer w.Done()
				for k := range perWriter {
					typ := "thing.changed"
					if k == 0 {
						typ = "thing.created"
					}
					add(t, db, typ, int64(1+(i+k)%objects))
				}
			}()
		}
		w.Wait()
		const total = writers * perWriter
		deadline := time.Now().Add(90 * time.Second)
		for time.Now().Before(deadline) {
			var n int64
			require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM test_order_seen"), &n))
			mu.Lock()
			seen := 0
			for _, ids := range outside {
				seen += len(ids)
			}
			mu.Unlock()
			if n >= total && seen >= total {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		disp.Wait()

		var written []struct {
			ID          int64
			AggregateID int64
		}
		require.NoError(t, database.Scan(db.Raw("SELECT id, aggregate_id FROM events ORDER BY id"), &written))
		require.Len(t, written, total)
		want := map[int64][]int64{}
		for _, e := range written {
			want[e.AggregateID] = append(want[e.AggregateID], e.ID)
		}
		mu.Lock()
		for obj, ids := range want {
			require.Equal(t, ids, outside[obj], "object %d: the outside subscriber saw its events in the order written, each once", obj)
		}
		mu.Unlock()
		var local []struct {
			AggregateID int64
			EventID     int64
		}
		require.NoError(t, database.Scan(db.Raw("SELECT aggregate_id, event_id FROM test_order_seen ORDER BY seq"), &local))
		got := map[int64][]int64{}
		for _, r := range local {
			got[r.AggregateID] = append(got[r.AggregateID], r.EventID)
		}
		for obj, ids := range want {
			require.Equal(t, ids, got[obj], "object %d: local effects committed in the order written, each once", obj)
		}
	})
}

func TestOrdering_FailureHoldsBackOnlyThatObject(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var broken atomic.Bool
		broken.Store(true)
		var mu sync.Mutex
		var seen []int64
		f := newFixture(t, db, events.Subscriber{Name: "picky", Types: []string{"thing.created", "thing.changed"},
			Handle: func(ctx context.Context, ev events.Event) error {
				if ev.AggregateID == 1 && broken.Load() {
					return errors.New("picky is down for object 1")
				}
				mu.Lock()
				seen = append(seen, ev.ID)
				mu.Unlock()
				return nil
			}})
		d := events.NewDispatcher(db, f.reg, fastRetries(1000))
		first := add(t, db, "thing.created", 1)
		other := add(t, db, "thing.created", 2)
		second := add(t, db, "thing.changed", 1)
		third := add(t, db, "thing.changed", 1)
		later := add(t, db, "thing.changed", 2)
		drain(t, d)

		require.Equal(t, "retrying", deliveryOf(t, f.journal, first, "picky").Status)
		for _, id := range []int64{second, third} {
			h := deliveryOf(t, f.journal, id, "picky")
			require.Equal(t, "held", h.Status, "event %d", id)
			require.NotNil(t, h.BlockedBy)
			require.Equal(t, first, *h.BlockedBy, "the journal says what event %d waits for", id)
			require.Equal(t, "processed", deliveryOf(t, f.journal, id, "recorder").Status, "other subscribers are not held")
		}
		require.Equal(t, events.StatusProcessed, statusOf(t, f.journal, other))
		require.Equal(t, events.StatusProcessed, statusOf(t, f.journal, later))
		stats, err := f.journal.Subscribers(context.Background())
		require.NoError(t, err)
		for _, s := range stats {
			if s.Name == "picky" {
				require.EqualValues(t, 1, s.Retrying)
				require.EqualValues(t, 2, s.Held)
				require.NotNil(t, s.OldestPending)
			}
		}
		// A later event of the held object stays held, behind the same one.
		fourth := add(t, db, "thing.changed", 1)
		drain(t, d)
		require.Equal(t, first, *deliveryOf(t, f.journal, fourth, "picky").BlockedBy)

		broken.Store(false)
		settle(t, d, "object 1 released", func() bool { return statusOf(t, f.journal, fourth) == events.StatusProcessed })
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []int64{other, later, first, second, third, fourth}, seen)
	})
}

// Only the writers of this events table hold dispatch back: a long
// transaction elsewhere on the cluster (here one holding an xid in another
// schema's tables) does not.
func TestDispatcher_LongTransactionElsewhereDoesNotHoldBack(t *testing.T) {
	t.Parallel()
	db := dbtest.New(t, database.Postgres)
	other := dbtest.New(t, database.Postgres)
	f := newFixture(t, db)
	long := other.Begin()
	t.Cleanup(func() { long.Rollback() })
	var xid string
	require.NoError(t, database.Scan(long.Raw("SELECT pg_current_xact_id()::text"), &xid))
	require.NoError(t, long.Exec("INSERT INTO events_batches (partition, first_id, last_id) VALUES (0, 1, 1)").Error)

	id := add(t, db, "thing.created", 1)
	settle(t, f.disp, "dispatched while another schema's transaction is open", func() bool {
		return statusOf(t, f.journal, id) == events.StatusProcessed
	})
	require.NoError(t, long.Commit().Error)
}
