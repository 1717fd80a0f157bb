package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// Dispatcher hands committed events to their subscribers.
//
// The journal is split into partitions by object, and every subscriber has a
// lane in each partition: its own position there. Every event of the
// partition up to the position has reached the subscriber, except the
// deliveries recorded in events_deliveries (failed and retrying ones, events
// held back behind an earlier failure of the same object). A dispatcher
// moves only the lanes of the subscribers it runs, each lane on its own: it
// claims the lane with a lease, reads the next batch after its position,
// calls the subscriber and, in one transaction, applies a local subscriber's
// effects, records the exceptions and the batch, and moves the position. So
// a slow, hanging or failing subscriber delays only itself, and a lane whose
// subscriber no running replica has waits and loses nothing.
//
// Lanes that stand at the same position share their reads of the journal
// (batchCache), so that adding subscribers costs little while they keep up.
//
// The Dispatcher itself starts and stops passes and wires the pieces, each
// a type in a file of its own: the passes (pass.go), the commit horizon
// (horizon.go), the lane and its life cycle (lane.go, batch.go, retries.go),
// what a lane may reach (lane_env.go), the running lanes and their leases'
// renewal (running.go), the delivery path's executor and completer
// (executor.go, call.go, outside.go, completer.go), the subscribers'
// registration and the replica's heartbeat (registration.go), and every
// statement behind the driver (driver.go).
type Dispatcher struct {
	db      *gorm.DB
	reg     *Registry
	opt     DispatcherOptions
	sql     driver
	horizon *commitHorizon
	cache   *batchCache
	exec    *executor
	lanes   *runningLanes
	env     *laneEnv
	members *registration
	// lingered counts the times a lane began to linger, for the tests.
	lingered milestone

	passMu     sync.Mutex    // one survey at a time in this process
	surveys    atomic.Uint64 // surveys begun, to order them with claims
	replaySeen int64         // under passMu: the last subscriber.replayed event seen
}

// NewDispatcher returns a dispatcher over the registry's subscribers.
func NewDispatcher(db *gorm.DB, reg *Registry, opt DispatcherOptions) *Dispatcher {
	drv := driverFor(db)
	opt.defaults(drv.maxWorkers())
	d := &Dispatcher{db: db, reg: reg, opt: opt, sql: drv, horizon: &commitHorizon{}}
	// own bounds, apart from the local batch transactions (the executor's),
	// the statements that run no subscriber's code: batch reads and outside
	// lanes' batch transactions. Unbounded, the lanes of sixteen partitions
	// keep every connection of the pool busy at once, and a partition's
	// lanes drift apart and stop sharing their reads.
	own := make(chan struct{}, opt.Workers)
	d.cache = newBatchCache(opt.BatchSize, func(ctx context.Context, part int, from, horizon int64) ([]Event, error) {
		own <- struct{}{}
		defer func() { <-own }()
		return drv.readBatch(ctx, db, part, from, horizon, opt.BatchSize)
	})
	d.exec = newExecutor(opt, &completer{db: db, sql: drv, rules: rulesOf(opt), own: own})
	d.lanes = newRunningLanes(opt.Lease, func(ctx context.Context) error { return drv.renew(ctx, db, opt.Owner, opt.Lease) }, opt.Logger)
	d.env = &laneEnv{db: db, sql: drv, commits: d.horizon, cache: d.cache, exec: d.exec, lanes: d.lanes, surveys: &d.surveys,
		perSub: d.lanesAtOnce(), batches: map[string]chan struct{}{},
		cfg: laneConfig{owner: opt.Owner, lease: opt.Lease, batchSize: opt.BatchSize, log: opt.Logger, lingered: &d.lingered}}
	d.members = &registration{db: db, sql: drv, reg: reg, owner: opt.Owner, log: opt.Logger}
	return d
}

// lanesAtOnce is how many lanes of a subscriber hold a batch at once.
func (d *Dispatcher) lanesAtOnce() int { return 2 * d.opt.Workers }

// SetMetrics makes the dispatcher report to m. It is called before the
// dispatcher starts.
func (d *Dispatcher) SetMetrics(m *Metrics) {
	d.exec.metrics, d.exec.done.metrics, d.env.metrics = m, m, m
}

// Owner is the dispatcher's name in lane leases and the replica list.
func (d *Dispatcher) Owner() string { return d.opt.Owner }

// RunOnce dispatches everything that is due: every committed event past the
// lanes' positions and every retry whose time has come, and waits until the
// lanes it started (or found running) are done. Lanes claimed by another
// dispatcher are left to it.
func (d *Dispatcher) RunOnce(ctx context.Context) (PassStats, error) {
	return d.RunUntil(ctx, ctx)
}

// RunUntil is RunOnce for a process that is shutting down gracefully: the
// deliveries in hand use ctx, while stop ends each lane between batches, so
// that a batch whose subscriber has been called is always recorded.
func (d *Dispatcher) RunUntil(ctx, stop context.Context) (PassStats, error) {
	st, runs, err := d.start(ctx, stop, 0)
	seen := map[*lane]bool{}
	for _, l := range runs {
		if seen[l] {
			continue
		}
		seen[l] = true
		<-l.done
		lst, lerr := l.result()
		st.add(lst)
		if lerr != nil {
			err = errors.Join(err, fmt.Errorf("lane %s: %w", l.key, lerr))
		}
	}
	return st, err
}

// Drain runs passes until one finds nothing to do and nothing waits beyond
// the commit horizon, and returns what they did together; retries not due
// yet are left for later (RetryWaiting, NextRetry). It gives up when ctx ends.
func (d *Dispatcher) Drain(ctx context.Context) (PassStats, error) {
	var total PassStats
	for {
		st, err := d.RunOnce(ctx)
		total.add(st)
		total.RetryWaiting, total.NextRetry = st.RetryWaiting, st.NextRetry
		if err != nil {
			return total, err
		}
		if !st.Busy() && !st.Lagging {
			return total, nil
		}
		if !st.Busy() {
			select {
			case <-ctx.Done():
				return total, ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
	}
}

// Start begins dispatching what is due and returns at once: each lane with
// work runs on its own until it has nothing left, and a lane already running
// is asked to look again. A lane keeps its lease for Linger once it has
// nothing left, and goes on at once when a pass sees more work for it.
// onIdle, set by SetLaneDone, hears of each lane that stops. Wait waits for
// them all.
func (d *Dispatcher) Start(ctx, stop context.Context) (PassStats, error) {
	st, _, err := d.start(ctx, stop, d.opt.Linger)
	return st, err
}

// SetLaneDone sets a function called with what each lane did when it stops
// (the runner uses it to look again when a lane was busy).
func (d *Dispatcher) SetLaneDone(f func(PassStats)) { d.lanes.setOnEnd(f) }

// Wait blocks until no lane runs in this process.
func (d *Dispatcher) Wait() { d.lanes.wait() }

var errLeaseLost = errors.New("events: lane lease lost to another dispatcher, or the lane was replayed")
