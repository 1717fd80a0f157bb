package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// Progress is a running job's line to its runner: its progress, and the
// transaction that finishes it.
type Progress struct {
	r         *Runner
	id        int64
	cancel    context.CancelFunc
	finished  bool
	cancelled bool
}

// Report records the fraction of the job's work done (0 to 1) and what it
// is doing, with job.progressed. When a client has asked the job to stop,
// it cancels the job's context and returns context.Canceled: the handler
// stops there. ECONFLICT when the runner no longer holds the job (its
// lease ran out and another runner took it).
func (p *Progress) Report(ctx context.Context, fraction float64, message string) error {
	fraction = min(max(fraction, 0), 1)
	var stop bool
	err := database.Transaction(context.WithoutCancel(ctx), p.r.s.db, func(tx *gorm.DB) error {
		j, err := p.r.held(ctx, tx, p.id)
		if err != nil {
			return err
		}
		if j.CancelRequested {
			stop = true
			return nil
		}
		if err := tx.WithContext(ctx).Exec(`UPDATE jobs_queue SET progress = ?, message = ? WHERE id = ?`, fraction, message, p.id).Error; err != nil {
			return err
		}
		j.Progress, j.Message = fraction, message
		return events.Add(ctx, tx, contracts.JobProgressed.New(p.id, j.payload()))
	})
	if err != nil {
		return err
	}
	if stop {
		p.cancelled = true
		p.cancel()
		return context.Canceled
	}
	return ctx.Err()
}

// FinishTx marks the job done with its result (what it made, e.g.
// {"plan_id": 7}) and writes job.done, inside tx, the transaction that
// stores the job's work: the job is done exactly when its work is
// stored. ECONFLICT when the runner no longer holds the job, or a client
// asked it to stop: the work is not stored then.
func (p *Progress) FinishTx(ctx context.Context, tx *gorm.DB, result map[string]int64) error {
	j, err := p.r.held(ctx, tx, p.id)
	if err != nil {
		return err
	}
	if j.CancelRequested {
		p.cancelled = true
		return context.Canceled
	}
	if err := p.r.markDone(ctx, tx, j, result); err != nil {
		return err
	}
	p.finished = true
	return nil
}

// held locks the job's row and returns it while this runner holds it.
func (r *Runner) held(ctx context.Context, tx *gorm.DB, id int64) (row, error) {
	var j row
	err := database.ForUpdate(tx.WithContext(ctx)).Where("id = ? AND status = ? AND owner = ?", id, StatusRunning, r.opt.Owner).First(&j).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return j, apperr.Conflict("job %d is no longer run by this replica (its lease ran out)", id)
	}
	return j, err
}

func (r *Runner) markDone(ctx context.Context, tx *gorm.DB, j row, result map[string]int64) error {
	var res *string
	if result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			return err
		}
		v := string(b)
		res = &v
	}
	err := tx.WithContext(ctx).Exec(`UPDATE jobs_queue SET status = ?, result = ?, progress = 1, message = 'done', owner = NULL, lease_until = NULL,
    finished_at = `+database.Now(tx)+` WHERE id = ?`, StatusDone, res, j.ID).Error
	if err != nil {
		return err
	}
	j.Status, j.Progress, j.Message, j.Result = StatusDone, 1, "done", res
	return events.Add(ctx, tx, contracts.JobDone.New(j.ID, j.payload()))
}

// finish marks a job done whose handler stored nothing.
func (r *Runner) finish(ctx context.Context, id int64, result map[string]int64) error {
	return database.Transaction(ctx, r.s.db, func(tx *gorm.DB) error {
		j, err := r.held(ctx, tx, id)
		if err != nil {
			return err
		}
		return r.markDone(ctx, tx, j, result)
	})
}

// end marks a job this runner holds failed or cancelled, with its message
// or failure.
func (r *Runner) end(ctx context.Context, id int64, status, message string, f *Failure) error {
	return database.Transaction(ctx, r.s.db, func(tx *gorm.DB) error {
		j, err := r.held(ctx, tx, id)
		if err != nil {
			return err
		}
		return endTx(ctx, tx, j, status, message, f)
	})
}

func endTx(ctx context.Context, tx *gorm.DB, j row, status, message string, f *Failure) error {
	var fe *string
	if f != nil {
		b, err := json.Marshal(f)
		if err != nil {
			return err
		}
		v := string(b)
		fe = &v
		if message == "" {
			message = f.Detail
		}
	}
	err := tx.WithContext(ctx).Exec(`UPDATE jobs_queue SET status = ?, error = ?, message = ?, owner = NULL, lease_until = NULL,
    finished_at = `+database.Now(tx)+` WHERE id = ?`, status, fe, message, j.ID).Error
	if err != nil {
		return err
	}
	j.Status, j.Message, j.Error = status, message, fe
	ev := contracts.JobFailed
	if status == StatusCancelled {
		ev = contracts.JobCancelled
	}
	return events.Add(ctx, tx, ev.New(j.ID, j.payload()))
}

// requeue puts a job this runner holds back in the queue (the runner is
// stopping), its start not counted.
func (r *Runner) requeue(ctx context.Context, id int64, message string) error {
	return database.Transaction(ctx, r.s.db, func(tx *gorm.DB) error {
		j, err := r.held(ctx, tx, id)
		if err != nil {
			return err
		}
		return requeueTx(ctx, tx, j, message, j.Attempts-1)
	})
}

func requeueTx(ctx context.Context, tx *gorm.DB, j row, message string, attempts int) error {
	err := tx.WithContext(ctx).Exec(`UPDATE jobs_queue SET status = ?, message = ?, attempts = ?, owner = NULL, lease_until = NULL, progress = 0
WHERE id = ?`, StatusQueued, message, attempts, j.ID).Error
	if err != nil {
		return err
	}
	j.Status, j.Message, j.Attempts, j.Progress = StatusQueued, message, attempts, 0
	return events.Add(ctx, tx, contracts.JobRequeued.New(j.ID, j.payload()))
}

// takeBackExpired deals with the running jobs whose lease ran out (the
// replica running them stopped without a word): each is queued again, or
// failed with the reason once it has been started MaxAttempts times.
func (r *Runner) takeBackExpired(ctx context.Context) error {
	return database.Transaction(ctx, r.s.db, func(tx *gorm.DB) error {
		q := tx.WithContext(ctx).Where("status = ? AND lease_until < "+database.Now(tx), StatusRunning).Order("id")
		if database.LocksRows(tx) {
			q = q.Clauses(skipLocked)
		}
		var rows []row
		if err := q.Find(&rows).Error; err != nil {
			return err
		}
		for _, j := range rows {
			if j.Attempts >= MaxAttempts {
				f := &Failure{Code: apperr.EUNAVAILABLE, Detail: fmt.Sprintf("the replica running it stopped while it ran, %d times (its lease ran out); queue it again", j.Attempts)}
				if err := endTx(ctx, tx, j, StatusFailed, "", f); err != nil {
					return err
				}
				continue
			}
			if err := requeueTx(ctx, tx, j, "the replica running it stopped (its lease ran out); queued again", j.Attempts); err != nil {
				return err
			}
		}
		return nil
	})
}

// renew extends the leases of the jobs this runner runs and cancels those
// a client asked to stop.
func (r *Runner) renew(ctx context.Context) error {
	db := r.s.db.WithContext(ctx)
	err := db.Exec(`UPDATE jobs_queue SET lease_until = `+database.NowPlus(db, r.opt.Lease)+` WHERE owner = ? AND status = ?`,
		r.opt.Owner, StatusRunning).Error
	if err != nil {
		return err
	}
	var stop []int64
	if err := db.Model(&row{}).Where("owner = ? AND status = ? AND cancel_requested", r.opt.Owner, StatusRunning).Pluck("id", &stop).Error; err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range stop {
		if cancel, ok := r.running[id]; ok {
			cancel()
		}
	}
	return nil
}

// failureOf is how a handler's error is shown: an apperr error's code,
// message and fields; anything else as an internal failure, logged.
func failureOf(err error, log *slog.Logger, j row) *Failure {
	if ae := apperr.As(err); ae != nil && ae.Code != apperr.EINTERNAL {
		return &Failure{Code: ae.Code, Detail: ae.Message, Errors: ae.Fields}
	}
	log.Error("jobs: a job failed", "job", j.ID, "kind", j.Kind, "err", err)
	return &Failure{Code: apperr.EINTERNAL, Detail: "the job failed unexpectedly; the service's log has the cause"}
}
