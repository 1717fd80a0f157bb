package floor

import (
	"context"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// The floor's store, continued: the statements of its lists (parts,
// labels, the cutting list; see store.go). They read, and change nothing.

// The statements of the shop floor's lists of parts (parts.go).

// partsPage returns the page pr of the order's parts that f selects (see
// PartFilter), in id order: one more than pr.Limit when there are more.
func partsPage(ctx context.Context, db *gorm.DB, orderID int64, pr page.Request, f PartFilter) ([]plan.Part, error) {
	q := db.WithContext(ctx).Model(&plan.Part{}).Where("prod_order_id = ? AND id > ?", orderID, pr.After).Order("id").Limit(pr.Limit + 1)
	if f.Unit > 0 {
		q = q.Where("unit = ?", f.Unit)
	}
	const opAt = "EXISTS (SELECT 1 FROM plan_operations po WHERE po.part_id = plan_parts.id AND po.seq = ? AND po.status = ?)"
	switch {
	case f.Step > 0 && f.State == StateScrapped:
		q = q.Where("status = ? AND scrap_seq = ?", plan.PartScrapped, f.Step)
	case f.Step > 0 && f.State != "":
		q = q.Where("status = ? AND "+opAt, plan.PartLive, f.Step, f.State)
	case f.Step > 0:
		q = q.Where("EXISTS (SELECT 1 FROM plan_operations po WHERE po.part_id = plan_parts.id AND po.seq = ?)", f.Step)
	case f.State == StateScrapped:
		q = q.Where("status = ?", plan.PartScrapped)
	case f.State == StateDone:
		q = q.Where("status = ? AND NOT EXISTS (SELECT 1 FROM plan_operations po WHERE po.part_id = plan_parts.id AND po.status <> ?)", plan.PartLive, plan.OpDone)
	case f.State == StatePending:
		q = q.Where("status = ? AND NOT EXISTS (SELECT 1 FROM plan_operations po WHERE po.part_id = plan_parts.id AND po.status <> ?)", plan.PartLive, plan.OpPending)
	case f.State == StateInProgress:
		q = q.Where(`status = ? AND EXISTS (SELECT 1 FROM plan_operations po WHERE po.part_id = plan_parts.id AND po.status <> ?)
AND EXISTS (SELECT 1 FROM plan_operations po WHERE po.part_id = plan_parts.id AND po.status <> ?)`, plan.PartLive, plan.OpDone, plan.OpPending)
	}
	var parts []plan.Part
	err := q.Find(&parts).Error
	return parts, err
}

// stepScope returns the scope of the order's route step seq (part or
// item), "" when the route has no such step.
func stepScope(ctx context.Context, db *gorm.DB, orderID int64, seq int) (string, error) {
	var scope []string
	if err := db.WithContext(ctx).Model(&plan.Operation{}).Where("prod_order_id = ? AND seq = ?", orderID, seq).Distinct().Pluck("scope", &scope).Error; err != nil || len(scope) == 0 {
		return "", err
	}
	return scope[0], nil
}

// operationsOfParts returns the operations of the parts ids, by step and id.
func operationsOfParts(ctx context.Context, db *gorm.DB, ids []int64) ([]plan.Operation, error) {
	var ops []plan.Operation
	err := db.WithContext(ctx).Where("part_id IN ?", ids).Order("seq, id").Find(&ops).Error
	return ops, err
}

// recutsOf returns the codes of the re-cuts of the parts ids, by the id of
// the part each replaces.
func recutsOf(ctx context.Context, db *gorm.DB, ids []int64) (map[int64]string, error) {
	var recuts []plan.Part
	if err := db.WithContext(ctx).Select("id, code, recut_of").Where("recut_of IN ?", ids).Find(&recuts).Error; err != nil {
		return nil, err
	}
	out := make(map[int64]string, len(recuts))
	for _, r := range recuts {
		out[*r.RecutOf] = r.Code
	}
	return out, nil
}

// orderLiveParts returns the order's live parts, in id order, at most limit.
func orderLiveParts(ctx context.Context, db *gorm.DB, orderID int64, limit int) ([]plan.Part, error) {
	var parts []plan.Part
	err := db.WithContext(ctx).Where("prod_order_id = ? AND status = ?", orderID, plan.PartLive).Order("id").Limit(limit).Find(&parts).Error
	return parts, err
}

// existingOrders returns which of the production orders ids exist.
func existingOrders(ctx context.Context, db *gorm.DB, ids []int64) ([]int64, error) {
	var found []int64
	err := db.WithContext(ctx).Model(&plan.ProdOrder{}).Where("id IN ?", ids).Pluck("id", &found).Error
	return found, err
}

// itemsOfOrders returns the items of the production orders ids: each one's
// order, item, sales order and SKU.
func itemsOfOrders(ctx context.Context, db *gorm.DB, ids []int64) ([]plan.ProdItem, error) {
	var items []plan.ProdItem
	err := db.WithContext(ctx).Select("prod_order_id, item_id, order_id, sku").Where("prod_order_id IN ?", ids).Find(&items).Error
	return items, err
}

// fittingsOfOrders sums the fittings of the production orders ids per
// order and code.
func fittingsOfOrders(ctx context.Context, db *gorm.DB, ids []int64) ([]CutFitting, error) {
	var out []CutFitting
	err := database.Scan(db.WithContext(ctx).Model(&plan.Fitting{}).Select("prod_order_id, code, max(name) AS name, sum(qty) AS qty").
		Where("prod_order_id IN ?", ids).Group("prod_order_id, code").Order("prod_order_id, code"), &out)
	return out, err
}

const partRowColumns = "prod_order_id, item_id, name, material, board, decor, thickness_mm, length_mm, width_mm, grain, edge_l1, edge_l2, edge_w1, edge_w2, edging"

// partRows sums the physical parts of the production orders per item and
// identical part; where narrows them further (with its args).
func partRows(ctx context.Context, db *gorm.DB, ids []int64, where string, args ...any) ([]partRow, error) {
	q := db.WithContext(ctx).Model(&plan.Part{}).Select(partRowColumns+", count(*) AS n").Where("prod_order_id IN ?", ids)
	if where != "" {
		q = q.Where(where, args...)
	}
	// Scanned by hand: a week's list is tens of thousands of rows, and
	// reflection would cost more than the query.
	rs, err := q.Group(partRowColumns).Rows()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rs.Close() }()
	var rows []partRow
	for rs.Next() {
		var r partRow
		if err := rs.Scan(&r.ProdOrderID, &r.ItemID, &r.Name, &r.Material, &r.Board, &r.Decor, &r.ThicknessMM, &r.LengthMM, &r.WidthMM,
			&r.Grain, &r.EdgeL1, &r.EdgeL2, &r.EdgeW1, &r.EdgeW2, &r.Edging, &r.N); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, rs.Err()
}
