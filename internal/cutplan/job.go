package cutplan

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/jobs"
)

// JobKind is the kind of the job that lays out a cutting plan.
const JobKind = "cutting_plan"

// JobInput is what a cutting-plan job lays out: the production orders'
// uncut parts, replacing the plan Replaces (a rebuild) when not nil.
type JobInput struct {
	ProdOrders []int64 `json:"prod_orders"`
	Replaces   *int64  `json:"replaces,omitempty"`
}

// boardProgress is told of each board laid out: done of total, its code.
type boardProgress func(ctx context.Context, done, total int, board string) error

// minBoardBudget is the least time the optimiser is given for a board,
// however little of the plan's budget is left.
const minBoardBudget = 100 * time.Millisecond

// boardBudget shares what is left of a plan's time budget among the boards
// still to lay out: the budget is the whole plan's (CUTTING_TIME_BUDGET),
// however many boards it has.
func boardBudget(budget, spent time.Duration, boardsLeft int) time.Duration {
	if boardsLeft < 1 {
		boardsLeft = 1
	}
	return max((budget-spent)/time.Duration(boardsLeft), minBoardBudget)
}

// Check returns what Create would refuse before laying anything out: the
// production orders (EINVALID naming prod_orders or prod_orders[i]:
// unknown, repeated, cancelled, done, closed, nothing left to cut) and
// their boards (unknown, without formats). A job is queued only for
// orders that pass it; what only the layout finds (a part that fits on no
// sheet) fails the job.
func (s *Service) Check(ctx context.Context, ids []int64) error {
	parts, err := s.floor.PartsToCut(ctx, ids)
	if err != nil {
		return err
	}
	_, err = boardsOf(ctx, s.db.WithContext(ctx), parts, ids)
	return err
}

// CheckRebuild returns the job input that rebuilds plan id, after the
// checks of Rebuild and Check: ENOTFOUND for an unknown plan, ECONFLICT
// for one replaced already, EINVALID as Check.
func (s *Service) CheckRebuild(ctx context.Context, id int64) (JobInput, error) {
	old, err := s.get(ctx, s.db, id, false)
	if err != nil {
		return JobInput{}, err
	}
	if old.ReplacedBy != nil {
		return JobInput{}, errReplaced(id, *old.ReplacedBy)
	}
	return JobInput{ProdOrders: old.ProdOrders, Replaces: &old.ID}, s.Check(ctx, old.ProdOrders)
}

// RunJob is the jobs.Handler of JobKind: it lays the orders out, reporting
// each board done, and stores the plan and finishes the job (result
// plan_id) in one transaction. The optimiser's time budget is the job's,
// shared among its boards; a cancel takes effect between two boards.
func (s *Service) RunJob(ctx context.Context, j jobs.Job, p *jobs.Progress) error {
	var in JobInput
	if err := json.Unmarshal(j.Input, &in); err != nil {
		return fmt.Errorf("cutplan: job %d: input: %w", j.ID, err)
	}
	if in.Replaces != nil {
		if _, err := s.CheckRebuild(ctx, *in.Replaces); err != nil {
			return err
		}
	}
	if err := p.Report(ctx, 0, fmt.Sprintf("laying out the parts of %d production orders", len(in.ProdOrders))); err != nil {
		return err
	}
	progress := func(ctx context.Context, done, total int, board string) error {
		return p.Report(ctx, 0.95*float64(done)/float64(total), fmt.Sprintf("board %s laid out (%d of %d)", board, done, total))
	}
	_, err := s.createWith(ctx, in.ProdOrders, in.Replaces, progress, func(tx *gorm.DB, planID int64) error {
		return p.FinishTx(ctx, tx, map[string]int64{"plan_id": planID})
	})
	return err
}
