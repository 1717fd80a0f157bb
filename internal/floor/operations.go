package floor

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
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
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		o, err := plan.LoadOrder(ctx, tx, orderID, true)
		if err != nil {
			return err
		}
		if o.Status == plan.StatusCancelled || o.Status == plan.StatusDone || o.Status == plan.StatusClosed {
			return apperr.Conflict("%s is %s: its operations cannot change", o.Describe(), o.Status)
		}
		var op plan.Operation
		err = tx.Where("id = ? AND prod_order_id = ?", opID, orderID).First(&op).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return apperr.NotFound("production order %d has no operation %d", orderID, opID)
		} else if err != nil {
			return err
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
		}
		if err := s.moveOperation(ctx, tx, o, op, to); err != nil {
			return err
		}
		if err := tx.First(&out.Operation, opID).Error; err != nil {
			return err
		}
		out.ProdOrder, err = plan.LoadOrder(ctx, tx, orderID, false)
		return err
	})
	return out, err
}

// moveOperation is the one path that moves an operation on, for a start or
// completion by its id and for a scan alike: op goes from its state to to
// (done straight from pending too, as a scan says), stamped with the
// database clock and, when done, with who did it; operation.started or
// .completed is written; the order starts when launched, its unit is made
// when this was its last operation (unit.made), and the order is done when
// nothing is left (prod_order.completed). The caller holds the order's
// lock and has checked the route order.
func (s *Service) moveOperation(ctx context.Context, tx *gorm.DB, o plan.ProdOrder, op plan.Operation, to string) error {
	now := gorm.Expr(database.Now(tx))
	set := map[string]any{"status": to}
	if to == plan.OpInProgress || op.Status == plan.OpPending {
		set["started_at"] = now
	}
	if to == plan.OpDone {
		set["completed_at"] = now
		if a, ok := events.ActorFrom(ctx); ok {
			set["completed_by_id"], set["completed_by"] = a.ID, a.Name
		}
	}
	res := tx.Model(&plan.Operation{}).Where("id = ? AND status = ?", op.ID, op.Status).Updates(set)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return apperr.Conflict("operation %d changed at the same time; read it again", op.ID)
	}
	if err := operationEvent(ctx, tx, op, to); err != nil {
		return err
	}
	if o.Status == plan.StatusLaunched {
		if err := plan.MoveOrderTx(ctx, tx, o, plan.StatusLaunched, plan.StatusInProgress, "started_at", contracts.ProdOrderStarted); err != nil {
			return err
		}
	}
	if to != plan.OpDone {
		return nil
	}
	if err := s.unitsMade(ctx, tx, o, &unitKey{op.ItemID, op.Unit}); err != nil {
		return err
	}
	return s.completeIfDone(ctx, tx, o)
}

// operationEvent writes operation.started (to in_progress) or
// operation.completed (to done) for op, naming its step and its part or unit.
func operationEvent(ctx context.Context, tx *gorm.DB, op plan.Operation, to string) error {
	p := contracts.OperationPayload{ProdOrderID: op.ProdOrderID, OperationID: op.ID, Seq: op.Seq, Operation: op.Name, Scope: op.Scope,
		WorkCenterID: op.WorkCenterID, ItemID: op.ItemID, Unit: op.Unit, PartID: op.PartID}
	if op.PartID != nil {
		var part struct{ Name, Code string }
		if err := database.Scan(tx.Raw("SELECT name, code FROM plan_parts WHERE id = ?", *op.PartID), &part); err != nil {
			return err
		}
		p.Part, p.Code = part.Name, part.Code
	} else {
		err := database.Scan(tx.Raw("SELECT code FROM plan_units WHERE prod_order_id = ? AND item_id = ? AND unit = ?", op.ProdOrderID, op.ItemID, op.Unit), &p.Code)
		if err != nil {
			return err
		}
	}
	ev := contracts.OperationStarted
	if to == plan.OpDone {
		ev = contracts.OperationCompleted
	}
	return events.Add(ctx, tx, ev.New(op.ProdOrderID, p))
}
