package events

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// TestCompleter runs the completer's records against both drivers.
func TestCompleter(t *testing.T) {
	exercise(t, []driverCase{
		{"RetryFence", testRetryFence},
		{"RetryRecordedMeanwhile", testRetryRecordedMeanwhile},
		{"RetryFailureRecords", testRetryFailureRecords},
	})
}

// completedRetry is a retry's completion with the completer that commits it.
type completedRetry struct {
	retryCompletion
	cp *completer
}

func (c completedRetry) begin(tx *gorm.DB, hopeful bool) error {
	return c.retryCompletion.begin(c.cp, tx, hopeful)
}

func (c completedRetry) finish(tx *gorm.DB, outcomes []outcome, hopeful bool) error {
	return c.retryCompletion.finish(c.cp, tx, outcomes, hopeful)
}

// retryOf is the completion of a retry of the fixture's first event by an
// outside subscriber, fenced as owner at the lane's position 0.
func retryOf(f laneFixture, owner string, attempts int) completedRetry {
	ev := &Event{ID: f.ids[0], AggregateType: "things", AggregateID: 1}
	return completedRetry{retryCompletion: retryCompletion{
		s:     &Subscriber{Name: "s", Handle: func(context.Context, Event) error { return nil }},
		fence: laneMove{key: laneKey{"s", f.part}, owner: owner},
		ev:    ev,
		rec:   recorded{attempts: attempts},
	}, cp: &completer{sql: f.drv}}
}

func deliveryStatus(t *testing.T, db *gorm.DB, id int64) (status string, attempts int) {
	t.Helper()
	var row struct {
		Status   string
		Attempts int
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT status, attempts FROM events_deliveries WHERE event_id = ? AND subscriber = 's'`, id), &row))
	return row.Status, row.Attempts
}

// An outside subscriber's successful retry records it in the fence's own
// statement: with the lease gone to another dispatcher, nothing is recorded
// and the completer says the lease is lost; with the lease, it is recorded.
func testRetryFence(t *testing.T, db *gorm.DB, drv driver) {
	f := newLaneFixture(t, db, drv)
	f.lease(t, "other", time.Hour)
	addDelivery(t, db, drv, f.ids[0], f.part, "s", StatusRetrying, nil)

	c := retryOf(f, "me", 1)
	err := db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, c.begin(tx, true))
		return c.finish(tx, nil, true)
	})
	require.ErrorIs(t, err, errLeaseLost)
	status, attempts := deliveryStatus(t, db, f.ids[0])
	require.Equal(t, StatusRetrying, status, "a fenced-off retry records nothing")
	require.Equal(t, 1, attempts)

	f.lease(t, "me", time.Hour)
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, c.begin(tx, true))
		return c.finish(tx, nil, true)
	}))
	status, attempts = deliveryStatus(t, db, f.ids[0])
	require.Equal(t, StatusProcessed, status)
	require.Equal(t, 2, attempts)
}

// A retry whose row another recording changed since it was read (its
// attempts differ) records nothing and says so, on the path of a local
// subscriber's retry (the fence first, then the record).
func testRetryRecordedMeanwhile(t *testing.T, db *gorm.DB, drv driver) {
	f := newLaneFixture(t, db, drv)
	f.lease(t, "me", time.Hour)
	addDelivery(t, db, drv, f.ids[0], f.part, "s", StatusRetrying, nil)

	c := retryOf(f, "me", 0) // read as 0 attempts; the row says 1
	err := db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, c.begin(tx, false))
		return c.finish(tx, nil, false)
	})
	require.ErrorIs(t, err, errLeaseLost)
	status, attempts := deliveryStatus(t, db, f.ids[0])
	require.Equal(t, StatusRetrying, status)
	require.Equal(t, 1, attempts)

	c = retryOf(f, "me", 1)
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, c.begin(tx, false))
		return c.finish(tx, nil, false)
	}))
	status, _ = deliveryStatus(t, db, f.ids[0])
	require.Equal(t, StatusProcessed, status)
}

// A retry that fails again is recorded over the row as it was read: one
// attempt more, its error, an entry in the failure history, and the
// deliveries held behind the same object pointed at it.
func testRetryFailureRecords(t *testing.T, db *gorm.DB, drv driver) {
	f := newLaneFixture(t, db, drv)
	f.lease(t, "me", time.Hour)
	addDelivery(t, db, drv, f.ids[0], f.part, "s", StatusRetrying, nil)
	addDelivery(t, db, drv, f.ids[1], f.part, "s", StatusHeld, nil)

	c := retryOf(f, "me", 1)
	var opt DispatcherOptions
	opt.defaults(drv.maxWorkers())
	c.cp.db, c.cp.rules = db, rulesOf(opt)
	boom := errors.New("boom")
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, c.begin(tx, false))
		return c.finish(tx, []outcome{{ev: c.ev, status: StatusRetrying, err: boom}}, false)
	}))
	status, attempts := deliveryStatus(t, db, f.ids[0])
	require.Equal(t, StatusRetrying, status)
	require.Equal(t, 2, attempts)
	var history []string
	require.NoError(t, database.Scan(db.Raw(`SELECT error FROM events_delivery_failures WHERE event_id = ? AND subscriber = 's' ORDER BY seq`, f.ids[0]), &history))
	require.Equal(t, []string{"boom"}, history)
	var blockedBy *int64
	require.NoError(t, database.Scan(db.Raw(`SELECT blocked_by FROM events_deliveries WHERE event_id = ? AND subscriber = 's'`, f.ids[1]), &blockedBy))
	require.NotNil(t, blockedBy, "the held delivery points at the failed retry")
	require.Equal(t, f.ids[0], *blockedBy)
}
