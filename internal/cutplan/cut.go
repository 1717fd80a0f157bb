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
// events: its parts go through the route's cutting step (the plan module
// completes their operations and reports the progress, marked sheet_cut so
// that stock uses up no board by the area estimate for it), a new sheet of
// the board is used up (stock consumes it from the reservation of the first
// production order with a part on the sheet), the offcut it was, if any, is
// used up, and the
// offcuts it leaves are kept in stock of its board for the next plans
// (cutting_plan.sheet_cut). It returns ENOTFOUND for an unknown plan or
// sheet, ECONFLICT when the sheet is cut already or a part of it no longer
// waits for the saw (the plan is stale).
func (s *Service) CutSheet(ctx context.Context, planID int64, n int) (Sheet, error) {
	var out Sheet
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
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
		if err := s.floor.CompleteCuttingTx(ctx, tx, payload.Parts); err != nil {
			var ae *apperr.Error
			if errors.As(err, &ae) && ae.Code == apperr.ECONFLICT {
				return apperr.Conflict("sheet %d of cutting plan %d cannot be reported cut: %s; build a new plan", n, planID, ae.Message)
			}
			return err
		}
		if sh.OffcutID != nil {
			res := tx.Model(&Offcut{}).Where("id = ? AND status = ?", *sh.OffcutID, OffcutReserved).Update("status", OffcutUsed)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != 1 {
				return apperr.Conflict("offcut %d of sheet %d is no longer in stock", *sh.OffcutID, n)
			}
		}
		for _, o := range sh.Offcuts {
			off := Offcut{Board: sh.Board, LengthMM: o.DX, WidthMM: o.DY, PlanID: planID, Sheet: n, Status: OffcutAvailable}
			if off.WidthMM > off.LengthMM && !sh.Grain {
				off.LengthMM, off.WidthMM = off.WidthMM, off.LengthMM
			}
			if err := tx.Omit("ID").Create(&off).Error; err != nil {
				return err
			}
			payload.OffcutsKept = append(payload.OffcutsKept, off.ID)
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
