package events_test

// Outside subscribers: calls side by side for different objects, one at a
// time for one object, and a call that hangs holding its own object and
// its call slot, not its lane.

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// An outside subscriber with Concurrency 4 has up to four calls in flight,
// never two for one object, whose events keep their order.
func TestLanes_OutsideConcurrencyKeepsObjectOrder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var (
			mu       sync.Mutex
			inFlight = map[int64]bool{}
			seen     = map[int64][]int64{}
			now, top int
			twice    bool
		)
		f := newFixture(t, db, events.Subscriber{Name: "parallel", Types: []string{"thing.created"}, Concurrency: 4,
			Handle: func(ctx context.Context, ev events.Event) error {
				mu.Lock()
				if inFlight[ev.AggregateID] {
					twice = true
				}
				inFlight[ev.AggregateID] = true
				now++
				top = max(top, now)
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
				mu.Lock()
				inFlight[ev.AggregateID] = false
				now--
				seen[ev.AggregateID] = append(seen[ev.AggregateID], ev.ID)
				mu.Unlock()
				return nil
			}})
		want := map[int64][]int64{}
		for i := range 120 {
			obj := int64(i % 12)
			want[obj] = append(want[obj], add(t, db, "thing.created", obj))
		}
		drain(t, f.disp)
		mu.Lock()
		defer mu.Unlock()
		require.False(t, twice, "two calls in flight for one object")
		require.LessOrEqual(t, top, 4)
		require.Greater(t, top, 1, "calls for different objects overlap")
		require.Equal(t, want, seen, "each object's events in order, each once")
	})
}

// samePartition returns n object ids of "things" in one partition.
func samePartition(n int) []int64 {
	var ids []int64
	p := events.PartitionOf("things", 1)
	for id := int64(1); len(ids) < n; id++ {
		if events.PartitionOf("things", id) == p {
			ids = append(ids, id)
		}
	}
	return ids
}

// An outside subscriber's call that hangs (a publish to a NATS that stopped
// answering) holds its own object only: the lane stops waiting for it at
// the call budget, records its event as a retry and holds the object's
// later events behind it, and delivers the partition's other objects. Once
// the subscriber answers again, the object's events arrive in order.
func TestLanes_HangingCallHoldsOnlyItsObject(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		objs := samePartition(3)
		hang, other, third := objs[0], objs[1], objs[2]
		letGo := make(chan struct{})
		var (
			mu        sync.Mutex
			delivered = map[int64][]int64{} // object → event ids answered, in order
		)
		f := newFixture(t, db, events.Subscriber{Name: "relay", Types: []string{"thing.created"}, Concurrency: 4,
			Handle: func(ctx context.Context, ev events.Event) error {
				if ev.AggregateID == hang {
					select {
					case <-letGo:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				mu.Lock()
				delivered[ev.AggregateID] = append(delivered[ev.AggregateID], ev.ID)
				mu.Unlock()
				return nil
			}})
		const timeout = 20 * time.Second
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 100, Timeout: timeout, CallBudget: 200 * time.Millisecond,
			BackoffBase: 10 * time.Millisecond, BackoffMax: 20 * time.Millisecond, MaxAttempts: 5})
		a1 := add(t, db, "thing.created", hang)
		b1 := add(t, db, "thing.created", other)
		a2 := add(t, db, "thing.created", hang)
		c1 := add(t, db, "thing.created", third)
		b2 := add(t, db, "thing.created", other)

		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
		defer cancel()
		_, err := d.RunOnce(ctx)
		require.NoError(t, err)
		took := time.Since(start)
		require.Less(t, took, timeout/2, "the pass did not wait for the hanging call's timeout")

		mu.Lock()
		require.Equal(t, []int64{b1, b2}, delivered[other], "the partition's other objects were delivered, in order")
		require.Equal(t, []int64{c1}, delivered[third])
		require.Empty(t, delivered[hang])
		mu.Unlock()
		type row struct {
			EventID   int64
			Status    string
			LastError string
			BlockedBy *int64
		}
		var rows []row
		require.NoError(t, database.Scan(db.Raw(`SELECT event_id, status, last_error, blocked_by FROM events_deliveries WHERE subscriber = 'relay' ORDER BY event_id`),
			&rows))
		require.Len(t, rows, 2, "only the hanging object's events are open: %+v", rows)
		require.Equal(t, a1, rows[0].EventID)
		require.Equal(t, events.StatusRetrying, rows[0].Status)
		require.Contains(t, rows[0].LastError, "no answer within the call budget")
		left := deliveryOf(t, f.journal, a1, "relay")
		require.Equal(t, 1, left.Attempts, "the call with no answer spent an attempt")
		require.Len(t, left.Failures, 1)
		require.True(t, left.Failures[0].Spent)
		next := left.NextAttemptAt
		require.NotNil(t, next)
		require.True(t, next.After(start.Add(timeout)), "the retry comes after the left call's timeout, so that the two never overlap: due %s, the pass began %s", next, start)
		require.True(t, next.Before(time.Now().Add(timeout+2*time.Second)), "and not much later: due %s", next)
		require.Equal(t, a2, rows[1].EventID)
		require.Equal(t, events.StatusHeld, rows[1].Status, "the object's later event waits behind it")
		require.NotNil(t, rows[1].BlockedBy)
		require.Equal(t, a1, *rows[1].BlockedBy)
		var passed int64
		require.NoError(t, database.Scan(db.Raw(`SELECT position FROM events_lanes WHERE subscriber = 'relay' AND partition = ?`, events.PartitionOf("things", hang)),
			&passed))
		require.GreaterOrEqual(t, passed, b2, "the lane moved past the batch")

		// The subscriber answers again; the retry is made due at once (it
		// waits for the call's timeout otherwise).
		close(letGo)
		require.NoError(t, db.Exec(`UPDATE events_deliveries SET next_attempt_at = `+database.Now(db)+` WHERE subscriber = 'relay' AND status = 'retrying'`).Error)
		drain(t, d)
		requireSettled(t, db)
		mu.Lock()
		defer mu.Unlock()
		// The call left without an answer returns once let go and counts
		// its a1 whenever it is scheduled, on a busy machine after the
		// retry's: after a2, only that late a1 may stand.
		got := delivered[hang]
		i := slices.Index(got, a2)
		require.GreaterOrEqual(t, i, 0, "the held event was delivered: %v", got)
		require.Contains(t, got[:i], a1, "after the first: %v", got)
		for _, id := range got[i+1:] {
			require.Equal(t, a1, id, "the held event came last but for the left call's late answer: %v", got)
		}
	})
}

// A partner that never answers within the call budget ends failed once its
// attempts are used up, each retry after the left call's timeout: a call
// with no answer is a failure like a timed-out one, not a delay the other
// side asked for (which would put it off for a day without spending one).
func TestLanes_HangingPartnerEndsFailed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var calls atomic.Int32
		f := newFixture(t, db, events.Subscriber{Name: "relay", Types: []string{"thing.created"}, Concurrency: 2,
			Handle: func(ctx context.Context, ev events.Event) error {
				calls.Add(1)
				<-ctx.Done()
				return ctx.Err()
			}})
		const timeout, budget = 400 * time.Millisecond, 100 * time.Millisecond
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 100, Timeout: timeout, CallBudget: budget,
			BackoffBase: 10 * time.Millisecond, BackoffMax: 20 * time.Millisecond, MaxAttempts: 3})
		id := add(t, db, "thing.created", 1)

		// Each pass makes the attempt that is due and leaves the call; the
		// next is due once that call's timeout has passed, by the database's
		// clock, which set the time of the retry.
		due := func() bool {
			var n int64
			require.NoError(t, database.Scan(db.Raw(`SELECT count(*) FROM events_deliveries WHERE subscriber = 'relay' AND next_attempt_at <= `+
				database.Now(db)), &n))
			return n == 1
		}
		deadline := time.Now().Add(30 * time.Second)
		for deliveryOf(t, f.journal, id, "relay").Status != events.StatusFailed {
			require.True(t, time.Now().Before(deadline), "still not failed after %d calls: %+v", calls.Load(), deliveryOf(t, f.journal, id, "relay"))
			_, err := d.RunOnce(context.Background())
			require.NoError(t, err)
			if deliveryOf(t, f.journal, id, "relay").Status == events.StatusRetrying {
				require.Eventually(t, due, 30*time.Second, time.Millisecond, "the retry falls due")
			}
		}
		got := deliveryOf(t, f.journal, id, "relay")
		require.Equal(t, 3, got.Attempts)
		require.Len(t, got.Failures, 3)
		for i, fl := range got.Failures {
			require.True(t, fl.Spent, "failure %d", i)
			require.Contains(t, fl.Error, "no answer within the call budget")
			if i > 0 {
				require.GreaterOrEqual(t, fl.At.Sub(got.Failures[i-1].At), timeout, "each retry came after the left call's timeout")
			}
		}
		require.Equal(t, int32(3), calls.Load(), "one call per attempt")
	})
}

// A call left at the call budget keeps its object's call slot until its
// timeout, even when it never returns: with one slot, the next object is
// called once that timeout has passed, not before (two calls would then be
// in flight) and not never (the slot would be lost).
func TestLanes_LeftCallHoldsItsSlotUntilItsTimeout(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		objs := samePartition(2)
		hang, other := objs[0], objs[1]
		letGo := make(chan struct{})
		t.Cleanup(func() { close(letGo) })
		var (
			mu       sync.Mutex
			calledAt = map[int64]time.Time{}
			deadline = map[int64]time.Time{}
		)
		f := newFixture(t, db, events.Subscriber{Name: "relay", Types: []string{"thing.created"}, Concurrency: 1,
			Handle: func(ctx context.Context, ev events.Event) error {
				mu.Lock()
				calledAt[ev.AggregateID] = time.Now()
				deadline[ev.AggregateID], _ = ctx.Deadline()
				mu.Unlock()
				if ev.AggregateID == hang {
					<-letGo // ignores its context
				}
				return nil
			}})
		const timeout, budget = 1500 * time.Millisecond, time.Second
		d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{BatchSize: 100, Timeout: timeout, CallBudget: budget,
			BackoffBase: time.Hour, BackoffMax: time.Hour, MaxAttempts: 5})
		left := add(t, db, "thing.created", hang)
		next := add(t, db, "thing.created", other)

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := d.RunOnce(ctx)
		require.NoError(t, err, "the pass ends although the left call never returns")
		mu.Lock()
		hungAt, otherAt, otherDue := calledAt[hang], calledAt[other], deadline[other]
		mu.Unlock()
		require.False(t, otherAt.IsZero(), "the other object was called in the same pass")
		require.GreaterOrEqual(t, otherAt.Sub(hungAt), timeout, "with its one slot held by the left call until that call's timeout")
		require.Less(t, otherAt.Sub(hungAt), timeout+1500*time.Millisecond, "and given back then (a slot given back a budget late would make it 3.5 s)")
		require.WithinDuration(t, otherAt.Add(timeout), otherDue, 100*time.Millisecond, "a call's context has its timeout as its deadline")
		require.Equal(t, events.StatusRetrying, deliveryOf(t, f.journal, left, "relay").Status)
		require.Equal(t, events.StatusProcessed, deliveryOf(t, f.journal, next, "relay").Status)
	})
}
