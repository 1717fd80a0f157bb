package plan

import (
	"context"
	"errors"
	"slices"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// OperationChange is the result of starting or completing an operation: the
// operation and its production order as they are now.
type OperationChange struct {
	Operation Operation `json:"operation"`
	ProdOrder ProdOrder `json:"prod_order"`
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
	return s.changeOperation(ctx, orderID, opID, OpPending, OpInProgress)
}

// CompleteOperation marks an operation in progress done and writes
// operation.completed. The order's last operation done moves the order to
// done and writes prod_order.completed too. It
// returns ENOTFOUND for an unknown order or operation, ECONFLICT when the
// operation is not in progress or an operation before it in the route (on
// its part, or of its unit for an item-scope one) is not done.
func (s *Service) CompleteOperation(ctx context.Context, orderID, opID int64) (OperationChange, error) {
	return s.changeOperation(ctx, orderID, opID, OpInProgress, OpDone)
}

func (s *Service) changeOperation(ctx context.Context, orderID, opID int64, from, to string) (OperationChange, error) {
	var out OperationChange
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		o, err := prodOrder(ctx, tx, orderID, true)
		if err != nil {
			return err
		}
		if o.Status == StatusCancelled || o.Status == StatusDone || o.Status == StatusClosed {
			return apperr.Conflict("%s is %s: its operations cannot change", describe(o), o.Status)
		}
		var op Operation
		err = tx.Where("id = ? AND prod_order_id = ?", opID, orderID).First(&op).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return apperr.NotFound("production order %d has no operation %d", orderID, opID)
		} else if err != nil {
			return err
		}
		if op.Status != from {
			if to == OpInProgress {
				return apperr.Conflict("operation %d is %s; only a pending operation can be started", opID, op.Status)
			}
			return apperr.Conflict("operation %d is %s; only an operation in progress can be completed", opID, op.Status)
		}
		if to == OpDone {
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
		out.ProdOrder, err = prodOrder(ctx, tx, orderID, false)
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
func (s *Service) moveOperation(ctx context.Context, tx *gorm.DB, o ProdOrder, op Operation, to string) error {
	now := gorm.Expr(database.Now(tx))
	set := map[string]any{"status": to}
	if to == OpInProgress || op.Status == OpPending {
		set["started_at"] = now
	}
	if to == OpDone {
		set["completed_at"] = now
		if a, ok := events.ActorFrom(ctx); ok {
			set["completed_by_id"], set["completed_by"] = a.ID, a.Name
		}
	}
	res := tx.Model(&Operation{}).Where("id = ? AND status = ?", op.ID, op.Status).Updates(set)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return apperr.Conflict("operation %d changed at the same time; read it again", op.ID)
	}
	if err := operationEvent(ctx, tx, op, to); err != nil {
		return err
	}
	if o.Status == StatusLaunched {
		if err := s.moveOrder(ctx, tx, o, StatusLaunched, StatusInProgress, "started_at", contracts.ProdOrderStarted); err != nil {
			return err
		}
	}
	if to != OpDone {
		return nil
	}
	if err := s.unitsMade(ctx, tx, o, &unitKey{op.ItemID, op.Unit}); err != nil {
		return err
	}
	return s.completeIfDone(ctx, tx, o)
}

// operationEvent writes operation.started (to in_progress) or
// operation.completed (to done) for op, naming its step and its part or unit.
func operationEvent(ctx context.Context, tx *gorm.DB, op Operation, to string) error {
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
	if to == OpDone {
		ev = contracts.OperationCompleted
	}
	return events.Add(ctx, tx, ev.New(op.ProdOrderID, p))
}

// moveOrder changes the order's state and writes its event, in tx.
func (s *Service) moveOrder(ctx context.Context, tx *gorm.DB, o ProdOrder, from, to, stamp string, ev events.Contract[contracts.ProdOrderPayload]) error {
	res := tx.Model(&ProdOrder{}).Where("id = ? AND status = ?", o.ID, from).
		Updates(map[string]any{"status": to, stamp: gorm.Expr(database.Now(tx))})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return apperr.Conflict("%s changed at the same time; read it again", describe(o))
	}
	return events.Add(ctx, tx, ev.New(o.ID, contracts.ProdOrderPayload{ProdOrderID: o.ID, Items: o.ItemIDs()}))
}

// CancelProdOrder cancels a production order on which no operation has
// started: its items are released and go back to the planning backlog
// (unless their sales order was cancelled meanwhile), its operations no
// longer load the work centres, and prod_order.cancelled is written. It
// returns ENOTFOUND, or ECONFLICT when work has started or the order is
// cancelled already.
func (s *Service) CancelProdOrder(ctx context.Context, id int64) (ProdOrder, error) {
	var o ProdOrder
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		o, err = prodOrder(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if o.Status != StatusLaunched {
			return apperr.Conflict("%s is %s; only an order on which no work has started can be cancelled", describe(o), o.Status)
		}
		if err := s.moveOrder(ctx, tx, o, StatusLaunched, StatusCancelled, "cancelled_at", contracts.ProdOrderCancelled); err != nil {
			return err
		}
		if err := tx.Model(&ProdItem{}).Where("prod_order_id = ?", id).Update("released", true).Error; err != nil {
			return err
		}
		var cancelled []int64
		if err := tx.Model(&cancelledOrder{}).Where("order_id IN ?", orderIDs(o)).Pluck("order_id", &cancelled).Error; err != nil {
			return err
		}
		var back []BacklogItem
		for _, it := range o.Items {
			if !slices.Contains(cancelled, it.OrderID) && !it.Removed {
				back = append(back, backlogRow(it, it.orderedNow()))
			}
		}
		if len(back) > 0 {
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&back).Error; err != nil {
				return err
			}
		}
		o, err = prodOrder(ctx, tx, id, false)
		return err
	})
	return o, err
}

// backlogRow is the backlog's row for qty units of a production order's
// item: what the backlog knew of the item when it was launched.
func backlogRow(it ProdItem, qty int) BacklogItem {
	return BacklogItem{ItemID: it.ItemID, OrderID: it.OrderID, SKU: it.SKU, Qty: qty,
		DueDate: it.DueDate, ReceivedAt: it.ReceivedAt, EventID: it.EventID, Customer: it.Customer, Note: it.Note}
}

func orderIDs(o ProdOrder) []int64 {
	var ids []int64
	for _, it := range o.Items {
		if !slices.Contains(ids, it.OrderID) {
			ids = append(ids, it.OrderID)
		}
	}
	return ids
}

// cancelledOrder remembers a sales order the plan saw cancelled.
type cancelledOrder struct {
	OrderID int64 `gorm:"primaryKey;autoIncrement:false"`
	EventID int64
}

func (cancelledOrder) TableName() string { return "plan_cancelled_orders" }

// dropFromBacklog runs in the dispatcher's transaction: a cancelled sales
// order's items leave the backlog, and the plan remembers the order so that
// a cancelled production order never puts them back.
func (s *Service) dropFromBacklog(ctx context.Context, tx *gorm.DB, ev events.Event) error {
	p, err := contracts.OrderCancelled.Decode(ev)
	if err != nil {
		return err
	}
	if p.OrderID == 0 {
		return nil
	}
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&cancelledOrder{OrderID: p.OrderID, EventID: ev.ID}).Error; err != nil {
		return err
	}
	q := tx.Where("order_id = ?", p.OrderID)
	if len(p.Items) > 0 {
		q = tx.Where("order_id = ? OR item_id IN ?", p.OrderID, p.Items)
	}
	return q.Delete(&BacklogItem{}).Error
}
