package cutplan

import (
	"context"
	"slices"
	"strings"

	"github.com/tsekh/tsekh/internal/plan"
)

// PlannedSheets returns, per board (code in lower case), the new sheets
// that the cutting plans of the production orders still have to cut and
// the area of the parts on them: the newest plan that lays a part out
// counts for it, a stale plan counts for nothing, a sheet with a part of
// another production order or a part counted already is left to the area
// estimate, and an offcut takes no new sheet. For requirements
// (plan.Service.SetPlannedSheets).
func (s *Service) PlannedSheets(ctx context.Context, prodOrders []int64) (map[string]plan.PlannedBoard, error) {
	out := map[string]plan.PlannedBoard{}
	var ps []Plan
	if err := s.db.WithContext(ctx).Order("id DESC").Find(&ps).Error; err != nil {
		return nil, err
	}
	counted := map[int64]bool{}
	for _, p := range ps {
		if !slices.ContainsFunc(p.ProdOrders, func(id int64) bool { return slices.Contains(prodOrders, id) }) {
			continue
		}
		if err := s.describe(ctx, s.db, &p, true); err != nil {
			return nil, err
		}
		if p.Stale {
			continue
		}
	sheets:
		for _, sh := range p.SheetList {
			if sh.CutAt != nil {
				continue
			}
			area := 0.0
			for _, pt := range sh.Parts {
				if counted[pt.PartID] || !slices.Contains(prodOrders, pt.ProdOrderID) {
					continue sheets
				}
				area += float64(pt.LengthMM) * float64(pt.WidthMM) / 1e6
			}
			for _, pt := range sh.Parts {
				counted[pt.PartID] = true
			}
			key := strings.ToLower(sh.Board)
			b := out[key]
			if sh.OffcutID == nil {
				b.Sheets++
			}
			b.AreaM2 += area
			out[key] = b
		}
	}
	return out, nil
}
