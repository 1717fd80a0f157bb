package plan

import (
	"context"
	"errors"
	"math"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/page"
	"github.com/tsekh/tsekh/internal/stock"
)

// Production-order states.
const (
	StatusLaunched   = "launched"
	StatusInProgress = "in_progress"
	StatusDone       = "done"
	StatusCancelled  = "cancelled"
	// StatusClosed is an order closed short once work had started (see CloseProdOrder).
	StatusClosed = "closed"
)

// Operation states.
const (
	OpPending    = "pending"
	OpInProgress = "in_progress"
	OpDone       = "done"
)

// RouteRef names the route a production order follows.
type RouteRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// ProdOrder is a production order: sales-order items made together along one route.
type ProdOrder struct {
	ID     int64    `json:"id" gorm:"primaryKey"`
	Status string   `json:"status" enums:"launched,in_progress,done,cancelled,closed"`
	Route  RouteRef `json:"route" gorm:"embedded;embeddedPrefix:route_"`
	// Items are the sales-order items it makes.
	Items      []ProdItem `json:"items" gorm:"foreignKey:ProdOrderID"`
	PartsCount int        `json:"parts_count"`
	OpsCount   int        `json:"ops_count"`
	// Short names the materials it still needs of which the shelf holds
	// too little: stock goes to the live orders in launch order, and the
	// orders up to this one need more than is on hand (computed as it is
	// read; a launch answers it from its own transaction).
	Short []string `json:"short" gorm:"-" example:"LDSP16-SONOMA"`
	// HeldBy are the materials its steps that use them up wait for, as its
	// launch or the last re-plan found them: what it still needs of each and
	// the day it is available to it (null: nothing covers it and no
	// supplier sells it). Its ETA includes the wait.
	HeldBy HeldList `json:"held_by" gorm:"column:held_by"`
	// EdgeOverhangMM is what each banded side's band runs past its parts,
	// as EDGE_OVERHANG_MM said at its launch: what its bands are counted
	// with.
	EdgeOverhangMM int `json:"-"`
	// CutSeq, BandSeq and AssembleSeq are its route's steps that use
	// materials up, as the route had them at its launch (MaterialSteps).
	CutSeq      int `json:"-"`
	BandSeq     int `json:"-"`
	AssembleSeq int `json:"-"`
	// ETA is the day it is promised for: the planned ETA, or the planner's.
	ETA database.Date `json:"eta" gorm:"column:eta" swaggertype:"string" format:"date"`
	// PlannedETA is the day the schedule computed, at launch or at the last re-plan.
	PlannedETA  database.Date `json:"planned_eta" gorm:"column:planned_eta" swaggertype:"string" format:"date"`
	Progress    Progress      `json:"progress" gorm:"-"`
	CreatedAt   time.Time     `json:"created_at" gorm:"->" format:"date-time"`
	StartedAt   *time.Time    `json:"started_at" extensions:"x-nullable" format:"date-time"`
	CompletedAt *time.Time    `json:"completed_at" extensions:"x-nullable" format:"date-time"`
	CancelledAt *time.Time    `json:"cancelled_at" extensions:"x-nullable" format:"date-time"`

	// DueDate is the earliest due date of its items (none when none has one).
	DueDate database.Date `json:"due_date" gorm:"-" swaggertype:"string" format:"date" extensions:"x-nullable"`
	// ETAGiven says a planner gave the ETA at launch: a re-plan keeps it and moves only planned_eta.
	ETAGiven bool `json:"eta_given"`
	// Priority places it in the finite-capacity plan: higher first, then in launch order (-100 to 100, 0 by default).
	Priority int `json:"priority" minimum:"-100" maximum:"100"`
	// Late: launched or in progress with an ETA after the due date of one of its items.
	Late bool `json:"late" gorm:"-"`

	// NeedsAttention flags an order on which work had started when a sales
	// order of its items was cancelled; AttentionReason says which.
	NeedsAttention  bool   `json:"needs_attention"`
	AttentionReason string `json:"attention_reason"`

	// ClosedAt is when the order was closed short (status closed).
	ClosedAt *time.Time `json:"closed_at" extensions:"x-nullable" format:"date-time"`
	// CloseReason is why it was closed short; empty unless closed.
	CloseReason string `json:"close_reason"`
	// CloseRest is what was done with the units not made: "backlog" or "write_off"; empty unless closed.
	CloseRest string `json:"close_rest"`
	// ClosedByID and ClosedBy are the user who closed it (null when the system did).
	ClosedByID *int64  `json:"closed_by_id" extensions:"x-nullable"`
	ClosedBy   *string `json:"closed_by" extensions:"x-nullable"`
}

// TableName is the plan module's production-order table.
func (ProdOrder) TableName() string { return "plan_prod_orders" }

// ItemIDs returns the ids of the order's sales-order items.
func (o ProdOrder) ItemIDs() []int64 {
	ids := make([]int64, len(o.Items))
	for i, it := range o.Items {
		ids[i] = it.ItemID
	}
	return ids
}

// Progress counts a production order's operations by state.
type Progress struct {
	OpsTotal      int `json:"ops_total"`
	OpsInProgress int `json:"ops_in_progress"`
	OpsDone       int `json:"ops_done"`
	// Percent is the share of the planned minutes done, 0 to 100.
	Percent float64 `json:"percent"`
}

// ProdItem is a sales-order item of a production order, with what the
// backlog knew of it.
type ProdItem struct {
	ProdOrderID int64         `json:"-" gorm:"primaryKey;autoIncrement:false"`
	ItemID      int64         `json:"item_id" gorm:"primaryKey;autoIncrement:false"`
	OrderID     int64         `json:"order_id"`
	ProductID   int64         `json:"product_id"`
	SKU         string        `json:"sku" gorm:"column:sku"`
	Qty         int           `json:"qty"`
	DueDate     database.Date `json:"due_date" swaggertype:"string" format:"date" extensions:"x-nullable"`
	Customer    string        `json:"customer"` // the customer's name
	Note        string        `json:"note"`     // the customer's note on the item
	// Options are the item's choices of board per decor slot, by code.
	Options    catalog.Options `json:"options" swaggertype:"object,string"`
	ReceivedAt time.Time       `json:"-"`
	EventID    int64           `json:"-"`
	Released   bool            `json:"-"` // the order was cancelled or closed and the item let go
	// OrderedQty is what the sales order has of the item now, when it
	// changed after the launch (Qty is what the production order was built
	// on); Removed, that the sales order no longer has the item. Either
	// flags the production order for the planner.
	OrderedQty *int `json:"ordered_qty" extensions:"x-nullable"`
	Removed    bool `json:"removed"`
	// MadeQty, ReturnedQty and WrittenOffQty are what became of the item's
	// units when the order was closed short; null until then.
	MadeQty       *int `json:"made_qty" extensions:"x-nullable"`
	ReturnedQty   *int `json:"returned_qty" extensions:"x-nullable"`
	WrittenOffQty *int `json:"written_off_qty" extensions:"x-nullable"`

	// Late: its production order is launched or in progress with an ETA after the item's due date.
	Late bool `json:"late" gorm:"-"`
}

// orderedNow is how many of the item the sales order wants now: OrderedQty
// when it changed after the launch, else what the order was built on.
func (it ProdItem) orderedNow() int {
	if it.OrderedQty != nil {
		return *it.OrderedQty
	}
	return it.Qty
}

// TableName is the plan module's production-order item table.
func (ProdItem) TableName() string { return "plan_prod_order_items" }

// Part is one physical part to make: unit Unit of an item, line Seq of the
// product's parts specification.
type Part struct {
	ID          int64  `json:"id" gorm:"primaryKey"`
	ProdOrderID int64  `json:"-"`
	ItemID      int64  `json:"item_id"`
	Unit        int    `json:"unit"`
	Seq         int    `json:"line"`
	Name        string `json:"name"`
	Material    string `json:"material"`
	LengthMM    int    `json:"length_mm" gorm:"column:length_mm"`
	WidthMM     int    `json:"width_mm" gorm:"column:width_mm"`
	ThicknessMM int    `json:"thickness_mm" gorm:"column:thickness_mm"`
	Edging      string `json:"edging"`
	// Board is the code of the board it is cut from, Decor the board's
	// decor, as the item's choices resolved them at launch; Grain and Edges
	// (each side's edge band code, "" for none) as its product line says.
	Board string        `json:"board" example:"LDSP16-SONOMA"`
	Decor string        `json:"decor" example:"Дуб сонома"`
	Grain string        `json:"grain" enums:"length,width,none" example:"length"`
	Edges catalog.Edges `json:"edges" gorm:"embedded;embeddedPrefix:edge_"`
	// Code is the part's printable code, unique in the database, from
	// launch: what its label's barcode carries and a scan names.
	Code string `json:"code" example:"P12-5"`
	// Status is live, or scrapped once the floor spoilt it (see Scrap).
	Status string `json:"status" enums:"live,scrapped"`
	// RecutOf is the scrapped part this one is cut again in place of.
	RecutOf *int64 `json:"recut_of" extensions:"x-nullable"`
	Scrap   `json:"scrap"`
	// BoardNeed is what stock reserves of its board for it until it is
	// cut, in sheets: its share of the sheet a cutting plan lays it out
	// on (nothing on an offcut, reserved whole), or of what the optimiser
	// estimates its launch's parts take.
	BoardNeed float64 `json:"board_need" example:"0.21"`
	// SheetPlanID and SheetN are the cutting plan's sheet it lies on, once
	// a plan lays it out: cutting it takes that sheet to the saw.
	SheetPlanID *int64 `json:"sheet_plan_id" extensions:"x-nullable" example:"3"`
	SheetN      *int   `json:"sheet_n" extensions:"x-nullable" example:"2"`
}

// Scrap is where, why, who and when a part was scrapped; empty on a live part.
type Scrap struct {
	// ScrapSeq is the route step it was spoilt at.
	ScrapSeq    *int       `json:"scrap_seq" extensions:"x-nullable"`
	ScrapReason string     `json:"scrap_reason"` // one of the factory's reasons (FLOOR_SCRAP_REASONS)
	ScrapNote   string     `json:"scrap_note"`   // free text
	ScrappedAt  *time.Time `json:"scrapped_at" extensions:"x-nullable" format:"date-time"`
	// ScrappedByID and ScrappedBy are who reported it.
	ScrappedByID *int64  `json:"scrapped_by_id" extensions:"x-nullable"`
	ScrappedBy   *string `json:"scrapped_by" extensions:"x-nullable"`
}

// Part states.
const (
	PartLive     = "live"
	PartScrapped = "scrapped"
)

// TableName is the plan module's part table.
func (Part) TableName() string { return "plan_parts" }

// Operation is one operation to do: a part-scope route operation on a
// physical part, or an item-scope one on a unit, with its planned slot (from
// minute StartMin of StartDay's capacity to minute EndMin of EndDay's). The
// slot is kept in its production order's schedule (schedules.go), not in
// plan_operations: FillSlots sets it on operations read from there.
type Operation struct {
	ID           int64         `json:"id" gorm:"primaryKey"`
	ProdOrderID  int64         `json:"prod_order_id"`
	ItemID       int64         `json:"item_id"`
	Unit         int           `json:"unit"`
	PartID       *int64        `json:"part_id" extensions:"x-nullable"` // part-scope operations
	Seq          int           `json:"seq"`                             // the route operation
	Name         string        `json:"name"`
	WorkCenterID int64         `json:"work_center_id"`
	Scope        string        `json:"scope" enums:"part,item"`
	Minutes      float64       `json:"minutes"`
	Status       string        `json:"status" enums:"pending,in_progress,done"`
	StartDay     database.Date `json:"planned_start_day" gorm:"-" swaggertype:"string" format:"date"`
	StartMin     float64       `json:"planned_start_min" gorm:"-"`
	EndDay       database.Date `json:"planned_end_day" gorm:"-" swaggertype:"string" format:"date"`
	EndMin       float64       `json:"planned_end_min" gorm:"-"`
	StartedAt    *time.Time    `json:"started_at" extensions:"x-nullable" format:"date-time"`
	CompletedAt  *time.Time    `json:"completed_at" extensions:"x-nullable" format:"date-time"`
	// CompletedByID and CompletedBy are who completed it (null: the system, or not known).
	CompletedByID *int64  `json:"completed_by_id" extensions:"x-nullable"`
	CompletedBy   *string `json:"completed_by" extensions:"x-nullable"`
}

// TableName is the plan module's operation table.
func (Operation) TableName() string { return "plan_operations" }

// Precedes tells whether op must be done before next may be completed: an
// earlier step of the same unit, on the same part or with either of them
// item-scope. The schedule plans with the same order (explode), and the
// shop floor keeps it.
func (op Operation) Precedes(next Operation) bool {
	if op.ItemID != next.ItemID || op.Unit != next.Unit || op.Seq >= next.Seq {
		return false
	}
	return op.PartID == nil || next.PartID == nil || *op.PartID == *next.PartID
}

// ProdOrderDetail is a production order with its parts and operations.
type ProdOrderDetail struct {
	ProdOrder
	Parts      []Part      `json:"parts"`
	Operations []Operation `json:"operations"`
}

func withItems(db *gorm.DB) *gorm.DB {
	return db.Preload("Items", func(db *gorm.DB) *gorm.DB { return db.Order("item_id") })
}

// ProdOrderFilter selects and orders production orders; zero fields do not filter.
type ProdOrderFilter struct {
	Status         string
	NeedsAttention *bool
	SKU            string        // orders with an item of the SKU
	RouteID        int64         // orders along the route
	DueBefore      database.Date // orders with an item due before that day (not on it)
	Sort           string        // one of ProdOrderSorts' names; "" the first
	Late           *bool         // true: only late orders (see ProdOrder.Late); false: only the others
}

// ProdOrders returns a page of production orders selected by f, in f's
// order (newest first by default), with their items and progress. It
// returns EINVALID for an unknown status, sort or route, or a cursor of
// another sort.
func (s *Service) ProdOrders(ctx context.Context, pr page.Request, f ProdOrderFilter) ([]ProdOrder, string, error) {
	sort, err := page.SortOf(f.Sort, ProdOrderSorts)
	if err != nil {
		return nil, "", err
	}
	q := withItems(s.db.WithContext(ctx)).Order(sort.OrderBy()).Limit(pr.Limit + 1)
	after, args, err := sort.After(pr)
	if err != nil {
		return nil, "", err
	}
	if after != "" {
		q = q.Where(after, args...)
	}
	if q, err = s.filterProdOrders(ctx, q, f); err != nil {
		return nil, "", err
	}
	if f.NeedsAttention != nil {
		q = q.Where("needs_attention = ?", *f.NeedsAttention)
	}
	if f.Late != nil {
		if *f.Late {
			q = q.Where(lateOrderSQL, lateStatuses)
		} else {
			q = q.Where("NOT ("+lateOrderSQL+")", lateStatuses)
		}
	}
	if status := f.Status; status != "" {
		switch status {
		case StatusLaunched, StatusInProgress, StatusDone, StatusCancelled, StatusClosed:
		default:
			return nil, "", apperr.Invalid("invalid query", apperr.Field("status", "must be launched, in_progress, done, cancelled or closed"))
		}
		q = q.Where("status = ?", status)
	}
	var os []ProdOrder
	if err := q.Find(&os).Error; err != nil {
		return nil, "", err
	}
	fillDue(os)
	os, next := page.NextSorted(os, pr.Limit, sort, func(o ProdOrder) int64 { return o.ID }, prodOrderSortKey(sort))
	if err := fillProgress(ctx, s.db, os); err != nil {
		return nil, "", err
	}
	for i := range os {
		markLate(&os[i])
	}
	if err := s.fillShort(ctx, s.db, os); err != nil {
		return nil, "", err
	}
	return os, next, nil
}

// fillShort sets what each order is short of, as stock tells it now.
func (s *Service) fillShort(ctx context.Context, db *gorm.DB, os []ProdOrder) error {
	return FillShort(ctx, db, s.stock, os)
}

// FillShort sets what each order is short of, as st tells it now (Short).
func FillShort(ctx context.Context, db *gorm.DB, st *stock.Service, os []ProdOrder) error {
	ids := make([]int64, len(os))
	for i, o := range os {
		ids[i] = o.ID
	}
	short, err := st.ShortOf(ctx, db, ids)
	if err != nil {
		return err
	}
	for i := range os {
		os[i].Short = []string{}
		for _, sh := range short[os[i].ID] {
			os[i].Short = append(os[i].Short, sh.Code)
		}
	}
	return nil
}

// ProdOrder returns the production order with its items, parts, operations
// and progress, or ENOTFOUND.
func (s *Service) ProdOrder(ctx context.Context, id int64) (ProdOrderDetail, error) {
	return s.prodOrderDetail(ctx, s.db, id)
}

func (s *Service) prodOrderDetail(ctx context.Context, db *gorm.DB, id int64) (ProdOrderDetail, error) {
	var d ProdOrderDetail
	o, err := prodOrder(ctx, db, id, false)
	if err != nil {
		return d, err
	}
	os := []ProdOrder{o}
	if err := s.fillShort(ctx, db, os); err != nil {
		return d, err
	}
	d.ProdOrder = os[0]
	if err := db.WithContext(ctx).Where("prod_order_id = ?", id).Order("id").Find(&d.Parts).Error; err != nil {
		return d, err
	}
	if err := db.WithContext(ctx).Where("prod_order_id = ?", id).Order("id").Find(&d.Operations).Error; err != nil {
		return d, err
	}
	if err := FillSlots(ctx, db, d.Operations); err != nil {
		return d, err
	}
	if d.Parts == nil {
		d.Parts = []Part{}
	}
	d.Progress = progressOf(d.Operations)
	return d, nil
}

// prodOrder reads one production order with its items and progress; with
// lock, it locks the row (on PostgreSQL) for a change of state.
func prodOrder(ctx context.Context, db *gorm.DB, id int64, lock bool) (ProdOrder, error) {
	var o ProdOrder
	q := withItems(db.WithContext(ctx))
	if lock {
		q = database.ForUpdate(q)
	}
	err := q.First(&o, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return o, apperr.NotFound("production order %d does not exist", id)
	}
	if err != nil {
		return o, err
	}
	os := []ProdOrder{o}
	fillDue(os)
	if err := fillProgress(ctx, db, os); err != nil {
		return o, err
	}
	markLate(&os[0])
	os[0].Short = []string{}
	return os[0], nil
}

// lateStatuses are the states in which a production order can be late: the
// ones with work still to do.
var lateStatuses = []string{StatusLaunched, StatusInProgress}

// lateOrderSQL selects the production orders markLate finds late.
const lateOrderSQL = `plan_prod_orders.status IN ? AND EXISTS (SELECT 1 FROM plan_prod_order_items li
	WHERE li.prod_order_id = plan_prod_orders.id AND NOT li.released AND li.due_date IS NOT NULL AND li.due_date < plan_prod_orders.eta)`

// markLate sets Late on the order and its items: an item is late when its
// order still has work to do (launched or in progress) and the order's ETA
// is after the item's due date; the order is late when one of its items is.
// A re-plan (POST /api/v1/plan/replan) brings ETAs, and so Late, up to date.
func markLate(o *ProdOrder) {
	live := o.Status == StatusLaunched || o.Status == StatusInProgress
	o.Late = false
	for i := range o.Items {
		it := &o.Items[i]
		it.Late = live && !it.Released && !it.DueDate.IsZero() && it.DueDate.Before(o.ETA.Time)
		o.Late = o.Late || it.Late
	}
}

// tally is the number and minutes of a production order's operations in one state.
type tally struct {
	ProdOrderID int64
	Status      string
	N           int
	Minutes     float64
}

func progressOf(ops []Operation) Progress {
	ts := make([]tally, len(ops))
	for i, op := range ops {
		ts[i] = tally{Status: op.Status, N: 1, Minutes: op.Minutes}
	}
	return progressFrom(ts)
}

func progressFrom(ts []tally) Progress {
	var p Progress
	var total, done float64
	for _, t := range ts {
		p.OpsTotal += t.N
		total += t.Minutes
		switch t.Status {
		case OpDone:
			p.OpsDone += t.N
			done += t.Minutes
		case OpInProgress:
			p.OpsInProgress += t.N
		}
	}
	if total > 0 {
		p.Percent = math.Round(done/total*1000) / 10
	}
	return p
}

func fillProgress(ctx context.Context, db *gorm.DB, os []ProdOrder) error {
	if len(os) == 0 {
		return nil
	}
	ids := make([]int64, len(os))
	for i, o := range os {
		ids[i] = o.ID
	}
	var rows []tally
	err := database.Scan(db.WithContext(ctx).Model(&Operation{}).Select("prod_order_id, status, count(*) AS n, sum(minutes) AS minutes").
		Where("prod_order_id IN ?", ids).Group("prod_order_id, status"), &rows)
	if err != nil {
		return err
	}
	by := map[int64][]tally{}
	for _, r := range rows {
		by[r.ProdOrderID] = append(by[r.ProdOrderID], r)
	}
	for i := range os {
		os[i].Progress = progressFrom(by[os[i].ID])
	}
	return nil
}

// ProdOrdersOfOrder returns the ids of the production orders that were ever
// launched for items of the sales order, the ones it later left included, in
// id order.
func (s *Service) ProdOrdersOfOrder(ctx context.Context, orderID int64) ([]int64, error) {
	return s.prodOrdersOfOrder(ctx, orderID)
}

// ProductionOfOrder returns the production orders ever launched for items
// of the sales order, and those items, each in id order.
func (s *Service) ProductionOfOrder(ctx context.Context, orderID int64) (prodOrders, items []int64, err error) {
	if err := database.Scan(s.db.WithContext(ctx).Raw(`SELECT DISTINCT item_id FROM plan_prod_order_items WHERE order_id = ? ORDER BY item_id`, orderID),
		&items); err != nil {
		return nil, nil, err
	}
	prodOrders, err = s.prodOrdersOfOrder(ctx, orderID)
	return prodOrders, items, err
}

func (s *Service) prodOrdersOfOrder(ctx context.Context, orderID int64) ([]int64, error) {
	var ids []int64
	err := database.Scan(s.db.WithContext(ctx).Raw(`SELECT DISTINCT prod_order_id FROM plan_prod_order_items WHERE order_id = ? ORDER BY prod_order_id`, orderID),
		&ids)
	return ids, err
}
