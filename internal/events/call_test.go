package events

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A stuck call's mark is found by the runs of its batch and taken by the
// retry that follows; the count lets a lookup skip the map when no call is
// stuck, so it must come back to zero.
func TestStuckCalls_StoredFoundTaken(t *testing.T) {
	var c stuckCalls
	k, other := deliveryKey{1, "a"}, deliveryKey{2, "a"}
	_, ok := c.take(k)
	require.False(t, ok, "nothing is stuck")

	c.store(k, "timed out")
	c.store(k, "timed out again") // the same call marked twice counts once
	require.EqualValues(t, 1, c.n.Load())
	msg, ok := c.load(k)
	require.True(t, ok)
	require.Equal(t, "timed out again", msg)
	_, ok = c.load(other)
	require.False(t, ok)
	_, ok = c.take(other)
	require.False(t, ok, "another call is not taken for it")
	require.EqualValues(t, 1, c.n.Load())

	msg, ok = c.take(k)
	require.True(t, ok, "the retry takes the mark")
	require.Equal(t, "timed out again", msg)
	require.Zero(t, c.n.Load(), "no call is stuck any more")
	_, ok = c.load(k)
	require.False(t, ok)
}

// A watch's timer may fire late, for a call that has returned since, while
// the next call runs: that call is neither overdue nor abandoned.
func TestCallWatch_LateFiringLeavesTheNextCallAlone(t *testing.T) {
	fired := make(chan struct{}, 4)
	w := newCallWatch(context.Background(), func(*callWatch) { fired <- struct{}{} })
	defer w.end(context.Canceled)
	first, second := &Event{ID: 1}, &Event{ID: 2}

	w.enter(first, time.Now(), time.Millisecond)
	<-fired
	st, due := w.overdue()
	require.True(t, due, "the first call is past its time")
	require.True(t, w.leave(), "it returned before anyone took it")

	w.enter(second, time.Now(), time.Hour)
	_, due = w.overdue()
	require.False(t, due, "the late firing is not the second call's")
	_, ok := w.abandon(st)
	require.False(t, ok, "the first call's state no longer names a running call")
	require.True(t, w.leave())
	select {
	case <-fired:
		t.Fatal("the timer fired for a call that returned")
	default:
	}
}

// A call taken by the watch's owner is left to the goroutine that makes
// it, which finds it taken when it returns.
func TestCallWatch_AbandonedCallIsFoundTaken(t *testing.T) {
	w := newCallWatch(context.Background(), func(*callWatch) {})
	defer w.end(context.Canceled)
	ev := &Event{ID: 7}
	w.enter(ev, time.Now().Add(-2*time.Second), time.Second)
	st, due := w.overdue()
	require.True(t, due, "begun two seconds ago with one to go")
	got, ok := w.abandon(st)
	require.True(t, ok)
	require.Same(t, ev, got)
	require.True(t, w.abandoned())
	_, ok = w.abandon(st)
	require.False(t, ok, "taken once")
	require.False(t, w.leave(), "the goroutine finds its call taken")
	_, due = w.overdue()
	require.False(t, due, "no call runs")
}

// A watched call's context shows what a context with a timeout of its own
// would: its deadline (or its parent's, when sooner), DeadlineExceeded once
// the watch cuts the call off, and the event it handles as the cause.
func TestCallContext_ShowsTheCallsDeadline(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.Background())
	ev := &Event{ID: 3}
	due := time.Now().Add(time.Minute)
	ctx := newCallContext(parent, ev, due)
	got, ok := ctx.Deadline()
	require.True(t, ok)
	require.Equal(t, due, got)
	cause, ok := CauseFrom(ctx)
	require.True(t, ok)
	require.Same(t, ev, cause)
	require.NoError(t, ctx.Err())

	cancel(context.DeadlineExceeded)
	<-ctx.Done()
	require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded, "cut off at its time")

	stopped, stop := context.WithCancelCause(context.Background())
	stop(context.Canceled)
	require.ErrorIs(t, newCallContext(stopped, ev, due).Err(), context.Canceled, "the dispatcher stopping is no timeout")

	soon, cancelSoon := context.WithTimeout(context.Background(), time.Second)
	defer cancelSoon()
	parentDue, _ := soon.Deadline()
	got, _ = newCallContext(soon, ev, due).Deadline()
	require.Equal(t, parentDue, got, "the parent's sooner deadline")
}
