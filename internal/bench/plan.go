package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/stock"
)

// PlanOptions configure RunPlan (tsekh bench plan).
type PlanOptions struct {
	DatabaseURL string
	// Sizes are the live operations the plan holds in each round.
	Sizes []int
	// Launches are the one-item launches timed one after the other at
	// each size; Concurrent the launches started at once.
	Launches   int
	Concurrent int
	// Replans are the re-plans of everything timed at each size, and
	// Priorities the changes of priority of each kind.
	Replans    int
	Priorities int
	// ShortageItems are the items waiting in the backlog for the
	// shortages' figure (0: none), ShortageRuns its calls.
	ShortageItems int
	ShortageRuns  int
	Progress      io.Writer
	Logger        *slog.Logger
}

// PlanResult is what RunPlan measured.
type PlanResult struct {
	Machine   Machine      `json:"machine"`
	Sizes     []PlanFigure `json:"sizes"`
	Shortages *Shortages   `json:"shortages,omitempty"`
	Seconds   float64      `json:"seconds"`
}

// PlanFigure is the plan's figures at one size of live work.
type PlanFigure struct {
	LiveOps    int `json:"live_ops"`
	LiveOrders int `json:"live_orders"`
	// A one-item launch of the lowest priority, one after the other.
	LaunchP50ms float64 `json:"launch_p50_ms"`
	LaunchP99ms float64 `json:"launch_p99_ms"`
	// Eight (Concurrent) launches started at once: how many succeeded,
	// and the slowest.
	ConcurrentOK     int     `json:"concurrent_ok"`
	ConcurrentMaxMs  float64 `json:"concurrent_max_ms"`
	ReplanMedianMs   float64 `json:"replan_median_ms"`
	ReplanMaxMs      float64 `json:"replan_max_ms"`
	PriorityLastMs   float64 `json:"priority_last_median_ms"`
	PriorityMiddleMs float64 `json:"priority_middle_median_ms"`
}

// Shortages is the memory and time of GET /api/v1/materials/shortages'
// work at ShortageItems waiting items.
type Shortages struct {
	Items int `json:"items"`
	// FirstMs is the first call's, which lays out each kind of item for
	// the estimate of its boards (kept for the later calls); P50ms and
	// P99ms are of the later calls.
	FirstMs      float64 `json:"first_ms"`
	P50ms        float64 `json:"p50_ms"`
	P99ms        float64 `json:"p99_ms"`
	HeapAboveMB  float64 `json:"heap_peak_above_idle_mb"`
	HeapIdleMB   float64 `json:"heap_idle_mb"`
	MaterialsOut int     `json:"materials_short"`
}

// RunPlan measures the plan at each size of live work, each in a schema of
// its own: launches one after the other and eight at once, a re-plan of
// everything, a change of priority of the last order and of one in the
// middle; then the shortages at ShortageItems waiting items.
func RunPlan(ctx context.Context, opt PlanOptions) (PlanResult, error) {
	var res PlanResult
	if opt.DatabaseURL == "" {
		return res, errors.New("bench plan needs PostgreSQL: set DATABASE_URL to a postgres:// URL")
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	p := newProgress(opt.Progress)
	defer p.stop()
	for _, n := range opt.Sizes {
		err := inSchema(ctx, opt.DatabaseURL, opt.Logger, func(db *gorm.DB) error {
			if res.Machine.CPUs == 0 {
				m, err := machine(ctx, db)
				if err != nil {
					return err
				}
				res.Machine = m
			}
			f, err := planFigures(ctx, db, n, opt, p)
			res.Sizes = append(res.Sizes, f)
			return err
		})
		if err != nil {
			return res, err
		}
	}
	if opt.ShortageItems > 0 {
		err := inSchema(ctx, opt.DatabaseURL, opt.Logger, func(db *gorm.DB) error {
			sh, err := shortageFigures(ctx, db, opt, p)
			res.Shortages = &sh
			return err
		})
		if err != nil {
			return res, err
		}
	}
	res.Seconds = round(time.Since(start).Seconds(), 1)
	return res, nil
}

// inSchema runs fn on a fresh, migrated schema with the demo catalogue,
// dropped afterwards.
func inSchema(ctx context.Context, url string, log *slog.Logger, fn func(db *gorm.DB) error) error {
	admin, err := database.Open(ctx, database.Options{PostgresURL: url, MaxConns: 1})
	if err != nil {
		return err
	}
	defer func() { _ = database.Close(admin) }()
	schema := "bench_" + randomHex(6)
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		return err
	}
	defer func() {
		if err := admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error; err != nil {
			log.Warn("drop bench schema", "schema", schema, "err", err)
		}
	}()
	surl, err := withSearchPath(url, schema)
	if err != nil {
		return err
	}
	db, err := database.Open(ctx, database.Options{PostgresURL: surl, MaxConns: 16, LockTimeout: 30 * time.Second})
	if err != nil {
		return err
	}
	defer func() { _ = database.Close(db) }()
	if _, err := database.Migrate(ctx, db); err != nil {
		return err
	}
	if _, err := catalog.NewService(db).SeedDemo(ctx); err != nil {
		return err
	}
	// Capacity enough that a hundred thousand operations fit in weeks, not
	// beyond the three years' horizon.
	if err := db.Exec("UPDATE catalog_work_centers SET capacity_min_per_day = 20000").Error; err != nil {
		return err
	}
	return fn(db)
}

// template is the wardrobe every live order is a copy of.
const templateSKU = "SHK-RASP-1200"

func planFigures(ctx context.Context, db *gorm.DB, n int, opt PlanOptions, p *progress) (PlanFigure, error) {
	f := PlanFigure{}
	svc := plan.NewService(db, stock.NewService(db, stock.DefaultSettings()))
	p.set(fmt.Sprintf("plan %d: filling", n), 0, 0)
	nextItem := int64(1)
	receive := func(sku string) (int64, error) {
		id := nextItem
		nextItem++
		return id, db.Exec(`INSERT INTO plan_backlog (item_id, order_id, sku, qty, due_date, received_at, event_id, options)
VALUES (?, ?, ?, 1, '2027-03-01', now(), 1, '{}')`, id, id, sku).Error
	}
	item, err := receive(templateSKU)
	if err != nil {
		return f, err
	}
	tmpl, err := svc.LaunchProdOrder(ctx, plan.Launch{Items: []int64{item}})
	if err != nil {
		return f, err
	}
	perOrder := tmpl.OpsCount
	copies := max(n/perOrder-1, 0)
	if err := cloneOrders(ctx, db, tmpl.ID, copies); err != nil {
		return f, err
	}
	nextItem = int64(copies) + 10
	if err := database.Scan(db.Raw("SELECT count(*) FROM plan_operations"), &f.LiveOps); err != nil {
		return f, err
	}
	f.LiveOrders = copies + 1
	// Lay the copies out as a re-plan does, then time re-plans of everything.
	var replans []time.Duration
	for i := range opt.Replans + 1 {
		p.set(fmt.Sprintf("plan %d: re-plan", n), int64(i), int64(opt.Replans+1))
		t := time.Now()
		if _, err := svc.Replan(ctx); err != nil {
			return f, err
		}
		if i > 0 {
			replans = append(replans, time.Since(t))
		}
	}
	f.ReplanMedianMs, f.ReplanMaxMs = ms(quantile(replans, 0.5)), ms(quantile(replans, 1))
	// Launches of a nightstand, one after the other, lowest priority.
	var launches []time.Duration
	for i := range opt.Launches {
		p.set(fmt.Sprintf("plan %d: launches", n), int64(i), int64(opt.Launches))
		item, err := receive("TMB-PRIK-450")
		if err != nil {
			return f, err
		}
		t := time.Now()
		if _, err := svc.LaunchProdOrder(ctx, plan.Launch{Items: []int64{item}, Priority: plan.MinPriority}); err != nil {
			return f, err
		}
		launches = append(launches, time.Since(t))
	}
	f.LaunchP50ms, f.LaunchP99ms = ms(quantile(launches, 0.5)), ms(quantile(launches, 0.99))
	// Eight at once.
	p.set(fmt.Sprintf("plan %d: %d launches at once", n, opt.Concurrent), 0, 0)
	items := make([]int64, opt.Concurrent)
	for i := range items {
		if items[i], err = receive("TMB-PRIK-450"); err != nil {
			return f, err
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for _, it := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.Now()
			_, err := svc.LaunchProdOrder(ctx, plan.Launch{Items: []int64{it}, Priority: plan.MinPriority})
			mu.Lock()
			defer mu.Unlock()
			slowest = max(slowest, time.Since(t))
			if err == nil {
				f.ConcurrentOK++
			} else {
				opt.Logger.Warn("concurrent launch", "err", err)
			}
		}()
	}
	wg.Wait()
	f.ConcurrentMaxMs = ms(slowest)
	// Changes of priority: the last order lowered (it alone moves), and an
	// order in the middle raised above all (the orders behind it move).
	var last, middle []time.Duration
	var ids []int64
	if err := database.Scan(db.Raw("SELECT id FROM plan_prod_orders WHERE status IN ('launched', 'in_progress') ORDER BY priority DESC, id"), &ids); err != nil {
		return f, err
	}
	for i := range opt.Priorities {
		p.set(fmt.Sprintf("plan %d: priorities", n), int64(i), int64(opt.Priorities))
		lastID := ids[len(ids)-1]
		t := time.Now()
		if _, err := svc.SetPriority(ctx, lastID, plan.MinPriority+i%2); err != nil {
			return f, err
		}
		last = append(last, time.Since(t))
		mid := ids[len(ids)/2+i]
		t = time.Now()
		if _, err := svc.SetPriority(ctx, mid, plan.MaxPriority-i); err != nil {
			return f, err
		}
		middle = append(middle, time.Since(t))
	}
	f.PriorityLastMs, f.PriorityMiddleMs = ms(quantile(last, 0.5)), ms(quantile(middle, 0.5))
	return f, nil
}

// cloneOrders copies production order id, with its items, parts and
// operations, copies times, in one statement per table (and the copies'
// schedules, their slots not laid out yet): the copies' ids
// are the original's plus a multiple of 1,000 (the original, the first
// order launched, has fewer parts and operations than that).
func cloneOrders(ctx context.Context, db *gorm.DB, id int64, copies int) error {
	if copies == 0 {
		return nil
	}
	override := map[string]map[string]string{
		"plan_prod_orders":      {"id": "id + g"},
		"plan_prod_order_items": {"prod_order_id": "prod_order_id + g", "item_id": "item_id + g + 1000000"},
		"plan_parts":            {"id": "id + g * 1000", "prod_order_id": "prod_order_id + g", "item_id": "item_id + g + 1000000", "code": "code || '-' || g", "recut_of": "NULL"},
		"plan_operations":       {"id": "id + g * 1000", "prod_order_id": "prod_order_id + g", "item_id": "item_id + g + 1000000", "part_id": "part_id + g * 1000"},
	}
	key := map[string]string{"plan_prod_orders": "id", "plan_prod_order_items": "prod_order_id", "plan_parts": "prod_order_id", "plan_operations": "prod_order_id"}
	for _, table := range []string{"plan_prod_orders", "plan_prod_order_items", "plan_parts", "plan_operations"} {
		var cols []string
		if err := database.Scan(db.WithContext(ctx).Raw("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position", table),
			&cols); err != nil {
			return err
		}
		sel := make([]string, len(cols))
		for i, c := range cols {
			sel[i] = c
			if e, ok := override[table][c]; ok {
				sel[i] = e
			}
		}
		q := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s, generate_series(1, %d) AS g WHERE %s = %d",
			table, strings.Join(cols, ", "), strings.Join(sel, ", "), table, copies, key[table], id)
		if err := db.WithContext(ctx).Exec(q).Error; err != nil {
			return fmt.Errorf("cloning %s: %w", table, err)
		}
		if table == "plan_prod_order_items" {
			continue // no id of its own
		}
		if err := db.WithContext(ctx).Exec(fmt.Sprintf("SELECT setval(pg_get_serial_sequence('%s', 'id'), (SELECT max(id) FROM %s))", table, table)).Error; err != nil {
			return err
		}
	}
	// The copies' schedules: their operations, which the re-plan that
	// follows lays out.
	var ops []plan.Operation
	if err := db.WithContext(ctx).Where("prod_order_id > ?", id).Find(&ops).Error; err != nil {
		return err
	}
	if err := plan.StoreSchedules(ctx, db, ops); err != nil {
		return err
	}
	return db.WithContext(ctx).Exec("ANALYZE").Error
}

// shortageFigures times the shortages at ShortageItems waiting items and
// samples the Go heap while they are counted.
func shortageFigures(ctx context.Context, db *gorm.DB, opt PlanOptions, p *progress) (Shortages, error) {
	out := Shortages{Items: opt.ShortageItems}
	p.set(fmt.Sprintf("shortages: %d items", opt.ShortageItems), 0, 0)
	err := db.Exec(`INSERT INTO plan_backlog (item_id, order_id, sku, qty, due_date, received_at, event_id, options, customer, note)
SELECT g, g, (ARRAY['TMB-PRIK-450', 'SHK-KUPE-1600', 'SHK-RASP-1200', 'DIV-CHESTER-3'])[1 + g % 4], 1 + g % 3, '2027-03-01', now(), 1,
    (ARRAY['{}', '{"корпус": "LDSP16-SONOMA"}', '{"фасад": "LDSP16-SHIMO"}'])[1 + g % 3], 'Покупатель ' || g, repeat('примечание ', 20)
FROM generate_series(1, ?) AS g`, opt.ShortageItems).Error
	if err != nil {
		return out, err
	}
	st := stock.NewService(db, stock.DefaultSettings())
	pl := plan.NewService(db, st)
	var took []time.Duration
	runtime.GC()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	idle := ms0.HeapAlloc
	peak := idle
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapAlloc)
			}
		}
	}()
	for i := range max(opt.ShortageRuns, 1) {
		p.set("shortages", int64(i), int64(opt.ShortageRuns))
		t := time.Now()
		lines, err := st.Shortages(ctx, pl.BacklogItems())
		if err != nil {
			close(stop)
			<-sampled
			return out, err
		}
		took = append(took, time.Since(t))
		out.MaterialsOut = len(lines)
	}
	close(stop)
	<-sampled
	out.FirstMs = ms(took[0])
	if len(took) > 1 {
		took = took[1:]
	}
	out.P50ms, out.P99ms = ms(quantile(took, 0.5)), ms(quantile(took, 0.99))
	out.HeapIdleMB = round(float64(idle)/(1<<20), 1)
	out.HeapAboveMB = round(float64(peak-idle)/(1<<20), 1)
	return out, nil
}

// quantile is the q-quantile of ds (nearest rank); 0 for none.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}
