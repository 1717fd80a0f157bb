package jobs

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// Handler does the work of a job of one kind: it reads the job's input,
// reports its progress through p, and stores its work with p.FinishTx in
// the transaction that stores it. ctx is cancelled when a client cancels
// the job (the runner sees it at the job's next Report) or the runner
// stops; a handler returns ctx's error then. An error returned fails the
// job: an apperr error with its code, detail and fields, any other as an
// internal failure (logged, its text not shown).
type Handler func(ctx context.Context, job Job, p *Progress) error

// RunnerOptions configure a runner.
type RunnerOptions struct {
	// Concurrency is how many jobs the runner runs at once
	// (JOBS_CONCURRENCY); the rest wait in the order they were queued.
	Concurrency int
	// Lease is how long a running job is held without renewal
	// (JOBS_LEASE); the runner renews its jobs' every third of it.
	Lease time.Duration
	// Poll is how often the runner looks for jobs queued elsewhere (another
	// replica); a job queued through this replica's service wakes it at once.
	Poll   time.Duration
	Logger *slog.Logger
	// Owner names the runner in its jobs' leases; random when empty.
	Owner string
}

// Runner takes queued jobs and runs them, a bounded number at a time.
type Runner struct {
	s        *Service
	opt      RunnerOptions
	handlers map[string]Handler
	wake     chan struct{}
	slots    chan struct{}

	mu      sync.Mutex
	running map[int64]context.CancelFunc // by job id
	jobs    sync.WaitGroup
	done    chan struct{}
	stop    context.CancelFunc
	killed  bool // stopped as a dead process stops: nothing written (tests)
}

// NewRunner returns a runner of the service's jobs; the service's Enqueue
// wakes it.
func NewRunner(s *Service, opt RunnerOptions) *Runner {
	if opt.Concurrency < 1 {
		opt.Concurrency = 1
	}
	if opt.Lease <= 0 {
		opt.Lease = 30 * time.Second
	}
	if opt.Poll <= 0 {
		opt.Poll = time.Second
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.Owner == "" {
		host, _ := os.Hostname()
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		opt.Owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
	}
	r := &Runner{s: s, opt: opt, handlers: map[string]Handler{}, wake: make(chan struct{}, 1),
		slots: make(chan struct{}, opt.Concurrency), running: map[int64]context.CancelFunc{}}
	s.wake = r.Wake
	return r
}

// Handle registers the handler of a kind of job.
func (r *Runner) Handle(kind string, h Handler) { r.handlers[kind] = h }

// Wake asks the runner to look for queued jobs now.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Start runs the runner in the background until ctx is cancelled; Wait
// waits for it to stop. On stopping, the jobs it runs are cancelled and
// queued again for another runner (job.requeued).
func (r *Runner) Start(ctx context.Context) {
	ctx, r.stop = context.WithCancel(ctx)
	r.done = make(chan struct{})
	go r.loop(ctx)
}

// Wait blocks until the runner started by Start has stopped and its jobs
// have ended.
func (r *Runner) Wait() {
	if r.done != nil {
		<-r.done
	}
}

func (r *Runner) loop(ctx context.Context) {
	defer close(r.done)
	renew := time.NewTicker(r.opt.Lease / 3)
	defer renew.Stop()
	poll := time.NewTicker(r.opt.Poll)
	defer poll.Stop()
	for {
		if err := r.takeBackExpired(ctx); err != nil && ctx.Err() == nil {
			r.opt.Logger.Warn("jobs: taking back expired jobs", "err", err)
		}
		r.startFree(ctx)
		select {
		case <-ctx.Done():
			r.jobs.Wait()
			return
		case <-r.wake:
		case <-poll.C:
		case <-renew.C:
			if err := r.renew(ctx); err != nil && ctx.Err() == nil {
				r.opt.Logger.Warn("jobs: renewing leases", "err", err)
			}
		}
	}
}

// startFree claims as many queued jobs as there are free slots and starts
// them.
func (r *Runner) startFree(ctx context.Context) {
	free := r.opt.Concurrency - len(r.slots)
	if free <= 0 || ctx.Err() != nil {
		return
	}
	rows, err := r.claim(ctx, free)
	if err != nil {
		if ctx.Err() == nil {
			r.opt.Logger.Warn("jobs: claiming", "err", err)
		}
		return
	}
	for _, j := range rows {
		r.slots <- struct{}{}
		r.jobs.Add(1)
		go func() {
			defer func() { <-r.slots; r.jobs.Done(); r.Wake() }()
			r.run(ctx, j)
		}()
	}
}

// RunQueued runs every queued job to its end, at most Concurrency at a
// time, and returns how many it ran: for tests and for a command that
// drains the queue.
func (r *Runner) RunQueued(ctx context.Context) (int, error) {
	n := 0
	for {
		if err := r.takeBackExpired(ctx); err != nil {
			return n, err
		}
		rows, err := r.claim(ctx, r.opt.Concurrency)
		if err != nil || len(rows) == 0 {
			return n, err
		}
		var wg sync.WaitGroup
		for _, j := range rows {
			wg.Add(1)
			go func() { defer wg.Done(); r.run(ctx, j) }()
		}
		wg.Wait()
		n += len(rows)
	}
}

// claim marks up to n queued jobs, oldest first, as running under this
// runner's lease, with job.started.
func (r *Runner) claim(ctx context.Context, n int) ([]row, error) {
	var rows []row
	err := database.Transaction(ctx, r.s.db, func(tx *gorm.DB) error {
		pick := "SELECT id FROM jobs_queue WHERE status = 'queued' ORDER BY id LIMIT ?"
		if database.LocksRows(tx) {
			pick += " FOR UPDATE SKIP LOCKED"
		}
		err := database.Scan(tx.WithContext(ctx).Raw(`UPDATE jobs_queue SET status = 'running', owner = ?, lease_until = `+database.NowPlus(tx, r.opt.Lease)+`,
    attempts = attempts + 1, started_at = `+database.Now(tx)+`, progress = 0, message = 'started'
WHERE id IN (`+pick+`) RETURNING *`, r.opt.Owner, n), &rows)
		if err != nil {
			return err
		}
		// RETURNING gives no order: the jobs start, and are journalled, in
		// the order they were queued.
		slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(a.ID, b.ID) })
		for _, j := range rows {
			if err := events.Add(ctx, tx, contracts.JobStarted.New(j.ID, j.payload())); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// run runs one claimed job to its end and records how it ended.
func (r *Runner) run(ctx context.Context, j row) {
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if a, ok := j.actor(); ok {
		jctx = events.WithActor(jctx, a)
	}
	r.mu.Lock()
	r.running[j.ID] = cancel
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.running, j.ID)
		r.mu.Unlock()
	}()
	p := &Progress{r: r, id: j.ID, cancel: cancel}
	h, ok := r.handlers[j.Kind]
	var err error
	if !ok {
		err = fmt.Errorf("jobs: no handler of kind %q in this replica", j.Kind)
	} else {
		err = r.call(jctx, h, j, p)
	}
	if r.isKilled() {
		return // a dead process writes nothing
	}
	// The outcome is written even when the runner is stopping.
	wctx := context.WithoutCancel(jctx)
	switch {
	case err == nil && p.finished:
		return
	case err == nil:
		err = r.finish(wctx, j.ID, nil)
	case ctx.Err() != nil:
		err = r.requeue(wctx, j.ID, "its replica stopped while it ran; queued again")
	case p.cancelled || errors.Is(err, context.Canceled):
		err = r.end(wctx, j.ID, StatusCancelled, "cancelled while it ran; nothing of its work kept", nil)
	default:
		err = r.end(wctx, j.ID, StatusFailed, "", failureOf(err, r.opt.Logger, j))
	}
	if err != nil {
		r.opt.Logger.Error("jobs: recording the end of a job", "job", j.ID, "err", err)
	}
}

// call runs the handler, a panic becoming its error.
func (r *Runner) call(ctx context.Context, h Handler, j row, p *Progress) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("jobs: job %d panicked: %v", j.ID, v)
		}
	}()
	return h(ctx, j.job(), p)
}

func (r *Runner) isKilled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.killed
}

var skipLocked = clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"}
