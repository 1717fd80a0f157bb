package floor

import (
	"context"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
)

// unitsMade marks made the units of order o every operation of which is
// done and that are not marked yet, and writes unit.made for each: a unit
// made counts for its item at once, whatever the rest of its production
// order does. only, when not nil, are the units a completion touched.
func (s *Service) unitsMade(ctx context.Context, tx *gorm.DB, o plan.ProdOrder, only map[unitKey]bool) error {
	var one *unitKey
	if len(only) == 1 {
		for k := range only {
			one = &k
		}
	}
	keys, err := unitsDone(ctx, tx, o.ID, one)
	if err != nil {
		return err
	}
	var done []unitKey
	for _, k := range keys {
		if only == nil || only[k] {
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
	for _, k := range done {
		u, made, err := markUnitMade(ctx, tx, o.ID, k)
		if err != nil {
			return err
		}
		if !made {
			continue
		}
		counts, err := unitsMadeByItem(ctx, tx, o.ID)
		if err != nil {
			return err
		}
		it := items[k.item]
		err = events.Add(ctx, tx, contracts.UnitMade.New(o.ID, contracts.UnitMadePayload{ProdOrderID: o.ID, ItemID: k.item, OrderID: it.OrderID,
			SKU: it.SKU, Unit: k.unit, Code: u.Code, Made: counts[k.item]}))
		if err != nil {
			return err
		}
	}
	return nil
}
