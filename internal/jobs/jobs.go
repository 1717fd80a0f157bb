// Package jobs runs long work in the background: a request that could
// take longer than the request timeout (a cutting plan) is queued as a job
// and answered at once; a runner in each replica takes queued jobs in
// order, a bounded number at a time (JOBS_CONCURRENCY), and runs each
// under a lease it renews. A job's life, each step journalled as a job.*
// event:
//
//	queued ──▶ running ──▶ done | failed | cancelled
//	  │           │  ▲
//	  │           │  └─ lease ran out (its replica stopped): queued again,
//	  │           │     or failed with the reason after MaxAttempts
//	  └──────────────▶ cancelled (a client's cancel: at once when queued,
//	                   at the job's next step when running)
//
// It owns the table jobs_queue. What a job does is a Handler registered
// for its kind by the module that owns the work (cutplan for a cutting
// plan), which stores its result with Finish inside its own transaction, so
// that the job is done exactly when its work is stored.
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// A job's states.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusDone      = "done"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// MaxAttempts is how many times a job is started before a lease that runs
// out fails it instead of queueing it again.
const MaxAttempts = 2

// Job is a job as the API shows it.
type Job struct {
	ID     int64  `json:"id" example:"3"`
	Kind   string `json:"kind" example:"cutting_plan"`
	Status string `json:"status" enums:"queued,running,done,failed,cancelled" example:"running"`
	// Progress is the fraction of its work done (0 to 1); Message what it
	// is doing, or why it stopped.
	Progress float64 `json:"progress" example:"0.5"`
	Message  string  `json:"message" example:"board LDSP16-WHITE laid out (2 of 4)"`
	// Input is what the job was asked to do.
	Input json.RawMessage `json:"input" swaggertype:"object"`
	// Result names what a done job made, e.g. {"plan_id": 7}.
	Result map[string]int64 `json:"result,omitempty" extensions:"x-nullable"`
	// Error is why a job failed, as a problem's code, detail and fields.
	Error *Failure `json:"error,omitempty" extensions:"x-nullable"`
	// Attempts counts the runners that started it; CancelRequested, that a
	// client asked a running job to stop.
	Attempts        int        `json:"attempts" example:"1"`
	CancelRequested bool       `json:"cancel_requested" example:"false"`
	CreatedAt       time.Time  `json:"created_at" format:"date-time"`
	StartedAt       *time.Time `json:"started_at" format:"date-time" extensions:"x-nullable"`
	FinishedAt      *time.Time `json:"finished_at" format:"date-time" extensions:"x-nullable"`
}

// Failure is why a job failed: the apperr code of the problem its work
// met (invalid, conflict, unavailable, internal), its detail and the
// fields at fault.
type Failure struct {
	Code   string              `json:"code" example:"invalid"`
	Detail string              `json:"detail" example:"a part fits on no sheet of its board"`
	Errors []apperr.FieldError `json:"errors,omitempty"`
}

// row is a jobs_queue row.
type row struct {
	ID              int64
	Kind            string
	Status          string
	Input           string
	Result          *string
	Error           *string
	Progress        float64
	Message         string
	Attempts        int
	CancelRequested bool
	Owner           *string
	LeaseUntil      *time.Time
	ActorID         *int64
	ActorName       *string
	CreatedAt       time.Time
	StartedAt       *time.Time
	FinishedAt      *time.Time
}

func (row) TableName() string { return "jobs_queue" }

func (r row) job() Job {
	j := Job{ID: r.ID, Kind: r.Kind, Status: r.Status, Progress: r.Progress, Message: r.Message, Input: json.RawMessage(r.Input),
		Attempts: r.Attempts, CancelRequested: r.CancelRequested, CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
	if r.Result != nil {
		_ = json.Unmarshal([]byte(*r.Result), &j.Result) // written by Finish
	}
	if r.Error != nil {
		j.Error = &Failure{}
		_ = json.Unmarshal([]byte(*r.Error), j.Error) // written by fail
	}
	return j
}

func (r row) payload() contracts.JobPayload {
	j := r.job()
	p := contracts.JobPayload{JobID: r.ID, Kind: r.Kind, Status: r.Status, Progress: r.Progress, Message: r.Message, Attempts: r.Attempts, Result: j.Result}
	return p
}

// actor is the user who queued the job: its work is done in their name.
func (r row) actor() (events.Actor, bool) {
	if r.ActorID == nil || r.ActorName == nil {
		return events.Actor{}, false
	}
	return events.Actor{ID: *r.ActorID, Name: *r.ActorName}, true
}

// Service queues jobs and reports them.
type Service struct {
	db   *gorm.DB
	wake func() // tells this replica's runner a job was queued; may be nil
}

// NewService returns the jobs service over db.
func NewService(db *gorm.DB) *Service { return &Service{db: db} }

// RegisterEvents declares the jobs module's event types.
func (s *Service) RegisterEvents(r *events.Registrar) {
	r.Declare(contracts.JobQueued, contracts.JobStarted, contracts.JobProgressed, contracts.JobCancelRequested,
		contracts.JobRequeued, contracts.JobDone, contracts.JobFailed, contracts.JobCancelled)
}

// Enqueue queues a job of kind with its input (any JSON value), in the
// name of ctx's actor, with job.queued, and returns it.
func (s *Service) Enqueue(ctx context.Context, kind string, input any) (Job, error) {
	b, err := json.Marshal(input)
	if err != nil {
		return Job{}, err
	}
	r := row{Kind: kind, Status: StatusQueued, Input: string(b)}
	if a, ok := events.ActorFrom(ctx); ok {
		r.ActorID, r.ActorName = &a.ID, &a.Name
	}
	err = database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		if err := tx.WithContext(ctx).Omit("ID", "CreatedAt").Create(&r).Error; err != nil {
			return err
		}
		if err := tx.WithContext(ctx).First(&r, r.ID).Error; err != nil {
			return err
		}
		return events.Add(ctx, tx, contracts.JobQueued.New(r.ID, r.payload()))
	})
	if err != nil {
		return Job{}, err
	}
	if s.wake != nil {
		s.wake()
	}
	return r.job(), nil
}

// Get returns a job, or ENOTFOUND.
func (s *Service) Get(ctx context.Context, id int64) (Job, error) {
	var r row
	err := s.db.WithContext(ctx).First(&r, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Job{}, apperr.NotFound("job %d does not exist", id)
	}
	return r.job(), err
}

// List returns a page of jobs, newest first, of kind when given.
func (s *Service) List(ctx context.Context, kind string, pr page.Request) ([]Job, string, error) {
	q := s.db.WithContext(ctx).Model(&row{})
	if kind != "" {
		q = q.Where("kind = ?", kind)
	}
	if pr.After != 0 {
		q = q.Where("id < ?", pr.After)
	}
	var rows []row
	if err := q.Order("id DESC").Limit(pr.Limit + 1).Find(&rows).Error; err != nil {
		return nil, "", fmt.Errorf("jobs: list: %w", err)
	}
	rows, next := page.Next(rows, pr.Limit, func(r row) int64 { return r.ID })
	out := make([]Job, len(rows))
	for i, r := range rows {
		out[i] = r.job()
	}
	return out, next, nil
}

// Cancel cancels a queued job at once (job.cancelled) and asks a running
// one to stop (job.cancel_requested; its runner cancels it at its next
// step), in the name of ctx's actor. It returns the job, ENOTFOUND for an
// unknown one and ECONFLICT for one that is done, failed or cancelled
// already.
func (s *Service) Cancel(ctx context.Context, id int64) (Job, error) {
	var out row
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		var r row
		err := database.ForUpdate(tx.WithContext(ctx)).First(&r, id).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return apperr.NotFound("job %d does not exist", id)
		}
		if err != nil {
			return err
		}
		switch {
		case r.Status == StatusQueued:
			err = tx.WithContext(ctx).Exec(`UPDATE jobs_queue SET status = ?, message = ?, finished_at = `+database.Now(tx)+` WHERE id = ?`,
				StatusCancelled, "cancelled before it started", id).Error
		case r.Status == StatusRunning && !r.CancelRequested:
			err = tx.WithContext(ctx).Exec(`UPDATE jobs_queue SET cancel_requested = ? WHERE id = ?`, true, id).Error
		case r.Status == StatusRunning:
			out = r
			return nil // asked already
		default:
			return apperr.Conflict("job %d is %s already; nothing to cancel", id, r.Status)
		}
		if err != nil {
			return err
		}
		if err := tx.WithContext(ctx).First(&out, id).Error; err != nil {
			return err
		}
		ev := contracts.JobCancelled
		if out.Status == StatusRunning {
			ev = contracts.JobCancelRequested
		}
		return events.Add(ctx, tx, ev.New(id, out.payload()))
	})
	return out.job(), err
}
