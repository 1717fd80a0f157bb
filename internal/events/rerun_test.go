package events_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// countClaims makes the database count the claims of lanes: every time a
// lane's lease goes from nobody to a dispatcher, whichever statement took it.
func countClaims(t *testing.T, db *gorm.DB) func() int64 {
	t.Helper()
	for _, stmt := range []string{
		`CREATE TABLE test_claims (subscriber text, partition int)`,
		`CREATE FUNCTION test_count_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO test_claims VALUES (NEW.subscriber, NEW.partition); RETURN NEW; END $$`,
		`CREATE TRIGGER test_count_claim AFTER UPDATE ON events_lanes FOR EACH ROW
WHEN (OLD.owner IS NULL AND NEW.owner IS NOT NULL) EXECUTE FUNCTION test_count_claim()`,
	} {
		require.NoError(t, db.Exec(stmt).Error)
	}
	return func() int64 {
		var n int64
		require.NoError(t, db.Raw(`SELECT count(*) FROM test_claims`).Scan(&n).Error)
		return n
	}
}

// TestLanes_PassWhileRunning: a pass that sees a lane's events while the
// lane is still dispatching them neither claims it nor makes it look again
// afterwards, since the lane has looked up to those events itself; nor does
// a pass that sees events of other partitions only.
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
	claims := countClaims(t, db)
	d := events.NewDispatcher(db, reg, events.DispatcherOptions{})
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
	// An event of another partition: its own lane is claimed, and the
	// running lane, which has nothing new, is not asked to look again.
	other := int64(2)
	for events.PartitionOf("things", other) == events.PartitionOf("things", 1) {
		other++
	}
	add(t, db, "thing.created", other)
	_, err = d.Start(ctx, ctx)
	require.NoError(t, err)
	close(release)
	d.Wait()

	require.EqualValues(t, 2, calls.Load())
	require.EqualValues(t, 2, claims(), "the lane was claimed again after it had dispatched what the later passes saw")
	st, err := d.RunOnce(ctx)
	require.NoError(t, err)
	require.Zero(t, st.Events, "nothing is left to dispatch")
}
