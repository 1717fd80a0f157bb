package events

import (
	"context"
	"errors"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jackc/pgx/v5"
)

// RunnerOptions say when the dispatcher runs.
type RunnerOptions struct {
	// Interval of the gocron job, the safety net (DISPATCH_INTERVAL).
	Interval time.Duration
	// ListenURL, on PostgreSQL, is the database URL to LISTEN on so that a
	// commit wakes the dispatcher at once. Empty: no LISTEN.
	ListenURL string
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
}

// NewRunner returns a runner for d.
func NewRunner(d *Dispatcher, opt RunnerOptions) *Runner {
	if opt.Interval <= 0 {
		opt.Interval = time.Minute
	}
	return &Runner{d: d, opt: opt, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// Wake asks for a pass as soon as possible; it never blocks.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Start runs until ctx is cancelled; Wait then returns once the pass in hand
// has finished its deliveries.
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
	r.sched = s
	s.Start()
	if r.opt.ListenURL != "" {
		go r.listen(ctx)
	}
	go r.loop(ctx)
	r.Wake() // what is pending from before the start
	return nil
}

// Wait blocks until the runner has stopped.
func (r *Runner) Wait() { <-r.done }

func (r *Runner) loop(ctx context.Context) {
	defer close(r.done)
	defer func() { _ = r.sched.Shutdown() }()
	log := r.d.opt.Logger
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		// The pass finishes the deliveries in hand even when ctx is cancelled
		// meanwhile: it stops between batches, not in the middle of one.
		st, err := r.d.RunOnce(context.WithoutCancel(ctx))
		if err != nil {
			log.Warn("dispatch pass failed", "err", err)
			r.wakeAfter(ctx, time.Second)
			continue
		}
		if st.Events > 0 || st.Delivered > 0 || st.Failed > 0 {
			log.Debug("dispatch pass", "events", st.Events, "delivered", st.Delivered, "failed", st.Failed)
		}
		if st.Lagging {
			// Events are visible above the safe horizon: a transaction that
			// may still commit below them is in flight. Look again shortly.
			r.wakeAfter(ctx, 2*time.Millisecond)
		}
	}
}

func (r *Runner) wakeAfter(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	go func() {
		defer t.Stop()
		select {
		case <-t.C:
			r.Wake()
		case <-ctx.Done():
		}
	}()
}

// listen wakes the runner on every NOTIFY tsekh_events, reconnecting after a
// lost connection.
func (r *Runner) listen(ctx context.Context) {
	log := r.d.opt.Logger
	for ctx.Err() == nil {
		err := r.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		log.Warn("event listener disconnected; reconnecting", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (r *Runner) listenOnce(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, r.opt.ListenURL)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Exec(ctx, "LISTEN tsekh_events"); err != nil {
		return err
	}
	r.Wake() // events committed while we were not listening
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
		r.Wake()
	}
}
