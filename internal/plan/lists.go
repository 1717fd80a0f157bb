package plan

import (
	"context"
	"errors"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// BacklogFilter selects and orders the backlog; zero fields do not filter.
type BacklogFilter struct {
	SKU       string
	RouteID   int64         // items whose product's default route it is
	DueBefore database.Date // items due before that day (not on it); items without a due date never match
	Sort      string        // one of BacklogSorts' names; "" the first
	Late      *bool         // true: only rows whose due date has passed (see BacklogItem.Late); false: only the others
}

// BacklogSorts are the orders of the backlog, the default first: received
// (the order items were received in), due_date (soonest first; items without
// a due date last); "-" reverses.
var BacklogSorts = []page.Sort{
	{Name: "received", ID: "item_id", Plain: true},
	{Name: "-received", ID: "item_id", Desc: true},
	{Name: "due_date", Key: "due_date", ID: "item_id", Nullable: true, Parse: parseDateKey},
	{Name: "-due_date", Key: "due_date", ID: "item_id", Desc: true, Nullable: true, Parse: parseDateKey},
}

// ProdOrderSorts are the orders of the production-order list, the default
// first: created (newest first by default), eta, due_date (the earliest due
// date of its items; orders without one last); "-" reverses.
var ProdOrderSorts = []page.Sort{
	{Name: "-created", ID: "plan_prod_orders.id", Desc: true, Plain: true},
	{Name: "created", ID: "plan_prod_orders.id"},
	{Name: "eta", Key: "plan_prod_orders.eta", ID: "plan_prod_orders.id", Parse: parseDateKey},
	{Name: "-eta", Key: "plan_prod_orders.eta", ID: "plan_prod_orders.id", Desc: true, Parse: parseDateKey},
	{Name: "due_date", Key: prodOrderDue, ID: "plan_prod_orders.id", Nullable: true, Parse: parseDateKey},
	{Name: "-due_date", Key: prodOrderDue, ID: "plan_prod_orders.id", Desc: true, Nullable: true, Parse: parseDateKey},
}

// prodOrderDue is the SQL of a production order's due date: its items'
// earliest (ProdOrder.DueDate).
const prodOrderDue = "(SELECT min(i.due_date) FROM plan_prod_order_items i WHERE i.prod_order_id = plan_prod_orders.id)"

// prodOrderSortKey returns the function that gives a production order's key
// in the sort, as its SQL computes it.
func prodOrderSortKey(sort page.Sort) func(ProdOrder) *string {
	switch sort.Key {
	case prodOrderDue:
		return func(o ProdOrder) *string { return dateKey(o.DueDate) }
	case "plan_prod_orders.eta":
		return func(o ProdOrder) *string { return dateKey(o.ETA) }
	}
	return func(ProdOrder) *string { return nil }
}

// parseDateKey reads a date key from a cursor: a day of the range every date
// tsekh takes is in (input.Date), so that a cursor made by hand with another
// (0000-01-01) is refused as a cursor, never sent to the database.
func parseDateKey(k string) (any, error) {
	d, fields := input.Date("cursor", k)
	if len(fields) > 0 || d.IsZero() {
		return nil, errors.New("plan: a cursor's key is not a date in range")
	}
	return d, nil
}

// dateKey is a date as a sort key: nil when there is none.
func dateKey(d database.Date) *string {
	if d.IsZero() {
		return nil
	}
	k := d.String()
	return &k
}

// knownRoute returns EINVALID naming the query parameter when no route has the id.
func knownRoute(ctx context.Context, db *gorm.DB, id int64) error {
	names, err := catalog.RouteNames(ctx, db, []int64{id})
	if err != nil {
		return err
	}
	if _, ok := names[id]; !ok {
		return apperr.Invalid("invalid query", apperr.Field("route_id", "no route has the id %d", id))
	}
	return nil
}

func (s *Service) filterBacklog(ctx context.Context, q *gorm.DB, f BacklogFilter, today time.Time) (*gorm.DB, error) {
	if f.Late != nil {
		if *f.Late {
			q = q.Where("due_date IS NOT NULL AND due_date < ?", database.DateOf(today))
		} else {
			q = q.Where("(due_date IS NULL OR due_date >= ?)", database.DateOf(today))
		}
	}
	if f.SKU != "" {
		q = q.Where("sku = ?", f.SKU)
	}
	if f.RouteID != 0 {
		if err := knownRoute(ctx, s.db, f.RouteID); err != nil {
			return nil, err
		}
		skus, err := catalog.SKUsOnRoute(ctx, s.db, f.RouteID)
		if err != nil {
			return nil, err
		}
		if len(skus) == 0 {
			q = q.Where("1 = 0")
		} else {
			q = q.Where("sku IN ?", skus)
		}
	}
	if !f.DueBefore.IsZero() {
		q = q.Where("due_date < ?", f.DueBefore)
	}
	return q, nil
}

// describeBacklog fills in the rows' product names, routes and boards from the catalog.
func (s *Service) describeBacklog(ctx context.Context, rows []BacklogItem) error {
	if len(rows) == 0 {
		return nil
	}
	var skus []string
	for _, r := range rows {
		if !slices.Contains(skus, r.SKU) {
			skus = append(skus, r.SKU)
		}
	}
	products, err := catalog.ProductSpecs(ctx, s.db, skus)
	if err != nil {
		return err
	}
	var routeIDs []int64
	for _, p := range products {
		routeIDs = append(routeIDs, p.RouteID)
	}
	routes, err := catalog.RouteNames(ctx, s.db, routeIDs)
	if err != nil {
		return err
	}
	for i := range rows {
		p := products[rows[i].SKU]
		rows[i].ProductName = p.Name
		rows[i].Route = RouteRef{ID: p.RouteID, Name: routes[p.RouteID]}
		rows[i].Boards = p.Boards(rows[i].Options)
	}
	return nil
}

func (s *Service) filterProdOrders(ctx context.Context, q *gorm.DB, f ProdOrderFilter) (*gorm.DB, error) {
	if f.SKU != "" {
		q = q.Where("EXISTS (SELECT 1 FROM plan_prod_order_items i WHERE i.prod_order_id = plan_prod_orders.id AND i.sku = ?)", f.SKU)
	}
	if f.RouteID != 0 {
		if err := knownRoute(ctx, s.db, f.RouteID); err != nil {
			return nil, err
		}
		q = q.Where("plan_prod_orders.route_id = ?", f.RouteID)
	}
	if !f.DueBefore.IsZero() {
		q = q.Where(prodOrderDue+" < ?", f.DueBefore)
	}
	return q, nil
}

// fillDue sets the production orders' due dates from their items.
func fillDue(os []ProdOrder) {
	for i := range os {
		os[i].DueDate = earliestDue(os[i].Items)
	}
}

// earliestDue is the earliest due date of the items; zero when none has one.
func earliestDue(items []ProdItem) database.Date {
	var due database.Date
	for _, it := range items {
		if !it.DueDate.IsZero() && (due.IsZero() || it.DueDate.Before(due.Time)) {
			due = it.DueDate
		}
	}
	return due
}
