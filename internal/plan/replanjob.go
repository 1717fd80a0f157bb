package plan

import (
	"context"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/jobs"
)

// ReplanJobKind is the kind of the job that re-plans everything, for a
// client that would rather not wait on its request
// (POST /api/v1/plan/replan with Prefer: respond-async).
const ReplanJobKind = "replan"

// RunReplanJob is the jobs.Handler of ReplanJobKind: Replan's work in the
// name of the job's actor, the job finished in the re-plan's own
// transaction with its result (replan_id, and the counts of orders
// re-planned and moved), so that the job is done exactly when the re-plan
// is stored.
func (s *Service) RunReplanJob(ctx context.Context, _ jobs.Job, p *jobs.Progress) error {
	if err := p.Report(ctx, 0, "re-planning every unfinished production order"); err != nil {
		return err
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		out, err := s.replanJournalled(ctx, tx, contracts.ReplanRequested, 0, scope{where: "1 = 1"}, scope{})
		if err != nil {
			return err
		}
		return p.FinishTx(ctx, tx, map[string]int64{"replan_id": out.ID, "replanned": int64(out.Replanned), "moved": int64(len(out.Moved))})
	})
}
