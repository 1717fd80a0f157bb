// Package stock owns the stock of materials: what is on hand, what live
// production orders still need of it (reserved) and what is available, per
// material of the catalogue; the offcuts kept from cut sheets, each a stock
// item of its own; and what production needs and what to buy.
//
// Every movement is a line of a stock document. Receipts, counts and
// write-offs are the office's; the rest is booked by the modules whose facts
// move stock, in their own transactions (BookTx): a launch reserves what the
// production order needs, the shop floor uses up what physically moved (the
// sheet a part lies on, or the part's own area; the metres of its own edges;
// a unit's fittings), a cutting plan sets the sheets its parts need. The
// quantities of boards are fractional sheets, pooled across orders; whole
// sheets are rounded once, for buying (Shortages).
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
	"github.com/tsekh/tsekh/internal/cutting"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// Limits of one receipt, count or write-off.
const (
	MaxLines = 200
	MaxQty   = 1_000_000
)

// Document kinds.
const (
	DocReceipt     = "receipt"
	DocCount       = "count"
	DocWriteOff    = "write_off"
	DocReservation = "reservation" // what a production order needs changed
	DocConsumption = "consumption" // the floor used materials up
)

// Movement kinds.
const (
	MoveReceipt  = "receipt"
	MoveCount    = "count"
	MoveWriteOff = "write_off"
	MoveReserve  = "reserve"
	MoveConsume  = "consume"
	MoveRelease  = "release"
)

// epsilon is below any quantity stock tells apart (metres to the
// millimetre, sheets to a millionth).
const epsilon = 1e-6

// Document is a receipt, a count, a write-off, a change of what a
// production order needs, or what the floor used up.
type Document struct {
	ID          int64 `gorm:"primaryKey"`
	Kind        string
	ProdOrderID *int64
	Reason      string
	// Source is what made it, as JSON (contracts.StockSource).
	Source string
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

// level is a material's stock, kept in step with its movements: on hand =
// receipts + counts - write-offs - consumption; reserved = what live
// production orders still need (the sum of stock_needs).
type level struct {
	Code     string `gorm:"primaryKey"`
	OnHand   float64
	Reserved float64
}

func (level) TableName() string { return "stock_levels" }

// Settings are what stock counts materials with: the saw's kerf, stages and
// smallest offcut (for the sheets the optimiser estimates before a cutting
// plan exists), and what each banded side's band runs past the part.
type Settings struct {
	KerfMM         float64
	Stages         int
	MinOffcutMM    int
	EdgeOverhangMM int
}

// DefaultEdgeOverhangMM is what a band runs past each end of a banded side
// unless EDGE_OVERHANG_MM says otherwise.
const DefaultEdgeOverhangMM = 30

// DefaultSettings are the cutting work centre's defaults.
func DefaultSettings() Settings {
	return Settings{KerfMM: cutting.DefaultKerf, Stages: cutting.DefaultStages, MinOffcutMM: cutting.DefaultMinOffcut,
		EdgeOverhangMM: DefaultEdgeOverhangMM}
}

// Service keeps the stock.
type Service struct {
	db  *gorm.DB
	set Settings
	est *estimates
}

// NewService returns the stock service over db with the settings.
func NewService(db *gorm.DB, set Settings) *Service {
	if set.EdgeOverhangMM < 0 {
		set.EdgeOverhangMM = 0
	}
	return &Service{db: db, set: set, est: newEstimates()}
}

// EdgeOverhang is what each banded side's band runs past the part, in mm.
func (s *Service) EdgeOverhang() int { return s.set.EdgeOverhangMM }

// Line is a quantity of one material, in its unit, for a receipt, a count
// or a write-off; or an offcut by its code (a count: 1 on the shelf, 0
// gone; a write-off: 1).
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
	// more than is there). Boards are counted in sheets, fractions of a
	// sheet included (a part cut without a cutting plan uses its own area).
	OnHand       float64 `json:"on_hand" example:"12"`
	Reserved     float64 `json:"reserved" example:"5.4"`
	Available    float64 `json:"available" example:"6.6"`
	ReorderPoint float64 `json:"reorder_point" example:"10"`
	// id orders the list: the material's id in the catalogue.
	id int64
}

// Receipt is the answer to a receipt, a count or a write-off: its document
// and the levels after it (offcuts named are left out of Lines).
type Receipt struct {
	DocumentID int64   `json:"document_id" example:"1"`
	Lines      []Level `json:"lines"`
	// Offcuts are the offcuts the document named, as they are now.
	Offcuts []Offcut `json:"offcuts"`
}

// checkLines validates receipt, count or write-off lines against the
// catalogue (and, for counts and write-offs, the offcuts in stock): the
// code known (read as every code is, input.CodeKey), the quantity within
// bounds and on the material's step (catalog.OnStep: whole sheets and
// pieces, metres to the centimetre); positive for a receipt or a write-off, not negative for a
// count; an offcut counted 0 or 1, written off 1. It writes each line back
// as it is kept: the code as the catalogue or the offcut spells it, the
// quantity on its step (never -0).
func checkLines(ctx context.Context, tx *gorm.DB, lines []Line, kind string) (map[string]catalog.Material, map[string]Offcut, error) {
	var fields []apperr.FieldError
	switch {
	case len(lines) == 0:
		fields = append(fields, apperr.Field("lines", "must list at least one material"))
	case len(lines) > MaxLines:
		fields = append(fields, apperr.Field("lines", "must list at most %d materials", MaxLines))
	}
	codes := make([]string, len(lines))
	for i, l := range lines {
		codes[i] = input.NormalCode(l.Code)
	}
	known, err := catalog.MaterialsByCode(ctx, tx, codes)
	if err != nil {
		return nil, nil, err
	}
	offcuts := map[string]Offcut{}
	if kind != DocReceipt {
		if offcuts, err = offcutsByCode(ctx, tx, codes); err != nil {
			return nil, nil, err
		}
	}
	for i, l := range lines {
		at := func(f string) string { return fmt.Sprintf("lines[%d].%s", i, f) }
		m, ok := known[input.CodeKey(codes[i])]
		off, isOffcut := offcuts[input.CodeKey(codes[i])]
		switch {
		case codes[i] == "":
			fields = append(fields, apperr.Field(at("code"), "is required"))
		case !ok && !isOffcut && kind == DocReceipt:
			fields = append(fields, apperr.Field(at("code"), "no material has the code %q", l.Code))
		case !ok && !isOffcut:
			fields = append(fields, apperr.Field(at("code"), "no material or offcut has the code %q", l.Code))
		case slices.ContainsFunc(codes[:i], func(c string) bool { return input.CodeKey(c) == input.CodeKey(codes[i]) }):
			fields = append(fields, apperr.Field(at("code"), "repeats %q: give its quantity once", l.Code))
		case ok:
			lines[i].Code = m.Code
		default:
			lines[i].Code = off.Code
		}
		switch {
		case math.IsNaN(l.Qty) || math.IsInf(l.Qty, 0) || l.Qty > MaxQty:
			fields = append(fields, apperr.Field(at("qty"), "must be at most %d", MaxQty))
		case isOffcut && kind == DocCount && l.Qty != 0 && l.Qty != 1:
			fields = append(fields, apperr.Field(at("qty"), "an offcut is counted 1 (on the shelf) or 0 (gone)"))
		case isOffcut && kind == DocWriteOff && l.Qty != 1:
			fields = append(fields, apperr.Field(at("qty"), "an offcut is written off whole: 1"))
		case isOffcut && (off.Status == OffcutUsed || off.Status == OffcutWrittenOff):
			fields = append(fields, apperr.Field(at("code"), "offcut %s is %s: it is no longer in stock", off.Code, strings.ReplaceAll(off.Status, "_", " ")))
		case isOffcut:
		case kind != DocCount && l.Qty <= 0:
			fields = append(fields, apperr.Field(at("qty"), "must be more than 0"))
		case kind == DocCount && l.Qty < 0:
			fields = append(fields, apperr.Field(at("qty"), "must not be negative"))
		case ok:
			q, onStep := catalog.OnStep(m.Unit, l.Qty)
			switch {
			case onStep:
				lines[i].Qty = q
			case m.Unit == catalog.UnitMetre:
				fields = append(fields, apperr.Field(at("qty"), "%s is counted in %s, not %v m", m.Code, catalog.StepText(m.Unit), l.Qty))
			default:
				fields = append(fields, apperr.Field(at("qty"), "%s is counted in whole %s", m.Code, unitWord(m.Unit)))
			}
		}
	}
	if len(fields) > 0 {
		return nil, nil, apperr.Invalid("the stock lines are not valid", fields...)
	}
	return known, offcuts, nil
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
// counted, the difference a movement; an offcut counted 1 is confirmed on
// the shelf, counted 0 is written off as gone. It writes stock.counted. The
// reason is required; EINVALID as Receive, a count may be 0.
func (s *Service) Count(ctx context.Context, lines []Line, reason string) (Receipt, error) {
	reason = strings.TrimSpace(reason)
	if f := input.RequiredLine("reason", reason, input.MaxName); len(f) > 0 {
		return Receipt{}, apperr.Invalid("the count is not valid", f...)
	}
	return s.document(ctx, DocCount, lines, reason)
}

// WriteOff takes materials or offcuts off the shelf for a reason (damaged,
// lost) and writes stock.written_off: on hand comes down (it may go
// negative, as the shelf says), an offcut is written off. The reason is
// required; EINVALID as Receive, naming an offcut used or written off
// already.
func (s *Service) WriteOff(ctx context.Context, lines []Line, reason string) (Receipt, error) {
	reason = strings.TrimSpace(reason)
	if f := input.RequiredLine("reason", reason, input.MaxName); len(f) > 0 {
		return Receipt{}, apperr.Invalid("the write-off is not valid", f...)
	}
	return s.document(ctx, DocWriteOff, lines, reason)
}

// ReceiveTx records in tx a delivery received against the purchase order
// and writes stock.received naming it; errors as Receive. The purchasing
// module calls it in the transaction that books the receipt on the order's
// lines.
func (s *Service) ReceiveTx(ctx context.Context, tx *gorm.DB, lines []Line, note string, purchaseOrder int64) (Receipt, error) {
	if f := input.Note("note", note, input.MaxNote); len(f) > 0 {
		return Receipt{}, apperr.Invalid("the receipt is not valid", f...)
	}
	return documentTx(ctx, tx, DocReceipt, lines, note, &purchaseOrder)
}

func (s *Service) document(ctx context.Context, kind string, lines []Line, reason string) (Receipt, error) {
	var out Receipt
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		out, err = documentTx(ctx, tx, kind, lines, reason, nil)
		return err
	})
	return out, err
}

func documentTx(ctx context.Context, tx *gorm.DB, kind string, lines []Line, reason string, purchaseOrder *int64) (Receipt, error) {
	var out Receipt
	err := func() error {
		known, offcuts, err := checkLines(ctx, tx, lines, kind)
		if err != nil {
			return err
		}
		source := "{}"
		if purchaseOrder != nil {
			source = fmt.Sprintf(`{"purchase_order_id":%d}`, *purchaseOrder)
		}
		doc := Document{Kind: kind, Reason: reason, Source: source}
		if err := tx.WithContext(ctx).Omit("ID").Create(&doc).Error; err != nil {
			return err
		}
		payload := contracts.StockPayload{DocumentID: doc.ID, Reason: reason, Lines: []contracts.StockLine{}, PurchaseOrderID: purchaseOrder}
		out = Receipt{DocumentID: doc.ID, Lines: []Level{}, Offcuts: []Offcut{}}
		for _, l := range lines {
			key := strings.ToLower(strings.TrimSpace(l.Code))
			if off, ok := offcuts[key]; ok && known[key].Code == "" {
				line, err := offcutDocument(ctx, tx, doc.ID, kind, off, l.Qty, reason)
				if err != nil {
					return err
				}
				payload.Lines = append(payload.Lines, line)
				now, err := offcutByID(ctx, tx, off.ID)
				if err != nil {
					return err
				}
				out.Offcuts = append(out.Offcuts, now)
				continue
			}
			m := known[key]
			lv, err := lockLevel(ctx, tx, m.Code)
			if err != nil {
				return err
			}
			qty, move := l.Qty, MoveReceipt
			switch kind {
			case DocCount:
				qty, move = l.Qty-lv.OnHand, MoveCount
			case DocWriteOff:
				move = MoveWriteOff
			}
			if err := moveStock(ctx, tx, doc.ID, m.Code, move, qty, &lv); err != nil {
				return err
			}
			if kind == DocWriteOff {
				qty = -qty
			}
			payload.Lines = append(payload.Lines, contracts.StockLine{Code: m.Code, Qty: qty, OnHand: lv.OnHand, Reserve: lv.Reserved})
			out.Lines = append(out.Lines, levelOf(m, lv))
		}
		ev := contracts.StockReceived.New(doc.ID, payload)
		switch kind {
		case DocCount:
			ev = contracts.StockCounted.New(doc.ID, payload)
		case DocWriteOff:
			ev = contracts.StockWrittenOff.New(doc.ID, payload)
		}
		return events.Add(ctx, tx, ev)
	}()
	return out, err
}

// lockLevel returns the material's level, creating it, locked for the
// transaction on PostgreSQL (SQLite has one writer at a time). A
// transaction that locks several levels locks them in code order
// (lockLevels), so that two never wait for each other.
func lockLevel(ctx context.Context, tx *gorm.DB, code string) (level, error) {
	if err := tx.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&level{Code: code}).Error; err != nil {
		return level{}, err
	}
	var lv level
	q := database.ForUpdate(tx.WithContext(ctx))
	err := q.Where("code = ?", code).First(&lv).Error
	return lv, err
}

// lockLevels locks the levels of the codes in code order and returns them
// by code.
func lockLevels(ctx context.Context, tx *gorm.DB, codes []string) (map[string]*level, error) {
	codes = slices.Clone(codes)
	slices.Sort(codes)
	codes = slices.Compact(codes)
	out := make(map[string]*level, len(codes))
	for _, c := range codes {
		lv, err := lockLevel(ctx, tx, c)
		if err != nil {
			return nil, err
		}
		out[c] = &lv
	}
	return out, nil
}

// moveStock writes one movement and updates the level: receipts and counts
// change on hand, write-offs and consumption take from it; a reservation
// and its release change reserved.
func moveStock(ctx context.Context, tx *gorm.DB, doc int64, code, kind string, qty float64, lv *level) error {
	qty = clean(qty) // as the level keeps it: the sum of the movements is the level
	if math.Abs(qty) < epsilon && kind != MoveCount {
		return nil
	}
	if err := tx.WithContext(ctx).Omit("ID").Create(&Movement{DocumentID: doc, Code: code, Kind: kind, Qty: qty}).Error; err != nil {
		return err
	}
	switch kind {
	case MoveReceipt, MoveCount:
		lv.OnHand += qty
	case MoveWriteOff, MoveConsume:
		lv.OnHand -= qty
	case MoveReserve:
		lv.Reserved += qty
	case MoveRelease:
		lv.Reserved -= qty
	}
	lv.OnHand, lv.Reserved = clean(lv.OnHand), clean(lv.Reserved)
	if err := tx.WithContext(ctx).Model(&level{}).Where("code = ?", code).
		Updates(map[string]any{"on_hand": lv.OnHand, "reserved": lv.Reserved}).Error; err != nil {
		return err
	}
	if kind == MoveReceipt || kind == MoveCount {
		return settleOverdraws(ctx, tx, code, lv)
	}
	return nil
}

// clean drops the dust of floating-point sums.
func clean(v float64) float64 {
	r := math.Round(v*1e6) / 1e6
	if r == 0 {
		return 0
	}
	return r
}

// shown rounds a quantity for people: sheets to the thousandth, metres to
// the centimetre, pieces whole.
func shown(unit string, v float64) float64 {
	switch unit {
	case catalog.UnitMetre:
		v = math.Round(v*100) / 100
	case catalog.UnitPieces:
		v = math.Round(v*1e6) / 1e6
	default:
		v = math.Round(v*1000) / 1000
	}
	if v == 0 {
		return 0
	}
	return v
}

func levelOf(m catalog.Material, lv level) Level {
	return Level{Code: m.Code, Kind: m.Kind, Name: m.Name, Decor: m.Decor, Unit: m.Unit, OnHand: shown(m.Unit, lv.OnHand),
		Reserved: shown(m.Unit, lv.Reserved), Available: shown(m.Unit, lv.OnHand-lv.Reserved), ReorderPoint: m.ReorderPoint, id: m.ID}
}
