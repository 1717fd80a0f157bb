package events_test

import (
	"context"
	"errors"
	"fmt"
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

// fixture is a registry with two test types and a local subscriber that
// records its effect in a table of its own.
type fixture struct {
	db      *gorm.DB
	reg     *events.Registry
	disp    *events.Dispatcher
	journal *events.Journal
	calls   sync.Map // subscriber name → *atomic.Int64
}

func newFixture(t *testing.T, db *gorm.DB, extra ...events.Subscriber) *fixture {
	t.Helper()
	// No key on purpose: a second delivery of an event to a subscriber
	// would add a second row, which requireOnce counts.
	require.NoError(t, db.Exec(`CREATE TABLE test_effects (event_id bigint NOT NULL, subscriber text NOT NULL)`).Error)
	f := &fixture{db: db, reg: events.NewRegistry()}
	f.reg.AddTypes(
		events.Type{Type: "thing.created", Owner: "test", AggregateType: "things"},
		events.Type{Type: "thing.changed", Owner: "test", AggregateType: "things"},
		events.Type{Type: "thing.ignored", Owner: "test", AggregateType: "things"},
	)
	f.reg.MustSubscribe(events.Subscriber{
		Name: "recorder", Types: []string{"thing.created", "thing.changed"},
		HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
			f.count("recorder")
			return tx.Exec("INSERT INTO test_effects (event_id, subscriber) VALUES (?, 'recorder')", ev.ID).Error
		},
	})
	for _, s := range extra {
		f.reg.MustSubscribe(s)
	}
	f.disp = events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 100, BackoffBase: 50 * time.Millisecond, BackoffMax: 100 * time.Millisecond, MaxAttempts: 3, Timeout: 2 * time.Second})
	f.journal = events.NewJournal(db, f.reg)
	// The service runs before the tests' events are written: its subscribers
	// are registered (with their lanes) by its first pass.
	_, err := f.disp.RunOnce(context.Background())
	require.NoError(t, err)
	return f
}

func (f *fixture) count(name string) int64 {
	v, _ := f.calls.LoadOrStore(name, new(atomic.Int64))
	return v.(*atomic.Int64).Add(1)
}

func (f *fixture) calls0(name string) int64 {
	v, _ := f.calls.LoadOrStore(name, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func add(t *testing.T, db *gorm.DB, typ string, aggID int64) int64 {
	t.Helper()
	var id int64
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := events.Add(context.Background(), tx, events.New{Type: typ, AggregateType: "things", AggregateID: aggID, Payload: map[string]any{"n": aggID}}); err != nil {
			return err
		}
		var err error
		id, err = dbtest.LastEventID(tx)
		return err
	})
	require.NoError(t, err)
	return id
}

// drain runs passes until nothing is due (Dispatcher.Drain), failing the
// test after 30 seconds.
func drain(t *testing.T, d *events.Dispatcher) events.PassStats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := d.Drain(ctx)
	require.NoError(t, err, "the dispatcher did not settle")
	return st
}

// requireOnce fails when a subscriber's committed effect for an event is
// there more than once (test_effects has no key that would refuse it).
func requireOnce(t *testing.T, db *gorm.DB) {
	t.Helper()
	var dups []struct {
		EventID    int64
		Subscriber string
		N          int64
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT event_id, subscriber, count(*) AS n FROM test_effects GROUP BY event_id, subscriber HAVING count(*) > 1`),
		&dups))
	require.Empty(t, dups, "effects applied more than once")
}

// requireSettled fails when a delivery is still retrying or held.
func requireSettled(t *testing.T, db *gorm.DB) {
	t.Helper()
	var open []struct {
		EventID    int64
		Subscriber string
		Status     string
		LastError  string
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT event_id, subscriber, status, last_error FROM events_deliveries WHERE status IN ('retrying', 'held')`),
		&open))
	require.Empty(t, open, "deliveries left open")
}

func TestAdd_NeedsTransaction(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		err := events.Add(context.Background(), db, events.New{Type: "x", AggregateType: "things", AggregateID: 1, Payload: map[string]any{}})
		require.ErrorIs(t, err, events.ErrNoTransaction)
	})
}

func TestAdd_RollsBackWithOwner(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		boom := errors.New("boom")
		err := db.Transaction(func(tx *gorm.DB) error {
			if err := events.Add(context.Background(), tx, events.New{Type: "thing.created", AggregateType: "things", AggregateID: 1, Payload: map[string]any{}}); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom)
		var n int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM events"), &n))
		require.Zero(t, n)
	})
}

func TestDispatcher_DeliversEveryEventOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		const n = 250
		for i := range n {
			add(t, db, "thing.created", int64(i%40))
		}
		ignored := add(t, db, "thing.ignored", 1)
		st := drain(t, f.disp)
		require.Equal(t, n, st.Events, "the recorder's events; the ignored type is none of its")
		require.Equal(t, n, st.Delivered)
		requireOnce(t, db)
		requireSettled(t, db)
		var effects int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM test_effects"), &effects))
		require.EqualValues(t, n, effects)
		require.EqualValues(t, n, f.calls0("recorder"))

		// Nothing more to do, and every event is processed after its creation.
		st = drain(t, f.disp)
		require.Zero(t, st.Events)
		entries, next, err := f.journal.List(context.Background(), events.Filter{}, page.Request{Limit: 500})
		require.NoError(t, err)
		require.Empty(t, next)
		require.Len(t, entries, n+1)
		for _, e := range entries {
			require.Equal(t, events.StatusProcessed, e.Status, "event %d", e.ID)
			require.NotNil(t, e.ProcessedAt)
			require.False(t, e.ProcessedAt.Before(e.CreatedAt), "processed_at %s before created_at %s", e.ProcessedAt, e.CreatedAt)
		}
		e, err := f.journal.Get(context.Background(), ignored)
		require.NoError(t, err)
		require.Equal(t, events.StatusProcessed, e.Status)
		require.Empty(t, e.Deliveries)
	})
}

// A local subscriber's events are part of its effect: a failed delivery,
// rolled back to its savepoint while the rest of the batch commits, leaves
// none behind, and its successful retry writes them once.
func TestDispatcher_FailedLocalDeliveryLeavesNoEvent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var accept atomic.Bool
		follower := events.Subscriber{
			Name: "follower", Types: []string{"thing.created"},
			HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
				if err := events.Add(ctx, tx, events.New{Type: "thing.changed", AggregateType: "things", AggregateID: ev.AggregateID,
					Payload: map[string]any{"after": ev.ID}}); err != nil {
					return err
				}
				if ev.AggregateID == 7 && !accept.Load() {
					return errors.New("refused after writing its event")
				}
				return nil
			},
		}
		f := newFixture(t, db, follower)
		add(t, db, "thing.created", 7)
		add(t, db, "thing.created", 8)
		changed := func() map[int64]int64 {
			var rows []struct{ AggregateID, N int64 }
			require.NoError(t, database.Scan(db.Raw("SELECT aggregate_id, count(*) AS n FROM events WHERE type = 'thing.changed' GROUP BY aggregate_id"), &rows))
			out := map[int64]int64{}
			for _, r := range rows {
				out[r.AggregateID] = r.N
			}
			return out
		}
		// The retry an hour away, made due by hand below.
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BackoffBase: time.Hour, BackoffMax: time.Hour, MaxAttempts: 3, Timeout: 2 * time.Second})
		drain(t, d)
		require.Equal(t, map[int64]int64{8: 1}, changed(), "the failed delivery's event is gone, the other one's stays")

		accept.Store(true)
		require.NoError(t, db.Exec("UPDATE events_deliveries SET next_attempt_at = "+database.Now(db)+" WHERE status = 'retrying'").Error)
		drain(t, d)
		require.Equal(t, map[int64]int64{7: 1, 8: 1}, changed())
	})
}

func TestDispatcher_FailingSubscriberLeavesOthersAlone(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var failures atomic.Int64
		failures.Store(2)
		var mu sync.Mutex
		var seen []int64
		flaky := events.Subscriber{
			Name: "flaky", Types: []string{"thing.created", "thing.changed"},
			Handle: func(ctx context.Context, ev events.Event) error {
				if ev.AggregateID == 7 && failures.Add(-1) >= 0 {
					return fmt.Errorf("callback refused event %d", ev.ID)
				}
				mu.Lock()
				seen = append(seen, ev.ID)
				mu.Unlock()
				return nil
			},
		}
		f := newFixture(t, db, flaky)
		first := add(t, db, "thing.created", 7)
		second := add(t, db, "thing.changed", 7) // held behind the first for "flaky"
		other := add(t, db, "thing.created", 8)
		// Retries an hour away, made due by hand below: what the journal
		// shows after the first pass does not depend on the machine's speed.
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 100, BackoffBase: time.Hour, BackoffMax: time.Hour, MaxAttempts: 3, Timeout: 2 * time.Second})
		st := drain(t, d)
		require.Equal(t, 6, st.Events, "three events, each for the recorder and for flaky")

		e, err := f.journal.Get(context.Background(), first)
		require.NoError(t, err)
		require.Equal(t, events.StatusPending, e.Status)
		byName := map[string]events.Delivery{}
		for _, d := range e.Deliveries {
			byName[d.Subscriber] = d
		}
		require.Equal(t, "processed", byName["recorder"].Status, "the local subscriber is not held back by the failing one")
		require.Equal(t, "retrying", byName["flaky"].Status)
		require.Contains(t, byName["flaky"].LastError, "callback refused")
		require.GreaterOrEqual(t, byName["flaky"].Attempts, 1)

		e2, err := f.journal.Get(context.Background(), second)
		require.NoError(t, err)
		var held events.Delivery
		for _, d := range e2.Deliveries {
			if d.Subscriber == "flaky" {
				held = d
			}
		}
		require.Equal(t, events.StatusHeld, held.Status, "the second event of object 7 waits behind the first for flaky")
		require.NotNil(t, held.BlockedBy)
		require.Equal(t, first, *held.BlockedBy)

		// The retries run after their back-off; the recorder ran once per event.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			require.NoError(t, db.Exec("UPDATE events_deliveries SET next_attempt_at = "+database.Now(db)+" WHERE status = 'retrying'").Error)
			drain(t, d)
			e, err = f.journal.Get(context.Background(), second)
			require.NoError(t, err)
			if e.Status == events.StatusProcessed {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		require.Equal(t, events.StatusProcessed, e.Status)
		require.EqualValues(t, 3, f.calls0("recorder"))
		requireOnce(t, db)
		requireSettled(t, db)
		mu.Lock()
		require.Equal(t, []int64{other, first, second}, seen, "events of one object arrive in order")
		mu.Unlock()
		e, err = f.journal.Get(context.Background(), first)
		require.NoError(t, err)
		require.Equal(t, events.StatusProcessed, e.Status)
		require.False(t, e.ProcessedAt.Before(e.CreatedAt))
	})
}

func TestDispatcher_GivesUpThenAdminRetries(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var broken atomic.Bool
		broken.Store(true)
		f := newFixture(t, db, events.Subscriber{
			Name: "broken", Types: []string{"thing.created"},
			Handle: func(ctx context.Context, ev events.Event) error {
				if broken.Load() {
					return errors.New("down")
				}
				return nil
			},
		})
		id := add(t, db, "thing.created", 1)
		deadline := time.Now().Add(10 * time.Second)
		var e events.Entry
		for time.Now().Before(deadline) {
			drain(t, f.disp)
			var err error
			e, err = f.journal.Get(context.Background(), id)
			require.NoError(t, err)
			if e.Status == events.StatusFailed {
				break
			}
			time.Sleep(3 * time.Millisecond)
		}
		require.Equal(t, events.StatusFailed, e.Status)
		failed, _, err := f.journal.List(context.Background(), events.Filter{Status: events.StatusFailed}, page.Request{Limit: 10})
		require.NoError(t, err)
		require.Len(t, failed, 1)

		_, err = f.journal.Retry(context.Background(), id+1000)
		require.Equal(t, apperr.ENOTFOUND, apperr.Code(err))
		broken.Store(false)
		n, err := f.journal.Retry(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		drain(t, f.disp)
		e, err = f.journal.Get(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, events.StatusProcessed, e.Status)
		_, err = f.journal.Retry(context.Background(), id)
		require.Equal(t, apperr.ECONFLICT, apperr.Code(err), "nothing left to retry")
	})
}

// Two transactions take event ids in one order and commit in the other: the
// dispatcher must not move past the first id while its transaction is in
// flight, or that event would never be delivered.
func TestDispatcher_InterleavedCommitsLoseNothing(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		if database.DialectOf(db) == database.SQLite {
			// One writer at a time: the second transaction waits for the first.
			// The property still holds; exercise it with concurrent writers.
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 25 {
						add(t, db, "thing.created", int64(w*100+i))
					}
				}()
			}
			wg.Wait()
			drain(t, f.disp)
			require.EqualValues(t, 100, f.calls0("recorder"))
			return
		}
		ctx := context.Background()
		// An earlier write gives B its xid before A takes its id, the hard case.
		txB := db.Begin()
		require.NoError(t, txB.Exec("INSERT INTO test_effects (event_id, subscriber) VALUES (-1, 'owner-data')").Error)
		txA := db.Begin()
		t.Cleanup(func() { txA.Rollback(); txB.Rollback() })
		// Each event is sent at once (LastEventID flushes it), not with its commit.
		require.NoError(t, events.Add(ctx, txA, events.New{Type: "thing.created", AggregateType: "things", AggregateID: 1, Payload: map[string]any{}}))
		idA, err := dbtest.LastEventID(txA)
		require.NoError(t, err)
		require.NoError(t, events.Add(ctx, txB, events.New{Type: "thing.created", AggregateType: "things", AggregateID: 2, Payload: map[string]any{}}))
		idB, err := dbtest.LastEventID(txB)
		require.NoError(t, err)
		require.Less(t, idA, idB)
		require.NoError(t, txB.Commit().Error)

		st, err := f.disp.RunOnce(ctx)
		require.NoError(t, err)
		require.True(t, st.Lagging, "B is visible above the horizon: %+v", st)
		require.Zero(t, st.Delivered, "nothing past A's id while A is in flight")

		require.NoError(t, txA.Commit().Error)
		drain(t, f.disp)
		var got []int64
		require.NoError(t, database.Scan(db.Raw("SELECT event_id FROM test_effects WHERE subscriber = 'recorder' ORDER BY event_id"), &got))
		require.Equal(t, []int64{idA, idB}, got)
	})
}

func TestDispatcher_ConcurrentWritersAndDispatchers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		other := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 7})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, d := range []*events.Dispatcher{f.disp, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					_, err := d.RunOnce(ctx)
					if err != nil && ctx.Err() == nil {
						t.Errorf("dispatch: %v", err)
						return
					}
				}
			}()
		}
		var writers sync.WaitGroup
		const perWriter = 60
		for w := range 3 {
			writers.Add(1)
			go func() {
				defer writers.Done()
				for i := range perWriter {
					add(t, db, "thing.created", int64(w*1000+i%5))
				}
			}()
		}
		writers.Wait()
		// Wait for committed effects, not calls: a call counted in a batch
		// whose commit is still to come is not yet delivered.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			var done int64
			require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM test_effects"), &done))
			if done >= 3*perWriter {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		wg.Wait()
		var n, distinct int64
		require.NoError(t, db.Raw("SELECT count(*), count(DISTINCT event_id) FROM test_effects").Row().Scan(&n, &distinct))
		if n != 3*perWriter {
			// Say where the missing ones are: recorded deliveries, lanes.
			var state []map[string]any
			require.NoError(t, database.Scan(db.Raw(`SELECT 'delivery' AS what, event_id, subscriber, status, attempts, last_error FROM events_deliveries
WHERE status <> 'processed'`), &state))
			var lanes []map[string]any
			require.NoError(t, database.Scan(db.Raw(`SELECT l.subscriber, l.partition, l.position, l.owner, (SELECT max(id) FROM events e WHERE e.partition = l.partition) AS last
FROM events_lanes l WHERE l.subscriber = 'recorder'`), &lanes))
			t.Logf("open deliveries: %v\nlanes: %v", state, lanes)
		}
		require.EqualValues(t, 3*perWriter, n)
		require.EqualValues(t, n, distinct)
		requireOnce(t, db)
		requireSettled(t, db)
	})
}
