package floor

import (
	"context"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// OperationChange is the result of starting or completing an operation: the
// operation and its production order as they are now.
type OperationChange struct {
	Operation plan.Operation `json:"operation"`
	ProdOrder plan.ProdOrder `json:"prod_order"`
}

// StartOperation marks a pending operation of the production order in
// progress and writes operation.started. The order's first started
// operation moves the order from launched to in_progress and writes
// prod_order.started too. It returns
// ENOTFOUND for an unknown order or operation, ECONFLICT when the operation
// is not pending or the order is cancelled, done or closed.
//
// The shop floor reports what happened: an operation may be started before
// the operations planned ahead of it are reported done.
func (s *Service) StartOperation(ctx context.Context, orderID, opID int64) (OperationChange, error) {
	return s.changeOperation(ctx, orderID, opID, plan.OpPending, plan.OpInProgress)
}

// CompleteOperation marks an operation in progress done and writes
// operation.completed. The order's last operation done moves the order to
// done and writes prod_order.completed too. It
// returns ENOTFOUND for an unknown order or operation, ECONFLICT when the
// operation is not in progress or an operation before it in the route (on
// its part, or of its unit for an item-scope one) is not done.
func (s *Service) CompleteOperation(ctx context.Context, orderID, opID int64) (OperationChange, error) {
	return s.changeOperation(ctx, orderID, opID, plan.OpInProgress, plan.OpDone)
}

func (s *Service) changeOperation(ctx context.Context, orderID, opID int64, from, to string) (OperationChange, error) {
	var out OperationChange
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		o, err := plan.LoadOrder(ctx, tx, orderID, true)
		if err != nil {
			return err
		}
		if o.Status == plan.StatusCancelled || o.Status == plan.StatusDone || o.Status == plan.StatusClosed {
			return apperr.Conflict("%s is %s: its operations cannot change", o.Describe(), o.Status)
		}
		op, found, err := operationOf(ctx, tx, orderID, opID)
		if err != nil {
			return err
		} else if !found {
			return apperr.NotFound("production order %d has no operation %d", orderID, opID)
		}
		if op.Status != from {
			if to == plan.OpInProgress {
				return apperr.Conflict("operation %d is %s; only a pending operation can be started", opID, op.Status)
			}
			return apperr.Conflict("operation %d is %s; only an operation in progress can be completed", opID, op.Status)
		}
		if to == plan.OpDone {
			if err := checkRouteOrder(ctx, tx, op); err != nil {
				return err
			}
			if err := s.complete(ctx, tx, &o, []plan.Operation{op}); err != nil {
				return err
			}
		} else if err := s.start(ctx, tx, &o, op); err != nil {
			return err
		}
		if out.Operation, err = operationByID(ctx, tx, opID); err != nil {
			return err
		}
		out.ProdOrder, err = s.orderNow(ctx, tx, orderID)
		return err
	})
	return out, err
}

// start marks a pending operation in progress, stamped with the database
// clock, writes operation.started and starts the order when it was
// launched. The caller holds the order's lock.
func (s *Service) start(ctx context.Context, tx *gorm.DB, o *plan.ProdOrder, op plan.Operation) error {
	started, err := markStarted(ctx, tx, op.ID)
	if err != nil {
		return err
	}
	if !started {
		return apperr.Conflict("operation %d changed at the same time; read it again", op.ID)
	}
	if err := operationEvents(ctx, tx, []plan.Operation{op}, contracts.OperationStarted); err != nil {
		return err
	}
	return s.startOrder(ctx, tx, o)
}
