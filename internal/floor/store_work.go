package floor

import (
	"cmp"
	"context"
	"slices"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/stock"
)

// The floor's store, continued: the statements of work completed and of
// the materials it uses (see store.go).

// markDone stamps the operations ids done with the database's clock (and
// started, those that were pending), by the actor when one is given, and
// returns how many it moved: fewer than ids when some were done already.
func markDone(ctx context.Context, tx *gorm.DB, ids []int64, by *events.Actor) (int64, error) {
	db := tx.WithContext(ctx)
	now := gorm.Expr(database.Now(tx))
	if err := db.Model(&plan.Operation{}).Where("id IN ? AND status = ?", ids, plan.OpPending).Update("started_at", now).Error; err != nil {
		return 0, err
	}
	set := map[string]any{"status": plan.OpDone, "completed_at": now}
	if by != nil {
		set["completed_by_id"], set["completed_by"] = by.ID, by.Name
	}
	res := db.Model(&plan.Operation{}).Where("id IN ? AND status <> ?", ids, plan.OpDone).Updates(set)
	return res.RowsAffected, res.Error
}

// hasOpenOperations says whether any operation of the order is not done.
func hasOpenOperations(ctx context.Context, tx *gorm.DB, orderID int64) (bool, error) {
	var left []int64
	err := tx.WithContext(ctx).Model(&plan.Operation{}).Where("prod_order_id = ? AND status <> ?", orderID, plan.OpDone).Limit(1).Pluck("id", &left).Error
	return len(left) > 0, err
}

// materialSteps are the order's route steps whose work uses materials up,
// as its route had them at its launch.
func materialSteps(ctx context.Context, tx *gorm.DB, orderID int64) (plan.MaterialSteps, error) {
	var o plan.ProdOrder
	err := tx.WithContext(ctx).Select("id", "cut_seq", "band_seq", "assemble_seq").First(&o, orderID).Error
	return o.MaterialSteps(), err
}

// needColumns are what partNeed reads of a part.
const needColumns = "id, prod_order_id, code, board, board_need, sheet_plan_id, sheet_n"

// lockNeedsOfParts reads, locked and in id order, what the parts ids still
// need of their boards (those that need something).
func lockNeedsOfParts(ctx context.Context, tx *gorm.DB, ids []int64) ([]partNeed, error) {
	var rows []partNeed
	q := tx.WithContext(ctx).Model(&plan.Part{}).Select(needColumns).Where("board_need > 0 AND id IN ?", ids).Order("id")
	err := database.ForUpdate(q).Find(&rows).Error
	return rows, err
}

// lockNeedsOnSheet reads, locked and in id order, what the live parts laid
// out on the sheet still need of their boards (those that need something).
func lockNeedsOnSheet(ctx context.Context, tx *gorm.DB, sh stock.SheetRef) ([]partNeed, error) {
	var rows []partNeed
	q := tx.WithContext(ctx).Model(&plan.Part{}).Select(needColumns).
		Where("board_need > 0 AND status = ? AND sheet_plan_id = ? AND sheet_n = ?", plan.PartLive, sh.PlanID, sh.N).Order("id")
	err := database.ForUpdate(q).Find(&rows).Error
	return rows, err
}

// clearBoardNeeds sets what the parts ids need of their boards to nothing.
func clearBoardNeeds(ctx context.Context, tx *gorm.DB, ids []int64) error {
	return tx.WithContext(ctx).Model(&plan.Part{}).Where("id IN ?", ids).Update("board_need", 0).Error
}

// partsByID reads the parts, in id order.
func partsByID(ctx context.Context, tx *gorm.DB, ids []int64) ([]plan.Part, error) {
	var out []plan.Part
	err := database.InBatches(ids, func(b []int64) error {
		var ps []plan.Part
		err := tx.WithContext(ctx).Where("id IN ?", b).Order("id").Find(&ps).Error
		out = append(out, ps...)
		return err
	})
	return out, err
}

// unitCodes returns the codes of the order's units.
func unitCodes(ctx context.Context, tx *gorm.DB, orderID int64) (map[unitKey]string, error) {
	var us []plan.Unit
	if err := tx.WithContext(ctx).Where("prod_order_id = ?", orderID).Find(&us).Error; err != nil {
		return nil, err
	}
	out := make(map[unitKey]string, len(us))
	for _, u := range us {
		out[unitKey{u.ItemID, u.Unit}] = u.Code
	}
	return out, nil
}

// orderOperations returns the order's operations, in id order.
func orderOperations(ctx context.Context, tx *gorm.DB, orderID int64) ([]plan.Operation, error) {
	var ops []plan.Operation
	err := tx.WithContext(ctx).Where("prod_order_id = ?", orderID).Order("id").Find(&ops).Error
	return ops, err
}

// The statements of closing an order short (close.go).

// releaseItem releases the order's item, which may be launched again, with
// what closing made of it.
func releaseItem(ctx context.Context, tx *gorm.DB, orderID int64, q contracts.ClosedQuantities) error {
	return tx.WithContext(ctx).Model(&plan.ProdItem{}).Where("prod_order_id = ? AND item_id = ?", orderID, q.ItemID).
		Updates(map[string]any{"released": true, "made_qty": q.Made, "returned_qty": q.Returned, "written_off_qty": q.WrittenOff}).Error
}

// dropOpenOperations deletes the order's operations not done (and so
// from its schedule).
func dropOpenOperations(ctx context.Context, tx *gorm.DB, orderID int64) error {
	return plan.DeleteOperations(ctx, tx, orderID, "status <> ?", plan.OpDone)
}

// releaseParts sets what the order's parts need of their boards to nothing,
// and takes its live parts not cut (at the route step cutSeq) off the
// sheets they were laid out on; a part cut, or scrapped, keeps its sheet.
func releaseParts(ctx context.Context, tx *gorm.DB, orderID int64, cutSeq int) error {
	db := tx.WithContext(ctx)
	if err := db.Model(&plan.Part{}).Where("prod_order_id = ?", orderID).Update("board_need", 0).Error; err != nil {
		return err
	}
	return db.Model(&plan.Part{}).Where("prod_order_id = ? AND status = ? AND NOT EXISTS (SELECT 1 FROM plan_operations op WHERE op.part_id = plan_parts.id AND op.seq = ? AND op.status = ?)",
		orderID, plan.PartLive, cutSeq, plan.OpDone).Updates(map[string]any{"sheet_plan_id": nil, "sheet_n": nil}).Error
}

// markClosed closes the order in progress short, with the reason, the rest,
// when (the database's clock) and who (by, when given), and takes it off
// the planner's attention; closed is false when it was not in progress.
func markClosed(ctx context.Context, tx *gorm.DB, orderID int64, in Close, by *events.Actor) (closed bool, err error) {
	set := map[string]any{"status": plan.StatusClosed, "closed_at": gorm.Expr(database.Now(tx)), "close_reason": in.Reason, "close_rest": in.Rest,
		"needs_attention": false, "attention_reason": ""}
	if by != nil {
		set["closed_by_id"], set["closed_by"] = by.ID, by.Name
	}
	res := tx.WithContext(ctx).Model(&plan.ProdOrder{}).Where("id = ? AND status = ?", orderID, plan.StatusInProgress).Updates(set)
	return res.RowsAffected == 1, res.Error
}

// unitsNotMade returns the order's units not made, by item and number.
func unitsNotMade(ctx context.Context, tx *gorm.DB, orderID int64) ([]plan.Unit, error) {
	var units []plan.Unit
	err := tx.WithContext(ctx).Where("prod_order_id = ? AND made_at IS NULL", orderID).Order("item_id, unit").Find(&units).Error
	return units, err
}

// markClosedBack marks the units ids gone back to the backlog.
func markClosedBack(ctx context.Context, tx *gorm.DB, ids []int64) error {
	return tx.WithContext(ctx).Model(&plan.Unit{}).Where("id IN ?", ids).Update("closed_back", true).Error
}

// The statements of the saw: parts laid out on sheets and cut (sawparts.go).

// liveParts returns the live parts (not scrapped) of the ids, in id order.
func liveParts(ctx context.Context, db *gorm.DB, ids []int64) ([]plan.Part, error) {
	var out []plan.Part
	err := database.InBatches(ids, func(b []int64) error {
		var ps []plan.Part
		err := db.WithContext(ctx).Where("id IN ? AND status = ?", b, plan.PartLive).Order("id").Find(&ps).Error
		out = append(out, ps...)
		return err
	})
	slices.SortFunc(out, func(a, b plan.Part) int { return cmp.Compare(a.ID, b.ID) })
	return out, err
}

// openStepsOfParts returns the part, order and step of the operations not
// done of the parts ids (at most database.IDBatch of them).
func openStepsOfParts(ctx context.Context, db *gorm.DB, ids []int64) ([]plan.Operation, error) {
	var ops []plan.Operation
	err := db.WithContext(ctx).Select("part_id, prod_order_id, seq").Where("part_id IN ? AND status <> ?", ids, plan.OpDone).Find(&ops).Error
	return ops, err
}

// openOperationsOfParts returns the operations not done of the parts ids at
// the route step seq, in id order.
func openOperationsOfParts(ctx context.Context, tx *gorm.DB, ids []int64, seq int) ([]plan.Operation, error) {
	var ops []plan.Operation
	err := database.InBatches(ids, func(b []int64) error {
		var os []plan.Operation
		err := tx.WithContext(ctx).Where("part_id IN ? AND seq = ? AND status <> ?", b, seq, plan.OpDone).Order("id").Find(&os).Error
		ops = append(ops, os...)
		return err
	})
	slices.SortFunc(ops, func(a, b plan.Operation) int { return cmp.Compare(a.ID, b.ID) })
	return ops, err
}

// stepOperations returns the order's operations at the route step seq.
func stepOperations(ctx context.Context, tx *gorm.DB, orderID int64, seq int) ([]plan.Operation, error) {
	var ops []plan.Operation
	err := tx.WithContext(ctx).Where("prod_order_id = ? AND seq = ?", orderID, seq).Order("id").Find(&ops).Error
	return ops, err
}

// layOut lays the part out on the sheet, needing share of its board.
func layOut(ctx context.Context, tx *gorm.DB, partID int64, sh stock.SheetRef, share float64) error {
	return tx.WithContext(ctx).Model(&plan.Part{}).Where("id = ?", partID).
		Updates(map[string]any{"sheet_plan_id": sh.PlanID, "sheet_n": sh.N, "board_need": share}).Error
}

// placeOnSheet names the sheet the parts ids lie on, leaving their needs.
func placeOnSheet(ctx context.Context, tx *gorm.DB, ids []int64, sh stock.SheetRef) error {
	return database.InBatches(ids, func(b []int64) error {
		return tx.WithContext(ctx).Model(&plan.Part{}).Where("id IN ?", b).Updates(map[string]any{"sheet_plan_id": sh.PlanID, "sheet_n": sh.N}).Error
	})
}

// The statements of scrap and re-cuts (scrap.go).

// partByID returns the part with the id, or nil when there is none.
func partByID(ctx context.Context, tx *gorm.DB, id int64) (*plan.Part, error) {
	var parts []plan.Part
	if err := tx.WithContext(ctx).Where("id = ?", id).Limit(1).Find(&parts).Error; err != nil || len(parts) == 0 {
		return nil, err
	}
	return &parts[0], nil
}

// partOperations returns the part's operations, in route order.
func partOperations(ctx context.Context, tx *gorm.DB, partID int64) ([]plan.Operation, error) {
	var ops []plan.Operation
	err := tx.WithContext(ctx).Where("part_id = ?", partID).Order("seq").Find(&ops).Error
	return ops, err
}

// markScrapped scraps the live part at route step seq with the reason and
// note, when (the database's clock) and who (by, when given); scrapped is
// false when it was not live (scrapped at the same time).
func markScrapped(ctx context.Context, tx *gorm.DB, partID int64, seq int, reason, note string, by *events.Actor) (scrapped bool, err error) {
	set := map[string]any{"status": plan.PartScrapped, "scrap_seq": seq, "scrap_reason": reason, "scrap_note": note,
		"scrapped_at": gorm.Expr(database.Now(tx))}
	if by != nil {
		set["scrapped_by_id"], set["scrapped_by"] = by.ID, by.Name
	}
	res := tx.WithContext(ctx).Model(&plan.Part{}).Where("id = ? AND status = ?", partID, plan.PartLive).Updates(set)
	return res.RowsAffected == 1, res.Error
}

// dropOpenOperationsOfPart deletes the operations not done of the part,
// of production order orderID (and so from its schedule).
func dropOpenOperationsOfPart(ctx context.Context, tx *gorm.DB, orderID, partID int64) error {
	return plan.DeleteOperations(ctx, tx, orderID, "part_id = ? AND status <> ?", partID, plan.OpDone)
}

// insertPart adds the part, its id the database's; a code taken already is
// a unique violation (database.IsUniqueViolation).
func insertPart(ctx context.Context, tx *gorm.DB, p *plan.Part) error {
	return tx.WithContext(ctx).Omit("ID").Create(p).Error
}

// insertOperations adds the operations, their ids the database's, to
// plan_operations and their orders' schedules, with the slots they carry.
func insertOperations(ctx context.Context, tx *gorm.DB, ops []plan.Operation) error {
	return plan.AddOperations(ctx, tx, ops)
}

// waitingRecuts returns the re-cuts of launched and in-progress orders whose
// first step (cutting) is not done, in id order (oldest first), at most
// limit.
func waitingRecuts(ctx context.Context, db *gorm.DB, limit int) ([]plan.Part, error) {
	var parts []plan.Part
	err := db.WithContext(ctx).Where(`recut_of IS NOT NULL AND status = ? AND EXISTS (SELECT 1 FROM plan_prod_orders po WHERE po.id = plan_parts.prod_order_id AND po.status IN ?)
AND NOT EXISTS (SELECT 1 FROM plan_operations op WHERE op.part_id = plan_parts.id AND op.status = ?
  AND op.seq = (SELECT min(f.seq) FROM plan_operations f WHERE f.part_id = plan_parts.id))`, plan.PartLive, []string{plan.StatusLaunched, plan.StatusInProgress}, plan.OpDone).
		Order("id").Limit(limit).Find(&parts).Error
	return parts, err
}
