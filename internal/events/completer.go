package events

import (
	"gorm.io/gorm"
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
		n, err := c.d.sql.fenced(tx, c.fence, c.d.sql.retrySucceededSQL(), c.args())
		if err != nil {
			return err
		}
		if n != 1 {
			return errLeaseLost // the lease is gone, or someone else recorded the attempt meanwhile
		}
		return nil
	}
	var n int64
	if len(outcomes) == 0 {
		var err error
		if n, err = c.d.sql.retrySucceeded(tx, c.args()); err != nil {
			return err
		}
	} else {
		d, s, ev, rec, err := c.d, c.s, c.ev, c.rec, outcomes[0].err
		f := d.afterFailure(s, rec.attempts, rec.deferred, err)
		msg := errorText(err)
		var e error
		n, e = d.sql.retryFailedAttempt(tx, retryFailure{evID: ev.ID, sub: s.Name, status: f.status, spent: spentCount(f), msg: msg,
			retryIn: f.retryIn, newDeferredMs: f.deferred.Milliseconds(), attempts: rec.attempts, deferredMs: rec.deferred.Milliseconds()})
		if e != nil {
			return e
		}
		if n == 1 {
			if err := d.sql.addFailure(tx, failureRow{evID: ev.ID, sub: s.Name, msg: msg, httpStatus: httpStatusOf(err), spent: f.spent}, failureHistory); err != nil {
				return err
			}
			// The deliveries still held behind the same object point at it.
			if err := d.sql.pointHeldAt(tx, s.Name, ev); err != nil {
				return err
			}
		}
	}
	if n != 1 {
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
	rows := make([]deliveryRow, 0, len(outcomes))
	var first []failureRow
	for _, oc := range outcomes {
		ev := oc.ev
		r := deliveryRow{ev: ev, sub: s.Name, part: PartitionOf(ev.AggregateType, ev.AggregateID), status: oc.status}
		if oc.status == StatusHeld {
			r.blockedBy = oc.blockedBy
			rows = append(rows, r)
			continue
		}
		f := d.afterFailure(s, 0, 0, oc.err)
		r.status, r.attempts, r.lastError, r.retryIn, r.deferredMs = f.status, spentCount(f), errorText(oc.err), f.retryIn, f.deferred.Milliseconds()
		rows = append(rows, r)
		first = append(first, failureRow{evID: ev.ID, sub: s.Name, msg: r.lastError, httpStatus: httpStatusOf(oc.err), spent: f.spent})
	}
	return d.sql.insertDeliveries(tx, rows, first)
}

func spentCount(f failure) int {
	if f.spent {
		return 1
	}
	return 0
}

// countOutcomes counts the outcomes of n deliveries in the metrics: the
// one place where deliveries are counted, batches and retries alike.
func (d *Dispatcher) countOutcomes(s *Subscriber, n int, outcomes []outcome) {
	if d.metrics == nil {
		return
	}
	ok, failed := n-len(outcomes), 0
	for _, oc := range outcomes {
		if oc.status == StatusHeld {
			continue
		}
		if oc.err != nil {
			failed++
		} else {
			ok++
		}
	}
	d.metrics.countDeliveries(s.Name, ok, failed)
}
