package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// DispatcherOptions tune the dispatcher; zero values take the defaults.
type DispatcherOptions struct {
	BatchSize   int           // events read per lane and batch (1000)
	MaxAttempts int           // default attempts before a delivery is failed (10)
	Timeout     time.Duration // per delivery (30s)
	// CallBudget is how long a lane waits for one call of an outside
	// subscriber (5s, at most Timeout). A call still in flight then goes on
	// until Timeout, unheard: the lane records its event as a retry (an
	// attempt spent, as for a call that timed out), due once the call's
	// Timeout has passed, holds the object's later events behind it, and
	// goes on with the other objects.
	CallBudget  time.Duration
	Lease       time.Duration // how long a lane stays claimed without renewal (1m)
	Workers     int           // local subscribers' batch transactions at once, and reads + outside ones at once (2 on PostgreSQL, 1 on SQLite)
	BackoffBase time.Duration // default first retry delay (1s), doubled per attempt, with jitter
	BackoffMax  time.Duration // default retry delay cap (1h)
	// RetryAfterCap is how long in all a delivery may be put off by answers
	// asking for a delay (RetryAfter: HTTP 429 or 503 with Retry-After)
	// without spending attempts (24h); past it, such answers spend attempts
	// like any failure.
	RetryAfterCap time.Duration
	// Linger is how long a lane started by Start (the Runner) keeps its
	// lease and waits for more work once it has none (1s). Events written
	// one after the other then move the lane's row once each, not three
	// times (claim, move, release). RunOnce never lingers.
	Linger time.Duration
	Owner  string // this dispatcher's name in leases and the replica list (host-pid-random~mark, see owner.go)
	Logger *slog.Logger
}

func (o *DispatcherOptions) defaults(oneWriter bool) {
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Lease <= 0 {
		o.Lease = time.Minute
	}
	if o.CallBudget <= 0 {
		o.CallBudget = 5 * time.Second
	}
	o.CallBudget = min(o.CallBudget, o.Timeout)
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if oneWriter {
		o.Workers = 1
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = time.Second
	}
	if o.RetryAfterCap <= 0 {
		o.RetryAfterCap = 24 * time.Hour
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = time.Hour
	}
	if o.Linger <= 0 {
		o.Linger = time.Second
	}
	if o.Owner == "" {
		o.Owner = defaultOwner(rand.IntN(0x10000))
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

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
// The pieces, each in a file of its own: the passes and the lanes in flight
// (this file), the commit horizon (horizon.go), the lane and its life cycle
// (lane.go), one batch (batch.go), the one delivery path of batches and
// retries (executor.go, completer.go), calling a subscriber (call.go),
// retries (retries.go, retry.go), the subscribers' registration
// (registration.go) and the per-database statements (store*.go).
type Dispatcher struct {
	db      *gorm.DB
	reg     *Registry
	opt     DispatcherOptions
	sql     driver
	metrics *Metrics
	horizon *commitHorizon
	cache   *batchCache
	dbSlots chan struct{}            // local batch transactions in flight
	calls   map[string]chan struct{} // per outside subscriber: calls in flight
	batches map[string]chan struct{} // per subscriber: lanes holding a batch

	// ownSlots bounds, apart from dbSlots, the statements that run no
	// subscriber's code: batch reads and outside lanes' batch transactions.
	// Unbounded, the lanes of sixteen partitions keep every connection of
	// the pool busy at once, and a partition's lanes drift apart and stop
	// sharing their reads.
	ownSlots chan struct{}

	passMu     sync.Mutex    // one survey at a time in this process
	surveys    atomic.Uint64 // surveys begun, to order them with claims
	replaySeen int64         // under passMu: the last subscriber.replayed event seen

	mu         sync.Mutex
	running    map[laneKey]*lane // lanes with a goroutine in this process
	renewing   bool              // the lease renewer runs
	registered bool              // this process's subscribers have their lanes
	lastSeen   time.Time         // the last heartbeat written
	onLaneIdle func(laneStats PassStats)
	stuck      stuckCalls // local calls abandoned, not to be called again
}

// NewDispatcher returns a dispatcher over the registry's subscribers.
func NewDispatcher(db *gorm.DB, reg *Registry, opt DispatcherOptions) *Dispatcher {
	drv := driverFor(db)
	opt.defaults(drv.ordered())
	d := &Dispatcher{db: db, reg: reg, opt: opt, sql: drv,
		horizon: &commitHorizon{ordered: drv.ordered()},
		dbSlots: make(chan struct{}, opt.Workers), ownSlots: make(chan struct{}, opt.Workers), calls: map[string]chan struct{}{}, batches: map[string]chan struct{}{}, running: map[laneKey]*lane{}}
	d.cache = newBatchCache(opt.BatchSize, func(ctx context.Context, part int, from, horizon int64) ([]Event, error) {
		d.ownSlots <- struct{}{}
		defer func() { <-d.ownSlots }()
		return readBatch(ctx, d.db, part, from, horizon, d.opt.BatchSize)
	})
	return d
}

// batchSlots returns the semaphore that bounds the lanes of a subscriber
// holding a batch at once to twice Workers: enough to keep the database
// slots busy, and the same for a backlog of any length. Each subscriber has
// its own, so a subscriber that hangs holds only its own.
func (d *Dispatcher) batchSlots(s *Subscriber) chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.batches[s.Name]
	if !ok {
		c = make(chan struct{}, d.lanesAtOnce())
		d.batches[s.Name] = c
	}
	return c
}

func (d *Dispatcher) lanesAtOnce() int { return 2 * d.opt.Workers }

// callSlots returns the semaphore that bounds an outside subscriber's calls
// in flight to its Concurrency.
func (d *Dispatcher) callSlots(s *Subscriber) chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.calls[s.Name]
	if !ok {
		c = make(chan struct{}, max(1, s.Concurrency))
		d.calls[s.Name] = c
	}
	return c
}

// SetMetrics makes the dispatcher report to m.
func (d *Dispatcher) SetMetrics(m *Metrics) { d.metrics = m }

// Owner is the dispatcher's name in lane leases and the replica list.
func (d *Dispatcher) Owner() string { return d.opt.Owner }

// PassStats counts what a pass, or a lane, did.
type PassStats struct {
	Events    int  // events read from the journal for a subscriber
	Delivered int  // successful deliveries
	Failed    int  // failed attempts
	Lagging   bool // events were visible beyond the safe horizon: run again soon
	// RetryWaiting tells that a delivery of a subscriber run here waits for a
	// retry, due in NextRetry (zero or less: due already), as seen when the
	// pass began.
	RetryWaiting bool
	NextRetry    time.Duration
}

func (s *PassStats) add(o PassStats) {
	s.Events += o.Events
	s.Delivered += o.Delivered
	s.Failed += o.Failed
}

// Busy tells whether the pass or lane did anything.
func (s PassStats) Busy() bool { return s.Events > 0 || s.Delivered > 0 || s.Failed > 0 }

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
func (d *Dispatcher) SetLaneDone(f func(PassStats)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.onLaneIdle = f
}

// Wait blocks until no lane runs in this process.
func (d *Dispatcher) Wait() {
	for {
		d.mu.Lock()
		var l *lane
		for _, r := range d.running {
			l = r
			break
		}
		d.mu.Unlock()
		if l == nil {
			return
		}
		<-l.done
	}
}

// start surveys the journal, advances the commit horizon, registers this
// process's subscribers once the horizon is known, and starts a goroutine
// for each lane with work that is not running yet.
func (d *Dispatcher) start(ctx, stop context.Context, linger time.Duration) (PassStats, []*lane, error) {
	d.passMu.Lock()
	defer d.passMu.Unlock()
	var st PassStats
	sv, err := d.survey(ctx)
	if err != nil {
		return st, nil, err
	}
	horizon, visible := d.horizon.advance(sv)
	if !d.isRegistered() {
		if _, known := d.horizon.current(); !known {
			st.Lagging = true // registration waits for a horizon it can trust
			return st, nil, nil
		}
		if err := d.register(ctx, horizon); err != nil {
			return st, nil, fmt.Errorf("events: register subscribers: %w", err)
		}
		d.takeBackFromDead(ctx)
		if sv, err = d.survey(ctx); err != nil {
			return st, nil, err
		}
		horizon, visible = d.horizon.advance(sv)
	}
	d.heartbeat(ctx, false)
	st.Lagging = visible > horizon
	st.RetryWaiting, st.NextRetry = sv.nextRetry.Valid, time.Duration(sv.nextRetry.Float64*float64(time.Second))
	lanes := sv.lanes
	// The survey listed lanes with events up to the visible id: keep those
	// with work up to the horizon. When it listed none, as every lane runs
	// here, list them all the same after a replay, which takes the leases
	// of the lanes it moves back (see startLanes).
	replay := sv.replayed > d.replaySeen
	d.replaySeen = max(d.replaySeen, sv.replayed)
	if sv.listed && st.Lagging || !sv.listed && replay {
		if lanes, err = d.sql.lanesWithWork(ctx, d.db, d.surveyQuery(), horizon); err != nil {
			return st, nil, err
		}
		sv.listed = true
	}
	// A lane running here is asked to look again up to the horizon, or in
	// any case when a retry is due (which the survey does not place).
	rerunUpTo := horizon
	if st.RetryWaiting && st.NextRetry <= 0 {
		rerunUpTo = math.MaxInt64
	}
	var runs []*lane
	if !sv.listed {
		runs = d.lookAgainWhereDue(sv, horizon)
	}
	more, err := d.startLanes(ctx, stop, lanes, sv.seq, horizon, rerunUpTo, linger)
	return st, append(runs, more...), err
}

// lookAgainWhereDue asks the lanes running here to look again, up to the
// horizon, when their partition has an event past the position they have
// committed, and for their retries when one is due.
func (d *Dispatcher) lookAgainWhereDue(sv surveyed, horizon int64) []*lane {
	d.mu.Lock()
	defer d.mu.Unlock()
	var runs []*lane
	for k, l := range d.running {
		switch {
		case sv.due[k]:
			l.lookAgain(math.MaxInt64)
		case l.behind(sv.last[k.part]):
			l.lookAgain(horizon)
		default:
			continue
		}
		runs = append(runs, l)
	}
	return runs
}

// allLanesRunning tells whether every lane of this process's subscribers
// runs here, so that the survey need not list them.
func (d *Dispatcher) allLanesRunning() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.registered && len(d.running) == len(d.reg.Subscribers())*Partitions
}

func (d *Dispatcher) surveyQuery() surveyQuery {
	ns := make([]string, 0, len(d.reg.Subscribers()))
	for _, s := range d.reg.Subscribers() {
		ns = append(ns, s.Name)
	}
	return surveyQuery{names: ns, owner: d.opt.Owner, pending: d.horizon.pendingXIDs(), skipLanes: d.allLanesRunning()}
}

func (d *Dispatcher) survey(ctx context.Context) (surveyed, error) {
	seq := d.surveys.Add(1)
	sv, err := d.sql.survey(ctx, d.db, d.surveyQuery())
	sv.seq = seq
	return sv, err
}

func (d *Dispatcher) isRegistered() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.registered
}

// startLanes claims the lanes with work, grouped by partition and position
// so that each group is claimed and its first batch read in one statement,
// and starts a goroutine for each lane claimed. Lanes already running here
// are asked to look again instead.
func (d *Dispatcher) startLanes(ctx, stop context.Context, lanes []laneAt, seq uint64, horizon, rerunUpTo int64, linger time.Duration) ([]*lane, error) {
	type group struct {
		part int
		pos  int64
		subs []string
	}
	var runs []*lane
	groups := map[[2]int64]*group{}
	var order []*group
	d.mu.Lock()
	for _, l := range lanes {
		if r, ok := d.running[l.laneKey]; ok {
			if !l.mine {
				// The lane lost its lease (a replay moved it back): if it
				// lingers, it claims itself again where it stands now.
				r.leaseTaken(l.position, seq)
			}
			r.lookAgain(rerunUpTo)
			runs = append(runs, r)
			continue
		}
		if d.reg.Subscriber(l.sub) == nil {
			continue
		}
		k := [2]int64{int64(l.part), l.position}
		g := groups[k]
		if g == nil {
			g = &group{part: l.part, pos: l.position}
			groups[k] = g
			order = append(order, g)
		}
		g.subs = append(g.subs, l.sub)
	}
	d.mu.Unlock()
	sort.Slice(order, func(i, j int) bool { return order[i].part < order[j].part })
	var errs []error
	for i, g := range order {
		if stop.Err() != nil {
			break
		}
		// The claim reads the group's first batch, but only for the first
		// groups: the lanes of the others wait for a batch slot, and their
		// batch would wait in memory with them.
		limit := d.opt.BatchSize
		if i >= d.lanesAtOnce() {
			limit = 0
		}
		claimed, batch, err := d.sql.claim(ctx, d.db, claimQuery{part: g.part, subs: g.subs, pos: g.pos, horizon: horizon,
			limit: limit, owner: d.opt.Owner, lease: d.opt.Lease})
		if err != nil {
			errs = append(errs, fmt.Errorf("claim partition %d: %w", g.part, err))
			continue
		}
		if len(claimed) == 0 {
			continue
		}
		d.cache.put(g.part, g.pos, horizon, batch)
		for _, c := range claimed {
			l := newLane(d, laneKey{c.sub, g.part}, d.reg.Subscriber(c.sub), c, g.pos, linger, d.surveys.Load())
			d.mu.Lock()
			if prev, ok := d.running[l.key]; ok {
				// Started meanwhile by another pass: that goroutine owns it.
				prev.lookAgain(rerunUpTo)
				d.mu.Unlock()
				runs = append(runs, prev)
				continue
			}
			d.running[l.key] = l
			d.ensureRenewer()
			d.mu.Unlock()
			runs = append(runs, l)
			go l.run(ctx, stop)
		}
	}
	return runs, errors.Join(errs...)
}

// ensureRenewer starts the goroutine that renews the leases of the lanes
// this dispatcher holds, every third of their length, while any lane runs;
// d.mu is held. A dispatcher that stalls (or dies) stops renewing, and
// another one takes its lanes once their leases have run out; the fence in
// every batch transaction keeps the stalled one from committing afterwards.
func (d *Dispatcher) ensureRenewer() {
	if d.renewing {
		return
	}
	d.renewing = true
	go func() {
		t := time.NewTicker(d.opt.Lease / 3)
		defer t.Stop()
		for range t.C {
			d.mu.Lock()
			if len(d.running) == 0 {
				d.renewing = false
				d.mu.Unlock()
				return
			}
			d.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), d.opt.Lease/3)
			err := d.sql.renew(ctx, d.db, d.opt.Owner, d.opt.Lease)
			cancel()
			if err != nil {
				d.mu.Lock()
				var ks []string
				for k := range d.running {
					ks = append(ks, k.String())
				}
				d.mu.Unlock()
				d.opt.Logger.Warn("renew lane leases", "err", err, "lanes", ks)
			}
		}
	}()
}

// leave removes a lane that ends from the lanes running here, unless (when
// it is live) a pass has asked it to look again meanwhile: false then, and
// the lane goes on. A pass asks under d.mu, so no request is lost between
// the lane's last look and its leaving.
func (d *Dispatcher) leave(l *lane, live bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if live && l.requested() {
		return false
	}
	delete(d.running, l.key)
	return true
}

// laneDone tells the function set by SetLaneDone what a lane that ended did.
func (d *Dispatcher) laneDone(st PassStats) {
	d.mu.Lock()
	idle := d.onLaneIdle
	d.mu.Unlock()
	if idle != nil {
		idle(st)
	}
}

var errLeaseLost = errors.New("events: lane lease lost to another dispatcher, or the lane was replayed")
