package events

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-co-op/gocron/v2"
	"gorm.io/gorm"
)

// RunnerOptions say when the dispatcher runs.
type RunnerOptions struct {
	// Interval of the gocron job, the safety net (DISPATCH_INTERVAL).
	Interval time.Duration
	// ListenURL is the database's URL, for the listener that hears of
	// other processes' commits (PostgreSQL's LISTEN), so that such a
	// commit wakes the dispatcher at once. The runner listens when the
	// database's driver has a listener and ListenURL is set, and polls
	// (Poll) otherwise.
	ListenURL string
	// ListenCheck is how long the listener waits for a notification before
	// it checks that its connection answers (30s): a link gone silent
	// brings no error, only no notification.
	ListenCheck time.Duration
	// Poll, when positive and the runner does not listen, is how often it
	// looks at the journal's newest id and wakes the dispatcher when it has
	// grown: on SQLite, which announces no commit, it catches writers other
	// than this process's HTTP requests (the CLI, subscribers, another
	// process on the same file).
	Poll time.Duration
	// Watch names other pools of this process (the API's) whose commits
	// wake the runner at once, as its dispatcher's own pool's do; the
	// NOTIFYs that announce them to other processes are skipped.
	Watch []*gorm.DB
	// OnWake, when set, is called with every wake-up (a commit's NOTIFY, a
	// write of this process, the interval): the live journal (Stream)
	// follows the same signals.
	OnWake func()
}

// Runner runs the dispatcher: as a gocron job that never overlaps itself,
// woken early by Wake (called by the committing process on SQLite) and by
// PostgreSQL's NOTIFY.
type Runner struct {
	d     *Dispatcher
	opt   RunnerOptions
	wake  chan struct{}
	sched gocron.Scheduler
	done  chan struct{}
	// own are the announcer ids of the pools watched in process (their
	// NOTIFYs are skipped); unwatch stops watching them.
	own     []string
	unwatch []func()

	// What the runner has done so far, for the tests that wait for it
	// (export_test.go) rather than sleep. wakes counts the calls of Wake,
	// and timers the wake-ups set for later (wakeAfter) not yet given;
	// answered is the most wakes counted when a pass began that ended with
	// no wake-up pending or set for later; listening counts the listener's
	// connections, each once its first wake-up is given, and looked the
	// poll's looks at the journal.
	wakes     atomic.Uint64
	timers    atomic.Int64
	answered  milestone
	listening milestone
	looked    milestone
}

// NewRunner returns a runner for d.
func NewRunner(d *Dispatcher, opt RunnerOptions) *Runner {
	if opt.Interval <= 0 {
		opt.Interval = time.Minute
	}
	if opt.ListenCheck <= 0 {
		opt.ListenCheck = 30 * time.Second
	}
	return &Runner{d: d, opt: opt, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// Wake asks for a pass as soon as possible; it never blocks.
func (r *Runner) Wake() {
	if r.opt.OnWake != nil {
		r.opt.OnWake()
	}
	r.wakes.Add(1)
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Start runs until ctx is cancelled; Wait then returns once the lanes in
// hand have finished their batches.
func (r *Runner) Start(ctx context.Context) error {
	s, err := gocron.NewScheduler()
	if err != nil {
		return err
	}
	_, err = s.NewJob(gocron.DurationJob(r.opt.Interval), gocron.NewTask(r.Wake),
		gocron.WithSingletonMode(gocron.LimitModeReschedule), gocron.WithName("dispatch"))
	if err != nil {
		return err
	}
	_, err = s.NewJob(gocron.DurationJob(HeartbeatEvery), gocron.NewTask(func() { r.d.Heartbeat(ctx) }),
		gocron.WithSingletonMode(gocron.LimitModeReschedule), gocron.WithName("dispatch-heartbeat"))
	if err != nil {
		return err
	}
	r.sched = s
	// A lane that did something may have left work behind it: events that a
	// local subscriber wrote into partitions already passed, retries.
	r.d.SetLaneDone(func(st PassStats) {
		if st.Busy() {
			r.Wake()
		}
	})
	s.Start()
	// This process's commits wake the runner at once; the NOTIFYs that
	// announce them to the other processes are skipped (listen).
	drv := r.d.sql
	for _, pool := range append([]*gorm.DB{r.d.db}, r.opt.Watch...) {
		id := drv.announcer(pool)
		if id == "" || slices.Contains(r.own, id) {
			continue // commits not announced, or a pool already watched
		}
		r.own = append(r.own, id)
		r.unwatch = append(r.unwatch, drv.watchCommits(pool, r.Wake))
	}
	// Other processes' commits: heard where the database announces them,
	// looked for in the journal where it does not.
	switch {
	case drv.supportsListener() && r.opt.ListenURL != "":
		go listenForCommits(ctx, drv.listener(r.opt.ListenURL), r.Wake, r.d.opt.Logger,
			listenWatch{check: r.opt.ListenCheck, skip: r.own, connected: r.listening.add})
	case r.opt.Poll > 0:
		go r.poll(ctx)
	}
	go r.loop(ctx)
	r.Wake() // what is pending from before the start
	return nil
}

// Wait blocks until the runner has stopped.
func (r *Runner) Wait() { <-r.done }

// loop starts the lanes with work on every wake-up. Each lane runs on its
// own, so a pass never waits for a slow subscriber: the next wake-up starts
// the lanes that are not running, and asks those that are to look again.
func (r *Runner) loop(ctx context.Context) {
	defer close(r.done)
	defer func() {
		for _, stop := range r.unwatch {
			stop()
		}
	}()
	defer func() { _ = r.sched.Shutdown() }()
	// On the way out, the lanes finish the batch in hand (their deliveries
	// use a context that is not cancelled; ctx stops them between batches).
	defer r.d.Wait()
	log := r.d.opt.Logger
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		// Every wake-up counted by now is answered by this pass: its survey
		// comes after their commits.
		answers := r.wakes.Load()
		st, err := r.d.Start(context.WithoutCancel(ctx), ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Warn("dispatch pass failed", "err", ErrorText(err))
			r.wakeAfter(ctx, time.Second)
			continue
		}
		if st.Lagging {
			// Events are visible above the safe horizon: a transaction that
			// may still commit below them is in flight. Look again shortly.
			r.wakeAfter(ctx, 2*time.Millisecond)
		}
		// A retry due before the next tick gets a pass of its own. One due
		// already, yet left by this pass, is in a lane another dispatcher
		// holds: look again in a second, not in a busy loop.
		if st.RetryWaiting && st.NextRetry < r.opt.Interval {
			due := st.NextRetry
			if due <= 0 {
				due = time.Second
			}
			r.wakeAfter(ctx, max(due, 10*time.Millisecond))
		}
		if len(r.wake) == 0 && r.timers.Load() == 0 {
			r.answered.raise(answers)
		}
	}
}

// poll wakes the runner whenever the journal's newest id has grown.
func (r *Runner) poll(ctx context.Context) {
	t := time.NewTicker(r.opt.Poll)
	defer t.Stop()
	var last int64 = -1
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		id, err := r.d.sql.newestID(ctx, r.d.db)
		if err != nil {
			continue
		}
		if last >= 0 && id > last {
			r.Wake()
		}
		last = id
		r.looked.add()
	}
}

func (r *Runner) wakeAfter(ctx context.Context, d time.Duration) {
	r.timers.Add(1)
	t := time.NewTimer(d)
	go func() {
		defer t.Stop()
		// Counted until its wake-up is pending: either shows that a pass
		// is to come.
		defer r.timers.Add(-1)
		select {
		case <-t.C:
			r.Wake()
		case <-ctx.Done():
		}
	}()
}
