package events

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// stuckCalls remembers the local calls abandoned because they did not
// return, so that they are not called again: a delivery key → the error's
// text. It is almost always empty, and then answers without hashing a key.
type stuckCalls struct {
	n atomic.Int64
	m sync.Map
}

func (c *stuckCalls) store(k deliveryKey, msg string) {
	if _, loaded := c.m.Swap(k, msg); !loaded {
		c.n.Add(1)
	}
}

func (c *stuckCalls) load(k deliveryKey) (string, bool) {
	if c.n.Load() == 0 {
		return "", false
	}
	v, ok := c.m.Load(k)
	if !ok {
		return "", false
	}
	return v.(string), true
}

func (c *stuckCalls) take(k deliveryKey) (string, bool) {
	if c.n.Load() == 0 {
		return "", false
	}
	v, ok := c.m.LoadAndDelete(k)
	if !ok {
		return "", false
	}
	c.n.Add(-1)
	return v.(string), true
}

// outcome is one delivery that did not simply succeed in its batch.
type outcome struct {
	ev        *Event
	status    string // StatusRetrying (a failed attempt) or StatusHeld
	err       error
	blockedBy int64
	stuck     bool // a local call that did not return: its transaction must go
}

// deliverOrHold delivers ev to s unless an earlier event of the same object
// is still open for s, in which case the delivery is held behind it. On
// failure the object becomes blocked. ok is true for a success.
//
// calls counts an outside subscriber's calls still in flight after the lane
// stopped waiting for them (see deliver).
//
// clock, for a local subscriber's run without savepoints, cuts its calls
// off (see callClock); nil otherwise.
func (d *Dispatcher) deliverOrHold(ctx context.Context, tx *gorm.DB, s *Subscriber, ev *Event, blocked map[objectKey]int64, savepoint bool, calls *leftCalls, clock *callClock) (outcome, bool) {
	key := objectKey{ev.AggregateType, ev.AggregateID}
	if by, ok := blocked[key]; ok {
		return outcome{ev: ev, status: StatusHeld, blockedBy: by}, false
	}
	if msg, ok := d.stuck.load(deliveryKey{ev.ID, s.Name}); ok {
		// It hung in an earlier run of this batch: a failure, not called again.
		blocked[key] = ev.ID
		return outcome{ev: ev, status: StatusRetrying, err: errors.New(msg)}, false
	}
	if err := d.deliver(ctx, tx, s, ev, savepoint, calls, clock); err != nil {
		blocked[key] = ev.ID
		return outcome{ev: ev, status: StatusRetrying, err: err, stuck: errors.Is(err, errStuck)}, false
	}
	return outcome{}, true
}

// callOutside delivers a batch to an outside subscriber: the events of
// different objects concurrently, up to the subscriber's Concurrency across
// all its lanes, and each object's events one after the other, in order;
// after a failure the object's later events are held.
func (d *Dispatcher) callOutside(ctx context.Context, s *Subscriber, evs []Event, blocked map[objectKey]int64) []outcome {
	var objects []objectKey
	byObject := map[objectKey][]*Event{}
	for i := range evs {
		k := objectKey{evs[i].AggregateType, evs[i].AggregateID}
		if _, ok := byObject[k]; !ok {
			objects = append(objects, k)
		}
		byObject[k] = append(byObject[k], &evs[i])
	}
	sem := d.callSlots(s)
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		outcomes []outcome
	)
	for _, k := range objects {
		wg.Add(1)
		sem <- struct{}{}
		go func(k objectKey, evs []*Event) {
			// The object's slot is given back once its calls have ended,
			// those the lane stopped waiting for included.
			var calls leftCalls
			defer func() {
				wg.Done()
				calls.then(func() { <-sem })
			}()
			b := map[objectKey]int64{}
			if by, ok := blocked[k]; ok {
				b[k] = by
			}
			for _, ev := range evs {
				if oc, ok := d.deliverOrHold(ctx, nil, s, ev, b, false, &calls, nil); !ok {
					mu.Lock()
					outcomes = append(outcomes, oc)
					mu.Unlock()
				}
			}
		}(k, byObject[k])
	}
	wg.Wait()
	return outcomes
}

// leftCalls counts the outside calls still in flight that the lane stopped
// waiting for (see deliver).
type leftCalls struct {
	wg sync.WaitGroup
	n  atomic.Int32
}

func (c *leftCalls) add() { c.n.Add(1); c.wg.Add(1) }

func (c *leftCalls) done() { c.wg.Done() }

// then runs f once every call left running has ended: at once, in this
// goroutine, when there is none.
func (c *leftCalls) then(f func()) {
	if c.n.Load() == 0 {
		f()
		return
	}
	go func() { c.wg.Wait(); f() }()
}

// errNoAnswer marks an outside call the lane stopped waiting for at the
// call budget.
var errNoAnswer = errors.New("no answer within the call budget")

// stuckGrace is how long a local subscriber may take to return once its
// timeout has passed, before its transaction is abandoned.
const stuckGrace = 2 * time.Second

// errStuck aborts a transaction in which a local subscriber did not return.
var errStuck = errors.New("events: a local subscriber did not return; the transaction is abandoned")

// errTimedOut marks a call cut off at the dispatcher's timeout.
var errTimedOut = errors.New("subscriber timed out")

// callClock cuts off the calls of a local subscriber's run without
// savepoints, one after the other: one cancellable context for the run and
// one timer, set again for each call, instead of a context with a deadline
// of its own (and its timer) for every call. A call past its time cancels
// the run's context, with context.DeadlineExceeded as the cause, which
// fails the call's statements; the run then fails as a whole and is made
// again with savepoints, where each call gets a deadline of its own.
type callClock struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
}

func newCallClock(ctx context.Context) *callClock {
	c := &callClock{}
	c.ctx, c.cancel = context.WithCancelCause(ctx)
	c.timer = time.AfterFunc(time.Hour, func() { c.cancel(context.DeadlineExceeded) })
	c.timer.Stop()
	return c
}

// start gives the next call d from now; the caller stops the clock when the
// call has returned.
func (c *callClock) start(d time.Duration) { c.timer.Reset(d) }

func (c *callClock) stop() { c.timer.Stop() }

// end releases the run's context.
func (c *callClock) end() {
	c.timer.Stop()
	c.cancel(context.Canceled)
}

// deliver calls the subscriber with a timeout, turning a panic into an error.
// For a local subscriber it runs in tx, inside a savepoint when asked. The
// call's ctx names ev as the cause of the events the subscriber writes
// (WithCause) and, when tracing is on, carries the call's process span.
//
// An outside subscriber's answer is waited for up to the call budget. A
// call that takes longer goes on, to its timeout, counted in calls, and its
// answer is not heard: it fails with errNoAnswer, to be tried again once
// the call's timeout has passed, so that a retry never overlaps it. The
// object's later events are then held behind this one, which keeps them in
// order, while the lane goes on with the other objects.
func (d *Dispatcher) deliver(ctx context.Context, tx *gorm.DB, s *Subscriber, ev *Event, savepoint bool, calls *leftCalls, clock *callClock) (err error) {
	start := time.Now()
	if clock != nil {
		ctx = clock.ctx
	}
	ctx, span := startProcess(WithCause(ctx, ev), s, ev)
	defer func() {
		d.metrics.observeDuration(s.Name, time.Since(start))
		endSpan(span, err)
	}()
	var cancel context.CancelFunc
	if clock != nil {
		clock.start(d.opt.Timeout)
		cancel = clock.stop
	} else {
		ctx, cancel = context.WithTimeout(ctx, d.opt.Timeout)
	}
	leftRunning := false
	defer func() {
		if !leftRunning {
			cancel()
		}
	}()
	call := func(tx *gorm.DB) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("subscriber panicked: %v", r)
				d.opt.Logger.Error("subscriber panicked", "subscriber", s.Name, "event_id", ev.ID, "panic", r, "stack", string(debug.Stack()))
			}
		}()
		if tx != nil {
			return s.HandleTx(ctx, tx, *ev)
		}
		return s.Handle(ctx, *ev)
	}
	done := make(chan error, 1)
	if !s.Local() {
		// An outside call that ignores its context still gets cut off.
		go func() { done <- call(nil) }()
		var budget <-chan time.Time
		if d.opt.CallBudget < d.opt.Timeout && calls != nil {
			t := time.NewTimer(d.opt.CallBudget)
			defer t.Stop()
			budget = t.C
		}
		select {
		case err = <-done:
		case <-ctx.Done():
			err = fmt.Errorf("%w after %s", errTimedOut, d.opt.Timeout)
		case <-budget:
			leftRunning = true
			calls.add()
			go func() {
				defer calls.done()
				defer cancel()
				select {
				case <-done: //nolint:errcheck // the abandoned call's outcome is the retry's to find out
				case <-ctx.Done():
				}
			}()
			d.opt.Logger.Warn("subscriber call takes longer than the call budget; its lane goes on, the event is tried again later",
				"subscriber", s.Name, "event_id", ev.ID, "budget", d.opt.CallBudget)
			return RetryAfter(d.opt.Timeout+time.Second, fmt.Errorf("%w (%s): the lane went on, the call was left to its timeout (%s), and the event is tried again after it",
				errNoAnswer, d.opt.CallBudget, d.opt.Timeout))
		}
	} else {
		// A local call runs aside too, so that one that does not return even
		// after its statements fail (it ignores ctx) can be abandoned with
		// the transaction it holds, which the caller then rolls back.
		//
		// The call's deadline reaches its statements through the batch's
		// transaction itself, for the time of the call: a GORM session of its
		// own for each call (tx.WithContext) cost more than the call. Within
		// a savepoint it gets a session, so that the savepoint's own
		// statements, the rollback to it included, keep the batch's context.
		prev := tx.Statement.Context
		if !savepoint {
			tx.Statement.Context = ctx
		}
		go func() {
			if savepoint {
				done <- tx.Transaction(func(sp *gorm.DB) error { return call(sp.WithContext(ctx)) })
			} else {
				done <- call(tx)
			}
		}()
		select {
		case err = <-done:
		case <-ctx.Done():
			select {
			case err = <-done:
			case <-time.After(stuckGrace):
				msg := fmt.Sprintf("%s after %s and did not return", errTimedOut, d.opt.Timeout)
				d.stuck.store(deliveryKey{ev.ID, s.Name}, msg)
				d.opt.Logger.Error("subscriber does not return after its timeout; its transaction is abandoned", "subscriber", s.Name, "event_id", ev.ID)
				return errStuck // the call still holds tx: it is rolled back as it is
			}
		}
		tx.Statement.Context = prev
	}
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) && !errors.Is(err, errTimedOut) {
		// Past its time, whatever it answered: the journal says so.
		if err == nil {
			err = errors.New("no error")
		}
		err = fmt.Errorf("%w after %s: %w", errTimedOut, d.opt.Timeout, err)
	}
	return err
}
