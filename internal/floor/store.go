package floor

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// The floor's store: the statements of scans, operations and units on the
// plan's tables (plan_parts, plan_units, plan_operations,
// plan_prod_orders), one function a statement, each dialect-neutral and
// checked on both databases by store_test.go. The rules that decide what a
// scan or a report may do call them and write no SQL of their own.
//
// Each takes the transaction (or the pool) it runs in; none locks a row:
// the caller holds the production order's lock (plan.LockOrder) where the
// rule needs one.

// partByCode returns the part with the code, or nil when no part has it.
func partByCode(ctx context.Context, tx *gorm.DB, code string) (*plan.Part, error) {
	var parts []plan.Part
	if err := tx.WithContext(ctx).Where("code = ?", code).Limit(1).Find(&parts).Error; err != nil || len(parts) == 0 {
		return nil, err
	}
	return &parts[0], nil
}

// unitByCode returns the unit with the code, or nil when no unit has it.
func unitByCode(ctx context.Context, tx *gorm.DB, code string) (*plan.Unit, error) {
	var units []plan.Unit
	if err := tx.WithContext(ctx).Where("code = ?", code).Limit(1).Find(&units).Error; err != nil || len(units) == 0 {
		return nil, err
	}
	return &units[0], nil
}

// partOperationAt returns the part's operation at the route step seq, or
// nil when the part has none there (a unit-scope step, a step the route
// has not, or one closed short).
func partOperationAt(ctx context.Context, tx *gorm.DB, partID int64, seq int) (*plan.Operation, error) {
	return firstOperation(tx.WithContext(ctx).Where("part_id = ? AND seq = ?", partID, seq))
}

// unitOperationAt returns the unit's own (unit-scope) operation at the
// route step seq, or nil when it has none there.
func unitOperationAt(ctx context.Context, tx *gorm.DB, u plan.Unit, seq int) (*plan.Operation, error) {
	return firstOperation(tx.WithContext(ctx).Where("prod_order_id = ? AND item_id = ? AND unit = ? AND scope = ? AND seq = ?",
		u.ProdOrderID, u.ItemID, u.Unit, catalog.ScopeItem, seq))
}

func firstOperation(q *gorm.DB) (*plan.Operation, error) {
	var ops []plan.Operation
	if err := q.Limit(1).Find(&ops).Error; err != nil || len(ops) == 0 {
		return nil, err
	}
	return &ops[0], nil
}

// routeStep is a step of a production order's route as its operations
// hold it.
type routeStep struct {
	Seq   int
	Name  string
	Scope string
}

// routeSteps returns the steps the order's operations are at, in route
// order, each once.
func routeSteps(ctx context.Context, tx *gorm.DB, orderID int64) ([]routeStep, error) {
	var steps []routeStep
	err := database.Scan(tx.WithContext(ctx).Model(&plan.Operation{}).Distinct("seq", "name", "scope").
		Where("prod_order_id = ?", orderID).Order("seq"), &steps)
	return steps, err
}

// openOperationsBefore returns the operations of op's unit (its parts' and
// its own) at steps before op's that are not done, by step and id; which
// of them op must wait for is the route's rule (plan.Operation.Precedes).
func openOperationsBefore(ctx context.Context, tx *gorm.DB, op plan.Operation) ([]plan.Operation, error) {
	var before []plan.Operation
	err := tx.WithContext(ctx).Where("prod_order_id = ? AND item_id = ? AND unit = ? AND seq < ? AND status <> ?",
		op.ProdOrderID, op.ItemID, op.Unit, op.Seq, plan.OpDone).Order("seq, id").Find(&before).Error
	return before, err
}

// partCodes returns the codes of the parts with the ids, by id, at most
// limit of them.
func partCodes(ctx context.Context, tx *gorm.DB, ids []int64, limit int) ([]string, error) {
	codes := []string{}
	if len(ids) == 0 {
		return codes, nil
	}
	err := tx.WithContext(ctx).Model(&plan.Part{}).Where("id IN ?", ids).Order("id").Limit(limit).Pluck("code", &codes).Error
	return codes, err
}

// operationOf returns the order's operation with the id; found is false
// when the order has no such operation.
func operationOf(ctx context.Context, tx *gorm.DB, orderID, opID int64) (op plan.Operation, found bool, err error) {
	err = tx.WithContext(ctx).Where("id = ? AND prod_order_id = ?", opID, orderID).First(&op).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return op, false, nil
	}
	return op, err == nil, err
}

// operationByID returns the operation with the id as it is now, with its
// planned slot.
func operationByID(ctx context.Context, tx *gorm.DB, opID int64) (plan.Operation, error) {
	var op plan.Operation
	if err := tx.WithContext(ctx).First(&op, opID).Error; err != nil {
		return op, err
	}
	ops := []plan.Operation{op}
	err := plan.FillSlots(ctx, tx, ops)
	return ops[0], err
}

// nextOpenStep returns the route step of the first operation not done of
// op's unit that a part's scan would go on to (the part's own, or the
// unit's, when partID is given) or a unit's scan (the unit's own, when it
// is nil); ok is false when none is left.
func nextOpenStep(ctx context.Context, tx *gorm.DB, op plan.Operation, partID *int64) (seq int, ok bool, err error) {
	q := tx.WithContext(ctx).Model(&plan.Operation{}).Where("prod_order_id = ? AND item_id = ? AND unit = ? AND status <> ?",
		op.ProdOrderID, op.ItemID, op.Unit, plan.OpDone)
	if partID != nil {
		q = q.Where("part_id = ? OR part_id IS NULL", *partID)
	} else {
		q = q.Where("part_id IS NULL")
	}
	var next []int
	if err := q.Order("seq").Limit(1).Pluck("seq", &next).Error; err != nil || len(next) == 0 {
		return 0, false, err
	}
	return next[0], true, nil
}

// unitIsMade says whether the unit of the item numbered unit is marked made.
func unitIsMade(ctx context.Context, tx *gorm.DB, orderID, itemID int64, unit int) (bool, error) {
	var made []int64
	err := tx.WithContext(ctx).Model(&plan.Unit{}).Where("prod_order_id = ? AND item_id = ? AND unit = ? AND made_at IS NOT NULL", orderID, itemID, unit).
		Limit(1).Pluck("id", &made).Error
	return len(made) > 0, err
}

// orderStatus returns the production order's state, "" when there is no
// such order.
func orderStatus(ctx context.Context, tx *gorm.DB, orderID int64) (string, error) {
	var status []string
	if err := tx.WithContext(ctx).Model(&plan.ProdOrder{}).Where("id = ?", orderID).Pluck("status", &status).Error; err != nil || len(status) == 0 {
		return "", err
	}
	return status[0], nil
}

// markStarted moves a pending operation to in progress, stamped with the
// database's clock; started is false when it was not pending (changed at
// the same time).
func markStarted(ctx context.Context, tx *gorm.DB, opID int64) (started bool, err error) {
	res := tx.WithContext(ctx).Model(&plan.Operation{}).Where("id = ? AND status = ?", opID, plan.OpPending).
		Updates(map[string]any{"status": plan.OpInProgress, "started_at": gorm.Expr(database.Now(tx))})
	return res.RowsAffected == 1, res.Error
}

// unitsDone returns the order's units (item and number) every operation of
// which is done, marked made or not; only, when given, narrows them to one
// unit.
func unitsDone(ctx context.Context, tx *gorm.DB, orderID int64, only *unitKey) ([]unitKey, error) {
	q := tx.WithContext(ctx).Model(&plan.Operation{}).Select("item_id, unit").Where("prod_order_id = ?", orderID).
		Group("item_id, unit").Having("sum(CASE WHEN status <> ? THEN 1 ELSE 0 END) = 0", plan.OpDone)
	if only != nil {
		q = q.Where("item_id = ? AND unit = ?", only.item, only.unit)
	}
	var rows []struct {
		ItemID int64
		Unit   int
	}
	if err := database.Scan(q, &rows); err != nil {
		return nil, err
	}
	keys := make([]unitKey, 0, len(rows))
	for _, r := range rows {
		keys = append(keys, unitKey{r.ItemID, r.Unit})
	}
	return keys, nil
}

// markUnitMade stamps the unit made with the database's clock and returns
// it; made is false when it was made already (or is no unit of the order).
func markUnitMade(ctx context.Context, tx *gorm.DB, orderID int64, k unitKey) (u plan.Unit, made bool, err error) {
	db := tx.WithContext(ctx)
	res := db.Where("prod_order_id = ? AND item_id = ? AND unit = ? AND made_at IS NULL", orderID, k.item, k.unit).Limit(1).Find(&u)
	if res.Error != nil || res.RowsAffected == 0 {
		return u, false, res.Error
	}
	res = db.Model(&plan.Unit{}).Where("id = ? AND made_at IS NULL", u.ID).Update("made_at", gorm.Expr(database.Now(tx)))
	return u, res.RowsAffected == 1, res.Error
}

// unitsMadeByItem counts, per item, the order's units marked made.
func unitsMadeByItem(ctx context.Context, tx *gorm.DB, orderID int64) (map[int64]int, error) {
	var rows []struct {
		ItemID int64
		N      int
	}
	err := database.Scan(tx.WithContext(ctx).Model(&plan.Unit{}).Select("item_id, count(*) AS n").
		Where("prod_order_id = ? AND made_at IS NOT NULL", orderID).Group("item_id"), &rows)
	out := map[int64]int{}
	for _, r := range rows {
		out[r.ItemID] = r.N
	}
	return out, err
}
