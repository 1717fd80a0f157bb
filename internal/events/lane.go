package events

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// lane is one lane dispatched by a goroutine of this process: a subscriber's
// position in one partition, with the lease this dispatcher holds on it. It
// owns its life cycle:
//
//	  a pass claims it (startLanes)        a pass: lookAgain, leaseTaken
//	           │                                     │ (messages, under l.mu)
//	           ▼                                     ▼
//	┌─────► running ── batches up to the horizon (batch.go), then the retries due (retries.go)
//	│          │  ▲
//	│  nothing │  │ lookAgain: a pass saw work past what the lane looked at
//	│     left ▼  │
//	│      lingering ── linger over, stop, or no linger (RunOnce) ──► released ──► done
//	│          │                                                        ▲
//	│          │ leaseTaken: a replay moved the lane back and took      │
//	│          ▼ its lease while it lingered                            │
//	└──── reclaim, at the position the replay left ── another holds it ─┘
//
//	fenced off: a batch or retry whose fence finds the lease gone or the
//	lane moved (errLeaseLost) ends the lane with that error.
//
// The last batch of a lane that does not linger gives the lease back in its
// own transaction (released); asked to look again then, the lane claims
// itself again where it stands.
//
// Passes talk to a lane only through lookAgain, leaseTaken, behind and
// result; every field is written by the lane's own methods, and all but
// those the passes ask about under l.mu by the lane goroutine alone. What
// the lane needs from outside itself is laneDeps, no more: it reaches
// neither the dispatcher nor its database. The dispatcher keeps the lanes
// running in this process (runningLanes) and removes a lane only through
// leave, which the lane calls when it ends.
type lane struct {
	deps   laneDeps
	cfg    laneConfig
	key    laneKey
	sub    *Subscriber
	linger time.Duration // how long the lane keeps its lease once it has nothing left (0: it stops at once)
	done   chan struct{} // closed when the lane has ended
	poke   chan struct{} // wakes a lingering lane
	// committed is the lane's position for passes (they tell from it
	// whether the lane has work); it lags pos only while a batch commits.
	committed atomic.Int64

	// The lane goroutine's own.
	pos        int64 // the lane's position, as this goroutine last committed it
	open       bool  // some delivery of the lane may be open (retrying, held or failed)
	due        bool  // some retry of the lane is due
	held       bool  // this dispatcher holds the lane's lease
	lookedUpTo int64 // the horizon up to which the lane last looked for work

	mu        sync.Mutex
	lingering bool
	// wantUpTo is the furthest horizon up to which a pass saw work for the
	// lane while it ran (math.MaxInt64: a retry is due). The lane looks again
	// only when it has not looked that far itself: a pass usually sees the
	// very events the lane is dispatching, and a second look would claim the
	// lane, find nothing and release it, two more updates of its row.
	wantUpTo int64
	// movedTo is set by a pass that found a lingering lane's lease gone (a
	// replay moved the lane back and took the lease): the position then.
	movedTo *int64
	// claimSeq is the number of surveys begun when the lane's last claim
	// came back: a survey numbered above it saw the lease.
	claimSeq uint64
	stats    PassStats
	err      error
}

// laneConfig is what a lane needs to know of its dispatcher's options.
type laneConfig struct {
	owner     string        // the dispatcher's name in leases
	lease     time.Duration // how long a lease lasts unrenewed
	batchSize int           // the most events, or retries, read at once
	log       *slog.Logger
	// lingered counts the times a lane began to linger, for the tests.
	lingered *milestone
}

// laneDeps is all a lane needs from outside itself: the commit horizon, its
// lease, the journal's events, its open deliveries and retries, the
// delivery path, and the set of running lanes it leaves when it ends.
// laneEnv is the dispatcher's.
type laneDeps interface {
	// horizon is the commit horizon: no event at or below it can still
	// commit, and the lane reads nothing past it.
	horizon() int64
	// claim takes the lane's lease at pos again and reads its first batch
	// for read to find; false when another dispatcher holds the lane or it
	// is no longer at pos. seq is the number of surveys begun when the
	// claim came back (see lane.claimSeq).
	claim(ctx context.Context, k laneKey, pos, horizon int64) (c claimedLane, seq uint64, ok bool, err error)
	// release gives the lane's lease back.
	release(k laneKey)
	// batchSlot takes one of the subscriber's batch slots; done gives it
	// back.
	batchSlot(ctx context.Context, s *Subscriber) (done func(), err error)
	// read returns the partition's events after pos up to the horizon (a
	// batch at most) and the id up to which they cover the journal.
	read(ctx context.Context, part int, pos, horizon int64) ([]Event, int64, error)
	// openObjects returns, per object of the lane, its oldest open delivery.
	openObjects(ctx context.Context, k laneKey) (map[objectKey]int64, error)
	// dueRetries reads the lane's retries due with their events, at most limit.
	dueRetries(ctx context.Context, k laneKey, limit int) ([]dueRetry, error)
	// heldBehind reads the events of ev's object held for sub, in order.
	heldBehind(ctx context.Context, sub string, ev Event) ([]Event, error)
	// deliver goes the delivery path (executor.deliverSet).
	deliver(ctx context.Context, s *Subscriber, evs []Event, blocked map[objectKey]int64, c completion) ([]outcome, error)
	// observeBatch records a batch's delay from commit to subscriber.
	observeBatch(evs []Event)
	// leave removes the lane from the running lanes, unless (when live) a
	// pass has asked it to look again meanwhile (runningLanes.leave).
	leave(l *lane, live bool) bool
	// ended hears what the lane did once it has ended.
	ended(st PassStats)
}

func newLane(deps laneDeps, cfg laneConfig, key laneKey, sub *Subscriber, c claimedLane, pos int64, linger time.Duration, seq uint64) *lane {
	l := &lane{deps: deps, cfg: cfg, key: key, sub: sub, pos: pos, open: c.open, due: c.due, held: true, claimSeq: seq, linger: linger,
		done: make(chan struct{}), poke: make(chan struct{}, 1)}
	l.committed.Store(pos)
	return l
}

// lookAgain asks the lane to look again for work up to the horizon
// (math.MaxInt64: a retry is due).
func (l *lane) lookAgain(horizon int64) {
	l.mu.Lock()
	l.wantUpTo = max(l.wantUpTo, horizon)
	l.mu.Unlock()
	select {
	case l.poke <- struct{}{}:
	default:
	}
}

// leaseTaken tells the lane that a survey numbered seq found its lease gone
// and the lane at pos. A lingering lane whose claim came back before that
// survey began then claims itself again there (the survey would have seen
// its lease otherwise); a running lane's own fence tells it.
func (l *lane) leaseTaken(pos int64, seq uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lingering && l.claimSeq < seq {
		l.movedTo = &pos
	}
}

// behind tells whether the partition's last event, last, is past the
// position the lane has committed.
func (l *lane) behind(last int64) bool { return last > l.committed.Load() }

// result is what the lane did, once done is closed.
func (l *lane) result() (PassStats, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats, l.err
}

func (l *lane) count(st PassStats, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.add(st)
	if err != nil {
		l.err = err
	}
}

func (l *lane) failed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err != nil
}

// takeRequest takes a pass's request to look further than the lane has
// looked itself, or to claim itself again after a replay.
func (l *lane) takeRequest() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.movedTo != nil {
		l.pos, l.held, l.movedTo = *l.movedTo, false, nil
		l.committed.Store(l.pos)
		l.wantUpTo = 0
		return true
	}
	if l.wantUpTo <= l.lookedUpTo {
		return false
	}
	if l.wantUpTo == math.MaxInt64 {
		l.due = true // a retry is due somewhere: look at the lane's
	}
	l.wantUpTo = 0
	return true
}

// requested tells, without taking it, whether a request waits; the
// dispatcher asks it under its own lock before the lane leaves.
func (l *lane) requested() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.movedTo != nil || l.wantUpTo > l.lookedUpTo
}

func (l *lane) setLingering(on bool) {
	l.mu.Lock()
	began := on && !l.lingering
	l.lingering = on
	l.mu.Unlock()
	if began {
		l.cfg.lingered.add()
	}
}

// run dispatches the lane until it has nothing left up to the horizon,
// looking again whenever a pass saw more work for it meanwhile.
func (l *lane) run(ctx, stop context.Context) {
	for {
		if !l.held && stop.Err() == nil {
			l.held = l.reclaim(ctx)
		}
		if l.held {
			if err := l.work(ctx, stop); err != nil {
				l.count(PassStats{}, err)
				if !errors.Is(err, errLeaseLost) {
					l.cfg.log.Warn("dispatch lane", "lane", l.key.String(), "err", ErrorText(err))
				}
			}
		}
		if !l.goOn(stop) {
			break // goOn has given the lease back
		}
	}
	close(l.done)
	st, _ := l.result()
	l.deps.ended(st)
}

// goOn tells whether the lane goes on after a round of work: when a pass
// has asked it to look further meanwhile, or, while it holds its lease,
// when one does within its linger. Otherwise it leaves the running lanes.
func (l *lane) goOn(stop context.Context) bool {
	var (
		timer   *time.Timer
		expired bool
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	defer l.setLingering(false)
	for {
		live := stop.Err() == nil && !l.failed()
		if live && l.takeRequest() {
			return true
		}
		if !live || !l.held || l.linger <= 0 || expired {
			if l.held {
				// The lease goes back while the lane is still among the
				// running ones. Once it has left them, a pass may claim it
				// again, and a claim takes this dispatcher's own lease: a
				// release after that would clear the new lane's lease and
				// fence off its first record, a call made and not recorded.
				l.release()
				l.held = false
			}
			if l.deps.leave(l, live) {
				return false
			}
			continue // asked to look again meanwhile: run claims the lane again
		}
		l.setLingering(true)
		if timer == nil {
			timer = time.NewTimer(l.linger)
		}
		select {
		case <-l.poke:
		case <-timer.C:
			expired = true
		case <-stop.Done():
		}
	}
}

// reclaim takes the lane's lease again, at the position this process last
// left it; false when another dispatcher holds it or it has moved (a replay).
func (l *lane) reclaim(ctx context.Context) bool {
	c, seq, ok, err := l.deps.claim(ctx, l.key, l.pos, l.deps.horizon())
	if err != nil {
		l.count(PassStats{}, err)
		return false
	}
	if !ok {
		return false
	}
	l.mu.Lock()
	l.claimSeq = seq
	l.mu.Unlock()
	l.open, l.due = c.open, c.due
	return true
}

// release gives the lease back.
func (l *lane) release() { l.deps.release(l.key) }

// work dispatches the lane's batches up to the horizon, then its retries
// that are due. The last batch gives the lease back in its own transaction
// when no retry waits.
func (l *lane) work(ctx, stop context.Context) error {
	// The first batch is done even when stop has come meanwhile: the lane
	// was claimed for it, and its events may be read already.
	for first := true; first || stop.Err() == nil; first = false {
		h := l.deps.horizon()
		if l.pos >= h {
			l.lookedUpTo = h
			break
		}
		next, err := l.nextBatch(ctx, h)
		if err != nil {
			return err
		}
		if next == batchNone {
			// Nothing was written in the partition up to the horizon.
			l.lookedUpTo = h
			break
		}
		if next == batchReleased {
			l.held = false
			l.lookedUpTo = h
			return nil
		}
	}
	if l.due && stop.Err() == nil {
		st, err := l.retryDue(ctx, stop)
		l.count(st, err)
		l.due = false
		if err != nil {
			return err
		}
	}
	return nil
}

type batchDone int

const (
	batchMore     batchDone = iota // a batch was dispatched; there may be more
	batchNone                      // nothing to dispatch up to the horizon
	batchReleased                  // the last batch was dispatched and gave the lease back
)

// nextBatch dispatches the lane's next batch up to the horizon h. It takes
// one of the subscriber's batch slots for the time, so that a backlog in
// every partition has a few of the subscriber's lanes hold a batch at once,
// not all of them: what the dispatcher holds stays the same however long
// the backlog.
func (l *lane) nextBatch(ctx context.Context, h int64) (batchDone, error) {
	done, err := l.deps.batchSlot(ctx, l.sub)
	if err != nil {
		return batchNone, err
	}
	defer done()
	batch, covered, err := l.deps.read(ctx, l.key.part, l.pos, h)
	if err != nil || len(batch) == 0 {
		return batchNone, err
	}
	// The last batch gives the lease back, unless the lane lingers.
	release := covered >= h && !l.due && l.linger <= 0
	st, err := l.dispatchBatch(ctx, batch, covered, release)
	l.count(st, nil)
	if err != nil {
		return batchNone, err
	}
	if release {
		return batchReleased, nil
	}
	return batchMore, nil
}
