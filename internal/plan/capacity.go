package plan

import (
	"context"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// capacityChanged re-plans when a work centre's capacity, shift or
// calendar changed (work_center.updated), journalled as plan.replanned
// with reason capacity: the first live order in the plan with work left on
// the centre and every order behind it are placed again. The orders ahead
// of it use none of the centre's time, so they keep their slots, exactly
// as a re-plan of everything would leave them. With no work left on the
// centre, nothing moves and nothing is journalled; nor when a centre can
// no longer be planned on (no working day within the horizon).
func (s *Service) capacityChanged(ctx context.Context, tx *gorm.DB, ev events.Event) error {
	wc, err := contracts.WorkCenterUpdated.Decode(ev)
	if err != nil {
		return err
	}
	var first []struct {
		ID       int64
		Priority int
	}
	err = database.Scan(tx.WithContext(ctx).Model(&ProdOrder{}).Select("id, priority").
		Where("status IN ?", []string{StatusLaunched, StatusInProgress}).
		Where("EXISTS (SELECT 1 FROM plan_operations WHERE plan_operations.prod_order_id = plan_prod_orders.id "+
			"AND plan_operations.work_center_id = ? AND plan_operations.status <> ?)", wc.WorkCenterID, OpDone).
		Order("priority DESC, id").Limit(1), &first)
	if err != nil || len(first) == 0 {
		return err
	}
	behind, args := behindInPlan(first[0].Priority, first[0].ID)
	return s.replanFollowing(ctx, tx, contracts.ReplanCapacity, behind, args...)
}

// replanFollowing is the re-plan a subscriber makes (of the live orders
// that moving selects), journalled with reason. When the plan cannot be
// made (a work centre with no working day within the horizon, or booked
// full for it) it leaves the plan as it is and returns nil: nothing can be
// planned until a planner fixes the centre, which POST
// /api/v1/plan/replan's 422 names, and handling the event again would
// change nothing.
func (s *Service) replanFollowing(ctx context.Context, tx *gorm.DB, reason, moving string, args ...any) error {
	err := tx.Transaction(func(tx *gorm.DB) error {
		_, err := s.replanJournalled(ctx, tx, reason, 0, scope{where: moving, args: args}, scope{})
		return err
	})
	if apperr.Code(err) == apperr.EINVALID {
		return nil
	}
	return err
}
