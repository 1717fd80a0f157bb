package events

import (
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// completion is what the delivery path (deliverSet) commits for a set of
// deliveries, in the transaction of a local subscriber's effects or after
// an outside subscriber's calls: the completer. Each lane's work has one:
// a batch (batchCompletion) or one retried delivery (retryCompletion).
type completion interface {
	// begin is the transaction's first statement, before any call of a
	// local subscriber: the fence, which fails with errLeaseLost when this
	// dispatcher no longer holds the lane's lease or the lane has moved (a
	// replay), and locks the lane's row until the commit. hopeful says
	// that the deliveries are expected to succeed (a local subscriber's
	// fast path) or have (an outside one's calls, all successful); a
	// retry of an outside subscriber then leaves its fence to finish, in
	// the statement that records the success, as its transaction runs no
	// effect.
	begin(tx *gorm.DB, hopeful bool) error
	// finish records the outcomes; with hopeful, there are none but held
	// ones.
	finish(tx *gorm.DB, outcomes []outcome, hopeful bool) error
}

// batchCompletion commits a lane's batch: the lane moved past it, with its
// batch's row (the fence, moveLane), and the deliveries of its exceptions.
type batchCompletion struct {
	d    *Dispatcher
	s    *Subscriber
	move laneMove
}

func (c batchCompletion) begin(tx *gorm.DB, _ bool) error { return c.d.sql.moveLane(tx, c.move) }

func (c batchCompletion) finish(tx *gorm.DB, outcomes []outcome, _ bool) error {
	return c.d.recordOutcomes(tx, c.s, outcomes)
}

// retryCompletion commits one retried delivery, recorded as rec: its row
// updated, fenced by the lane (its lease and position, moveLane with no
// move) and by the row itself (its attempts as read), so that neither a
// stalled dispatcher nor a second recording of the same attempt commits.
type retryCompletion struct {
	d     *Dispatcher
	s     *Subscriber
	fence laneMove // pos == next: the lane stays where it is
	ev    *Event
	rec   recorded
}

// processedSQL marks a retried delivery processed; @ev, @sub, @attempts
// and @deferred name it as it was read.
func processedSQL(now string) string {
	return `UPDATE events_deliveries SET status = 'processed', attempts = attempts + 1, last_error = '', blocked_by = NULL,
next_attempt_at = NULL, processed_at = ` + now + `, updated_at = ` + now + `
WHERE event_id = @ev AND subscriber = @sub AND status IN ('retrying', 'held') AND attempts = @attempts AND deferred_ms = @deferred`
}

func (c retryCompletion) args() map[string]any {
	a := moveArgs(c.fence)
	a["ev"], a["attempts"], a["deferred"] = c.ev.ID, c.rec.attempts, c.rec.deferred.Milliseconds()
	return a
}

func (c retryCompletion) begin(tx *gorm.DB, hopeful bool) error {
	if c.oneStatement(hopeful) {
		return nil // the fence comes with the record of the success (finish)
	}
	// Before a local subscriber's call, as a batch's: a stalled dispatcher
	// runs no effect at all.
	return c.d.sql.moveLane(tx, c.fence)
}

// oneStatement tells whether the fence and the record of the success are
// one statement: for an outside subscriber whose call succeeded, whose
// transaction runs no effect.
func (c retryCompletion) oneStatement(hopeful bool) bool { return hopeful && !c.s.Local() }

func (c retryCompletion) finish(tx *gorm.DB, outcomes []outcome, hopeful bool) error {
	if c.oneStatement(hopeful) {
		n, err := c.d.sql.fenced(tx, c.fence, processedSQL(database.Now(tx)), c.args())
		if err != nil {
			return err
		}
		if n != 1 {
			return errLeaseLost // the lease is gone, or someone else recorded the attempt meanwhile
		}
		return nil
	}
	var res *gorm.DB
	if len(outcomes) == 0 {
		res = tx.Exec(processedSQL(database.Now(tx)), c.args())
	} else {
		d, s, ev, rec, err := c.d, c.s, c.ev, c.rec, outcomes[0].err
		f := d.afterFailure(s, rec.attempts, rec.deferred, err)
		msg := errorText(err)
		now := database.Now(tx)
		res = tx.Exec(`UPDATE events_deliveries SET status = ?, attempts = attempts + ?, last_error = ?, blocked_by = NULL,
next_attempt_at = `+f.next+`, deferred_ms = ?, updated_at = `+now+`
WHERE event_id = ? AND subscriber = ? AND status IN ('retrying', 'held') AND attempts = ? AND deferred_ms = ?`,
			f.status, spentCount(f), msg, f.deferred.Milliseconds(), ev.ID, s.Name, rec.attempts, rec.deferred.Milliseconds())
		if res.Error == nil && res.RowsAffected == 1 {
			if err := recordFailure(tx, ev.ID, s.Name, msg, err, f.spent); err != nil {
				return err
			}
			// The deliveries still held behind the same object point at it.
			if err := tx.Exec(`UPDATE events_deliveries SET blocked_by = ? WHERE subscriber = ? AND aggregate_type = ? AND aggregate_id = ?
AND status = 'held' AND event_id > ?`, ev.ID, s.Name, ev.AggregateType, ev.AggregateID, ev.ID).Error; err != nil {
				return err
			}
		}
	}
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return errLeaseLost // someone else recorded it meanwhile
	}
	return nil
}

// recordOutcomes writes the delivery rows of the batch's exceptions for one
// subscriber, their failures and the deliveries held behind them, with the
// first entry of each failure's history.
func (d *Dispatcher) recordOutcomes(tx *gorm.DB, s *Subscriber, outcomes []outcome) error {
	if len(outcomes) == 0 {
		return nil
	}
	var sb, hist strings.Builder
	var args, histArgs []any
	sb.WriteString(`INSERT INTO events_deliveries (event_id, subscriber, partition, aggregate_type, aggregate_id, status, attempts, last_error, blocked_by, next_attempt_at, processed_at, deferred_ms) VALUES `)
	hist.WriteString(`INSERT INTO events_delivery_failures (event_id, subscriber, seq, error, http_status, spent) VALUES `)
	for i, oc := range outcomes {
		if i > 0 {
			sb.WriteString(", ")
		}
		ev := oc.ev
		part := PartitionOf(ev.AggregateType, ev.AggregateID)
		if oc.status == StatusHeld {
			sb.WriteString("(?, ?, ?, ?, ?, 'held', 0, '', ?, NULL, NULL, 0)")
			args = append(args, ev.ID, s.Name, part, ev.AggregateType, ev.AggregateID, oc.blockedBy)
			continue
		}
		f := d.afterFailure(s, 0, 0, oc.err)
		msg := errorText(oc.err)
		sb.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, NULL, " + f.next + ", NULL, ?)")
		args = append(args, ev.ID, s.Name, part, ev.AggregateType, ev.AggregateID, f.status, spentCount(f), msg, f.deferred.Milliseconds())
		if len(histArgs) > 0 {
			hist.WriteString(", ")
		}
		hist.WriteString("(?, ?, 1, ?, ?, ?)")
		histArgs = append(histArgs, ev.ID, s.Name, msg, httpStatusOf(oc.err), f.spent)
	}
	if err := tx.Exec(sb.String(), args...).Error; err != nil {
		return err
	}
	if len(histArgs) == 0 {
		return nil
	}
	return tx.Exec(hist.String(), histArgs...).Error
}

func spentCount(f failure) int {
	if f.spent {
		return 1
	}
	return 0
}

// recordFailure adds a failed attempt to the delivery's history and drops
// what is older than its latest failureHistory.
func recordFailure(tx *gorm.DB, evID int64, sub, msg string, err error, spent bool) error {
	if e := tx.Exec(`INSERT INTO events_delivery_failures (event_id, subscriber, seq, error, http_status, spent)
SELECT ?, ?, coalesce(max(seq), 0) + 1, ?, ?, ? FROM events_delivery_failures WHERE event_id = ? AND subscriber = ?`,
		evID, sub, msg, httpStatusOf(err), spent, evID, sub).Error; e != nil {
		return e
	}
	return tx.Exec(`DELETE FROM events_delivery_failures WHERE event_id = ? AND subscriber = ? AND seq <= (
SELECT max(seq) FROM events_delivery_failures WHERE event_id = ? AND subscriber = ?) - ?`, evID, sub, evID, sub, failureHistory).Error
}

// countOutcomes counts the outcomes of n deliveries in the metrics: the
// one place where deliveries are counted, batches and retries alike.
func (d *Dispatcher) countOutcomes(s *Subscriber, n int, outcomes []outcome) {
	if d.metrics == nil {
		return
	}
	for range n - len(outcomes) {
		d.metrics.countDelivery(s.Name, nil)
	}
	for _, oc := range outcomes {
		if oc.status != StatusHeld {
			d.metrics.countDelivery(s.Name, oc.err)
		}
	}
}
