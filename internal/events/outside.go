package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// errNoAnswer marks an outside call the lane stopped waiting for at the
// call budget.
var errNoAnswer = errors.New("no answer within the call budget")

// leftCallError is the failure of a call the lane stopped waiting for. It
// spends an attempt, as a call that timed out does (a partner that hangs on
// every call ends failed, with the policy's back-off between its attempts),
// and its next attempt comes no sooner than after, once the call's timeout
// has passed, whatever the retry policy's cap (see afterFailure).
type leftCallError struct {
	err   error
	after time.Duration
}

func (e *leftCallError) Error() string { return e.err.Error() }
func (e *leftCallError) Unwrap() error { return e.err }

// callOutside delivers a batch to an outside subscriber: the events of
// different objects concurrently, up to the subscriber's Concurrency across
// all its lanes, and each object's events one after the other, in order;
// after a failure the object's later events are held.
//
// The calls are made by callers, goroutines that take the batch's objects
// one after the other, each holding one of the subscriber's call slots for
// the time of an object: as many callers as the slots allow, not one
// goroutine per object or per call.
//
// A call is waited for up to the call budget. One that takes longer goes
// on, to its timeout, and its answer is not heard: its caller is left with
// it, holding the object's slot until the call ends or its timeout passes,
// while a new caller goes on with the batch's other objects. The event
// fails with errNoAnswer, to be tried again once the call's timeout has
// passed, so that a retry never overlaps it, and the object's later events
// are held behind it, which keeps them in order. With no budget shorter
// than the timeout, a call past its timeout is left in the same way and
// fails as timed out.
func (x *executor) callOutside(ctx context.Context, s *Subscriber, evs []Event, blocked map[objectKey]int64) []outcome {
	r := &outsideRun{x: x, ctx: ctx, s: s, blocked: blocked, slots: x.callSlots(s)}
	at := map[objectKey]int{}
	for i := range evs {
		k := objectKey{evs[i].AggregateType, evs[i].AggregateID}
		j, ok := at[k]
		if !ok {
			j = len(r.objects)
			at[k] = j
			r.objects = append(r.objects, nil)
		}
		r.objects[j] = append(r.objects[j], &evs[i])
	}
	callers := min(len(r.objects), cap(r.slots))
	r.wg.Add(callers)
	for range callers {
		go r.caller()
	}
	r.wg.Wait()
	return r.outcomes
}

// outsideRun is one batch's calls to an outside subscriber.
type outsideRun struct {
	x       *executor
	ctx     context.Context
	s       *Subscriber
	blocked map[objectKey]int64 // read only
	objects [][]*Event          // each object's events, in order
	next    atomic.Int64        // the next object a caller takes
	slots   chan struct{}       // the subscriber's call slots, across its lanes
	wg      sync.WaitGroup      // one for each caller the run waits for

	mu       sync.Mutex
	outcomes []outcome
}

// outsideCaller is the state a run's timer reads of a caller's call.
type outsideCaller struct {
	w      *callWatch
	object []*Event // the object whose events the caller is calling
	at     int      // the index in object of the event being called
	freed  atomic.Bool
}

// caller takes the run's objects one after the other until none is left,
// or until it is left in a call (then a new caller takes its place in the
// run's wait group).
func (r *outsideRun) caller() {
	c := &outsideCaller{}
	c.w = newCallWatch(r.ctx, func(*callWatch) { r.fire(c) })
	for {
		i := int(r.next.Add(1)) - 1
		if i >= len(r.objects) {
			c.w.end(context.Canceled)
			r.wg.Done()
			return
		}
		r.slots <- struct{}{}
		if !r.callObject(c, r.objects[i]) {
			// Left in a call: the one that left it took this caller's place.
			r.free(c)
			return
		}
		<-r.slots
	}
}

// callObject calls s for one object's events, in order; false when the
// caller was left in a call.
func (r *outsideRun) callObject(c *outsideCaller, object []*Event) bool {
	k := objectKey{object[0].AggregateType, object[0].AggregateID}
	b := map[objectKey]int64{}
	if by, ok := r.blocked[k]; ok {
		b[k] = by
	}
	c.object = object
	for i, ev := range object {
		c.at = i
		oc, ok := r.x.deliverOrHold(r.ctx, nil, r.s, ev, b, c.w)
		if ok {
			continue
		}
		if errors.Is(oc.err, errLeft) {
			return false
		}
		r.record(oc)
	}
	return true
}

func (r *outsideRun) record(ocs ...outcome) {
	r.mu.Lock()
	r.outcomes = append(r.outcomes, ocs...)
	r.mu.Unlock()
}

// fire is c's timer: a call at its budget (or its timeout, with no budget
// shorter) is left to c, its failure recorded and the object's later events
// held, and a new caller goes on with the run; a call left at its budget
// is cut off at its timeout, when the timer fires again.
func (r *outsideRun) fire(c *outsideCaller) {
	x := r.x
	if c.w.abandoned() {
		r.free(c) // the left call's timeout
		return
	}
	st, due := c.w.overdue()
	if !due {
		return // set for a call that has returned since
	}
	ev, ok := c.w.abandon(st)
	if !ok {
		return
	}
	var err error
	if x.budget < x.timeout {
		x.log.Warn("subscriber call takes longer than the call budget; its lane goes on, the event is tried again later",
			"subscriber", r.s.Name, "event_id", ev.ID, "budget", x.budget)
		wait := x.timeout + time.Second
		err = &leftCallError{after: wait, err: fmt.Errorf("%w (%s): the lane went on, the call was left to its timeout (%s), and the event is tried again after it",
			errNoAnswer, x.budget, x.timeout)}
		c.w.timer.Reset(x.timeout - x.budget)
	} else {
		err = fmt.Errorf("%w after %s", errTimedOut, x.timeout)
		r.free(c)
	}
	ocs := []outcome{{ev: ev, status: StatusRetrying, err: err}}
	for _, later := range c.object[c.at+1:] {
		ocs = append(ocs, outcome{ev: later, status: StatusHeld, blockedBy: ev.ID})
	}
	r.record(ocs...)
	go r.caller()
}

// free ends a left call's claim, once: its context is cancelled and its
// object's slot given back, when the call returns or its timeout passes,
// whichever comes first.
func (r *outsideRun) free(c *outsideCaller) {
	if !c.freed.CompareAndSwap(false, true) {
		return
	}
	c.w.end(context.DeadlineExceeded)
	<-r.slots
}
