package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/sales"
)

// WriteResult is the cost of the event in an order's write.
type WriteResult struct {
	Orders      int       `json:"orders_per_round"`
	Rounds      int       `json:"rounds"`
	BlockOrders int       `json:"orders_per_block"`
	WithMs      float64   `json:"with_event_ms_per_order"`    // median over rounds
	WithoutMs   float64   `json:"without_event_ms_per_order"` // median over rounds
	RoundRatios []float64 `json:"round_ratios"`
	// AddedUs is what the event adds to an order's write, in µs: the
	// median, over every pair of blocks of all rounds, of the pair's
	// difference (the mean with the event less the mean without).
	AddedUs       float64 `json:"added_us_per_order"`
	Pairs         int     `json:"block_pairs"`
	WithPerS      float64 `json:"with_event_orders_per_s"`
	WithoutPerS   float64 `json:"without_event_orders_per_s"`
	LinesPerOrder int     `json:"lines_per_order"`
	// DataRow is the peers' transaction (../shared/peers): one data row
	// alone against the data row with the event.
	DataRow AddedResult `json:"data_row"`
}

// AddedResult is what the event adds to a transaction that writes one data
// row, measured as the peers' harnesses measure a job or a message: blocks
// of transactions without and with the event in turn (ABBA), the median of
// the pairs' differences.
type AddedResult struct {
	Blocks      int     `json:"blocks"` // of each kind
	TxPerBlock  int     `json:"tx_per_block"`
	DataOnlyUs  float64 `json:"data_only_us_per_tx"`  // mean over the blocks
	WithEventUs float64 `json:"with_event_us_per_tx"` // mean over the blocks
	AddedUs     float64 `json:"added_us_per_tx"`
}

// writeOverhead writes orders one after the other, each in its own
// transaction, through the sales module's real path (with its
// order.received event) and through the same statements without the
// event, in blocks of BlockOrders of each kind in turn. A round's ratio is
// its time with the event over its time without; the ratio reported is the
// median of the rounds'. The added µs is the median of the pairs of
// blocks' differences, as the peers' harnesses report theirs; so is the
// data row's (dataRowAdded).
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
	write := func(withEvent bool, i int) error {
		if withEvent {
			_, err := svc.CreateOrder(events.WithCorrelation(ctx, rand.Text()), in(i))
			return err
		}
		return createOrderWithoutEvent(ctx, r.db, in(i))
	}

	n := r.opt.Writes
	block := min(r.opt.WriteBlock, n)
	// Warm up both paths (connections, prepared statements, caches).
	r.p.set("write overhead: warm-up", 0, int64(2*min(n, 200)))
	for i := range min(n, 200) {
		for _, with := range []bool{true, false} {
			if err := write(with, i); err != nil {
				return err
			}
		}
		r.p.add(2)
	}
	var ratios, withMs, withoutMs, diffs []float64
	for round := range r.opt.Rounds {
		r.p.set(fmt.Sprintf("write overhead: round %d/%d", round+1, r.opt.Rounds), 0, int64(2*n))
		without, with, err := alternate(n/block, block, func(withEvent bool, i int) error {
			r.p.add(1)
			return write(withEvent, i)
		})
		if err != nil {
			return err
		}
		ratios = append(ratios, round3(sum(with)/sum(without)))
		withMs = append(withMs, mean(with)/1000)
		withoutMs = append(withoutMs, mean(without)/1000)
		for p := range with {
			diffs = append(diffs, with[p]-without[p])
		}
	}
	w := WriteResult{Orders: n / block * block, Rounds: r.opt.Rounds, BlockOrders: block, LinesPerOrder: len(skus), Pairs: len(diffs)}
	w.RoundRatios = append([]float64(nil), ratios...)
	w.WithMs, w.WithoutMs = round(median(withMs), 4), round(median(withoutMs), 4)
	w.WithPerS, w.WithoutPerS = round(1000/w.WithMs, 1), round(1000/w.WithoutMs, 1)
	w.AddedUs = round(pairMedian(diffs), 1)
	var err error
	if w.DataRow, err = r.dataRowAdded(ctx); err != nil {
		return err
	}
	res.Write = w
	res.WriteOverheadRatio = round3(median(ratios))
	res.WriteAddedUs = w.AddedUs
	res.DataRowAddedUs = w.DataRow.AddedUs
	return nil
}

// dataRowAdded measures what the event adds to the peers' transaction: a
// row of a table of its own (bench_data, as the peers' harnesses write),
// and the row with its event, written as a request writes one (with a
// correlation id).
func (r *runner) dataRowAdded(ctx context.Context) (AddedResult, error) {
	db := r.db.WithContext(ctx)
	if err := db.Exec(`CREATE TABLE IF NOT EXISTS bench_data (id bigserial PRIMARY KEY, v text NOT NULL)`).Error; err != nil {
		return AddedResult{}, err
	}
	write := func(withEvent bool, _ int) error {
		ctx := ctx
		if withEvent {
			ctx = events.WithCorrelation(ctx, rand.Text())
		}
		return r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			var id int64
			if err := database.Scan(tx.Raw(`INSERT INTO bench_data (v) VALUES (?) RETURNING id`, "x"), &id); err != nil {
				return err
			}
			if !withEvent {
				return nil
			}
			return events.Add(ctx, tx, events.New{Type: "bench.data_written", AggregateType: "bench_data", AggregateID: id,
				Payload: map[string]any{"v": "x"}})
		})
	}
	blocks, per := r.opt.DataRowBlocks, r.opt.DataRowTx
	r.p.set("write overhead: a data row", 0, int64(2*(min(per, 200)+blocks*per)))
	for i := range min(per, 200) {
		for _, with := range []bool{false, true} {
			if err := write(with, i); err != nil {
				return AddedResult{}, err
			}
		}
		r.p.add(2)
	}
	without, with, err := alternate(blocks, per, func(withEvent bool, i int) error {
		r.p.add(1)
		return write(withEvent, i)
	})
	if err != nil {
		return AddedResult{}, err
	}
	diffs := make([]float64, len(with))
	for p := range with {
		diffs[p] = with[p] - without[p]
	}
	return AddedResult{Blocks: blocks, TxPerBlock: per, DataOnlyUs: round(mean(without), 1), WithEventUs: round(mean(with), 1),
		AddedUs: round(pairMedian(diffs), 1)}, nil
}

// alternate runs pairs of blocks of n calls of run, one block without the
// event and one with it, the pair's order flipping from one pair to the
// next (ABBA), so that a drift in a shared machine's load weighs on both
// kinds alike. It returns each block's mean µs per call, pair by pair.
func alternate(pairs, n int, run func(withEvent bool, i int) error) (without, with []float64, err error) {
	for p := range pairs {
		order := []bool{false, true}
		if p%2 == 1 {
			order = []bool{true, false}
		}
		for _, withEvent := range order {
			start := time.Now()
			for i := range n {
				if err := run(withEvent, p*n+i); err != nil {
					return nil, nil, err
				}
			}
			us := float64(time.Since(start).Nanoseconds()) / 1e3 / float64(n)
			if withEvent {
				with = append(with, us)
			} else {
				without = append(without, us)
			}
		}
	}
	return without, with, nil
}

// pairMedian is the median of the pairs' differences as the peers'
// harnesses take it: of an even count, the upper of the two middle ones.
func pairMedian(diffs []float64) float64 {
	if len(diffs) == 0 {
		return 0
	}
	sorted := slices.Clone(diffs)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return sum(xs) / float64(len(xs))
}

// createOrderWithoutEvent runs the statements of sales' order creation (for
// a manual order: validate, look the products up, number and insert the
// order row, insert the items, read the order back with its items and shipments) in one
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
		skus := make([]string, 0, len(in.Items))
		for _, it := range in.Items {
			skus = append(skus, it.SKU)
		}
		products, err := catalog.ProductsBySKU(ctx, tx, skus)
		if err != nil {
			return err
		}
		// Numbered as sales numbers orders: under its lock, the highest plus
		// one, the sequence kept in step.
		if err := database.LockClassName(tx, sales.OrderNumberLock, "sales_orders"); err != nil {
			return err
		}
		// The columns sales writes for a manual order, all of them.
		if err := database.Scan(tx.Raw(`INSERT INTO sales_orders (id, status, source, sync_id, crm_order_id, customer_name, customer_phone, customer_email, customer_search, due_date,
note, delivery_address, delivery_date, currency, total, source_version, source_updated_at, source_hash, source_updated_ns)
SELECT (SELECT COALESCE(MAX(id), 0) + 1 FROM sales_orders), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
WHERE true RETURNING id`,
			o.Status, o.Source, o.SyncID, o.CRMOrderID, o.Customer.Name, o.Customer.Phone, o.Customer.Email, o.Customer.SearchKey(), o.DueDate,
			o.Note, o.DeliveryAddress, o.DeliveryDate, o.Currency, string(o.Total), o.SourceVersion, nil, o.SourceHash, nil), &o.ID); err != nil {
			return err
		}
		if database.DialectOf(tx) == database.Postgres {
			if err := tx.Exec("SELECT setval(pg_get_serial_sequence('sales_orders', 'id'), ?)", o.ID).Error; err != nil {
				return err
			}
		}
		o.Items = make([]sales.Item, len(in.Items))
		for i, it := range in.Items {
			o.Items[i] = sales.Item{OrderID: o.ID, ProductID: products[it.SKU].ID, SKU: it.SKU, Qty: it.Qty, Note: it.Note, Status: sales.ItemNew}
		}
		if err := tx.Omit("ID").Create(&o.Items).Error; err != nil {
			return err
		}
		var found []sales.Order
		return tx.Preload("Items", func(db *gorm.DB) *gorm.DB { return db.Order("id") }).
			Preload("Shipments", func(db *gorm.DB) *gorm.DB { return db.Order("id") }).
			Preload("Shipments.Items", func(db *gorm.DB) *gorm.DB { return db.Order("item_id") }).Where("id = ?", o.ID).Limit(1).Find(&found).Error
	})
}

func round3(x float64) float64 { return round(x, 3) }
