package events

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// The one delivery path, for a lane's batches (batch.go) and its retries
// (retries.go) alike:
//
//	executor:  execute calls the subscriber for a set of events — a local
//	           one in the transaction it is given, one event after the
//	           other; an outside one by object, side by side, each call
//	           with its timeout (callOutside, deliver in call.go).
//	completer: a completion (completer.go) fences the transaction against
//	           a lost lease or a moved lane, records what did not simply
//	           succeed, and the metrics count the outcomes, once.
//
// deliverSet runs the two: for a local subscriber its calls happen inside
// the transaction, after the fence; for an outside one before it.

// execute hands evs to s and returns the deliveries that did not simply
// succeed. A local subscriber runs in tx: without savepoints, in one run
// whose first failure aborts it (errSlowPath) so that the caller runs the
// set again with them (executeRun); with savepoints, one event after the
// other, each in a savepoint. An outside subscriber is called outside any
// transaction (tx is nil).
func (d *Dispatcher) execute(ctx context.Context, tx *gorm.DB, s *Subscriber, evs []Event, blocked map[objectKey]int64, savepoints bool) ([]outcome, error) {
	if !s.Local() {
		return d.callOutside(ctx, s, evs, blocked), nil
	}
	if !savepoints {
		return d.executeRun(ctx, tx, s, evs, blocked)
	}
	var outcomes []outcome
	for i := range evs {
		oc, ok := d.deliverOrHold(ctx, tx, s, &evs[i], blocked, nil)
		if ok {
			continue
		}
		if oc.stuck {
			return nil, errStuck
		}
		outcomes = append(outcomes, oc)
	}
	return outcomes, nil
}

// executeRun makes a local subscriber's calls for evs in tx without
// savepoints, in one goroutine aside while this one waits, timed by one
// watch (callWatch): a call past its time cancels the run's context, which
// fails its statements; one that does not return even stuckGrace after
// that is abandoned with tx, which the caller rolls back, and marked stuck,
// so that the set's next run does not call it again.
func (d *Dispatcher) executeRun(ctx context.Context, tx *gorm.DB, s *Subscriber, evs []Event, blocked map[objectKey]int64) ([]outcome, error) {
	w := newCallWatch(ctx, func(w *callWatch) {
		// A late firing can cancel a call that has just begun: that call
		// fails as timed out, and the set is run again with savepoints.
		if _, due := w.overdue(); due {
			w.cancel(context.DeadlineExceeded)
		}
	})
	defer w.end(context.Canceled)
	type result struct {
		outcomes []outcome
		err      error
	}
	done := make(chan result, 1)
	go func() {
		var outcomes []outcome
		for i := range evs {
			oc, ok := d.deliverOrHold(ctx, tx, s, &evs[i], blocked, w)
			switch {
			case ok:
				continue
			case oc.stuck:
				done <- result{err: errStuck}
				return
			case oc.status == StatusRetrying:
				done <- result{err: errSlowPath}
				return
			}
			outcomes = append(outcomes, oc)
		}
		done <- result{outcomes: outcomes}
	}()
	select {
	case r := <-done:
		return r.outcomes, r.err
	case <-w.ctx.Done():
	}
	// A call past its time, or the dispatcher stopping: the calls' statements
	// fail, and a call that ignores its context too is given stuckGrace.
	grace := time.NewTimer(stuckGrace)
	defer grace.Stop()
	for {
		select {
		case r := <-done:
			return r.outcomes, r.err
		case <-grace.C:
			if ev, ok := w.abandon(w.state.Load()); ok {
				d.markStuck(s, ev)
				return nil, errStuck // the call still holds tx: it is rolled back as it is
			}
			grace.Reset(stuckGrace) // between two calls: the next one is given its grace
		}
	}
}

var errSlowPath = errors.New("events: a local subscriber failed; run the set again with savepoints")

// deliverSet delivers evs to s and commits the completion c with the
// outcomes: the one delivery path of batches and retries. blocked names
// the objects whose events are held behind an earlier open delivery.
func (d *Dispatcher) deliverSet(ctx context.Context, s *Subscriber, evs []Event, blocked map[objectKey]int64, c completion) ([]outcome, error) {
	if s.Local() {
		return d.deliverLocal(ctx, s, evs, blocked, c)
	}
	outcomes, _ := d.execute(ctx, nil, s, evs, blocked, false)
	// The slot is taken once the calls are done: a slow subscriber holds
	// none while it is called.
	d.ownSlots <- struct{}{}
	err := d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		hopeful := len(outcomes) == 0
		if err := c.begin(tx, hopeful); err != nil {
			return err
		}
		return c.finish(tx, outcomes, hopeful)
	})
	<-d.ownSlots
	// The calls were made, whether their record committed or not.
	d.countOutcomes(s, len(evs), outcomes)
	return outcomes, err
}

// deliverLocal runs a local subscriber over evs in one transaction, so that
// its effects and the completion commit together. The fast path runs
// without savepoints and hopes for success; when the subscriber fails, the
// set is run again with one savepoint per event.
func (d *Dispatcher) deliverLocal(ctx context.Context, s *Subscriber, evs []Event, blocked map[objectKey]int64, c completion) ([]outcome, error) {
	d.dbSlots <- struct{}{}
	defer func() { <-d.dbSlots }()
	var outcomes []outcome
	run := func(savepoints bool) error {
		outcomes = nil
		return d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			// The fence first: a dispatcher whose lease has run out (and
			// whose lane someone else has dispatched meanwhile) applies no
			// effect at all. It also locks the lane's row until the commit.
			hopeful := !savepoints
			if err := c.begin(tx, hopeful); err != nil {
				return err
			}
			var err error
			if outcomes, err = d.execute(ctx, tx, s, evs, cloneBlocked(blocked), savepoints); err != nil {
				return err
			}
			return c.finish(tx, outcomes, hopeful)
		})
	}
	err := run(false)
	// Each run that hit a stuck subscriber marked it, so this ends.
	for errors.Is(err, errSlowPath) || errors.Is(err, errStuck) {
		err = run(true)
	}
	for i := range evs {
		d.stuck.take(deliveryKey{evs[i].ID, s.Name})
	}
	if err == nil {
		// Counted once committed: a call rolled back and made again counts once.
		d.countOutcomes(s, len(evs), outcomes)
	}
	return outcomes, err
}

func cloneBlocked(m map[objectKey]int64) map[objectKey]int64 {
	out := make(map[objectKey]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
