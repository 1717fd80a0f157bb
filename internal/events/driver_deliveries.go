package events

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
)

// deliveryStatements read and write the deliveries that did not simply
// succeed in their batch (events_deliveries) and their failures' history
// (events_delivery_failures): what the completer records and what the lanes
// read back to hold an object's later events and to retry.
type deliveryStatements interface {
	deliveryRecords
	deliveryReads
}

// deliveryRecords are what the completer writes of the deliveries.
type deliveryRecords interface {
	// insertDeliveries writes a batch's exceptions for one subscriber, and
	// the first entry of each failure's history.
	insertDeliveries(tx *gorm.DB, rows []deliveryRow, first []failureRow) error
	// retrySucceeded marks a retried delivery processed, as it was read
	// (retrySucceededArgs); it returns the rows it changed.
	retrySucceeded(tx *gorm.DB, args map[string]any) (int64, error)
	// retrySucceededSQL is retrySucceeded's statement, to run in the lane
	// move's statement (fenced): @ev, @sub, @attempts and @deferred name
	// the delivery.
	retrySucceededSQL() string
	// retryFailedAttempt records a retried delivery's failed attempt, as it was
	// read; it returns the rows it changed.
	retryFailedAttempt(tx *gorm.DB, r retryFailure) (int64, error)
	// addFailure adds a failed attempt to the delivery's history and drops
	// what is older than its latest keep.
	addFailure(tx *gorm.DB, f failureRow, keep int) error
	// pointHeldAt makes the deliveries still held behind ev's object point
	// at ev.
	pointHeldAt(tx *gorm.DB, sub string, ev *Event) error
}

// deliveryReads are what a lane reads back of its deliveries.
type deliveryReads interface {
	// openObjects returns, per object of the lane, its oldest delivery that
	// is still open (retrying, held or failed).
	openObjects(ctx context.Context, db *gorm.DB, k laneKey) (map[objectKey]int64, error)
	// dueRetries reads the lane's retries whose time has come, with their
	// events, in order, at most limit.
	dueRetries(ctx context.Context, db *gorm.DB, k laneKey, limit int) ([]dueRetry, error)
	// heldBehind reads the events of ev's object held for sub, in order.
	heldBehind(ctx context.Context, db *gorm.DB, sub string, ev Event) ([]Event, error)
}

// deliveryRow is one exception of a batch: a failed delivery (status
// retrying, tried again in retryIn, or failed) or one held behind blockedBy.
type deliveryRow struct {
	ev         *Event
	sub        string
	part       int
	status     string
	attempts   int
	lastError  string
	blockedBy  int64         // held
	retryIn    time.Duration // retrying
	deferredMs int64
}

// failureRow is one entry of a delivery's failure history.
type failureRow struct {
	evID       int64
	sub        string
	msg        string
	httpStatus *int
	spent      bool
}

// retryFailure is a retried delivery's failed attempt, to be recorded over
// the row as it was read (attempts, deferredMs).
type retryFailure struct {
	evID          int64
	sub           string
	status        string
	spent         int
	msg           string
	retryIn       time.Duration // status retrying: the next attempt's delay
	newDeferredMs int64
	attempts      int
	deferredMs    int64
}

func (sqlBase) openObjects(ctx context.Context, db *gorm.DB, k laneKey) (map[objectKey]int64, error) {
	rows, err := db.WithContext(ctx).Raw(`SELECT aggregate_type, aggregate_id, min(event_id) FROM events_deliveries
WHERE partition = ? AND subscriber = ? AND status <> 'processed' GROUP BY aggregate_type, aggregate_id`, k.part, k.sub).Rows()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := map[objectKey]int64{}
	for rows.Next() {
		var o objectKey
		var id int64
		if err := rows.Scan(&o.aggType, &o.aggID, &id); err != nil {
			return nil, err
		}
		out[o] = id
	}
	return out, rows.Err()
}

// nextAttempt is the SQL of the next attempt's time of a delivery left in
// status after a failure: none for one that failed for good.
func (b sqlBase) nextAttempt(status string, in time.Duration) string {
	if status == StatusFailed {
		return "NULL"
	}
	return b.nowPlus(in)
}

func (b sqlBase) insertDeliveries(tx *gorm.DB, rows []deliveryRow, first []failureRow) error {
	if len(rows) == 0 {
		return nil
	}
	var sb strings.Builder
	args := make([]any, 0, 9*len(rows))
	sb.WriteString(`INSERT INTO events_deliveries (event_id, subscriber, partition, aggregate_type, aggregate_id, status, attempts, last_error, blocked_by, next_attempt_at, processed_at, deferred_ms) VALUES `)
	for i, r := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		if r.status == StatusHeld {
			sb.WriteString("(?, ?, ?, ?, ?, 'held', 0, '', ?, NULL, NULL, 0)")
			args = append(args, r.ev.ID, r.sub, r.part, r.ev.AggregateType, r.ev.AggregateID, r.blockedBy)
			continue
		}
		sb.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, NULL, " + b.nextAttempt(r.status, r.retryIn) + ", NULL, ?)")
		args = append(args, r.ev.ID, r.sub, r.part, r.ev.AggregateType, r.ev.AggregateID, r.status, r.attempts, r.lastError, r.deferredMs)
	}
	if err := tx.Exec(sb.String(), args...).Error; err != nil {
		return err
	}
	if len(first) == 0 {
		return nil
	}
	var hist strings.Builder
	histArgs := make([]any, 0, 5*len(first))
	hist.WriteString(`INSERT INTO events_delivery_failures (event_id, subscriber, seq, error, http_status, spent) VALUES `)
	for i, f := range first {
		if i > 0 {
			hist.WriteString(", ")
		}
		hist.WriteString("(?, ?, 1, ?, ?, ?)")
		histArgs = append(histArgs, f.evID, f.sub, f.msg, f.httpStatus, f.spent)
	}
	return tx.Exec(hist.String(), histArgs...).Error
}

// retrySucceededSQL marks a retried delivery processed; @ev, @sub,
// @attempts and @deferred name it as it was read.
func (b sqlBase) retrySucceededSQL() string {
	return `UPDATE events_deliveries SET status = 'processed', attempts = attempts + 1, last_error = '', blocked_by = NULL,
next_attempt_at = NULL, processed_at = ` + b.now() + `, updated_at = ` + b.now() + `
WHERE event_id = @ev AND subscriber = @sub AND status IN ('retrying', 'held') AND attempts = @attempts AND deferred_ms = @deferred`
}

func (b sqlBase) retrySucceeded(tx *gorm.DB, args map[string]any) (int64, error) {
	res := tx.Exec(b.retrySucceededSQL(), args)
	return res.RowsAffected, res.Error
}

func (b sqlBase) retryFailedAttempt(tx *gorm.DB, r retryFailure) (int64, error) {
	res := tx.Exec(`UPDATE events_deliveries SET status = ?, attempts = attempts + ?, last_error = ?, blocked_by = NULL,
next_attempt_at = `+b.nextAttempt(r.status, r.retryIn)+`, deferred_ms = ?, updated_at = `+b.now()+`
WHERE event_id = ? AND subscriber = ? AND status IN ('retrying', 'held') AND attempts = ? AND deferred_ms = ?`,
		r.status, r.spent, r.msg, r.newDeferredMs, r.evID, r.sub, r.attempts, r.deferredMs)
	return res.RowsAffected, res.Error
}

func (sqlBase) addFailure(tx *gorm.DB, f failureRow, keep int) error {
	if e := tx.Exec(`INSERT INTO events_delivery_failures (event_id, subscriber, seq, error, http_status, spent)
SELECT ?, ?, coalesce(max(seq), 0) + 1, ?, ?, ? FROM events_delivery_failures WHERE event_id = ? AND subscriber = ?`,
		f.evID, f.sub, f.msg, f.httpStatus, f.spent, f.evID, f.sub).Error; e != nil {
		return e
	}
	return tx.Exec(`DELETE FROM events_delivery_failures WHERE event_id = ? AND subscriber = ? AND seq <= (
SELECT max(seq) FROM events_delivery_failures WHERE event_id = ? AND subscriber = ?) - ?`, f.evID, f.sub, f.evID, f.sub, keep).Error
}

func (sqlBase) pointHeldAt(tx *gorm.DB, sub string, ev *Event) error {
	return tx.Exec(`UPDATE events_deliveries SET blocked_by = ? WHERE subscriber = ? AND aggregate_type = ? AND aggregate_id = ?
AND status = 'held' AND event_id > ?`, ev.ID, sub, ev.AggregateType, ev.AggregateID, ev.ID).Error
}

func (b sqlBase) dueRetries(ctx context.Context, db *gorm.DB, k laneKey, limit int) ([]dueRetry, error) {
	var dues []dueRetry
	var du dueRetry
	var deferredMs int64
	err := scanEvents(db.WithContext(ctx).Raw(`SELECT d.attempts, d.deferred_ms,
  EXISTS (SELECT 1 FROM events_deliveries h WHERE h.subscriber = d.subscriber AND h.aggregate_type = d.aggregate_type
    AND h.aggregate_id = d.aggregate_id AND h.status = 'held') AS held, `+eventColumns+`
FROM events_deliveries d JOIN events e ON e.id = d.event_id
WHERE d.subscriber = ? AND d.partition = ? AND d.status = 'retrying' AND d.next_attempt_at <= `+b.now()+`
ORDER BY d.event_id LIMIT ?`, k.sub, k.part, limit),
		[]any{&du.rec.attempts, &deferredMs, &du.held}, func(ev Event) {
			du.ev, du.rec.deferred = ev, time.Duration(deferredMs)*time.Millisecond
			dues = append(dues, du)
		})
	return dues, err
}

func (sqlBase) heldBehind(ctx context.Context, db *gorm.DB, sub string, ev Event) ([]Event, error) {
	var held []Event
	err := scanEvents(db.WithContext(ctx).Raw(`SELECT `+eventColumns+`
FROM events_deliveries d JOIN events e ON e.id = d.event_id
WHERE d.subscriber = ? AND d.aggregate_type = ? AND d.aggregate_id = ? AND d.status = 'held' ORDER BY d.event_id`,
		sub, ev.AggregateType, ev.AggregateID), nil, func(ev Event) { held = append(held, ev) })
	return held, err
}
