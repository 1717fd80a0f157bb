package events

import (
	"context"

	"gorm.io/gorm"
)

// completer commits what a set of deliveries left (executor.go): in the
// transaction of a local subscriber's effects (within), or in one of its own
// after an outside subscriber's calls (after). Each transaction begins with
// its completion's fence, so that a dispatcher that lost the lane's lease
// records nothing, and ends with what did not simply succeed; the metrics
// count the outcomes here, once.
type completer struct {
	db      *gorm.DB
	sql     completerStatements
	rules   retryRules // what a failed attempt leaves
	metrics *Metrics   // set before the dispatcher starts (SetMetrics)
	// own bounds the transactions that run no subscriber's code (an outside
	// subscriber's records), shared with the lanes' reads of the journal
	// (Dispatcher.own).
	own chan struct{}
}

// completerStatements are the statements a completer runs: the lane's fence
// and move (store.go) and the records of the deliveries that did not simply
// succeed (driver_deliveries.go).
type completerStatements interface {
	laneFence
	deliveryRecords
}

// within runs calls (a local subscriber's, which return the outcomes) in
// one transaction between c's fence and its records, so that the
// subscriber's effects commit with them, or not at all. hopeful says that
// the calls are expected to succeed (the fast path, without savepoints).
func (cp *completer) within(ctx context.Context, c completion, hopeful bool, calls func(tx *gorm.DB) ([]outcome, error)) ([]outcome, error) {
	var outcomes []outcome
	err := cp.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The fence first: a dispatcher whose lease has run out (and whose
		// lane someone else has dispatched meanwhile) applies no effect at
		// all. It also locks the lane's row until the commit.
		if err := c.begin(cp, tx, hopeful); err != nil {
			return err
		}
		var err error
		if outcomes, err = calls(tx); err != nil {
			return err
		}
		return c.finish(cp, tx, outcomes, hopeful)
	})
	return outcomes, err
}

// after commits c with the outcomes of an outside subscriber's calls, made
// already. It takes one of the own slots for the time of the transaction
// only: a slow subscriber holds none while it is called.
func (cp *completer) after(ctx context.Context, c completion, outcomes []outcome) error {
	cp.own <- struct{}{}
	defer func() { <-cp.own }()
	return cp.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		hopeful := len(outcomes) == 0
		if err := c.begin(cp, tx, hopeful); err != nil {
			return err
		}
		return c.finish(cp, tx, outcomes, hopeful)
	})
}

// completion is what the completer commits for a set of deliveries. Each
// lane's work has one: a batch (batchCompletion) or one retried delivery
// (retryCompletion).
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
	begin(cp *completer, tx *gorm.DB, hopeful bool) error
	// finish records the outcomes; with hopeful, there are none but held
	// ones.
	finish(cp *completer, tx *gorm.DB, outcomes []outcome, hopeful bool) error
}

// batchCompletion commits a lane's batch: the lane moved past it, with its
// batch's row (the fence, moveLane), and the deliveries of its exceptions.
type batchCompletion struct {
	s    *Subscriber
	move laneMove
}

func (c batchCompletion) begin(cp *completer, tx *gorm.DB, _ bool) error {
	return cp.sql.moveLane(tx, c.move)
}

func (c batchCompletion) finish(cp *completer, tx *gorm.DB, outcomes []outcome, _ bool) error {
	return cp.recordOutcomes(tx, c.s, outcomes)
}

// retryCompletion commits one retried delivery, recorded as rec: its row
// updated, fenced by the lane (its lease and position, moveLane with no
// move) and by the row itself (its attempts as read), so that neither a
// stalled dispatcher nor a second recording of the same attempt commits.
type retryCompletion struct {
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

func (c retryCompletion) begin(cp *completer, tx *gorm.DB, hopeful bool) error {
	if c.oneStatement(hopeful) {
		return nil // the fence comes with the record of the success (finish)
	}
	// Before a local subscriber's call, as a batch's: a stalled dispatcher
	// runs no effect at all.
	return cp.sql.moveLane(tx, c.fence)
}

// oneStatement tells whether the fence and the record of the success are
// one statement: for an outside subscriber whose call succeeded, whose
// transaction runs no effect.
func (c retryCompletion) oneStatement(hopeful bool) bool { return hopeful && !c.s.Local() }

func (c retryCompletion) finish(cp *completer, tx *gorm.DB, outcomes []outcome, hopeful bool) error {
	var (
		n   int64
		err error
	)
	switch {
	case c.oneStatement(hopeful):
		n, err = cp.sql.fenced(tx, c.fence, cp.sql.retrySucceededSQL(), c.args())
	case len(outcomes) == 0:
		n, err = cp.sql.retrySucceeded(tx, c.args())
	default:
		n, err = cp.recordRetryFailure(tx, c, outcomes[0].err)
	}
	if err != nil {
		return err
	}
	if n != 1 {
		return errLeaseLost // the lease is gone, or someone else recorded the attempt meanwhile
	}
	return nil
}

// recordRetryFailure records a retry's failed attempt over its row as it
// was read, and, when that row was still as read, the attempt in the
// delivery's failure history and the deliveries held behind the same
// object pointed at it. It returns the delivery rows it changed.
func (cp *completer) recordRetryFailure(tx *gorm.DB, c retryCompletion, cause error) (int64, error) {
	s, ev, rec := c.s, c.ev, c.rec
	f := cp.rules.afterFailure(s, rec.attempts, rec.deferred, cause)
	msg := errorText(cause)
	n, err := cp.sql.retryFailedAttempt(tx, retryFailure{evID: ev.ID, sub: s.Name, status: f.status, spent: spentCount(f), msg: msg,
		retryIn: f.retryIn, newDeferredMs: f.deferred.Milliseconds(), attempts: rec.attempts, deferredMs: rec.deferred.Milliseconds()})
	if err != nil || n != 1 {
		return n, err
	}
	if err := cp.sql.addFailure(tx, failureRow{evID: ev.ID, sub: s.Name, msg: msg, httpStatus: httpStatusOf(cause), spent: f.spent}, failureHistory); err != nil {
		return n, err
	}
	// The deliveries still held behind the same object point at it.
	return n, cp.sql.pointHeldAt(tx, s.Name, ev)
}

// recordOutcomes writes the delivery rows of the batch's exceptions for one
// subscriber, their failures and the deliveries held behind them, with the
// first entry of each failure's history.
func (cp *completer) recordOutcomes(tx *gorm.DB, s *Subscriber, outcomes []outcome) error {
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
		f := cp.rules.afterFailure(s, 0, 0, oc.err)
		r.status, r.attempts, r.lastError, r.retryIn, r.deferredMs = f.status, spentCount(f), errorText(oc.err), f.retryIn, f.deferred.Milliseconds()
		rows = append(rows, r)
		first = append(first, failureRow{evID: ev.ID, sub: s.Name, msg: r.lastError, httpStatus: httpStatusOf(oc.err), spent: f.spent})
	}
	return cp.sql.insertDeliveries(tx, rows, first)
}

func spentCount(f failure) int {
	if f.spent {
		return 1
	}
	return 0
}

// countOutcomes counts the outcomes of n deliveries in the metrics: the
// one place where deliveries are counted, batches and retries alike.
func (cp *completer) countOutcomes(s *Subscriber, n int, outcomes []outcome) {
	if cp.metrics == nil {
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
	cp.metrics.countDeliveries(s.Name, ok, failed)
}
