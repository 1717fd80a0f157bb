package stock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// Offcuts (деловой остаток) are the pieces a cut sheet leaves that are
// worth keeping: each is a stock item of its own, with a code its label
// carries, its board and size. A cutting plan reserves the offcuts it cuts
// parts from; the sheet of the plan that is an offcut uses it up when it
// goes to the saw; a count confirms one on the shelf or writes it off as
// gone, a write-off takes it off the shelf with a reason.

// Offcut states.
const (
	OffcutAvailable  = "available"   // on the shelf, for the next plans
	OffcutReserved   = "reserved"    // a cutting plan cuts parts from it
	OffcutUsed       = "used"        // its sheet was cut
	OffcutWrittenOff = "written_off" // gone: counted missing or written off
)

// Offcut is a piece a cut sheet left, kept in stock of its board.
type Offcut struct {
	ID int64 `json:"id" gorm:"primaryKey" example:"7"`
	// Code is O<cutting plan>-<sheet>-<k>: the k-th offcut its sheet left.
	Code     string  `json:"code" example:"O3-2-1"`
	Board    string  `json:"board" example:"LDSP16-SONOMA"`
	LengthMM float64 `json:"length_mm" example:"1750"`
	WidthMM  float64 `json:"width_mm" example:"1645"`
	// PlanID and Sheet are the cutting plan's sheet that left it.
	PlanID int64  `json:"plan_id" example:"3"`
	Sheet  int    `json:"sheet" example:"2"`
	Status string `json:"status" enums:"available,reserved,used,written_off" example:"available"`
	// ReservedBy is the cutting plan that cuts parts from it.
	ReservedBy *int64 `json:"reserved_by" extensions:"x-nullable" example:"4"`
	// Reason is why it was written off.
	Reason    string    `json:"reason"`
	CreatedAt time.Time `json:"created_at" gorm:"->" format:"date-time"`
}

// TableName is the stock module's offcut table.
func (Offcut) TableName() string { return "stock_offcuts" }

// OffcutCode is the code of the k-th offcut (from 1) that sheet n of
// cutting plan planID leaves.
func OffcutCode(planID int64, n, k int) string { return fmt.Sprintf("O%d-%d-%d", planID, n, k) }

// planSheet is a sheet of a cutting plan as stock knows it: the board it
// is a new sheet of, or the offcut it is; the offcuts it leaves; and,
// once it went to the saw, the document that used it up.
type planSheet struct {
	PlanID     int64 `gorm:"primaryKey;autoIncrement:false"`
	N          int   `gorm:"primaryKey;autoIncrement:false"`
	Board      string
	OffcutID   *int64
	Keep       string // JSON []keptOffcut
	DocumentID *int64
}

func (planSheet) TableName() string { return "stock_plan_sheets" }

// keptOffcut is an offcut a sheet leaves.
type keptOffcut struct {
	Code     string  `json:"code"`
	LengthMM float64 `json:"length_mm"`
	WidthMM  float64 `json:"width_mm"`
}

// PlannedSheet is a sheet of a cutting plan: a new sheet of Board, or the
// offcut OffcutID is; and the pieces it leaves worth keeping (length along
// the grain for a board with grain).
type PlannedSheet struct {
	N        int
	Board    string
	OffcutID *int64
	Keep     []Size
}

// Size is a piece's length and width, in mm.
type Size struct {
	LengthMM float64
	WidthMM  float64
}

// RegisterSheetsTx tells stock the sheets of a new cutting plan, in tx:
// BookTx uses one up (and keeps its offcuts) the first time a part on it is
// cut.
func (s *Service) RegisterSheetsTx(ctx context.Context, tx *gorm.DB, planID int64, sheets []PlannedSheet) error {
	rows := make([]planSheet, 0, len(sheets))
	for _, sh := range sheets {
		keep := make([]keptOffcut, len(sh.Keep))
		for k, sz := range sh.Keep {
			keep[k] = keptOffcut{Code: OffcutCode(planID, sh.N, k+1), LengthMM: sz.LengthMM, WidthMM: sz.WidthMM}
		}
		b, err := json.Marshal(keep)
		if err != nil {
			return err
		}
		rows = append(rows, planSheet{PlanID: planID, N: sh.N, Board: sh.Board, OffcutID: sh.OffcutID, Keep: string(b)})
	}
	if len(rows) == 0 {
		return nil
	}
	return tx.WithContext(ctx).CreateInBatches(&rows, 100).Error
}

// keepOffcuts uses up the offcut a sheet is (if it is one) and puts the
// offcuts it leaves on the shelf; it returns their codes.
func keepOffcuts(ctx context.Context, tx *gorm.DB, c sheetCut) ([]string, error) {
	if c.offcut != nil {
		err := tx.WithContext(ctx).Model(&Offcut{}).Where("id = ?", c.offcut.ID).
			Updates(map[string]any{"status": OffcutUsed, "reserved_by": nil}).Error
		if err != nil {
			return nil, err
		}
	}
	board := c.board
	if c.offcut != nil {
		board = c.offcut.Board
	}
	var codes []string
	for _, k := range c.keep {
		off := Offcut{Code: k.Code, Board: board, LengthMM: k.LengthMM, WidthMM: k.WidthMM, PlanID: c.ref.PlanID, Sheet: c.ref.N,
			Status: OffcutAvailable}
		if err := tx.WithContext(ctx).Omit("ID", "CreatedAt").Create(&off).Error; err != nil {
			return nil, err
		}
		codes = append(codes, k.Code)
	}
	return codes, nil
}

// AvailableOffcuts returns the board's offcuts on the shelf for a new
// cutting plan, in id order: the available ones and those the plan it
// replaces (replaces, when not nil) reserved.
func (s *Service) AvailableOffcuts(ctx context.Context, db *gorm.DB, board string, replaces *int64) ([]Offcut, error) {
	var out []Offcut
	q := db.WithContext(ctx).Where("board = ?", board)
	if replaces != nil {
		q = q.Where("status = ? OR (status = ? AND reserved_by = ?)", OffcutAvailable, OffcutReserved, *replaces)
	} else {
		q = q.Where("status = ?", OffcutAvailable)
	}
	err := q.Order("id").Find(&out).Error
	return out, err
}

// ReserveOffcutsTx reserves the offcuts for the cutting plan, in tx, after
// giving back those of the plan it replaces (replaces, when not nil). It
// returns ECONFLICT when one was taken meanwhile. The booking of the
// plan's needs (BookTx) journals it.
func (s *Service) ReserveOffcutsTx(ctx context.Context, tx *gorm.DB, planID int64, ids []int64, replaces *int64) error {
	if replaces != nil {
		err := tx.WithContext(ctx).Model(&Offcut{}).Where("status = ? AND reserved_by = ?", OffcutReserved, *replaces).
			Updates(map[string]any{"status": OffcutAvailable, "reserved_by": nil}).Error
		if err != nil {
			return err
		}
	}
	for _, id := range ids {
		res := tx.WithContext(ctx).Model(&Offcut{}).Where("id = ? AND status = ?", id, OffcutAvailable).
			Updates(map[string]any{"status": OffcutReserved, "reserved_by": planID})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return apperr.Conflict("offcut %d was taken by another plan meanwhile: try again", id)
		}
	}
	return nil
}

// OffcutFilter selects offcuts; zero fields do not filter.
type OffcutFilter struct {
	Board string
	// MinLengthMM and MinWidthMM: only pieces at least that large (turned
	// too, for a board without grain: the caller's part fits one way or
	// the other).
	MinLengthMM float64
	MinWidthMM  float64
	// Status: one of the offcut states; "" lists those in stock
	// (available and reserved).
	Status string
}

// Offcuts returns a page of the offcuts selected by f, in id order. It
// returns EINVALID naming status for a state that does not exist, or a
// negative size.
func (s *Service) Offcuts(ctx context.Context, f OffcutFilter, pr page.Request) ([]Offcut, string, error) {
	var fields []apperr.FieldError
	switch f.Status {
	case "", OffcutAvailable, OffcutReserved, OffcutUsed, OffcutWrittenOff:
	default:
		fields = append(fields, apperr.Field("status", "must be available, reserved, used or written_off"))
	}
	if f.MinLengthMM < 0 {
		fields = append(fields, apperr.Field("min_length_mm", "must not be negative"))
	}
	if f.MinWidthMM < 0 {
		fields = append(fields, apperr.Field("min_width_mm", "must not be negative"))
	}
	if len(fields) > 0 {
		return nil, "", apperr.Invalid("invalid query", fields...)
	}
	q := s.db.WithContext(ctx).Where("id > ?", pr.After).Order("id").Limit(pr.Limit + 1)
	if f.Board != "" {
		q = q.Where("lower(board) = ?", input.CodeKey(f.Board))
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	} else {
		q = q.Where("status IN ?", []string{OffcutAvailable, OffcutReserved})
	}
	if f.MinLengthMM > 0 || f.MinWidthMM > 0 {
		q = q.Where("((length_mm >= ? AND width_mm >= ?) OR (length_mm >= ? AND width_mm >= ?))",
			f.MinLengthMM, f.MinWidthMM, f.MinWidthMM, f.MinLengthMM)
	}
	var out []Offcut
	if err := q.Find(&out).Error; err != nil {
		return nil, "", err
	}
	out, next := page.Next(out, pr.Limit, func(o Offcut) int64 { return o.ID })
	return out, next, nil
}

// OffcutByCode returns the offcut with the code (regardless of case): ENOTFOUND
// when there is none.
func (s *Service) OffcutByCode(ctx context.Context, code string) (Offcut, error) {
	m, err := offcutsByCode(ctx, s.db, []string{code})
	if err != nil {
		return Offcut{}, err
	}
	o, ok := m[input.CodeKey(code)]
	if !ok {
		return Offcut{}, apperr.NotFound("no offcut has the code %q", code)
	}
	return o, nil
}

func offcutsByCode(ctx context.Context, db *gorm.DB, codes []string) (map[string]Offcut, error) {
	lower := make([]string, 0, len(codes))
	for _, c := range codes {
		if c = input.CodeKey(c); c != "" {
			lower = append(lower, c)
		}
	}
	out := map[string]Offcut{}
	if len(lower) == 0 {
		return out, nil
	}
	var rows []Offcut
	if err := db.WithContext(ctx).Where("lower(code) IN ?", lower).Find(&rows).Error; err != nil {
		return nil, err
	}
	for _, o := range rows {
		out[input.CodeKey(o.Code)] = o
	}
	return out, nil
}

// OffcutByID returns the offcut with the id: ENOTFOUND when there is none.
func (s *Service) OffcutByID(ctx context.Context, id int64) (Offcut, error) {
	return offcutByID(ctx, s.db, id)
}

// OffcutsOfSheet returns the ids of the offcuts sheet n of cutting plan
// planID left, once it was cut.
func (s *Service) OffcutsOfSheet(ctx context.Context, db *gorm.DB, planID int64, n int) ([]int64, error) {
	ids := []int64{}
	err := db.WithContext(ctx).Model(&Offcut{}).Where("plan_id = ? AND sheet = ?", planID, n).Order("id").Pluck("id", &ids).Error
	return ids, err
}

func offcutByID(ctx context.Context, db *gorm.DB, id int64) (Offcut, error) {
	var o Offcut
	err := db.WithContext(ctx).First(&o, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return o, apperr.NotFound("offcut %d does not exist", id)
	}
	return o, err
}

// offcutDocument counts (qty 1: on the shelf, 0: gone) or writes off an
// offcut in document doc, and returns its line: 0 when confirmed, -1 when
// it left the shelf. A reserved offcut written off leaves its cutting plan
// a sheet it cannot cut (the plan is stale).
func offcutDocument(ctx context.Context, tx *gorm.DB, doc int64, kind string, off Offcut, qty float64, reason string) (contracts.StockLine, error) {
	if kind == DocCount && qty == 1 {
		return contracts.StockLine{Code: off.Code, Qty: 0, OnHand: 1}, nil
	}
	res := tx.WithContext(ctx).Model(&Offcut{}).Where("id = ? AND status IN ?", off.ID, []string{OffcutAvailable, OffcutReserved}).
		Updates(map[string]any{"status": OffcutWrittenOff, "reserved_by": nil, "reason": reason})
	if res.Error != nil {
		return contracts.StockLine{}, res.Error
	}
	if res.RowsAffected != 1 {
		return contracts.StockLine{}, apperr.Conflict("offcut %s changed at the same time; read it again", off.Code)
	}
	if err := tx.WithContext(ctx).Omit("ID").Create(&Movement{DocumentID: doc, Code: off.Code, Kind: MoveWriteOff, Qty: 1}).Error; err != nil {
		return contracts.StockLine{}, err
	}
	return contracts.StockLine{Code: off.Code, Qty: -1}, nil
}
