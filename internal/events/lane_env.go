package events

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// laneEnv is what a dispatcher gives its lanes (laneDeps): its database and
// the lane's statements, the commit horizon, the shared reads, the delivery
// path and the running lanes. A lane reaches nothing of the dispatcher
// beyond it.
type laneEnv struct {
	db      *gorm.DB
	sql     laneStatements
	cfg     laneConfig
	commits *commitHorizon
	cache   *batchCache
	exec    *executor
	lanes   *runningLanes
	surveys *atomic.Uint64 // Dispatcher.surveys
	metrics *Metrics       // set before the dispatcher starts (SetMetrics)
	perSub  int            // lanes of a subscriber holding a batch at once

	mu      sync.Mutex
	batches map[string]chan struct{} // per subscriber: lanes holding a batch
}

// laneStatements are the statements a lane runs itself (through laneEnv):
// its claim and release, and the reads of its open deliveries and retries.
type laneStatements interface {
	claim(ctx context.Context, db *gorm.DB, q claimQuery) ([]claimedLane, []Event, error)
	release(ctx context.Context, db *gorm.DB, k laneKey, owner string) error
	deliveryReads
}

func (e *laneEnv) horizon() int64 {
	h, _ := e.commits.current()
	return h
}

// claim claims the lane alone and holds its first batch in the shared
// reads, for the read that follows.
func (e *laneEnv) claim(ctx context.Context, k laneKey, pos, horizon int64) (claimedLane, uint64, bool, error) {
	claimed, batch, err := e.sql.claim(ctx, e.db, claimQuery{part: k.part, subs: []string{k.sub}, pos: pos, horizon: horizon,
		limit: e.cfg.batchSize, owner: e.cfg.owner, lease: e.cfg.lease})
	if err != nil || len(claimed) != 1 {
		return claimedLane{}, 0, false, err
	}
	e.cache.put(k.part, pos, horizon, batch)
	return claimed[0], e.surveys.Load(), true, nil
}

func (e *laneEnv) release(k laneKey) {
	// A fresh context: the lease is released even when the pass was cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.sql.release(ctx, e.db, k, e.cfg.owner); err != nil {
		e.cfg.log.Warn("release lane lease", "lane", k.String(), "err", err)
	}
}

// batchSlot takes one of the subscriber's batch slots, which bound its
// lanes holding a batch at once to twice Workers: enough to keep the
// database slots busy, and the same for a backlog of any length, so that
// what the dispatcher holds in memory does not grow with the backlog. Each
// subscriber has its own, so a subscriber that hangs holds only its own.
func (e *laneEnv) batchSlot(ctx context.Context, s *Subscriber) (func(), error) {
	e.mu.Lock()
	slots, ok := e.batches[s.Name]
	if !ok {
		slots = make(chan struct{}, e.perSub)
		e.batches[s.Name] = slots
	}
	e.mu.Unlock()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (e *laneEnv) read(ctx context.Context, part int, pos, horizon int64) ([]Event, int64, error) {
	return e.cache.get(ctx, part, pos, horizon)
}

func (e *laneEnv) openObjects(ctx context.Context, k laneKey) (map[objectKey]int64, error) {
	return e.sql.openObjects(ctx, e.db, k)
}

func (e *laneEnv) dueRetries(ctx context.Context, k laneKey, limit int) ([]dueRetry, error) {
	return e.sql.dueRetries(ctx, e.db, k, limit)
}

func (e *laneEnv) heldBehind(ctx context.Context, sub string, ev Event) ([]Event, error) {
	return e.sql.heldBehind(ctx, e.db, sub, ev)
}

func (e *laneEnv) deliver(ctx context.Context, s *Subscriber, evs []Event, blocked map[objectKey]int64, c completion) ([]outcome, error) {
	return e.exec.deliverSet(ctx, s, evs, blocked, c)
}

func (e *laneEnv) observeBatch(evs []Event) { e.metrics.observeBatch(evs) }

func (e *laneEnv) leave(l *lane, live bool) bool { return e.lanes.leave(l, live) }

func (e *laneEnv) ended(st PassStats) { e.lanes.ended(st) }
