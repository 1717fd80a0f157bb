package events_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

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
