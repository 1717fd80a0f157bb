package events

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// laneRun is a lane being dispatched by a goroutine of this process.
type laneRun struct {
	key laneKey
	sub *Subscriber
	pos int64 // the lane's position, as this goroutine last committed it
	// committed is pos for other goroutines (a pass tells from it whether
	// the lane has work); it lags pos only while a batch commits.
	committed atomic.Int64
	open      bool // some delivery of the lane may be open (retrying, held or failed)
	due       bool // some retry of the lane is due
	held      bool // this dispatcher holds the lane's lease
	done      chan struct{}

	// linger is how long the lane keeps its lease and waits for more work
	// once it has none (0: it stops at once); poke wakes it meanwhile.
	linger time.Duration
	poke   chan struct{}

	// Set under Dispatcher.mu by a pass that saw work for the lane while it
	// ran: rerun, and the horizon up to which it saw it (math.MaxInt64 for a
	// retry due). The lane looks again only when it has not looked that far
	// itself (lookedUpTo, its own): a pass usually sees the very events the
	// lane is dispatching, and a second look would claim the lane, find
	// nothing and release it, two more updates of its row.
	rerun      bool
	rerunUpTo  int64
	lookedUpTo int64
	// Also under Dispatcher.mu: idle while the lane lingers, and moved, set
	// by a pass that found a lingering lane's lease gone (a replay moved the
	// lane back and took the lease), with the lane's position then.
	idle  bool
	moved *int64
	// claimSeq is the number of surveys begun when the lane's last claim
	// came back: a survey numbered above it saw the lease.
	claimSeq uint64

	mu    sync.Mutex
	stats PassStats
	err   error
}

// lookAgain asks the running lane to look again for work up to the
// horizon; Dispatcher.mu is held.
func (lr *laneRun) lookAgain(horizon int64) {
	lr.rerun = true
	lr.rerunUpTo = max(lr.rerunUpTo, horizon)
	select {
	case lr.poke <- struct{}{}:
	default:
	}
}

// wanted tells whether a pass has asked the lane to look further than it
// has looked itself, and takes the request; Dispatcher.mu is held.
func (lr *laneRun) wanted() bool {
	if lr.moved != nil {
		lr.pos, lr.held, lr.moved = *lr.moved, false, nil
		lr.committed.Store(lr.pos)
		lr.rerun, lr.rerunUpTo = false, 0
		return true
	}
	if !lr.rerun || lr.rerunUpTo <= lr.lookedUpTo {
		return false
	}
	if lr.rerunUpTo == math.MaxInt64 {
		lr.due = true // a retry is due somewhere: look at the lane's
	}
	lr.rerun, lr.rerunUpTo = false, 0
	return true
}

func (lr *laneRun) count(st PassStats, err error) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.stats.add(st)
	if err != nil {
		lr.err = err
	}
}

// runLane dispatches one lane until it has nothing left up to the horizon,
// looking again whenever a pass saw more work for it meanwhile.
func (d *Dispatcher) runLane(ctx, stop context.Context, lr *laneRun) {
	for {
		if !lr.held && stop.Err() == nil {
			lr.held = d.reclaim(ctx, lr)
		}
		if lr.held {
			if err := d.workLane(ctx, stop, lr); err != nil {
				lr.count(PassStats{}, err)
				if !errors.Is(err, errLeaseLost) {
					d.opt.Logger.Warn("dispatch lane", "lane", lr.key.String(), "err", ErrorText(err))
				}
			}
		}
		if !d.goOn(stop, lr) {
			break
		}
	}
	if lr.held {
		d.releaseLane(lr.key)
		lr.held = false
	}
	close(lr.done)
	lr.mu.Lock()
	st := lr.stats
	lr.mu.Unlock()
	d.mu.Lock()
	idle := d.onLaneIdle
	d.mu.Unlock()
	if idle != nil {
		idle(st)
	}
}

// goOn tells whether the lane goes on after a round of work: when a pass
// has asked it to look further meanwhile, or, while it holds its lease,
// when one does within its linger. Otherwise it leaves the running lanes.
func (d *Dispatcher) goOn(stop context.Context, lr *laneRun) bool {
	var (
		timer   *time.Timer
		expired bool
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		d.mu.Lock()
		live := stop.Err() == nil && lr.err == nil
		if live && lr.wanted() {
			lr.idle = false
			d.mu.Unlock()
			return true
		}
		if !live || !lr.held || lr.linger <= 0 || expired {
			lr.idle = false
			delete(d.running, lr.key)
			d.mu.Unlock()
			return false
		}
		lr.idle = true
		d.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(lr.linger)
		}
		select {
		case <-lr.poke:
		case <-timer.C:
			expired = true
		case <-stop.Done():
		}
	}
}

// reclaim takes the lane's lease again, at the position this process last
// left it; false when another dispatcher holds it or it has moved (a replay).
func (d *Dispatcher) reclaim(ctx context.Context, lr *laneRun) bool {
	h, _ := d.horizon.current()
	claimed, batch, err := d.sql.claim(ctx, d.db, claimQuery{part: lr.key.part, subs: []string{lr.key.sub}, pos: lr.pos, horizon: h,
		limit: d.opt.BatchSize, owner: d.opt.Owner, lease: d.opt.Lease})
	if err != nil {
		lr.count(PassStats{}, err)
		return false
	}
	if len(claimed) != 1 {
		return false
	}
	d.cache.put(lr.key.part, lr.pos, h, batch)
	d.mu.Lock()
	lr.claimSeq = d.surveys.Load()
	d.mu.Unlock()
	lr.open, lr.due = claimed[0].open, claimed[0].due
	return true
}

func (d *Dispatcher) releaseLane(k laneKey) {
	// A fresh context: the lease is released even when the pass was cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.sql.release(ctx, d.db, k, d.opt.Owner); err != nil {
		d.opt.Logger.Warn("release lane lease", "lane", k.String(), "err", err)
	}
}

// workLane dispatches the lane's batches up to the horizon, then its retries
// that are due. The last batch gives the lease back in its own transaction
// when no retry waits.
func (d *Dispatcher) workLane(ctx, stop context.Context, lr *laneRun) error {
	// The first batch is done even when stop has come meanwhile: the lane
	// was claimed for it, and its events may be read already.
	for first := true; first || stop.Err() == nil; first = false {
		h, _ := d.horizon.current()
		if lr.pos >= h {
			lr.lookedUpTo = h
			break
		}
		next, err := d.nextBatch(ctx, lr, h)
		if err != nil {
			return err
		}
		if next == batchNone {
			// Nothing was written in the partition up to the horizon.
			lr.lookedUpTo = h
			break
		}
		if next == batchReleased {
			lr.held = false
			lr.lookedUpTo = h
			return nil
		}
	}
	if lr.due && stop.Err() == nil {
		st, err := d.retryDue(ctx, stop, lr)
		lr.count(st, err)
		lr.due = false
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
func (d *Dispatcher) nextBatch(ctx context.Context, lr *laneRun, h int64) (batchDone, error) {
	slots := d.batchSlots(lr.sub)
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return batchNone, ctx.Err()
	}
	defer func() { <-slots }()
	batch, covered, err := d.cache.get(ctx, lr.key.part, lr.pos, h)
	if err != nil || len(batch) == 0 {
		return batchNone, err
	}
	// The last batch gives the lease back, unless the lane lingers.
	release := covered >= h && !lr.due && lr.linger <= 0
	st, err := d.dispatchBatch(ctx, lr, batch, covered, release)
	lr.count(st, nil)
	if err != nil {
		return batchNone, err
	}
	if release {
		return batchReleased, nil
	}
	return batchMore, nil
}

// mine returns the events of the batch the subscriber receives: the batch
// itself when they all are (it is shared with the partition's other lanes,
// and read only), a copy of those it receives otherwise.
func mine(s *Subscriber, batch []Event) []Event {
	receives := func(ev *Event) bool {
		for _, t := range s.Types {
			if ev.Type == t {
				return true
			}
		}
		return false
	}
	n := 0
	for i := range batch {
		if receives(&batch[i]) {
			n++
		}
	}
	if n == len(batch) {
		return batch
	}
	out := make([]Event, 0, n)
	for i := range batch {
		if receives(&batch[i]) {
			out = append(out, batch[i])
		}
	}
	return out
}

// dispatchBatch hands the lane's subscriber its events of a batch, the
// journal's events of the partition in (lr.pos, next], and commits the
// lane's new position with what did not simply succeed.
func (d *Dispatcher) dispatchBatch(ctx context.Context, lr *laneRun, batch []Event, next int64, release bool) (PassStats, error) {
	var st PassStats
	evs := mine(lr.sub, batch)
	st.Events = len(evs)
	move := laneMove{key: lr.key, owner: d.opt.Owner, pos: lr.pos, next: next, batch: len(evs) > 0, release: release, lease: d.opt.Lease}
	blocked := map[objectKey]int64{}
	if lr.open && len(evs) > 0 {
		var err error
		if blocked, err = d.blockedObjects(ctx, lr.key); err != nil {
			return st, err
		}
	}
	var outcomes []outcome
	var err error
	if lr.sub.Local() {
		outcomes, err = d.dispatchLocal(ctx, lr, evs, blocked, move)
	} else {
		outcomes = d.callOutside(ctx, lr.sub, evs, blocked)
		// The slot is taken once the calls are done: a slow subscriber holds
		// none while it is called.
		d.ownSlots <- struct{}{}
		err = d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := d.sql.moveLane(tx, move); err != nil {
				return err
			}
			return d.recordOutcomes(tx, lr.sub, outcomes)
		})
		<-d.ownSlots
	}
	if err != nil {
		return st, err
	}
	for _, oc := range outcomes {
		if oc.status != StatusHeld {
			st.Failed++
		}
	}
	st.Delivered = len(evs) - len(outcomes)
	if lr.sub.Local() {
		d.countLocal(lr.sub, st.Delivered, outcomes)
	}
	d.metrics.observeBatch(evs)
	lr.pos = next
	lr.committed.Store(next)
	lr.open = lr.open || len(outcomes) > 0
	return st, nil
}

// dispatchLocal runs a local subscriber over its events in the lane's batch
// transaction, so that its effects, the exceptions and the lane's new
// position commit together. The fast path runs without savepoints; when the
// subscriber fails, the batch is run again with one savepoint per event.
func (d *Dispatcher) dispatchLocal(ctx context.Context, lr *laneRun, evs []Event, blocked map[objectKey]int64, move laneMove) ([]outcome, error) {
	d.dbSlots <- struct{}{}
	defer func() { <-d.dbSlots }()
	var outcomes []outcome
	run := func(savepoints bool) error {
		outcomes = nil
		return d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			// The fence first: a dispatcher whose lease has run out (and
			// whose lane someone else has dispatched meanwhile) applies no
			// effect at all. It also locks the lane's row until the commit.
			if err := d.sql.moveLane(tx, move); err != nil {
				return err
			}
			b := cloneBlocked(blocked)
			for i := range evs {
				oc, ok := d.deliverOrHold(ctx, tx, lr.sub, &evs[i], b, savepoints, nil)
				if ok {
					continue
				}
				if oc.stuck {
					return errStuck
				}
				if oc.status == StatusRetrying && !savepoints {
					return errSlowPath
				}
				outcomes = append(outcomes, oc)
			}
			return d.recordOutcomes(tx, lr.sub, outcomes)
		})
	}
	err := run(false)
	// Each run that hit a stuck subscriber marked it, so this ends.
	for errors.Is(err, errSlowPath) || errors.Is(err, errStuck) {
		err = run(true)
	}
	for i := range evs {
		d.stuck.take(deliveryKey{evs[i].ID, lr.sub.Name})
	}
	return outcomes, err
}

var errSlowPath = errors.New("events: a local subscriber failed; retry the batch with savepoints")

func cloneBlocked(m map[objectKey]int64) map[objectKey]int64 {
	out := make(map[objectKey]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// blockedObjects returns, per object of the lane, its oldest delivery that is
// still open (retrying, held or failed): later events of the object are held
// behind it.
func (d *Dispatcher) blockedObjects(ctx context.Context, k laneKey) (map[objectKey]int64, error) {
	rows, err := d.db.WithContext(ctx).Raw(`SELECT aggregate_type, aggregate_id, min(event_id) FROM events_deliveries
WHERE partition = ? AND subscriber = ? AND status <> 'processed' GROUP BY aggregate_type, aggregate_id`, k.part, k.sub).Rows()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := map[objectKey]int64{}
	for rows.Next() {
		var o objectKey
		var id int64
		if err := rows.Scan(&o.aggType, &o.aggID, &id); err != nil {
			return nil, err
		}
		out[o] = id
	}
	return out, rows.Err()
}

// countLocal counts the committed outcomes of a local subscriber's batch.
func (d *Dispatcher) countLocal(s *Subscriber, delivered int, outcomes []outcome) {
	if d.metrics == nil {
		return
	}
	for range delivered {
		d.metrics.countDelivery(s.Name, nil)
	}
	for _, oc := range outcomes {
		if oc.status != StatusHeld {
			d.metrics.countDelivery(s.Name, oc.err)
		}
	}
}
