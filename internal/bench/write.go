package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/sales"
)

// WriteResult is the cost of the event in an order's write.
type WriteResult struct {
	Orders        int       `json:"orders_per_round"`
	Rounds        int       `json:"rounds"`
	WithMs        float64   `json:"with_event_ms_per_order"`    // median over rounds
	WithoutMs     float64   `json:"without_event_ms_per_order"` // median over rounds
	RoundRatios   []float64 `json:"round_ratios"`
	WithPerS      float64   `json:"with_event_orders_per_s"`
	WithoutPerS   float64   `json:"without_event_orders_per_s"`
	LinesPerOrder int       `json:"lines_per_order"`
}

// writeOverhead writes orders one after the other, each in its own
// transaction, through the sales module's real path (with its order.received
// event) and through the same statements without the event, alternating the
// two order by order. The ratio is the median of the rounds' ratios.
func (r *runner) writeOverhead(ctx context.Context, res *Result) error {
	db := r.db.WithContext(ctx)
	cat := catalog.NewService(r.db)
	if _, err := cat.SeedDemo(ctx); err != nil {
		return err
	}
	var skus []string
	if err := database.Scan(db.Raw("SELECT sku FROM catalog_products ORDER BY id LIMIT 2"), &skus); err != nil {
		return err
	}
	if len(skus) == 0 {
		return errors.New("the demo catalog has no products")
	}
	in := func(i int) sales.NewOrder {
		o := sales.NewOrder{Customer: sales.Customer{Name: "Bench customer", Phone: "+7 900 000-00-00"}}
		for j, sku := range skus {
			o.Items = append(o.Items, sales.NewItem{SKU: sku, Qty: 1 + (i+j)%3})
		}
		return o
	}
	svc := sales.NewService(r.db)
	// Each order is written as a request writes it, with a correlation id
	// of its own (a request's X-Request-Id), so that its event's index
	// entries are counted.
	with := func(i int) error {
		_, err := svc.CreateOrder(events.WithCorrelation(ctx, rand.Text()), in(i))
		return err
	}
	without := func(i int) error { return createOrderWithoutEvent(ctx, r.db, in(i)) }

	n := r.opt.Writes
	// Warm up both paths (connections, prepared statements, caches).
	r.p.set("write overhead: warm-up", 0, int64(2*min(n, 200)))
	for i := range min(n, 200) {
		if err := with(i); err != nil {
			return err
		}
		if err := without(i); err != nil {
			return err
		}
		r.p.add(2)
	}
	// The two variants alternate order by order (ABBA), so that the load of
	// a shared machine, which drifts by the second, weighs on both alike.
	timed := func(fn func(int) error, i int, sum *time.Duration) error {
		t0 := time.Now()
		err := fn(i)
		*sum += time.Since(t0)
		return err
	}
	var ratios, withMs, withoutMs []float64
	for round := range r.opt.Rounds {
		r.p.set(fmt.Sprintf("write overhead: round %d/%d", round+1, r.opt.Rounds), 0, int64(2*n))
		var dWith, dWithout time.Duration
		for i := range n {
			var err error
			if i%2 == 0 {
				if err = timed(with, i, &dWith); err == nil {
					err = timed(without, i, &dWithout)
				}
			} else {
				if err = timed(without, i, &dWithout); err == nil {
					err = timed(with, i, &dWith)
				}
			}
			if err != nil {
				return err
			}
			r.p.add(2)
		}
		ratios = append(ratios, round3(dWith.Seconds()/dWithout.Seconds()))
		withMs = append(withMs, dWith.Seconds()*1000/float64(n))
		withoutMs = append(withoutMs, dWithout.Seconds()*1000/float64(n))
	}
	w := WriteResult{Orders: n, Rounds: r.opt.Rounds, LinesPerOrder: len(skus)}
	w.RoundRatios = append([]float64(nil), ratios...)
	w.WithMs, w.WithoutMs = round(median(withMs), 4), round(median(withoutMs), 4)
	w.WithPerS, w.WithoutPerS = round(1000/w.WithMs, 1), round(1000/w.WithoutMs, 1)
	res.Write = w
	res.WriteOverheadRatio = round3(median(ratios))
	return nil
}

// createOrderWithoutEvent runs the statements of sales' order creation (for
// a manual order: validate, insert the order row, look the products up,
// insert the items, read the order back with its items and shipments) in one
// transaction, without
// events.Add. It exists only to measure what the event costs; it must follow
// the sales module's path statement for statement
// (TestCreateOrderWithoutEvent_FollowsSales).
func createOrderWithoutEvent(ctx context.Context, db *gorm.DB, in sales.NewOrder) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		in.Source = sales.SourceManual
		if err := in.Validate(); err != nil {
			return err
		}
		o := sales.Order{Status: sales.StatusReceived, Source: in.Source, Customer: in.Customer, DueDate: in.DueDate, Note: in.Note,
			DeliveryAddress: in.DeliveryAddress, DeliveryDate: in.DeliveryDate, Currency: in.Currency, Total: in.Total}
		// The columns sales writes for a manual order, all of them.
		if err := database.Scan(tx.Raw(`INSERT INTO sales_orders (status, source, sync_id, crm_order_id, customer_name, customer_phone, customer_email, customer_search, due_date,
note, delivery_address, delivery_date, currency, total, source_version, source_updated_at, source_hash, source_updated_ns)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			o.Status, o.Source, o.SyncID, o.CRMOrderID, o.Customer.Name, o.Customer.Phone, o.Customer.Email, o.Customer.SearchKey(), o.DueDate,
			o.Note, o.DeliveryAddress, o.DeliveryDate, o.Currency, string(o.Total), o.SourceVersion, nil, o.SourceHash, nil), &o.ID); err != nil {
			return err
		}
		skus := make([]string, 0, len(in.Items))
		for _, it := range in.Items {
			skus = append(skus, it.SKU)
		}
		products, err := catalog.ProductsBySKU(ctx, tx, skus)
		if err != nil {
			return err
		}
		o.Items = make([]sales.Item, len(in.Items))
		for i, it := range in.Items {
			o.Items[i] = sales.Item{OrderID: o.ID, ProductID: products[it.SKU].ID, SKU: it.SKU, Qty: it.Qty, Note: it.Note, Status: sales.ItemNew}
		}
		if err := tx.Omit("ID").Create(&o.Items).Error; err != nil {
			return err
		}
		var back sales.Order
		return tx.Preload("Items", func(db *gorm.DB) *gorm.DB { return db.Order("id") }).
			Preload("Shipments", func(db *gorm.DB) *gorm.DB { return db.Order("id") }).
			Preload("Shipments.Items", func(db *gorm.DB) *gorm.DB { return db.Order("item_id") }).First(&back, o.ID).Error
	})
}

func round3(x float64) float64 { return round(x, 3) }
