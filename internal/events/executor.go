package events

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"gorm.io/gorm"
)

// The one delivery path, for a lane's batches (batch.go) and its retries
// (retries.go) alike, is two types, as River's is (its jobExecutor and
// JobCompleter):
//
//	executor:  calls the subscriber for a set of events — a local one in
//	           the transaction its completer opens, one event after the
//	           other; an outside one by object, side by side, each call
//	           with its timeout (callOutside, deliver in call.go) — and
//	           hands the outcomes to its completer.
//	completer: (completer.go) fences the transaction against a lost lease
//	           or a moved lane, records what did not simply succeed, and
//	           counts the outcomes in the metrics, once.
//
// For a local subscriber the calls happen inside the completer's
// transaction, after the fence; for an outside one before it.

// executor makes a dispatcher's calls of its subscribers. Its state is the
// calls': each outside subscriber's call slots, the slots of local batch
// transactions, and the local calls abandoned because they did not return.
type executor struct {
	timeout time.Duration // DispatcherOptions.Timeout: a call's time
	budget  time.Duration // DispatcherOptions.CallBudget: how long a lane waits for an outside call
	log     *slog.Logger
	metrics *Metrics   // each call's duration; set before the dispatcher starts (SetMetrics)
	done    *completer // records what the calls leave
	// local bounds the local subscribers' batch transactions in flight
	// (DispatcherOptions.Workers): each holds a connection while its
	// subscriber's code runs.
	local chan struct{}
	stuck stuckCalls // local calls abandoned, not to be called again

	mu    sync.Mutex
	calls map[string]chan struct{} // per outside subscriber: calls in flight
}

func newExecutor(opt DispatcherOptions, done *completer) *executor {
	return &executor{timeout: opt.Timeout, budget: opt.CallBudget, log: opt.Logger, done: done,
		local: make(chan struct{}, opt.Workers), calls: map[string]chan struct{}{}}
}

// callSlots returns the semaphore that bounds an outside subscriber's calls
// in flight to its Concurrency.
func (x *executor) callSlots(s *Subscriber) chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	c, ok := x.calls[s.Name]
	if !ok {
		c = make(chan struct{}, max(1, s.Concurrency))
		x.calls[s.Name] = c
	}
	return c
}

// deliverSet delivers evs to s and has the completer commit c with the
// outcomes: the one delivery path of batches and retries. blocked names
// the objects whose events are held behind an earlier open delivery.
func (x *executor) deliverSet(ctx context.Context, s *Subscriber, evs []Event, blocked map[objectKey]int64, c completion) ([]outcome, error) {
	if s.Local() {
		return x.deliverLocal(ctx, s, evs, blocked, c)
	}
	outcomes, _ := x.execute(ctx, nil, s, evs, blocked, false)
	err := x.done.after(ctx, c, outcomes)
	// The calls were made, whether their record committed or not.
	x.done.countOutcomes(s, len(evs), outcomes)
	return outcomes, err
}

// deliverLocal runs a local subscriber over evs in the completer's
// transaction, so that its effects and the completion commit together. The
// fast path runs without savepoints and hopes for success; when the
// subscriber fails, the set is run again with one savepoint per event.
func (x *executor) deliverLocal(ctx context.Context, s *Subscriber, evs []Event, blocked map[objectKey]int64, c completion) ([]outcome, error) {
	x.local <- struct{}{}
	defer func() { <-x.local }()
	var outcomes []outcome
	run := func(savepoints bool) error {
		var err error
		outcomes, err = x.done.within(ctx, c, !savepoints, func(tx *gorm.DB) ([]outcome, error) {
			return x.execute(ctx, tx, s, evs, cloneBlocked(blocked), savepoints)
		})
		return err
	}
	err := run(false)
	// Each run that hit a stuck subscriber marked it, so this ends.
	for errors.Is(err, errSlowPath) || errors.Is(err, errStuck) {
		err = run(true)
	}
	for i := range evs {
		x.stuck.take(deliveryKey{evs[i].ID, s.Name})
	}
	if err == nil {
		// Counted once committed: a call rolled back and made again counts once.
		x.done.countOutcomes(s, len(evs), outcomes)
	}
	return outcomes, err
}

// execute hands evs to s and returns the deliveries that did not simply
// succeed. A local subscriber runs in tx: without savepoints, in one run
// whose first failure aborts it (errSlowPath) so that the caller runs the
// set again with them (executeRun); with savepoints, one event after the
// other, each in a savepoint. An outside subscriber is called outside any
// transaction (tx is nil).
func (x *executor) execute(ctx context.Context, tx *gorm.DB, s *Subscriber, evs []Event, blocked map[objectKey]int64, savepoints bool) ([]outcome, error) {
	if !s.Local() {
		return x.callOutside(ctx, s, evs, blocked), nil
	}
	if !savepoints {
		return x.executeRun(ctx, tx, s, evs, blocked)
	}
	var outcomes []outcome
	for i := range evs {
		oc, ok := x.deliverOrHold(ctx, tx, s, &evs[i], blocked, nil)
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
func (x *executor) executeRun(ctx context.Context, tx *gorm.DB, s *Subscriber, evs []Event, blocked map[objectKey]int64) ([]outcome, error) {
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
			oc, ok := x.deliverOrHold(ctx, tx, s, &evs[i], blocked, w)
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
				x.markStuck(s, ev)
				return nil, errStuck // the call still holds tx: it is rolled back as it is
			}
			grace.Reset(stuckGrace) // between two calls: the next one is given its grace
		}
	}
}

var errSlowPath = errors.New("events: a local subscriber failed; run the set again with savepoints")

func cloneBlocked(m map[objectKey]int64) map[objectKey]int64 {
	out := make(map[objectKey]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
