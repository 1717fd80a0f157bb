package cutplan

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// Sheet returns sheet n of the plan: ENOTFOUND when the plan or the sheet
// does not exist.
func (s *Service) Sheet(ctx context.Context, planID int64, n int) (Sheet, error) {
	r, err := sheetRowOf(ctx, s.db, planID, n, false)
	if err != nil {
		return Sheet{}, err
	}
	return r.sheet()
}

func sheetRowOf(ctx context.Context, db *gorm.DB, planID int64, n int, lock bool) (sheetRow, error) {
	var r sheetRow
	q := db.WithContext(ctx)
	if lock {
		q = database.ForUpdate(q)
	}
	err := q.Where("plan_id = ? AND n = ?", planID, n).First(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		var found int64
		if err := db.WithContext(ctx).Model(&Plan{}).Where("id = ?", planID).Count(&found).Error; err != nil {
			return r, err
		}
		if found == 0 {
			return r, apperr.NotFound("cutting plan %d does not exist", planID)
		}
		return r, apperr.NotFound("cutting plan %d has no sheet %d", planID, n)
	}
	return r, err
}

// CutSheet reports sheet n of the plan cut, in one transaction with its
// events: its parts that still wait for the saw go through the route's
// cutting step (the shop floor completes them, prod_order.progress_reported
// marked sheet_cut; the parts cut already by a scan on this plan, scrapped
// or no longer wanted stay as they are), the sheet goes to the saw (stock
// uses up a new sheet of its board, or the offcut it is, once: not again
// when a scan of one of its parts took it there) and the offcuts it leaves
// are kept in stock (cutting_plan.sheet_cut). It returns ENOTFOUND for an
// unknown plan or sheet, ECONFLICT when the sheet is reported cut already,
// the plan is replaced, or a newer plan lays one of its parts out.
func (s *Service) CutSheet(ctx context.Context, planID int64, n int) (Sheet, error) {
	var out Sheet
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		r, err := sheetRowOf(ctx, tx, planID, n, true)
		if err != nil {
			return err
		}
		if r.CutAt != nil {
			return apperr.Conflict("sheet %d of cutting plan %d is cut already", n, planID)
		}
		var replaced Plan
		q := database.ForUpdate(tx.Select("id", "replaced_by")) // against a rebuild meanwhile
		if err := q.First(&replaced, planID).Error; err != nil {
			return err
		}
		if replaced.ReplacedBy != nil {
			return apperr.Conflict("cutting plan %d is replaced by plan %d: cut the sheets of that one", planID, *replaced.ReplacedBy)
		}
		sh, err := r.sheet()
		if err != nil {
			return err
		}
		payload := contracts.CuttingSheetCutPayload{PlanID: planID, Sheet: n, Board: sh.Board, OffcutID: sh.OffcutID, NewSheet: sh.OffcutID == nil, Parts: []int64{}, ProdOrders: []int64{}, OffcutsKept: []int64{}}
		seen := map[int64]bool{}
		for _, p := range sh.Parts {
			payload.Parts = append(payload.Parts, p.PartID)
			if !seen[p.ProdOrderID] {
				seen[p.ProdOrderID] = true
				payload.ProdOrders = append(payload.ProdOrders, p.ProdOrderID)
			}
		}
		if err := s.floor.CutSheetTx(ctx, tx, planID, n, payload.Parts); err != nil {
			var ae *apperr.Error
			if errors.As(err, &ae) && ae.Code == apperr.ECONFLICT {
				return apperr.Conflict("sheet %d of cutting plan %d cannot be reported cut: %s; build a new plan", n, planID, ae.Message)
			}
			return err
		}
		if payload.OffcutsKept, err = s.stock.OffcutsOfSheet(ctx, tx, planID, n); err != nil {
			return err
		}
		if err := tx.Model(&sheetRow{}).Where("plan_id = ? AND n = ?", planID, n).Update("cut_at", gorm.Expr(database.Now(tx))).Error; err != nil {
			return err
		}
		if err := events.Add(ctx, tx, contracts.CuttingSheetCut.New(planID, payload)); err != nil {
			return err
		}
		r, err = sheetRowOf(ctx, tx, planID, n, false)
		if err != nil {
			return err
		}
		out, err = r.sheet()
		return err
	})
	return out, err
}
