// Package plan owns production planning: its own backlog of sales-order items
// waiting for production (fed by the sales module's events) and the
// production orders launched from it.
package plan

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/page"
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
	// From the catalog, as it is now: the product's name and its default
	// route (the one a launch without route_id follows).
	ProductName string   `json:"product_name" gorm:"-"`
	Route       RouteRef `json:"route" gorm:"-"`
}

// TableName is the plan module's backlog table.
func (BacklogItem) TableName() string { return "plan_backlog" }

// Service manages planning.
type Service struct {
	db    *gorm.DB
	today func() time.Time // nil: the database clock's date
}

// NewService returns the plan service over db.
func NewService(db *gorm.DB) *Service { return &Service{db: db} }

// SetToday makes the service plan from the day f returns instead of the
// database clock's date; for tests. Call it before the service is used.
func (s *Service) SetToday(f func() time.Time) { s.today = f }

// Today returns the day planning starts from: the database clock's date (UTC).
func (s *Service) Today(ctx context.Context) (time.Time, error) {
	return s.todayIn(ctx, s.db)
}

func (s *Service) todayIn(ctx context.Context, db *gorm.DB) (time.Time, error) {
	if s.today != nil {
		return midnight(s.today()), nil
	}
	q := "SELECT date('now')"
	if database.DialectOf(db) == database.Postgres {
		q = "SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
	}
	var d string
	if err := db.WithContext(ctx).Raw(q).Scan(&d).Error; err != nil {
		return time.Time{}, err
	}
	return time.Parse(database.DateLayout, d)
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
			Customer: p.Customer, Note: it.Note}
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
	q := s.db.WithContext(ctx).Order(sort.OrderBy()).Limit(pr.Limit + 1)
	if q, err = s.filterBacklog(ctx, q, f); err != nil {
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
	if err := s.describeBacklog(ctx, rows); err != nil {
		return nil, "", err
	}
	return rows, next, nil
}
