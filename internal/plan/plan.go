// Package plan owns production planning: its own backlog of sales-order items
// waiting for production (fed by the sales module's events) and the
// production orders launched from it.
package plan

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/page"
	"github.com/tsekh/tsekh/internal/stock"
)

// BacklogItem is a sales-order item waiting for production.
type BacklogItem struct {
	ItemID     int64         `json:"item_id" gorm:"primaryKey;autoIncrement:false"`
	OrderID    int64         `json:"order_id"`
	SKU        string        `json:"sku" gorm:"column:sku"`
	Qty        int           `json:"qty"`
	DueDate    database.Date `json:"due_date" swaggertype:"string" format:"date" extensions:"x-nullable"`
	ReceivedAt time.Time     `json:"received_at" format:"date-time"`
	EventID    int64         `json:"event_id"`

	// What order.received carried for people to read: the customer's name
	// and the item's note.
	Customer string `json:"customer"`
	Note     string `json:"note"`
	// Options are the item's choices of board per decor slot, by code.
	Options catalog.Options `json:"options" swaggertype:"object,string"`
	// Boards are every decor slot of its product with the board its parts
	// will be cut from: the item's choice, or the slot's default.
	Boards catalog.Options `json:"boards" gorm:"-" swaggertype:"object,string" example:"корпус:LDSP16-SONOMA,фасад:LDSP16-WHITE"`
	// From the catalog, as it is now: the product's name and its default
	// route (the one a launch without route_id follows).
	ProductName string   `json:"product_name" gorm:"-"`
	Route       RouteRef `json:"route" gorm:"-"`
	// Late: its due date has passed (it is before today in the factory's
	// time zone), so no launch can make it in time.
	Late bool `json:"late" gorm:"-"`
	// AvailableToPromise is the day it could be ready if launched now,
	// alone, after the live work, its steps that use materials up waiting
	// for them after the live orders' needs, and what it would wait for;
	// null when no launch could plan it.
	AvailableToPromise *Promise `json:"available_to_promise" gorm:"-" extensions:"x-nullable"`
}

// TableName is the plan module's backlog table.
func (BacklogItem) TableName() string { return "plan_backlog" }

// Service manages planning.
type Service struct {
	db   *gorm.DB
	zone *time.Location   // the factory's time zone; nil: UTC
	now  func() time.Time // nil: the database clock
	// planned, when set, is called by a re-plan once it has computed the
	// new plan and before it stores it; for tests of what runs meanwhile.
	planned func()
	// settled, when set, hears how many of the orders behind a change of
	// priority were placed again, of how many (0 of 0: none was read, the
	// load settled before them; replanSettling), for the tests; and
	// tailBatch, when set, is how many of them are placed between two
	// checks of the load (tailBatch, the constant, when 0).
	settled   func(placed, behind int)
	tailBatch int
	// stock books what launches need and tells what is short.
	stock *stock.Service
}

// NewService returns the plan service over db, booking what its launches
// need in st, planning in UTC until SetTimeZone says otherwise.
func NewService(db *gorm.DB, st *stock.Service) *Service { return &Service{db: db, stock: st} }

// SetTimeZone makes the service plan in the factory's time zone
// (FACTORY_TIMEZONE): its days and the work centres' shift starts are in it.
// Call it before the service is used.
func (s *Service) SetTimeZone(loc *time.Location) { s.zone = loc }

// SetNow makes the service plan from the instant f returns instead of the
// database clock; for tests. Call it before the service is used.
func (s *Service) SetNow(f func() time.Time) { s.now = f }

// SetToday is SetNow: a day given as its midnight in UTC is read in the
// factory's time zone like any other instant.
func (s *Service) SetToday(f func() time.Time) { s.SetNow(f) }

// Today returns the day planning starts from: today in the factory's time
// zone, as midnight UTC of that date.
func (s *Service) Today(ctx context.Context) (time.Time, error) {
	c, err := s.clockIn(ctx, s.db)
	return c.Today, err
}

// clock is the moment planning starts from.
type clock struct {
	Now    time.Time // in the factory's time zone
	Today  time.Time // its date, as midnight UTC (the schedule's days)
	Minute float64   // minutes since the factory's midnight
}

// clockIn reads the moment planning starts from: the test clock, or the
// database's (so that every replica plans from the same clock).
func (s *Service) clockIn(ctx context.Context, db *gorm.DB) (clock, error) {
	var now time.Time
	if s.now != nil {
		now = s.now()
	} else {
		var v string
		if err := database.Scan(db.WithContext(ctx).Raw("SELECT "+database.NowText(db)), &v); err != nil {
			return clock{}, err
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return clock{}, fmt.Errorf("plan: the database clock: %w", err)
		}
		now = t
	}
	zone := s.zone
	if zone == nil {
		zone = time.UTC
	}
	now = now.In(zone)
	y, m, d := now.Date()
	return clock{Now: now, Today: time.Date(y, m, d, 0, 0, 0, 0, time.UTC),
		Minute: float64(now.Hour()*60+now.Minute()) + float64(now.Second())/60}, nil
}

// addToBacklog runs in the dispatcher's transaction: its rows and the record
// of the delivery commit together.
func (s *Service) addToBacklog(ctx context.Context, tx *gorm.DB, ev events.Event) error {
	p, err := contracts.OrderReceived.Decode(ev)
	if err != nil {
		return err
	}
	if len(p.Items) == 0 {
		return nil
	}
	due, _ := database.ParseDate(p.DueDate) // absent or invalid: no due date
	rows := make([]BacklogItem, len(p.Items))
	for i, it := range p.Items {
		rows[i] = BacklogItem{ItemID: it.ItemID, OrderID: p.OrderID, SKU: it.SKU, Qty: it.Qty, DueDate: due, ReceivedAt: ev.CreatedAt, EventID: ev.ID,
			Customer: p.Customer, Note: it.Note, Options: it.Options}
	}
	// An item is in the backlog once, whatever happens.
	return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error
}

// Backlog returns a page of the items waiting for production selected by
// f, in f's order (oldest first by default), with their product's name and
// route from the catalog. It returns EINVALID for an unknown sort or route,
// or a cursor of another sort.
func (s *Service) Backlog(ctx context.Context, pr page.Request, f BacklogFilter) ([]BacklogItem, string, error) {
	sort, err := page.SortOf(f.Sort, BacklogSorts)
	if err != nil {
		return nil, "", err
	}
	today, err := s.Today(ctx)
	if err != nil {
		return nil, "", err
	}
	q := s.db.WithContext(ctx).Order(sort.OrderBy()).Limit(pr.Limit + 1)
	if q, err = s.filterBacklog(ctx, q, f, today); err != nil {
		return nil, "", err
	}
	after, args, err := sort.After(pr)
	if err != nil {
		return nil, "", err
	}
	if after != "" {
		q = q.Where(after, args...)
	}
	var rows []BacklogItem
	if err := q.Find(&rows).Error; err != nil {
		return nil, "", err
	}
	rows, next := page.NextSorted(rows, pr.Limit, sort, func(b BacklogItem) int64 { return b.ItemID }, func(b BacklogItem) *string { return dateKey(b.DueDate) })
	for i := range rows {
		rows[i].Late = !rows[i].DueDate.IsZero() && rows[i].DueDate.Before(today)
	}
	if err := s.describeBacklog(ctx, rows); err != nil {
		return nil, "", err
	}
	promises, err := s.Promises(ctx, rows)
	if err != nil {
		return nil, "", err
	}
	for i := range rows {
		rows[i].AvailableToPromise = promises[i]
	}
	return rows, next, nil
}
