// Package maintenance keeps tsekh's tables from growing for ever: a list of
// named housekeeping tasks (expiring Idempotency-Keys, …) run as a gocron
// job every MAINTENANCE_INTERVAL by one replica at a time, with Prometheus
// metrics for what they did.
//
// One replica at a time: on PostgreSQL a run holds a session advisory lock,
// taken with pg_try_advisory_lock on a connection of its own, for as long as
// its tasks take; a replica that finds it held skips its run. On SQLite the
// database belongs to one process, and a run excludes the others of that
// process only.
package maintenance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// lockClass is the first key of the maintenance's advisory lock
// ("tsm\x01"); the second is the hash of the schema, so that tsekh
// databases that share a PostgreSQL database in schemas of their own (the
// tests, tsekh bench) each have a maintenance of their own.
const lockClass = 0x74736d01

// Task is one piece of housekeeping. Run does it and returns how many rows
// it removed or rewrote; it should work in bounded batches and stop between
// them when ctx ends.
type Task struct {
	Name string
	Run  func(ctx context.Context) (n int64, err error)
}

// Options configure a Maintainer.
type Options struct {
	// Interval between two runs of the gocron job (MAINTENANCE_INTERVAL).
	// Each task of a run may take as long, at most.
	Interval time.Duration
	Logger   *slog.Logger
	// Metrics, when set, gets tsekh_maintenance_runs_total{task,outcome}
	// and tsekh_maintenance_rows_total{task}.
	Metrics prometheus.Registerer
}

// Outcomes of a task's run, the values of the outcome label.
const (
	OutcomeOK      = "ok"
	OutcomeError   = "error"
	OutcomeSkipped = "skipped" // another run (on PostgreSQL: another replica) held the lock
)

// Maintainer runs the tasks.
type Maintainer struct {
	db    *gorm.DB
	opt   Options
	tasks []Task
	local sync.Mutex // one run at a time in this process
	runs  *prometheus.CounterVec
	rows  *prometheus.CounterVec
	done  chan struct{}
}

// New returns a Maintainer over db with no tasks yet.
func New(db *gorm.DB, opt Options) *Maintainer {
	if opt.Interval <= 0 {
		opt.Interval = 10 * time.Minute
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	m := &Maintainer{db: db, opt: opt,
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tsekh_maintenance_runs_total",
			Help: "Runs of each maintenance task, by outcome: ok, error, or skipped (another replica held the maintenance lock).",
		}, []string{"task", "outcome"}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tsekh_maintenance_rows_total",
			Help: "Rows each maintenance task removed or rewrote.",
		}, []string{"task"}),
	}
	if opt.Metrics != nil {
		opt.Metrics.MustRegister(m.runs, m.rows)
	}
	return m
}

// Add appends a task; tasks run in the order added. Add them before Start.
func (m *Maintainer) Add(name string, run func(ctx context.Context) (int64, error)) {
	m.tasks = append(m.tasks, Task{Name: name, Run: run})
	// Every series exists from the start, so that a rate is defined at once.
	for _, o := range []string{OutcomeOK, OutcomeError, OutcomeSkipped} {
		m.runs.WithLabelValues(name, o)
	}
	m.rows.WithLabelValues(name)
}

// Tasks returns the names of the tasks, in order.
func (m *Maintainer) Tasks() []string {
	names := make([]string, len(m.tasks))
	for i, t := range m.tasks {
		names[i] = t.Name
	}
	return names
}

// RunOnce runs every task once, unless another run holds the maintenance
// lock (ran is false then, and each task counts as skipped). A task that
// fails is logged and counted, and the others still run; err joins their
// errors, and the lock's.
func (m *Maintainer) RunOnce(ctx context.Context) (ran bool, err error) {
	if !m.local.TryLock() {
		m.count(OutcomeSkipped)
		return false, nil
	}
	defer m.local.Unlock()
	unlock, ok, err := m.lock(ctx)
	if err != nil {
		return false, fmt.Errorf("maintenance: lock: %w", err)
	}
	if !ok {
		m.count(OutcomeSkipped)
		return false, nil
	}
	defer unlock()
	var errs []error
	for _, t := range m.tasks {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		if err := m.run(ctx, t); err != nil {
			errs = append(errs, fmt.Errorf("maintenance: %s: %w", t.Name, err))
		}
	}
	return true, errors.Join(errs...)
}

// run runs one task, with the interval as its deadline, and records what it did.
func (m *Maintainer) run(ctx context.Context, t Task) (err error) {
	ctx, cancel := context.WithTimeout(ctx, m.opt.Interval)
	defer cancel()
	start := time.Now()
	var n int64
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
		m.rows.WithLabelValues(t.Name).Add(float64(max(n, 0)))
		if err != nil {
			m.runs.WithLabelValues(t.Name, OutcomeError).Inc()
			m.opt.Logger.Warn("maintenance task failed", "task", t.Name, "rows", n, "err", err)
			return
		}
		m.runs.WithLabelValues(t.Name, OutcomeOK).Inc()
		if n > 0 {
			m.opt.Logger.Info("maintenance task", "task", t.Name, "rows", n, "took", time.Since(start).Round(time.Millisecond))
		}
	}()
	n, err = t.Run(ctx)
	return err
}

func (m *Maintainer) count(outcome string) {
	for _, t := range m.tasks {
		m.runs.WithLabelValues(t.Name, outcome).Inc()
	}
}

// lock takes the maintenance lock. On PostgreSQL it is a session advisory
// lock on a connection kept out of the pool until unlock; on SQLite the
// process's own exclusion (RunOnce's mutex) is the lock.
func (m *Maintainer) lock(ctx context.Context) (unlock func(), ok bool, err error) {
	l, ok, err := database.TryLockSchema(ctx, m.db, lockClass)
	if err != nil || !ok {
		return nil, false, err
	}
	return func() { m.unlock(l) }, true, nil
}

// unlock releases the lock. When the release cannot be confirmed, its
// connection is closed instead (see database.SchemaLock.Release).
func (m *Maintainer) unlock(l *database.SchemaLock) {
	if err := l.Release(); err != nil {
		m.opt.Logger.Warn("maintenance: the lock's release failed; closing its connection", "err", err)
	}
}

// Start runs the tasks as a gocron job, at once and then every Interval,
// never overlapping itself, until ctx is cancelled; a task in hand then sees
// its context cancelled and stops between batches. Wait returns once the job
// has stopped.
func (m *Maintainer) Start(ctx context.Context) error {
	s, err := gocron.NewScheduler()
	if err != nil {
		return err
	}
	_, err = s.NewJob(gocron.DurationJob(m.opt.Interval), gocron.NewTask(func(ctx context.Context) {
		if _, err := m.RunOnce(ctx); err != nil && ctx.Err() == nil {
			m.opt.Logger.Warn("maintenance run failed", "err", err)
		}
	}), gocron.WithContext(ctx), gocron.WithSingletonMode(gocron.LimitModeReschedule),
		gocron.WithStartAt(gocron.WithStartImmediately()), gocron.WithName("maintenance"))
	if err != nil {
		_ = s.Shutdown()
		return err
	}
	m.done = make(chan struct{})
	s.Start()
	go func() {
		defer close(m.done)
		<-ctx.Done()
		if err := s.Shutdown(); err != nil {
			m.opt.Logger.Warn("maintenance: shutdown", "err", err)
		}
	}()
	return nil
}

// Wait blocks until the job started by Start has stopped; without Start it
// returns at once.
func (m *Maintainer) Wait() {
	if m.done != nil {
		<-m.done
	}
}
