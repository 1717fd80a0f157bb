package maintenance_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/maintenance"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

var quiet = slog.New(slog.DiscardHandler)

// runs reads tsekh_maintenance_runs_total{task,outcome}.
func runs(t *testing.T, reg *prometheus.Registry, task, outcome string) float64 {
	t.Helper()
	return counter(t, reg, "tsekh_maintenance_runs_total", map[string]string{"task": task, "outcome": outcome})
}

// rows reads tsekh_maintenance_rows_total{task}.
func rows(t *testing.T, reg *prometheus.Registry, task string) float64 {
	t.Helper()
	return counter(t, reg, "tsekh_maintenance_rows_total", map[string]string{"task": task})
}

func counter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return 0
}

// Every task runs, in order, whatever the others do; what each did is counted.
func TestMaintainer_RunsEveryTask(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		reg := prometheus.NewRegistry()
		m := maintenance.New(db, maintenance.Options{Logger: quiet, Metrics: reg})
		var order []string
		m.Add("first", func(context.Context) (int64, error) { order = append(order, "first"); return 3, nil })
		m.Add("failing", func(context.Context) (int64, error) {
			order = append(order, "failing")
			return 1, errors.New("disk full")
		})
		m.Add("panicking", func(context.Context) (int64, error) { order = append(order, "panicking"); panic("oops") })
		m.Add("last", func(context.Context) (int64, error) { order = append(order, "last"); return 2, nil })
		require.Equal(t, []string{"first", "failing", "panicking", "last"}, m.Tasks())
		require.Zero(t, runs(t, reg, "first", maintenance.OutcomeOK), "the series exist before the first run")

		ran, err := m.RunOnce(context.Background())
		require.True(t, ran)
		require.ErrorContains(t, err, "failing: disk full")
		require.ErrorContains(t, err, "panicking: panic: oops")
		require.Equal(t, []string{"first", "failing", "panicking", "last"}, order)
		require.Equal(t, 1.0, runs(t, reg, "first", maintenance.OutcomeOK))
		require.Equal(t, 1.0, runs(t, reg, "failing", maintenance.OutcomeError))
		require.Equal(t, 1.0, runs(t, reg, "panicking", maintenance.OutcomeError))
		require.Equal(t, 1.0, runs(t, reg, "last", maintenance.OutcomeOK))
		require.Zero(t, runs(t, reg, "last", maintenance.OutcomeSkipped))
		require.Equal(t, 3.0, rows(t, reg, "first"))
		require.Equal(t, 1.0, rows(t, reg, "failing"), "what a failing task did before it failed counts")
		require.Equal(t, 2.0, rows(t, reg, "last"))
	})
}

// blockingTask runs until released, and says when it has started.
type blockingTask struct {
	started chan struct{}
	release chan struct{}
	calls   atomic.Int32
}

func newBlockingTask() *blockingTask {
	return &blockingTask{started: make(chan struct{}, 10), release: make(chan struct{})}
}

func (b *blockingTask) run(ctx context.Context) (int64, error) {
	b.calls.Add(1)
	b.started <- struct{}{}
	select {
	case <-b.release:
		return 1, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Two replicas on one PostgreSQL database: while one runs the maintenance,
// the other's run is skipped, and it runs once the first has finished. A
// tsekh database in another schema has a maintenance of its own.
func TestMaintainer_OneReplicaAtATime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := dbtest.Options(t, database.Postgres)
	replica := func(task func(context.Context) (int64, error)) (*maintenance.Maintainer, *prometheus.Registry) {
		db, err := database.Open(ctx, opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = database.Close(db) })
		_, err = database.Migrate(ctx, db)
		require.NoError(t, err)
		reg := prometheus.NewRegistry()
		m := maintenance.New(db, maintenance.Options{Logger: quiet, Metrics: reg})
		m.Add("expire", task)
		return m, reg
	}
	task1 := newBlockingTask()
	m1, _ := replica(task1.run)
	var calls2 atomic.Int32
	m2, reg2 := replica(func(context.Context) (int64, error) { calls2.Add(1); return 1, nil })

	done := make(chan error, 1)
	go func() {
		ran, err := m1.RunOnce(ctx)
		if err == nil && !ran {
			err = errors.New("the first run was skipped")
		}
		done <- err
	}()
	<-task1.started

	ran, err := m2.RunOnce(ctx)
	require.NoError(t, err)
	require.False(t, ran, "the other replica holds the lock")
	require.Zero(t, calls2.Load())
	require.Equal(t, 1.0, runs(t, reg2, "expire", maintenance.OutcomeSkipped))
	ran, err = m1.RunOnce(ctx)
	require.NoError(t, err)
	require.False(t, ran, "a run of the same replica while one is in hand")

	// Another schema on the same server: not held back.
	other := dbtest.New(t, database.Postgres)
	m3 := maintenance.New(other, maintenance.Options{Logger: quiet})
	var ran3 atomic.Bool
	m3.Add("expire", func(context.Context) (int64, error) { ran3.Store(true); return 0, nil })
	ran, err = m3.RunOnce(ctx)
	require.NoError(t, err)
	require.True(t, ran && ran3.Load())

	close(task1.release)
	require.NoError(t, <-done)
	ran, err = m2.RunOnce(ctx)
	require.NoError(t, err)
	require.True(t, ran, "the lock is free once the first run has finished")
	require.Equal(t, int32(1), calls2.Load())
	require.Equal(t, 1.0, runs(t, reg2, "expire", maintenance.OutcomeOK))
}

// On SQLite (one process) runs exclude each other within the process.
func TestMaintainer_OneRunAtATimeInAProcess(t *testing.T) {
	t.Parallel()
	m := maintenance.New(dbtest.New(t, database.SQLite), maintenance.Options{Logger: quiet})
	task := newBlockingTask()
	var second atomic.Bool
	m.Add("expire", func(ctx context.Context) (int64, error) {
		if task.calls.Load() > 0 {
			second.Store(true)
			return 0, nil
		}
		return task.run(ctx)
	})
	done := make(chan bool, 1)
	go func() {
		ran, _ := m.RunOnce(context.Background())
		done <- ran
	}()
	<-task.started
	ran, err := m.RunOnce(context.Background())
	require.NoError(t, err)
	require.False(t, ran)
	require.False(t, second.Load(), "a second run while one is in hand")
	close(task.release)
	require.True(t, <-done)
}

// The gocron job runs the tasks at once on start, and stops with its
// context: a task in hand sees its context cancelled.
func TestMaintainer_Start(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		m := maintenance.New(db, maintenance.Options{Logger: quiet, Interval: time.Hour})
		task := newBlockingTask()
		m.Add("expire", task.run)
		ctx, cancel := context.WithCancel(context.Background())
		require.NoError(t, m.Start(ctx))
		select {
		case <-task.started:
		case <-time.After(10 * time.Second):
			t.Fatal("the job did not run at start")
		}
		cancel()
		stopped := make(chan struct{})
		go func() { m.Wait(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(15 * time.Second):
			t.Fatal("the job did not stop")
		}
		require.Equal(t, int32(1), task.calls.Load())
	})
}
