package events_test

// What a pass costs in statements: a lane running while a pass sees its
// events is not claimed again, and a retry costs no more than a batch of
// one.

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

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

func (c *statementCounter) Info(context.Context, string, ...any) {}

func (c *statementCounter) Warn(context.Context, string, ...any) {}

func (c *statementCounter) Error(context.Context, string, ...any) {}

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
		// A pass, counted until what it was for is done and the lane
		// lingers again, done with it.
		pass := func(until func() bool) int64 {
			t.Helper()
			count.n.Store(0)
			lingered := events.LanesLingered(d)
			_, err := d.Start(ctx, ctx)
			require.NoError(t, err)
			require.Eventually(t, until, 10*time.Second, time.Millisecond)
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			require.NoError(t, events.WaitLanesLingered(wctx, d, lingered+1), "the lane lingers again")
			return count.n.Load()
		}
		// The first delivery fails; its lane lingers with its lease.
		add(t, db, "thing.created", 1)
		pass(func() bool { return deliveries("retrying") == 1 })
		failing.Store(false)
		// The retry falls due by the database's clock, which set its time.
		require.Eventually(t, func() bool {
			var n int64
			require.NoError(t, database.Scan(db.Raw(`SELECT count(*) FROM events_deliveries WHERE subscriber = 'ledger' AND status = 'retrying'
AND next_attempt_at <= `+database.Now(db)), &n))
			return n == 1
		}, 10*time.Second, time.Millisecond)
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
