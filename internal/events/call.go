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
// w watches the call: a local subscriber's run without savepoints
// (executeRun) or an outside subscriber's caller (outside.go); nil for a
// local call in its savepoint, which gets a deadline of its own.
func (x *executor) deliverOrHold(ctx context.Context, tx *gorm.DB, s *Subscriber, ev *Event, blocked map[objectKey]int64, w *callWatch) (outcome, bool) {
	key := objectKey{ev.AggregateType, ev.AggregateID}
	if by, ok := blocked[key]; ok {
		return outcome{ev: ev, status: StatusHeld, blockedBy: by}, false
	}
	if msg, ok := x.stuck.load(deliveryKey{ev.ID, s.Name}); ok {
		// It hung in an earlier run of this batch: a failure, not called again.
		blocked[key] = ev.ID
		return outcome{ev: ev, status: StatusRetrying, err: errors.New(msg)}, false
	}
	if err := x.deliver(ctx, tx, s, ev, w); err != nil {
		blocked[key] = ev.ID
		return outcome{ev: ev, status: StatusRetrying, err: err, stuck: errors.Is(err, errStuck)}, false
	}
	return outcome{}, true
}

// callWatch times the calls made one after the other in one goroutine: one
// cancellable context and one timer for all of them, the timer set again for
// each call, instead of a goroutine, a channel and a context with a deadline
// of its own for every call. What happens when a call's time is up is the
// owner's (fire): a local run cancels its context; an outside caller stops
// waiting for the call (outside.go).
//
// The goroutine that makes the calls may be abandoned in a call that does
// not return: the owner takes the call from it (abandon), and the
// goroutine, when the call returns at last, finds it taken (leave) and
// stops, touching nothing the call's owner has moved on from.
type callWatch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	born   time.Time
	calls  uint64                // calls entered; the calling goroutine's own
	state  atomic.Uint64         // the last call's number << 2 | callIdle, callRunning or callAbandoned (0 before the first)
	due    atomic.Int64          // when the running call's time is up, in ns since born
	ev     atomic.Pointer[Event] // the event of the call running
}

const (
	callIdle uint64 = iota + 1
	callRunning
	callAbandoned
	callPhase = 3 // the state's bits that hold the phase
)

// newCallWatch returns a watch whose context derives from ctx and whose
// timer runs fire.
func newCallWatch(ctx context.Context, fire func(w *callWatch)) *callWatch {
	w := &callWatch{born: time.Now()}
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	w.timer = time.AfterFunc(time.Hour, func() { fire(w) })
	w.timer.Stop()
	return w
}

// enter starts ev's call, begun at start, whose time is up d after it.
func (w *callWatch) enter(ev *Event, start time.Time, d time.Duration) {
	w.calls++
	w.ev.Store(ev)
	w.due.Store(int64(start.Sub(w.born) + d))
	w.state.Store(w.calls<<2 | callRunning)
	w.timer.Reset(d)
}

// leave ends the call; false when its owner has abandoned it.
func (w *callWatch) leave() bool {
	if !w.state.CompareAndSwap(w.calls<<2|callRunning, w.calls<<2|callIdle) {
		return false
	}
	w.timer.Stop()
	return true
}

// overdue returns the state of the call running when its time is up; false
// when no call is, or for a late firing of the timer, set for a call that
// has returned since. (The due time is written before the state that
// names its call, so reading the same state before and after it means
// the due time is that call's.)
func (w *callWatch) overdue() (uint64, bool) {
	st := w.state.Load()
	if st&callPhase != callRunning {
		return 0, false
	}
	due := w.due.Load()
	if w.state.Load() != st {
		return 0, false
	}
	return st, int64(time.Since(w.born)) >= due
}

// abandon takes the call st from the goroutine that makes it: its event,
// and false when it has returned meanwhile.
func (w *callWatch) abandon(st uint64) (*Event, bool) {
	if st&callPhase != callRunning {
		return nil, false
	}
	ev := w.ev.Load()
	if !w.state.CompareAndSwap(st, st&^callPhase|callAbandoned) {
		return nil, false
	}
	return ev, true
}

// abandoned tells whether the owner has taken a call.
func (w *callWatch) abandoned() bool { return w.state.Load()&callPhase == callAbandoned }

// end releases the watch's context and timer.
func (w *callWatch) end(cause error) {
	w.timer.Stop()
	w.cancel(cause)
}

// callContext is the context of a call a watch times: the watch's, which
// its timer cancels, with the call's deadline and its cause (WithCause) in
// one value, so that a subscriber sees what a context with a timeout of its
// own would show (Deadline, and Err's context.DeadlineExceeded once its
// time is up) without one for every call.
type callContext struct {
	context.Context
	deadline time.Time
	cause    *Event
}

func newCallContext(parent context.Context, ev *Event, deadline time.Time) *callContext {
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return &callContext{Context: parent, deadline: deadline, cause: ev}
}

func (c *callContext) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *callContext) Err() error {
	err := c.Context.Err()
	if err != nil && errors.Is(context.Cause(c.Context), context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}

func (c *callContext) Value(key any) any {
	if _, ok := key.(causeKey); ok {
		return c.cause
	}
	return c.Context.Value(key)
}

// errStuck aborts a transaction in which a local subscriber did not return.
var errStuck = errors.New("events: a local subscriber did not return; the transaction is abandoned")

// errLeft ends an outside call its caller stopped waiting for: its outcome
// is recorded by whoever left it (outside.go).
var errLeft = errors.New("events: the call was left running")

// errTimedOut marks a call cut off at the dispatcher's timeout.
var errTimedOut = errors.New("subscriber timed out")

// errNoError is the answer of a call that returned no error after its time.
var errNoError = errors.New("no error")

// stuckGrace is how long a local subscriber may take to return once its
// timeout has passed, before its transaction is abandoned.
const stuckGrace = 2 * time.Second

// markStuck records that s's call for ev did not return, so that it is not
// called again (see stuckCalls).
func (x *executor) markStuck(s *Subscriber, ev *Event) {
	msg := fmt.Sprintf("%s after %s and did not return", errTimedOut, x.timeout)
	x.stuck.store(deliveryKey{ev.ID, s.Name}, msg)
	x.log.Error("subscriber does not return after its timeout; its transaction is abandoned", "subscriber", s.Name, "event_id", ev.ID)
}

// deliver calls the subscriber, turning a panic into an error. The call's
// ctx names ev as the cause of the events the subscriber writes (WithCause)
// and, when tracing is on, carries the call's process span.
//
// With a watch w (a local run without savepoints, an outside caller), the
// call is made here, timed by w; it returns errStuck (local) or errLeft
// (outside) when w's owner abandoned it meanwhile. Without one (a local
// call in its savepoint, in tx), the call runs aside with a deadline of its
// own, so that one that does not return can be abandoned with tx.
func (x *executor) deliver(ctx context.Context, tx *gorm.DB, s *Subscriber, ev *Event, w *callWatch) (err error) {
	start := time.Now()
	if w != nil {
		ctx = newCallContext(w.ctx, ev, start.Add(x.timeout))
	} else {
		ctx = WithCause(ctx, ev)
	}
	ctx, span := startProcess(ctx, s, ev)
	defer func() {
		x.metrics.observeDuration(s.Name, time.Since(start))
		endSpan(span, err)
	}()
	call := func(tx *gorm.DB) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("subscriber panicked: %v", r)
				x.log.Error("subscriber panicked", "subscriber", s.Name, "event_id", ev.ID, "panic", r, "stack", string(debug.Stack()))
			}
		}()
		if tx != nil {
			return s.HandleTx(ctx, tx, *ev)
		}
		return s.Handle(ctx, *ev)
	}
	switch {
	case w != nil && tx == nil:
		w.enter(ev, start, min(x.budget, x.timeout))
		err = call(nil)
		if !w.leave() {
			return errLeft
		}
		return err
	case w != nil:
		// The call's context reaches its statements through the batch's
		// transaction itself, for the time of the call: a GORM session of
		// its own for each call (tx.WithContext) cost more than the call.
		prev := tx.Statement.Context
		tx.Statement.Context = ctx
		w.enter(ev, start, x.timeout)
		err = call(tx)
		if !w.leave() {
			return errStuck // abandoned: the transaction is no longer this call's
		}
		tx.Statement.Context = prev
	default:
		// In its savepoint, the call runs aside, so that one that does not
		// return even after its statements fail (it ignores ctx) can be
		// abandoned with the transaction it holds, which the caller then
		// rolls back. It gets a session of its own, so that the savepoint's
		// own statements, the rollback to it included, keep the batch's
		// context.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, x.timeout)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			done <- tx.Transaction(func(sp *gorm.DB) error {
				err := call(sp.WithContext(ctx))
				if err == nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
					// An answer after its time fails the delivery (below): its
					// effects go with the savepoint, or a retry would apply
					// them again.
					return errNoError
				}
				return err
			})
		}()
		select {
		case err = <-done:
		case <-ctx.Done():
			select {
			case err = <-done:
			case <-time.After(stuckGrace):
				x.markStuck(s, ev)
				return errStuck // the call still holds tx: it is rolled back as it is
			}
		}
	}
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		// Past its time, whatever it answered: the journal says so.
		if err == nil {
			err = errNoError
		}
		err = fmt.Errorf("%w after %s: %w", errTimedOut, x.timeout, err)
	}
	return err
}
