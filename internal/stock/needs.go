package stock

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// This file is the ledger of what production orders need and use up. The
// modules whose facts move stock book them here in their own transactions:
// the plan a launch (what the order needs), the shop floor what physically
// moved (parts cut, banded, scrapped; units assembled; cutting-plan sheets
// taken to the saw), the cutting plans the sheets their parts lie on. So
// that at every moment what is reserved of a material is exactly what the
// live production orders still need of it: the sum of their needs.

// need is what one production order still needs of one material (Needed,
// pooled with every other order's in the level's reserved) and what it has
// used up so far.
type need struct {
	ProdOrderID int64  `gorm:"primaryKey;autoIncrement:false"`
	Code        string `gorm:"primaryKey"`
	Needed      float64
	Consumed    float64
}

func (need) TableName() string { return "stock_needs" }

// Move is a quantity of one material, in its unit (sheets, fractions of a
// sheet included; metres; pieces).
type Move struct {
	Code string
	Qty  float64
}

// SheetRef names a sheet of a cutting plan.
type SheetRef struct {
	PlanID int64
	N      int
}

// What made a booking: contracts.StockSource's what.
const (
	ForLaunch        = "launch"
	ForCut           = "cut"
	ForBanded        = "banded"
	ForAssembled     = "assembled"
	ForScrapped      = "scrapped"
	ForRecut         = "recut"
	ForCuttingPlan   = "cutting_plan"
	ForItemsReleased = "items_released"
	ForCancelled     = "cancelled"
	ForClosed        = "closed"
	ForCompleted     = "completed"
)

// Source is what made a booking, for its document and event.
type Source = contracts.StockSource

// Booking is what one fact moves in stock for one production order.
type Booking struct {
	ProdOrderID int64
	Source      Source
	// Needs change what the order still needs: positive reserves,
	// negative releases (never below nothing).
	Needs []Move
	// Consumed is what left the shelf.
	Consumed []Move
	// Sheets are cutting-plan sheets taken to the saw: each is used up
	// whole the first time (a new sheet of its board, or the offcut it
	// is), and the offcuts it leaves are kept (RegisterSheetsTx said
	// which).
	Sheets []SheetRef
}

func (b Booking) empty() bool { return len(b.Needs) == 0 && len(b.Consumed) == 0 && len(b.Sheets) == 0 }

// BookTx books the bookings in tx, with their documents and events: one
// stock.consumed for a booking that uses something up (its needs changes
// with it), else stock.reserved for what grew and stock.released for what
// shrank. The levels are locked in code order once for all the bookings,
// so that two transactions never wait for each other.
func (s *Service) BookTx(ctx context.Context, tx *gorm.DB, bs ...Booking) error {
	bs = slices.DeleteFunc(slices.Clone(bs), Booking.empty)
	if len(bs) == 0 {
		return nil
	}
	cuts := make([][]sheetCut, len(bs))
	var codes []string
	for i, b := range bs {
		var err error
		if cuts[i], err = takeSheets(ctx, tx, b.Sheets); err != nil {
			return err
		}
		for _, c := range cuts[i] {
			if c.board != "" {
				codes = append(codes, c.board)
			}
		}
		for _, m := range append(slices.Clone(b.Needs), b.Consumed...) {
			codes = append(codes, m.Code)
		}
	}
	levels, err := lockLevels(ctx, tx, codes)
	if err != nil {
		return err
	}
	for i, b := range bs {
		if err := s.book(ctx, tx, b, cuts[i], levels); err != nil {
			return err
		}
	}
	return nil
}

// sheetCut is a cutting-plan sheet taken to the saw for the first time: a
// new sheet of board, or the offcut it is; and the offcuts to keep.
type sheetCut struct {
	ref    SheetRef
	board  string // a new sheet of it; "" for an offcut
	offcut *Offcut
	keep   []keptOffcut
}

func (s *Service) book(ctx context.Context, tx *gorm.DB, b Booking, cuts []sheetCut, levels map[string]*level) error {
	consumed := sumMoves(b.Consumed)
	for _, c := range cuts {
		if c.board != "" {
			consumed = addMove(consumed, Move{Code: c.board, Qty: 1})
		}
	}
	order := b.ProdOrderID
	rows, err := s.neededAfter(ctx, tx, order, sumMoves(b.Needs), consumed)
	if err != nil {
		return err
	}
	changes := 0
	for _, r := range rows {
		if r.delta != 0 {
			changes++
		}
	}
	if len(consumed) == 0 && len(cuts) == 0 && changes == 0 {
		return nil // nothing moved: a sheet on the saw already, a need unchanged
	}
	kind := DocReservation
	if len(consumed) > 0 || len(cuts) > 0 {
		kind = DocConsumption
	}
	src, err := json.Marshal(b.Source)
	if err != nil {
		return err
	}
	doc := Document{Kind: kind, ProdOrderID: &order, Source: string(src)}
	if err := tx.WithContext(ctx).Omit("ID").Create(&doc).Error; err != nil {
		return err
	}
	payload := contracts.StockPayload{DocumentID: doc.ID, ProdOrderID: &order, Source: &b.Source, Lines: []contracts.StockLine{}}
	if len(cuts) == 1 && payload.Source.Sheet == nil {
		payload.Source.Sheet = &contracts.StockSheet{PlanID: cuts[0].ref.PlanID, N: cuts[0].ref.N}
	}
	for _, m := range consumed {
		lv := levels[m.Code]
		before := lv.OnHand
		if err := moveStock(ctx, tx, doc.ID, m.Code, MoveConsume, m.Qty, lv); err != nil {
			return err
		}
		over, err := overdrawn(ctx, tx, doc.ID, order, m.Code, m.Qty, before, lv)
		if err != nil {
			return err
		}
		if over != nil {
			payload.Overdrawn = append(payload.Overdrawn, *over)
		}
		payload.Lines = append(payload.Lines, contracts.StockLine{Code: m.Code, Qty: clean(m.Qty), OnHand: lv.OnHand, Reserve: lv.Reserved})
	}
	for _, c := range cuts {
		if c.offcut != nil {
			payload.Lines = append(payload.Lines, contracts.StockLine{Code: c.offcut.Code, Qty: 1})
		}
		kept, err := keepOffcuts(ctx, tx, c)
		if err != nil {
			return err
		}
		payload.OffcutsKept = append(payload.OffcutsKept, kept...)
		if err := tx.WithContext(ctx).Model(&planSheet{}).Where("plan_id = ? AND n = ?", c.ref.PlanID, c.ref.N).
			Update("document_id", doc.ID).Error; err != nil {
			return err
		}
	}
	changed, err := applyNeeds(ctx, tx, doc.ID, rows, levels)
	if err != nil {
		return err
	}
	if kind == DocConsumption {
		payload.Needs = changed
		return events.Add(ctx, tx, contracts.StockConsumed.New(doc.ID, payload))
	}
	var grew, shrank []contracts.StockLine
	for _, l := range changed {
		if l.Qty > 0 {
			grew = append(grew, l)
		} else {
			l.Qty = -l.Qty
			shrank = append(shrank, l)
		}
	}
	if len(grew) > 0 {
		p := payload
		p.Lines = grew
		short, err := shortOf(ctx, tx, []int64{order})
		if err != nil {
			return err
		}
		for _, sh := range short[order] {
			if slices.ContainsFunc(grew, func(l contracts.StockLine) bool { return l.Code == sh.Code }) {
				p.Short = append(p.Short, contracts.StockShortage{Code: sh.Code, Missing: sh.Missing})
			}
		}
		if err := events.Add(ctx, tx, contracts.StockReserved.New(doc.ID, p)); err != nil {
			return err
		}
	}
	if len(shrank) > 0 {
		p := payload
		p.Lines = shrank
		return events.Add(ctx, tx, contracts.StockReleased.New(doc.ID, p))
	}
	return nil
}

// needRow is what an order needs of a material after a booking, and what
// changed.
type needRow struct {
	need
	delta float64
}

// neededAfter is what the order needs of each material the changes or the
// consumption touch once they are booked (never below nothing), with what
// really changes.
func (s *Service) neededAfter(ctx context.Context, tx *gorm.DB, order int64, changes, consumed []Move) ([]needRow, error) {
	codes := map[string]bool{}
	for _, m := range append(slices.Clone(changes), consumed...) {
		codes[m.Code] = true
	}
	if len(codes) == 0 {
		return nil, nil
	}
	var rows []need
	if err := tx.WithContext(ctx).Where("prod_order_id = ? AND code IN ?", order, keys(codes)).Find(&rows).Error; err != nil {
		return nil, err
	}
	have := map[string]need{}
	for _, r := range rows {
		have[r.Code] = r
	}
	out := make([]needRow, 0, len(codes))
	for _, code := range keys(codes) {
		r, ok := have[code]
		if !ok {
			r = need{ProdOrderID: order, Code: code}
		}
		before := r.Needed
		r.Needed = clean(math.Max(r.Needed+qtyOf(changes, code), 0))
		r.Consumed = clean(r.Consumed + qtyOf(consumed, code))
		out = append(out, needRow{need: r, delta: clean(r.Needed - before)})
	}
	return out, nil
}

// applyNeeds stores the needs and moves the levels' reserved by what
// changed, in document doc; it returns those changes.
func applyNeeds(ctx context.Context, tx *gorm.DB, doc int64, rows []needRow, levels map[string]*level) ([]contracts.StockLine, error) {
	var out []contracts.StockLine
	for _, r := range rows {
		row := r.need
		if err := tx.WithContext(ctx).Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error; err != nil {
			return nil, err
		}
		if r.delta == 0 {
			continue
		}
		lv := levels[r.Code]
		move, qty := MoveReserve, r.delta
		if r.delta < 0 {
			move, qty = MoveRelease, -r.delta
		}
		if err := moveStock(ctx, tx, doc, r.Code, move, qty, lv); err != nil {
			return nil, err
		}
		out = append(out, contracts.StockLine{Code: r.Code, Qty: r.delta, OnHand: lv.OnHand, Reserve: lv.Reserved})
	}
	return out, nil
}

// ReleaseOrderTx releases everything the production order still needs (it
// was cancelled, closed or completed), with stock.released; nothing when it
// needs nothing.
func (s *Service) ReleaseOrderTx(ctx context.Context, tx *gorm.DB, order int64, what string) error {
	var rows []need
	if err := tx.WithContext(ctx).Where("prod_order_id = ? AND needed > 0", order).Order("code").Find(&rows).Error; err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	b := Booking{ProdOrderID: order, Source: Source{What: what}}
	for _, r := range rows {
		b.Needs = append(b.Needs, Move{Code: r.Code, Qty: -r.Needed})
	}
	return s.BookTx(ctx, tx, b)
}

// SetNeedsTx sets what the production order still needs to needs (codes
// not named need nothing), booking the difference.
func (s *Service) SetNeedsTx(ctx context.Context, tx *gorm.DB, order int64, needs []Move, what string) error {
	var rows []need
	if err := tx.WithContext(ctx).Where("prod_order_id = ?", order).Find(&rows).Error; err != nil {
		return err
	}
	want := sumMoves(needs)
	b := Booking{ProdOrderID: order, Source: Source{What: what}}
	for _, r := range rows {
		if d := clean(qtyOf(want, r.Code) - r.Needed); d != 0 {
			b.Needs = append(b.Needs, Move{Code: r.Code, Qty: d})
		}
	}
	for _, m := range want {
		if !slices.ContainsFunc(rows, func(r need) bool { return r.Code == m.Code }) && m.Qty != 0 {
			b.Needs = append(b.Needs, m)
		}
	}
	return s.BookTx(ctx, tx, b)
}

// Need is what a production order still needs of a material and has used
// up.
type Need struct {
	Code     string  `json:"code"`
	Needed   float64 `json:"needed"`
	Consumed float64 `json:"consumed"`
}

// NeedsOf returns what each of the production orders still needs and has
// used up, per material code.
func (s *Service) NeedsOf(ctx context.Context, db *gorm.DB, orders []int64) (map[int64][]Need, error) {
	out := map[int64][]Need{}
	if len(orders) == 0 {
		return out, nil
	}
	var rows []need
	err := database.InBatches(orders, func(b []int64) error {
		var rs []need
		err := db.WithContext(ctx).Where("prod_order_id IN ?", b).Order("prod_order_id, code").Find(&rs).Error
		rows = append(rows, rs...)
		return err
	})
	for _, r := range rows {
		out[r.ProdOrderID] = append(out[r.ProdOrderID], Need{Code: r.Code, Needed: r.Needed, Consumed: r.Consumed})
	}
	return out, err
}

// Shortage is a material of which a live production order will find too
// little on the shelf: the live orders launched before it and itself need
// more than is on hand (stock goes to the older orders first).
type Shortage struct {
	Code    string  `json:"code" example:"LDSP16-SHIMO"`
	Missing float64 `json:"missing" example:"1.4"`
}

// ShortOf returns, per production order, the materials it is short of:
// those it still needs and of which the live orders up to it (in launch
// order) need more than is on hand. Orders short of nothing are absent.
func (s *Service) ShortOf(ctx context.Context, db *gorm.DB, orders []int64) (map[int64][]Shortage, error) {
	return shortOf(ctx, db, orders)
}

func shortOf(ctx context.Context, db *gorm.DB, orders []int64) (map[int64][]Shortage, error) {
	out := map[int64][]Shortage{}
	if len(orders) == 0 {
		return out, nil
	}
	var mine []need
	err := database.InBatches(orders, func(b []int64) error {
		var rs []need
		err := db.WithContext(ctx).Where("prod_order_id IN ? AND needed > ?", b, epsilon).Find(&rs).Error
		mine = append(mine, rs...)
		return err
	})
	if err != nil || len(mine) == 0 {
		return out, err
	}
	codes := map[string]bool{}
	last := int64(0)
	for _, r := range mine {
		codes[r.Code] = true
		last = max(last, r.ProdOrderID)
	}
	var all []need
	err = db.WithContext(ctx).Where("code IN ? AND needed > ? AND prod_order_id <= ?", keys(codes), epsilon, last).
		Order("code, prod_order_id").Find(&all).Error
	if err != nil {
		return nil, err
	}
	var lvs []level
	if err := db.WithContext(ctx).Where("code IN ?", keys(codes)).Find(&lvs).Error; err != nil {
		return nil, err
	}
	onHand := map[string]float64{}
	for _, l := range lvs {
		onHand[l.Code] = l.OnHand
	}
	asked := map[int64]bool{}
	for _, o := range orders {
		asked[o] = true
	}
	cum := map[string]float64{}
	for _, r := range all {
		cum[r.Code] += r.Needed
		if !asked[r.ProdOrderID] {
			continue
		}
		if missing := clean(math.Min(r.Needed, cum[r.Code]-math.Max(onHand[r.Code], 0))); missing > epsilon {
			out[r.ProdOrderID] = append(out[r.ProdOrderID], Shortage{Code: r.Code, Missing: missing})
		}
	}
	return out, nil
}

// ErrSheetNotPlanned is returned for a cutting-plan sheet stock was never
// told of (RegisterSheetsTx).
var ErrSheetNotPlanned = errors.New("stock: the cutting plan's sheet is not registered")

// takeSheets locks the sheets and returns those not taken to the saw
// before, with what each uses up and keeps.
func takeSheets(ctx context.Context, tx *gorm.DB, refs []SheetRef) ([]sheetCut, error) {
	var out []sheetCut
	seen := map[SheetRef]bool{}
	for _, ref := range refs {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		var ps planSheet
		err := database.ForUpdate(tx.WithContext(ctx)).Where("plan_id = ? AND n = ?", ref.PlanID, ref.N).First(&ps).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, fmt.Errorf("%w: plan %d sheet %d", ErrSheetNotPlanned, ref.PlanID, ref.N)
		}
		if err != nil {
			return nil, err
		}
		if ps.DocumentID != nil {
			continue // on the saw already
		}
		c := sheetCut{ref: ref, board: ps.Board}
		if ps.OffcutID != nil {
			off, err := offcutByID(ctx, tx, *ps.OffcutID)
			if err != nil {
				return nil, err
			}
			c.board, c.offcut = "", &off
		}
		if err := json.Unmarshal([]byte(ps.Keep), &c.keep); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func sumMoves(ms []Move) []Move {
	var out []Move
	for _, m := range ms {
		out = addMove(out, m)
	}
	return out
}

func addMove(ms []Move, m Move) []Move {
	if m.Code == "" || math.Abs(m.Qty) < epsilon/10 {
		return ms
	}
	i := slices.IndexFunc(ms, func(x Move) bool { return x.Code == m.Code })
	if i < 0 {
		ms = append(ms, m)
		slices.SortFunc(ms, func(a, b Move) int { return cmp.Compare(a.Code, b.Code) })
		return ms
	}
	ms[i].Qty += m.Qty
	return ms
}

func qtyOf(ms []Move, code string) float64 {
	for _, m := range ms {
		if m.Code == code {
			return m.Qty
		}
	}
	return 0
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
