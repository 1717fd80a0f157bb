package events

// The conformance cases of the deliveries' statements (driver_deliveries.go):
// what the completer records and what a lane reads back to hold an
// object's later events and to retry (TestDeliveries).

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// TestDeliveries runs the cases against both drivers.
func TestDeliveries(t *testing.T) {
	exercise(t, []driverCase{
		{"InsertDeliveries", testInsertDeliveries},
		{"OpenObjects", testOpenObjects},
		{"DueRetries", testDueRetries},
		{"HeldBehind", testHeldBehind},
		{"RetryRecords", testRetryRecords},
		{"FencedRecord", testFencedRecord},
	})
}

// deliveryOn records a delivery of event id to sub, about object
// things/obj, in the partition part.
func deliveryOn(t *testing.T, db *gorm.DB, drv driver, id int64, part int, sub string, obj int64, status string, next time.Time) {
	t.Helper()
	var at any
	if !next.IsZero() {
		at = sqlBaseOf(drv).timeArg(next)
	}
	sqlExec(t, db, `INSERT INTO events_deliveries (event_id, subscriber, partition, aggregate_type, aggregate_id, status, attempts, next_attempt_at)
VALUES (?, ?, ?, 'things', ?, ?, 1, ?)`, id, sub, part, obj, status, at)
}

// thing is the event id about things/1, as the completer hands it over.
func thing(id int64) *Event { return &Event{ID: id, AggregateType: "things", AggregateID: 1} }

// A batch's exceptions, each as it is: a failure to retry (its next
// attempt in retryIn), one held behind blockedBy, one failed for good
// (no next attempt), with the first entry of each failure's history.
func testInsertDeliveries(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	ids, part := writeEvents(t, db, times("a", 3)...)
	status := 502
	rows := []deliveryRow{
		{ev: thing(ids[0]), sub: "s", part: part, status: StatusRetrying, attempts: 1, lastError: "refused", retryIn: time.Hour, deferredMs: 1500},
		{ev: thing(ids[1]), sub: "s", part: part, status: StatusHeld, blockedBy: ids[0]},
		{ev: thing(ids[2]), sub: "s", part: part, status: StatusFailed, attempts: 1, lastError: "gone"},
	}
	first := []failureRow{{evID: ids[0], sub: "s", msg: "refused", httpStatus: &status, spent: true}, {evID: ids[2], sub: "s", msg: "gone", spent: true}}
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error { return drv.insertDeliveries(tx, rows, first) }))
	require.NoError(t, drv.insertDeliveries(db, nil, nil), "nothing to record")

	got, err := drv.deliveries(ctx, db, ids)
	require.NoError(t, err)
	retrying := got[ids[0]]["s"]
	require.Equal(t, StatusRetrying, retrying.Status)
	require.Equal(t, 1, retrying.Attempts)
	require.Equal(t, "refused", retrying.LastError)
	require.NotNil(t, retrying.NextAttemptAt)
	require.WithinDuration(t, time.Now().Add(time.Hour), *retrying.NextAttemptAt, time.Minute, "retryIn from now")
	require.Nil(t, retrying.BlockedBy)
	held := got[ids[1]]["s"]
	require.Equal(t, StatusHeld, held.Status)
	require.Equal(t, &ids[0], held.BlockedBy)
	require.Nil(t, held.NextAttemptAt)
	failed := got[ids[2]]["s"]
	require.Equal(t, StatusFailed, failed.Status)
	require.Equal(t, "gone", failed.LastError)
	require.Nil(t, failed.NextAttemptAt, "no attempt after a failure for good")
	var deferred []int64
	require.NoError(t, database.Scan(db.Raw(`SELECT deferred_ms FROM events_deliveries ORDER BY event_id`), &deferred))
	require.Equal(t, []int64{1500, 0, 0}, deferred)
	var parts []int
	require.NoError(t, database.Scan(db.Raw(`SELECT DISTINCT partition FROM events_deliveries`), &parts))
	require.Equal(t, []int{part}, parts)

	fs, err := drv.failures(ctx, db, ids)
	require.NoError(t, err)
	require.Len(t, fs, 2)
	require.Equal(t, ids[0], fs[0].eventID)
	require.Equal(t, "refused", fs[0].Error)
	require.Equal(t, &status, fs[0].HTTPStatus)
	require.True(t, fs[0].Spent)
	require.Equal(t, ids[2], fs[1].eventID)
	require.Nil(t, fs[1].HTTPStatus)
}

// openObjects gives each object of the lane its oldest open delivery; a
// processed one, another subscriber's and another partition's do not count.
func testOpenObjects(t *testing.T, db *gorm.DB, drv driver) {
	ids, part := writeEvents(t, db, times("a", 6)...)
	other := (part + 1) % Partitions
	deliveryOn(t, db, drv, ids[0], part, "s", 1, StatusProcessed, time.Time{})
	deliveryOn(t, db, drv, ids[2], part, "s", 1, StatusHeld, time.Time{})
	deliveryOn(t, db, drv, ids[1], part, "s", 1, StatusRetrying, time.Now())
	deliveryOn(t, db, drv, ids[3], part, "s", 2, StatusFailed, time.Time{})
	deliveryOn(t, db, drv, ids[3], part, "o", 3, StatusRetrying, time.Now())
	deliveryOn(t, db, drv, ids[4], other, "s", 4, StatusRetrying, time.Now())
	got, err := drv.openObjects(context.Background(), db, laneKey{"s", part})
	require.NoError(t, err)
	require.Equal(t, map[objectKey]int64{{"things", 1}: ids[1], {"things", 2}: ids[3]}, got)
}

// dueRetries reads the lane's retries whose time has come, in order, with
// their events, what their rows say of them, and whether deliveries are
// held behind them; at most limit.
func testDueRetries(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	ids, part := writeEvents(t, db, times("a", 4)...)
	past, future := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	deliveryOn(t, db, drv, ids[0], part, "s", 1, StatusRetrying, past)
	sqlExec(t, db, `UPDATE events_deliveries SET attempts = 2, deferred_ms = 1500 WHERE event_id = ?`, ids[0])
	deliveryOn(t, db, drv, ids[1], part, "s", 1, StatusHeld, time.Time{})
	deliveryOn(t, db, drv, ids[2], part, "s", 2, StatusRetrying, future)
	deliveryOn(t, db, drv, ids[3], part, "s", 3, StatusRetrying, past)
	deliveryOn(t, db, drv, ids[3], part, "o", 3, StatusRetrying, past)

	dues, err := drv.dueRetries(ctx, db, laneKey{"s", part}, 10)
	require.NoError(t, err)
	require.Len(t, dues, 2, "the one not due yet and another subscriber's are left out")
	require.Equal(t, ids[0], dues[0].ev.ID)
	require.Equal(t, "a", dues[0].ev.Type)
	require.Equal(t, "things", dues[0].ev.AggregateType)
	require.Equal(t, recorded{attempts: 2, deferred: 1500 * time.Millisecond}, dues[0].rec)
	require.True(t, dues[0].held, "a delivery of its object is held behind it")
	require.Equal(t, ids[3], dues[1].ev.ID)
	require.Equal(t, recorded{attempts: 1}, dues[1].rec)
	require.False(t, dues[1].held)

	dues, err = drv.dueRetries(ctx, db, laneKey{"s", part}, 1)
	require.NoError(t, err)
	require.Len(t, dues, 1)
	require.Equal(t, ids[0], dues[0].ev.ID)
}

// heldBehind reads the events held for a subscriber behind an object's
// failure, in order, and no other.
func testHeldBehind(t *testing.T, db *gorm.DB, drv driver) {
	ids, part := writeEvents(t, db, times("a", 5)...)
	deliveryOn(t, db, drv, ids[0], part, "s", 1, StatusRetrying, time.Now())
	deliveryOn(t, db, drv, ids[3], part, "s", 1, StatusHeld, time.Time{})
	deliveryOn(t, db, drv, ids[1], part, "s", 1, StatusHeld, time.Time{})
	deliveryOn(t, db, drv, ids[2], part, "s", 2, StatusHeld, time.Time{})
	deliveryOn(t, db, drv, ids[4], part, "o", 1, StatusHeld, time.Time{})
	held, err := drv.heldBehind(context.Background(), db, "s", *thing(ids[0]))
	require.NoError(t, err)
	got := make([]int64, 0, len(held))
	for _, ev := range held {
		got = append(got, ev.ID)
	}
	require.Equal(t, []int64{ids[1], ids[3]}, got)
	require.Equal(t, "a", held[0].Type)
}

// A retried delivery's records, each over the row as it was read (its
// attempts and deferral), so that a second recording of one attempt
// changes nothing: its failed attempt, its failures' history bounded to
// the latest keep, the held deliveries pointed at it, its success.
func testRetryRecords(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	ids, part := writeEvents(t, db, times("a", 3)...)
	deliveryOn(t, db, drv, ids[0], part, "s", 1, StatusRetrying, time.Now())
	deliveryOn(t, db, drv, ids[1], part, "s", 1, StatusHeld, time.Time{})
	deliveryOn(t, db, drv, ids[2], part, "s", 1, StatusHeld, time.Time{})
	state := func() Delivery {
		got, err := drv.deliveries(ctx, db, []int64{ids[0]})
		require.NoError(t, err)
		return got[ids[0]]["s"]
	}

	fail := retryFailure{evID: ids[0], sub: "s", status: StatusRetrying, spent: 1, msg: "again", retryIn: time.Minute, newDeferredMs: 300}
	n, err := drv.retryFailedAttempt(db, fail)
	require.NoError(t, err)
	require.Zero(t, n, "read as 0 attempts, the row says 1")
	fail.attempts = 1
	n, err = drv.retryFailedAttempt(db, fail)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	d := state()
	require.Equal(t, StatusRetrying, d.Status)
	require.Equal(t, 2, d.Attempts)
	require.Equal(t, "again", d.LastError)
	require.WithinDuration(t, time.Now().Add(time.Minute), *d.NextAttemptAt, 30*time.Second)
	fail.status, fail.attempts, fail.deferredMs = StatusFailed, 2, 300
	n, err = drv.retryFailedAttempt(db, fail)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	d = state()
	require.Equal(t, StatusFailed, d.Status)
	require.Nil(t, d.NextAttemptAt, "failed for good: no next attempt")
	sqlExec(t, db, `UPDATE events_deliveries SET status = 'retrying' WHERE event_id = ?`, ids[0])

	http := 503
	for _, f := range []failureRow{{msg: "f1", spent: true}, {msg: "f2", httpStatus: &http}, {msg: "f3", spent: true}} {
		f.evID, f.sub = ids[0], "s"
		require.NoError(t, drv.addFailure(db, f, 2))
	}
	fs, err := drv.failures(ctx, db, []int64{ids[0]})
	require.NoError(t, err)
	require.Len(t, fs, 2, "the latest two are kept")
	require.Equal(t, "f2", fs[0].Error)
	require.Equal(t, &http, fs[0].HTTPStatus)
	require.False(t, fs[0].Spent)
	require.Equal(t, "f3", fs[1].Error)

	require.NoError(t, drv.pointHeldAt(db, "s", thing(ids[1])))
	var blocked []struct{ BlockedBy sql.NullInt64 }
	require.NoError(t, database.Scan(db.Raw(`SELECT blocked_by FROM events_deliveries WHERE status = 'held' ORDER BY event_id`), &blocked))
	require.Len(t, blocked, 2)
	require.False(t, blocked[0].BlockedBy.Valid, "a held delivery before the event is not pointed at it")
	require.Equal(t, sql.NullInt64{Int64: ids[1], Valid: true}, blocked[1].BlockedBy, "the later held delivery of its object is")

	args := func(attempts int, deferred int64) map[string]any {
		return map[string]any{"ev": ids[0], "sub": "s", "attempts": attempts, "deferred": deferred}
	}
	n, err = drv.retrySucceeded(db, args(1, 300))
	require.NoError(t, err)
	require.Zero(t, n, "read as 1 attempt, the row says 3")
	n, err = drv.retrySucceeded(db, args(3, 300))
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	d = state()
	require.Equal(t, StatusProcessed, d.Status)
	require.Equal(t, 4, d.Attempts)
	require.Empty(t, d.LastError)
	require.Nil(t, d.NextAttemptAt)
}

// fenced runs an update only while the lane is the dispatcher's and where
// it was: an outside subscriber's successful retry is recorded in the
// fence's own statement (retrySucceededSQL).
func testFencedRecord(t *testing.T, db *gorm.DB, drv driver) {
	f := newLaneFixture(t, db, drv)
	deliveryOn(t, db, drv, f.ids[0], f.part, "s", 1, StatusRetrying, time.Now())
	fence := laneMove{key: laneKey{"s", f.part}, owner: "me", lease: time.Hour}
	record := func(m laneMove) int64 {
		// The fence's arguments and the record's, as retryCompletion's.
		args := moveArgs(m)
		args["ev"], args["attempts"], args["deferred"] = f.ids[0], 1, 0
		var n int64
		require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
			var err error
			n, err = drv.fenced(tx, m, drv.retrySucceededSQL(), args)
			return err
		}))
		return n
	}
	f.lease(t, "other", time.Hour)
	require.Zero(t, record(fence), "another dispatcher holds the lane")
	f.lease(t, "me", time.Hour)
	moved := fence
	moved.pos, moved.next = f.ids[0], f.ids[0]
	require.Zero(t, record(moved), "the lane is not where the fence says")
	status, _ := deliveryStatus(t, db, f.ids[0])
	require.Equal(t, StatusRetrying, status, "nothing recorded")
	require.Equal(t, int64(1), record(fence))
	status, attempts := deliveryStatus(t, db, f.ids[0])
	require.Equal(t, StatusProcessed, status)
	require.Equal(t, 2, attempts)
	pos, owner := f.lane(t)
	require.Zero(t, pos, "the fence moves no lane")
	require.Equal(t, "me", *owner)
}
