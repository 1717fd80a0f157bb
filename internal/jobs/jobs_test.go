package jobs

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

func eachDB(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, dbtest.New(t, d))
		})
	}
}

// waitFor polls the job until it is in one of the states, or fails.
func waitFor(t *testing.T, s *Service, id int64, states ...string) Job {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := s.Get(context.Background(), id)
		require.NoError(t, err)
		for _, st := range states {
			if j.Status == st {
				return j
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d is %s, not %v", id, j.Status, states)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// jobEvents are the job.* events of the journal, in order: type and job.
func jobEvents(t *testing.T, db *gorm.DB) [][2]any {
	t.Helper()
	var rows []struct {
		Type        string
		AggregateID int64
	}
	require.NoError(t, db.Table("events").Select("type, aggregate_id").Where("type LIKE 'job.%'").Order("id").Find(&rows).Error)
	out := make([][2]any, len(rows))
	for i, r := range rows {
		out[i] = [2]any{r.Type, r.AggregateID}
	}
	return out
}

var asPlanner = events.WithActor(context.Background(), events.Actor{ID: 1, Name: "Планировщик"})

// Jobs wait in the order they were queued and at most Concurrency run at
// once; each ends done with its result, its steps in the journal.
func TestJobs_InOrderBounded(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db *gorm.DB) {
		s := NewService(db)
		r := NewRunner(s, RunnerOptions{Concurrency: 2, Poll: 20 * time.Millisecond})
		var now, most atomic.Int32
		var mu sync.Mutex
		var started []int64
		r.Handle("test", func(ctx context.Context, j Job, p *Progress) error {
			n := now.Add(1)
			defer now.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			mu.Lock()
			started = append(started, j.ID)
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			if err := p.Report(ctx, 0.5, "half way"); err != nil {
				return err
			}
			return database.Transaction(ctx, db, func(tx *gorm.DB) error {
				return p.FinishTx(ctx, tx, map[string]int64{"made": j.ID * 10})
			})
		})
		var ids []int64
		for range 5 {
			j, err := s.Enqueue(asPlanner, "test", map[string]int{"n": 1})
			require.NoError(t, err)
			require.Equal(t, StatusQueued, j.Status)
			ids = append(ids, j.ID)
		}
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		r.Start(ctx)
		for _, id := range ids {
			j := waitFor(t, s, id, StatusDone, StatusFailed)
			require.Equal(t, StatusDone, j.Status, "%+v", j.Error)
			require.Equal(t, map[string]int64{"made": id * 10}, j.Result)
			require.InDelta(t, 1.0, j.Progress, 1e-9)
			require.Equal(t, 1, j.Attempts)
		}
		stop()
		r.Wait()
		require.EqualValues(t, 2, most.Load(), "two at once, never more")
		var startedEv []int64
		for _, e := range jobEvents(t, db) {
			if e[0] == contracts.JobStarted.Name() {
				startedEv = append(startedEv, e[1].(int64))
			}
		}
		require.Equal(t, ids, startedEv, "started in the order queued")
		require.Len(t, started, 5)
		var actor *string
		require.NoError(t, database.Scan(db.Table("events").Select("actor_name").Where("type = 'job.queued'").Limit(1), &actor))
		require.Equal(t, "Планировщик", *actor, "queued in the name of its actor")
	})
}

// A queued job cancelled never runs; a running one stops at its next step;
// a finished one cannot be cancelled. A handler's problem fails the job
// with its code and fields.
func TestJobs_CancelAndFail(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db *gorm.DB) {
		s := NewService(db)
		r := NewRunner(s, RunnerOptions{Concurrency: 1, Poll: 20 * time.Millisecond})
		var ran atomic.Int32
		r.Handle("loop", func(ctx context.Context, j Job, p *Progress) error {
			ran.Add(1)
			for i := 0; ; i++ {
				if err := p.Report(ctx, float64(i%100)/100, "working"); err != nil {
					return err
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
		r.Handle("bad", func(context.Context, Job, *Progress) error {
			return apperr.Invalid("cannot lay out", apperr.Field("prod_orders[0].parts[7]", "fits on no sheet"))
		})
		ctx := context.Background()
		queued, err := s.Enqueue(asPlanner, "loop", nil)
		require.NoError(t, err)
		c, err := s.Cancel(asPlanner, queued.ID)
		require.NoError(t, err)
		require.Equal(t, StatusCancelled, c.Status)
		_, err = s.Cancel(asPlanner, queued.ID)
		require.Equal(t, apperr.ECONFLICT, apperr.Code(err))
		_, err = s.Cancel(asPlanner, 999999)
		require.Equal(t, apperr.ENOTFOUND, apperr.Code(err))

		running, err := s.Enqueue(asPlanner, "loop", nil)
		require.NoError(t, err)
		rctx, stop := context.WithCancel(ctx)
		defer stop()
		r.Start(rctx)
		for j := waitFor(t, s, running.ID, StatusRunning); j.Message != "working"; j = waitFor(t, s, running.ID, StatusRunning) {
			time.Sleep(5 * time.Millisecond) // until it has reported progress
		}
		c, err = s.Cancel(asPlanner, running.ID)
		require.NoError(t, err)
		require.True(t, c.CancelRequested)
		j := waitFor(t, s, running.ID, StatusCancelled, StatusFailed, StatusDone)
		require.Equal(t, StatusCancelled, j.Status)
		require.EqualValues(t, 1, ran.Load(), "the job cancelled while queued never ran")

		bad, err := s.Enqueue(asPlanner, "bad", nil)
		require.NoError(t, err)
		j = waitFor(t, s, bad.ID, StatusFailed, StatusDone)
		require.NotNil(t, j.Error)
		require.Equal(t, apperr.EINVALID, j.Error.Code)
		require.Equal(t, "prod_orders[0].parts[7]", j.Error.Errors[0].Field)
		stop()
		r.Wait()
		types := map[string]int{}
		for _, e := range jobEvents(t, db) {
			types[e[0].(string)]++
		}
		require.Equal(t, 1, types["job.cancel_requested"])
		require.Equal(t, 2, types["job.cancelled"])
		require.Equal(t, 1, types["job.failed"])
		require.Positive(t, types["job.progressed"])
	})
}

// A runner that dies with a job running leaves it running under a lease
// that runs out: another runner takes it back and runs it again; a job
// whose runner died MaxAttempts times fails, saying why. A runner stopped
// in good order queues its job again at once.
func TestJobs_KilledRunnerTakenOver(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db *gorm.DB) {
		s := NewService(db)
		const lease = 300 * time.Millisecond
		var attempts atomic.Int32
		handler := func(ctx context.Context, j Job, p *Progress) error {
			if j.Kind == "dies" || attempts.Add(1) == 1 {
				<-ctx.Done() // runs until its runner dies
				return ctx.Err()
			}
			return database.Transaction(ctx, db, func(tx *gorm.DB) error { return p.FinishTx(ctx, tx, map[string]int64{"attempt": 2}) })
		}
		newRunner := func() *Runner {
			r := NewRunner(s, RunnerOptions{Concurrency: 1, Lease: lease, Poll: 20 * time.Millisecond})
			r.Handle("survives", handler)
			r.Handle("dies", handler)
			return r
		}
		ctx := context.Background()
		job, err := s.Enqueue(asPlanner, "survives", nil)
		require.NoError(t, err)
		a := newRunner()
		a.Start(ctx)
		waitFor(t, s, job.ID, StatusRunning)
		for attempts.Load() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		a.kill()
		j, err := s.Get(ctx, job.ID)
		require.NoError(t, err)
		require.Equal(t, StatusRunning, j.Status, "a dead runner writes nothing")

		b := newRunner()
		bctx, stopB := context.WithCancel(ctx)
		b.Start(bctx)
		j = waitFor(t, s, job.ID, StatusDone, StatusFailed)
		require.Equal(t, StatusDone, j.Status, "%+v", j.Error)
		require.Equal(t, 2, j.Attempts)
		require.Equal(t, map[string]int64{"attempt": 2}, j.Result)
		var seq []string
		for _, e := range jobEvents(t, db) {
			if e[1].(int64) == job.ID {
				seq = append(seq, e[0].(string))
			}
		}
		require.Equal(t, []string{"job.queued", "job.started", "job.requeued", "job.started", "job.done"}, seq)

		// Stopped in good order: queued again at once, its start not counted.
		dies, err := s.Enqueue(asPlanner, "dies", nil)
		require.NoError(t, err)
		waitFor(t, s, dies.ID, StatusRunning)
		stopB()
		b.Wait()
		j, err = s.Get(ctx, dies.ID)
		require.NoError(t, err)
		require.Equal(t, StatusQueued, j.Status)
		require.Zero(t, j.Attempts)

		// Dead twice: failed with the reason.
		for k := range MaxAttempts {
			r := newRunner()
			r.Start(ctx)
			for j.Attempts != k+1 {
				j = waitFor(t, s, dies.ID, StatusRunning)
				time.Sleep(5 * time.Millisecond)
			}
			r.kill()
		}
		c := newRunner()
		cctx, stopC := context.WithCancel(ctx)
		defer stopC()
		c.Start(cctx)
		j = waitFor(t, s, dies.ID, StatusFailed, StatusDone)
		require.Equal(t, apperr.EUNAVAILABLE, j.Error.Code)
		require.Contains(t, j.Error.Detail, "stopped while it ran, 2 times")
		stopC()
		c.Wait()
	})
}
