package sales

import (
	"context"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/platform/page"
	"github.com/tsekh/tsekh/internal/platform/textsearch"
)

// Statuses are the order states, in the order of the life cycle.
var Statuses = []string{StatusReceived, StatusInProduction, StatusReady, StatusPartiallyShipped, StatusShipped, StatusCancelled}

// Sources are where orders come from.
var Sources = []string{SourceShop, SourceCRM, SourceManual}

// SearchKey is the customer as the orders list's customer filter searches
// it: the name and the phone folded by textsearch.Key (lower case, Cyrillic
// included, ё as е), and the phone's digits alone.
func (c Customer) SearchKey() string { return textsearch.Key(c.Name, c.Phone) }

// customerColumns are the sales_orders columns that hold c. An UPDATE that
// changes an order's customer writes all of them, so that customer_search
// stays SearchKey of what is stored (insertOrderRow writes the same for a new
// order, and migration 00011 filled it for the orders before it).
func customerColumns(c Customer) map[string]any {
	return map[string]any{
		"customer_name":   c.Name,
		"customer_phone":  c.Phone,
		"customer_email":  c.Email,
		"customer_search": c.SearchKey(),
	}
}

// IsLate tells whether production's ETA is after the day the customer wants
// the order. An order without a due date or without an ETA (not planned yet)
// is not late, nor is a cancelled one. lateSQL is the same test in SQL.
func (o *Order) IsLate() bool {
	return o.Status != StatusCancelled && !o.ETA.IsZero() && !o.DueDate.IsZero() && o.ETA.After(o.DueDate.Time)
}

// lateSQL is IsLate over a sales_orders row; never NULL. Both columns are
// dates on PostgreSQL and "YYYY-MM-DD" text on SQLite, which compares alike.
const lateSQL = "(sales_orders.status <> 'cancelled' AND sales_orders.eta IS NOT NULL AND sales_orders.due_date IS NOT NULL AND sales_orders.eta > sales_orders.due_date)"

// AfterFind sets Late on every order read.
func (o *Order) AfterFind(*gorm.DB) error {
	o.Late = o.IsLate()
	return nil
}

// OrderFilter selects orders; zero fields do not filter. Validate names a
// field by its query parameter.
type OrderFilter struct {
	Status string
	Source string
	// Customer is found in the customer's name or phone, whatever its case;
	// a phone number in any of its usual spellings (see textsearch.Pattern).
	Customer string
	// SKU selects the orders with an item of that SKU.
	SKU string
	// DueAfter and DueBefore select the orders due on or after, on or
	// before, the day; orders without a due date are left out by either.
	DueAfter, DueBefore database.Date
	// Late, when set, selects the late orders (true) or the others (false).
	Late *bool
}

// Validate returns EINVALID naming each filter that cannot match anything: an
// unknown status or source, text that is too long or not one line, or a due
// date range that ends before it starts.
func (f *OrderFilter) Validate() error {
	var fields []apperr.FieldError
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		fields = append(fields, apperr.Field("status", "must be one of received, in_production, ready, partially_shipped, shipped, cancelled"))
	}
	if f.Source != "" && !slices.Contains(Sources, f.Source) {
		fields = append(fields, apperr.Field("source", "must be shop, crm or manual"))
	}
	fields = append(fields, input.Line("customer", f.Customer, input.MaxName)...)
	fields = append(fields, input.Line("sku", f.SKU, input.MaxSKU)...)
	if !f.DueAfter.IsZero() && !f.DueBefore.IsZero() && f.DueBefore.Before(f.DueAfter.Time) {
		fields = append(fields, apperr.Field("due_before", "must not be before due_after (%s)", f.DueAfter))
	}
	if len(fields) > 0 {
		return apperr.Invalid("invalid query", fields...)
	}
	return nil
}

// Orders returns a page of the orders the filter selects, newest first, with
// their items and shipments. It returns EINVALID when the filter is not valid
// (see OrderFilter.Validate).
func (s *Service) Orders(ctx context.Context, f OrderFilter, pr page.Request) ([]Order, string, error) {
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	os, err := ordersPage(ctx, s.db, f, pr)
	if err != nil {
		return nil, "", fmt.Errorf("sales: list orders: %w", err)
	}
	os, next := page.Next(os, pr.Limit, func(o Order) int64 { return o.ID })
	ptrs := make([]*Order, len(os))
	for i := range os {
		ptrs[i] = &os[i]
	}
	return os, next, s.WithBoards(ctx, ptrs...)
}

// WithBoards fills in every item's boards (Item.Boards) from the
// catalogue: each decor slot of its product with the board it will be cut
// from, chosen or default.
func (s *Service) WithBoards(ctx context.Context, os ...*Order) error {
	return withBoards(ctx, s.db, os...)
}

func withBoards(ctx context.Context, db *gorm.DB, os ...*Order) error {
	var skus []string
	for _, o := range os {
		for _, it := range o.Items {
			if !slices.Contains(skus, it.SKU) {
				skus = append(skus, it.SKU)
			}
		}
	}
	products, err := catalog.ProductSpecs(ctx, db, skus)
	if err != nil {
		return err
	}
	for _, o := range os {
		for i := range o.Items {
			o.Items[i].Boards = products[o.Items[i].SKU].Boards(o.Items[i].Options)
		}
	}
	return nil
}
