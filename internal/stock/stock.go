// Package stock owns the stock of materials: what is on hand, reserved for
// launched production orders and available, per material of the catalogue;
// receipts, counts, and the reservations, consumption and releases that
// follow the plan's events.
package stock

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// Limits of one receipt or count.
const (
	MaxLines = 200
	MaxQty   = 1_000_000
)

// Document kinds.
const (
	DocReceipt     = "receipt"
	DocCount       = "count"
	DocReservation = "reservation"
)

// Movement kinds.
const (
	MoveReceipt = "receipt"
	MoveCount   = "count"
	MoveReserve = "reserve"
	MoveConsume = "consume"
	MoveRelease = "release"
)

// epsilon is below any quantity stock tells apart (metres to the millimetre).
const epsilon = 1e-6

// Document is a receipt, a count, or a production order's reservation.
type Document struct {
	ID          int64 `gorm:"primaryKey"`
	Kind        string
	ProdOrderID *int64
	Reason      string
}

// TableName is the stock module's document table.
func (Document) TableName() string { return "stock_documents" }

// Movement is one line of a document: a quantity of one material.
type Movement struct {
	ID         int64 `gorm:"primaryKey"`
	DocumentID int64
	Code       string
	Kind       string
	Qty        float64
}

// TableName is the stock module's movement table.
func (Movement) TableName() string { return "stock_movements" }

// level is a material's stock, kept in step with its movements.
type level struct {
	Code     string `gorm:"primaryKey"`
	OnHand   float64
	Reserved float64
}

func (level) TableName() string { return "stock_levels" }

// reservation is what a production order needs of one material and what of
// it is used up.
type reservation struct {
	ProdOrderID int64  `gorm:"primaryKey;autoIncrement:false"`
	Code        string `gorm:"primaryKey"`
	Kind        string
	Step        int
	Total       int
	Done        int
	Needed      float64
	Consumed    float64
	Released    bool
}

func (reservation) TableName() string { return "stock_reservations" }

// Service keeps the stock.
type Service struct{ db *gorm.DB }

// NewService returns the stock service over db.
func NewService(db *gorm.DB) *Service { return &Service{db: db} }

// Line is a quantity of one material, in its unit, for a receipt or a count.
type Line struct {
	Code string
	Qty  float64
}

// Level is a material's stock as GET /api/v1/stock shows it.
type Level struct {
	Code  string `json:"code" example:"LDSP16-SONOMA"`
	Kind  string `json:"kind" enums:"board,band,fitting" example:"board"`
	Name  string `json:"name" example:"ЛДСП 16 мм Дуб сонома"`
	Decor string `json:"decor" example:"Дуб сонома"`
	Unit  string `json:"unit" enums:"sheet,m,pcs" example:"sheet"`
	// OnHand is what is on the shelf; Reserved what live production orders
	// still need of it; Available the difference (negative when they need
	// more than is there).
	OnHand       float64 `json:"on_hand" example:"12"`
	Reserved     float64 `json:"reserved" example:"5"`
	Available    float64 `json:"available" example:"7"`
	ReorderPoint float64 `json:"reorder_point" example:"10"`
	// id orders the list: the material's id in the catalogue.
	id int64
}

// Receipt is the answer to a receipt or a count: its document and the
// levels after it.
type Receipt struct {
	DocumentID int64   `json:"document_id" example:"1"`
	Lines      []Level `json:"lines"`
}

// checkLines validates receipt or count lines against the catalogue: the
// code known, the quantity within bounds and whole for sheets and pieces;
// positive for a receipt, not negative for a count.
func checkLines(ctx context.Context, tx *gorm.DB, lines []Line, count bool) (map[string]catalog.Material, error) {
	var fields []apperr.FieldError
	switch {
	case len(lines) == 0:
		fields = append(fields, apperr.Field("lines", "must list at least one material"))
	case len(lines) > MaxLines:
		fields = append(fields, apperr.Field("lines", "must list at most %d materials", MaxLines))
	}
	codes := make([]string, len(lines))
	for i, l := range lines {
		codes[i] = strings.TrimSpace(l.Code)
	}
	known, err := catalog.MaterialsByCode(ctx, tx, codes)
	if err != nil {
		return nil, err
	}
	for i, l := range lines {
		at := func(f string) string { return fmt.Sprintf("lines[%d].%s", i, f) }
		m, ok := known[strings.ToLower(codes[i])]
		switch {
		case codes[i] == "":
			fields = append(fields, apperr.Field(at("code"), "is required"))
		case !ok:
			fields = append(fields, apperr.Field(at("code"), "no material has the code %q", l.Code))
		case slices.ContainsFunc(codes[:i], func(c string) bool { return strings.EqualFold(c, codes[i]) }):
			fields = append(fields, apperr.Field(at("code"), "repeats %q: give its quantity once", l.Code))
		}
		switch {
		case math.IsNaN(l.Qty) || l.Qty > MaxQty:
			fields = append(fields, apperr.Field(at("qty"), "must be at most %d", MaxQty))
		case !count && l.Qty <= 0:
			fields = append(fields, apperr.Field(at("qty"), "must be more than 0"))
		case count && l.Qty < 0:
			fields = append(fields, apperr.Field(at("qty"), "must not be negative"))
		case ok && m.Unit != catalog.UnitMetre && l.Qty != math.Trunc(l.Qty):
			fields = append(fields, apperr.Field(at("qty"), "%s is counted in whole %s", m.Code, unitWord(m.Unit)))
		}
	}
	if len(fields) > 0 {
		return nil, apperr.Invalid("the stock lines are not valid", fields...)
	}
	return known, nil
}

func unitWord(u string) string {
	if u == catalog.UnitSheet {
		return "sheets"
	}
	return "pieces"
}

// Receive records a delivery into stock and writes stock.received. It
// returns EINVALID naming lines[i].code for a material the catalogue does
// not have and lines[i].qty for a quantity not positive (or not whole, for
// sheets and pieces); nothing is written then.
func (s *Service) Receive(ctx context.Context, lines []Line, note string) (Receipt, error) {
	if f := input.Note("note", note, input.MaxNote); len(f) > 0 {
		return Receipt{}, apperr.Invalid("the receipt is not valid", f...)
	}
	return s.document(ctx, DocReceipt, lines, note)
}

// Count records an inventory: each material's on hand becomes what was
// counted, the difference a movement; it writes stock.counted. The reason
// is required; EINVALID as Receive, a count may be 0.
func (s *Service) Count(ctx context.Context, lines []Line, reason string) (Receipt, error) {
	reason = strings.TrimSpace(reason)
	if f := input.RequiredLine("reason", reason, input.MaxName); len(f) > 0 {
		return Receipt{}, apperr.Invalid("the count is not valid", f...)
	}
	return s.document(ctx, DocCount, lines, reason)
}

func (s *Service) document(ctx context.Context, kind string, lines []Line, reason string) (Receipt, error) {
	var out Receipt
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		known, err := checkLines(ctx, tx, lines, kind == DocCount)
		if err != nil {
			return err
		}
		doc := Document{Kind: kind, Reason: reason}
		if err := tx.Omit("ID").Create(&doc).Error; err != nil {
			return err
		}
		payload := contracts.StockPayload{DocumentID: doc.ID, Reason: reason}
		for _, l := range lines {
			code := known[strings.ToLower(strings.TrimSpace(l.Code))].Code
			lv, err := lockLevel(ctx, tx, code)
			if err != nil {
				return err
			}
			qty, move := l.Qty, MoveReceipt
			if kind == DocCount {
				qty, move = l.Qty-lv.OnHand, MoveCount
			}
			if err := moveStock(ctx, tx, doc.ID, code, move, qty, &lv); err != nil {
				return err
			}
			payload.Lines = append(payload.Lines, contracts.StockLine{Code: code, Qty: qty, OnHand: lv.OnHand, Reserve: lv.Reserved})
		}
		ev := contracts.StockReceived.New(doc.ID, payload)
		if kind == DocCount {
			ev = contracts.StockCounted.New(doc.ID, payload)
		}
		if err := events.Add(ctx, tx, ev); err != nil {
			return err
		}
		out.DocumentID = doc.ID
		for _, l := range payload.Lines {
			m := known[strings.ToLower(l.Code)]
			out.Lines = append(out.Lines, levelOf(m, level{Code: l.Code, OnHand: l.OnHand, Reserved: l.Reserve}))
		}
		return nil
	})
	return out, err
}

// lockLevel returns the material's level, creating it, locked for the
// transaction on PostgreSQL (SQLite has one writer at a time).
func lockLevel(ctx context.Context, tx *gorm.DB, code string) (level, error) {
	if err := tx.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&level{Code: code}).Error; err != nil {
		return level{}, err
	}
	var lv level
	q := database.ForUpdate(tx.WithContext(ctx))
	err := q.Where("code = ?", code).First(&lv).Error
	return lv, err
}

// moveStock writes one movement and updates the level: receipts and counts
// change on hand; a reservation and its release, reserved; consumption
// takes from both.
func moveStock(ctx context.Context, tx *gorm.DB, doc int64, code, kind string, qty float64, lv *level) error {
	if math.Abs(qty) < epsilon && kind != MoveCount {
		return nil
	}
	if err := tx.WithContext(ctx).Omit("ID").Create(&Movement{DocumentID: doc, Code: code, Kind: kind, Qty: qty}).Error; err != nil {
		return err
	}
	switch kind {
	case MoveReceipt, MoveCount:
		lv.OnHand += qty
	case MoveReserve:
		lv.Reserved += qty
	case MoveRelease:
		lv.Reserved -= qty
	case MoveConsume:
		lv.OnHand -= qty
		lv.Reserved -= qty
	}
	lv.OnHand, lv.Reserved = clean(lv.OnHand), clean(lv.Reserved)
	return tx.WithContext(ctx).Model(&level{}).Where("code = ?", code).
		Updates(map[string]any{"on_hand": lv.OnHand, "reserved": lv.Reserved}).Error
}

// clean drops the dust of floating-point sums.
func clean(v float64) float64 {
	r := math.Round(v*1e6) / 1e6
	if r == 0 {
		return 0
	}
	return r
}

func levelOf(m catalog.Material, lv level) Level {
	return Level{Code: m.Code, Kind: m.Kind, Name: m.Name, Decor: m.Decor, Unit: m.Unit, OnHand: lv.OnHand, Reserved: lv.Reserved,
		Available: clean(lv.OnHand - lv.Reserved), ReorderPoint: m.ReorderPoint, id: m.ID}
}

// Levels returns a page of every material's stock in the catalogue's
// order (materials never moved show zeros), of one kind when kind is set:
// EINVALID naming kind when it is none of the kinds.
func (s *Service) Levels(ctx context.Context, kind string, pr page.Request) ([]Level, string, error) {
	if kind != "" && !slices.Contains(catalog.MaterialKinds, kind) {
		return nil, "", apperr.Invalid("invalid query", apperr.Field("kind", "must be %s", strings.Join(catalog.MaterialKinds, ", ")))
	}
	var ms []catalog.Material
	q := s.db.WithContext(ctx).Where("id > ?", pr.After)
	if kind != "" {
		q = q.Where("kind = ?", kind)
	}
	if err := q.Order("id").Limit(pr.Limit + 1).Find(&ms).Error; err != nil {
		return nil, "", err
	}
	levels, err := s.levelsOf(ctx, s.db, ms)
	if err != nil {
		return nil, "", err
	}
	out, next := page.Next(levels, pr.Limit, func(l Level) int64 { return l.id })
	return out, next, nil
}

func (s *Service) levelsOf(ctx context.Context, db *gorm.DB, ms []catalog.Material) ([]Level, error) {
	codes := make([]string, len(ms))
	for i, m := range ms {
		codes[i] = m.Code
	}
	var lvs []level
	if len(codes) > 0 {
		if err := db.WithContext(ctx).Where("code IN ?", codes).Find(&lvs).Error; err != nil {
			return nil, err
		}
	}
	by := map[string]level{}
	for _, l := range lvs {
		by[l.Code] = l
	}
	out := make([]Level, len(ms))
	for i, m := range ms {
		out[i] = levelOf(m, by[m.Code])
	}
	return out, nil
}

// Shortage is what to buy of one material: what the backlog needs beyond
// what is available (launched work's needs are reserved already), brought
// up to the reorder point.
type Shortage struct {
	Level
	// Backlog is what the items waiting in the backlog need.
	Backlog float64 `json:"backlog" example:"4"`
	// ToBuy = Backlog + ReorderPoint - Available, rounded up to whole
	// sheets and pieces; only materials with something to buy are listed.
	ToBuy float64 `json:"to_buy" example:"7"`
}

// Shortages returns what to buy, per material, given what the backlog
// needs (by code): every material whose available stock, less the
// backlog's need, falls below its reorder point.
func (s *Service) Shortages(ctx context.Context, backlog map[string]float64) ([]Shortage, error) {
	var ms []catalog.Material
	if err := s.db.WithContext(ctx).Order("id").Find(&ms).Error; err != nil {
		return nil, err
	}
	levels, err := s.levelsOf(ctx, s.db, ms)
	if err != nil {
		return nil, err
	}
	out := []Shortage{}
	for _, l := range levels {
		need := backlog[strings.ToLower(l.Code)]
		buy := need + l.ReorderPoint - l.Available
		if l.Unit != catalog.UnitMetre {
			buy = math.Ceil(buy - epsilon)
		} else {
			buy = math.Ceil(buy*100-epsilon) / 100
		}
		if buy <= epsilon || (l.ReorderPoint == 0 && need == 0 && l.Available >= 0) {
			continue
		}
		out = append(out, Shortage{Level: l, Backlog: need, ToBuy: clean(buy)})
	}
	return out, nil
}
