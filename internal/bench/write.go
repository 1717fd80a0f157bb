package bench

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
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
// two in rounds so that drift of the machine hits both alike. The ratio is
// the median of the rounds' ratios.
func (r *runner) writeOverhead(ctx context.Context, res *Result) error {
	db := r.db.WithContext(ctx)
	cat := catalog.NewService(r.db)
	if _, err := cat.SeedDemo(ctx); err != nil {
		return err
	}
	var skus []string
	if err := db.Raw("SELECT sku FROM catalog_products ORDER BY id LIMIT 2").Scan(&skus).Error; err != nil {
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
	with := func(i int) error { _, err := svc.CreateOrder(ctx, in(i)); return err }
	without := func(i int) error { return createOrderWithoutEvent(ctx, r.db, in(i)) }

	n := r.opt.Writes
	timeIt := func(label string, fn func(int) error, count int) (time.Duration, error) {
		r.p.set(label, 0, int64(count))
		start := time.Now()
		for i := range count {
			if err := fn(i); err != nil {
				return 0, err
			}
			r.p.add(1)
		}
		return time.Since(start), nil
	}
	// Warm up both paths (connections, plans, caches).
	if _, err := timeIt("write overhead: warm-up with event", with, min(n, 200)); err != nil {
		return err
	}
	if _, err := timeIt("write overhead: warm-up without event", without, min(n, 200)); err != nil {
		return err
	}
	var ratios, withMs, withoutMs []float64
	for round := range r.opt.Rounds {
		var dWith, dWithout time.Duration
		var err error
		// Alternate which variant goes first.
		if round%2 == 0 {
			if dWith, err = timeIt(roundLabel(round, r.opt.Rounds, "with event"), with, n); err == nil {
				dWithout, err = timeIt(roundLabel(round, r.opt.Rounds, "without event"), without, n)
			}
		} else {
			if dWithout, err = timeIt(roundLabel(round, r.opt.Rounds, "without event"), without, n); err == nil {
				dWith, err = timeIt(roundLabel(round, r.opt.Rounds, "with event"), with, n)
			}
		}
		if err != nil {
			return err
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

func roundLabel(round, rounds int, variant string) string {
	return "write overhead round " + itoa(round+1) + "/" + itoa(rounds) + " " + variant
}

// createOrderWithoutEvent runs the statements of sales' order creation (for
// a manual order: validate, insert the order row, look the products up,
// insert the items, read the order back) in one transaction, without
// events.Add. It exists only to measure what the event costs; it must follow
// the sales module's path statement for statement.
func createOrderWithoutEvent(ctx context.Context, db *gorm.DB, in sales.NewOrder) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		in.Source = sales.SourceManual
		if err := in.Validate(); err != nil {
			return err
		}
		o := sales.Order{Status: sales.StatusReceived, Source: in.Source, Customer: in.Customer, DueDate: in.DueDate}
		if err := tx.Raw(`INSERT INTO sales_orders (status, source, sync_id, crm_order_id, customer_name, customer_phone, customer_email, due_date)
VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			o.Status, o.Source, o.SyncID, o.CRMOrderID, o.Customer.Name, o.Customer.Phone, o.Customer.Email, o.DueDate).Scan(&o.ID).Error; err != nil {
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
		return tx.Preload("Items", func(db *gorm.DB) *gorm.DB { return db.Order("id") }).First(&back, o.ID).Error
	})
}

func round3(x float64) float64 { return round(x, 3) }
