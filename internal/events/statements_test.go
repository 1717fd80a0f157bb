package events_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

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
			events.DispatcherOptions{Linger: time.Hour, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond})
		ctx, stop := context.WithCancel(context.Background())
		t.Cleanup(func() { stop(); d.Wait() })
		_, err := d.RunOnce(ctx) // registers the subscriber: its lanes start at the journal's end
		require.NoError(t, err)
		effectsOf := func() int64 {
			var n int64
			require.NoError(t, db.Raw(`SELECT count(*) FROM test_effects WHERE subscriber = 'ledger'`).Scan(&n).Error)
			return n
		}
		deliveries := func(status string) int64 {
			var n int64
			require.NoError(t, db.Raw(`SELECT count(*) FROM events_deliveries WHERE subscriber = 'ledger' AND status = ?`, status).Scan(&n).Error)
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
		requireOnce(t, db)
	})
}
