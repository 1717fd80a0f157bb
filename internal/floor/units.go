package floor

import (
	"context"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// unitsMade marks made the units of order o every operation of which is
// done and that are not marked yet, and writes unit.made for each: a unit
// made counts for its item at once, whatever the rest of its production
// order does. only, when not nil, are the units a completion touched.
func (s *Service) unitsMade(ctx context.Context, tx *gorm.DB, o plan.ProdOrder, only map[unitKey]bool) error {
	q := tx.WithContext(ctx).Model(&plan.Operation{}).Select("item_id, unit").Where("prod_order_id = ?", o.ID).
		Group("item_id, unit").Having("sum(CASE WHEN status <> ? THEN 1 ELSE 0 END) = 0", plan.OpDone)
	if len(only) == 1 {
		for k := range only {
			q = q.Where("item_id = ? AND unit = ?", k.item, k.unit)
		}
	}
	var done []unitKey
	var rows []struct {
		ItemID int64
		Unit   int
	}
	if err := database.Scan(q, &rows); err != nil {
		return err
	}
	for _, r := range rows {
		if k := (unitKey{r.ItemID, r.Unit}); only == nil || only[k] {
			done = append(done, k)
		}
	}
	if len(done) == 0 {
		return nil
	}
	items := map[int64]plan.ProdItem{}
	for _, it := range o.Items {
		items[it.ItemID] = it
	}
	now := gorm.Expr(database.Now(tx))
	for _, k := range done {
		var u plan.Unit
		res := tx.Where("prod_order_id = ? AND item_id = ? AND unit = ? AND made_at IS NULL", o.ID, k.item, k.unit).Limit(1).Find(&u)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			continue
		}
		res = tx.Model(&plan.Unit{}).Where("id = ? AND made_at IS NULL", u.ID).Update("made_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			continue
		}
		var made int64
		if err := tx.Model(&plan.Unit{}).Where("prod_order_id = ? AND item_id = ? AND made_at IS NOT NULL", o.ID, k.item).Count(&made).Error; err != nil {
			return err
		}
		it := items[k.item]
		err := events.Add(ctx, tx, contracts.UnitMade.New(o.ID, contracts.UnitMadePayload{ProdOrderID: o.ID, ItemID: k.item, OrderID: it.OrderID,
			SKU: it.SKU, Unit: k.unit, Code: u.Code, Made: int(made)}))
		if err != nil {
			return err
		}
	}
	return nil
}

// unitsReported counts, per item, the units of the order that unit.made
// has reported made.
func unitsReported(ctx context.Context, tx *gorm.DB, orderID int64) (map[int64]int, error) {
	var rows []struct {
		ItemID int64
		N      int
	}
	err := database.Scan(tx.WithContext(ctx).Model(&plan.Unit{}).Select("item_id, count(*) AS n").Where("prod_order_id = ? AND made_at IS NOT NULL", orderID).
		Group("item_id"), &rows)
	out := map[int64]int{}
	for _, r := range rows {
		out[r.ItemID] = r.N
	}
	return out, err
}
