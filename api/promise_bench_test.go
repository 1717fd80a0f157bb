package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// BenchmarkMaterialPlan measures, on PostgreSQL, with 500 live production
// orders (20 parts each: cutting, edge banding and drilling per part, then
// assembly per unit; each needing boards, bands and fittings, some covered
// by stock, some by purchase orders, some by a supplier's lead time only)
// and 2,000 items in the backlog (three SKUs in three decors, one to three
// units: 27 kinds of item):
//   - Promises: the available to promise of all 2,000 waiting items, as
//     GET /api/v1/plan/backlog computes it for its pages (plan.Promises);
//   - BacklogPage: GET /api/v1/plan/backlog?limit=500 through the app;
//   - Replan: POST /api/v1/plan/replan, the schedule with materials of
//     the 500 orders, through the app.
//
// The orders are laid out by a re-plan first (layout-ms: every slot and
// ETA moves then). It reports each one's p99, and the first Promises' time
// (cold-ms: the optimiser's estimates of the 27 kinds of item are laid out
// then, once for the process).
//
//	go test -run '^$' -bench MaterialPlan ./api/
func BenchmarkMaterialPlan(b *testing.B) {
	const orders, parts, waiting = 500, 20, 2000
	env := apptest.New(b, database.Postgres, nil)
	env.App.Plan.SetNow(func() time.Time { return time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC) })
	decors := []string{"WHITE", "SONOMA", "SHIMO"}
	err := dbtest.Fixture(env.App.DB, func(tx *gorm.DB) error {
		if err := tx.Exec(`INSERT INTO purchasing_suppliers (id, name) VALUES (1, 'Плита')`).Error; err != nil {
			return err
		}
		if err := tx.Exec(`INSERT INTO purchasing_supplier_materials (supplier_id, code, price, lead_days, min_qty, pack_qty) VALUES
(1, 'LDSP16-WHITE', 3000, 5, 10, 5), (1, 'LDSP16-SONOMA', 3150, 7, 10, 5), (1, 'PVC2-WHITE', 40, 3, 0, 100), (1, 'CONFIRMAT', 2, 2, 0, 0)`).Error; err != nil {
			return err
		}
		if err := tx.Exec(`INSERT INTO purchasing_orders (id, supplier_id, status) VALUES (1, 1, 'ordered')`).Error; err != nil {
			return err
		}
		if err := tx.Exec(`INSERT INTO purchasing_order_lines (order_id, n, code, qty, price, expected_on) VALUES
(1, 1, 'LDSP16-WHITE', 300, 3000, '2026-12-10'), (1, 2, 'LDSP16-SONOMA', 200, 3150, '2026-12-15'), (1, 3, 'PVC2-WHITE', 2000, 40, '2026-12-09')`).Error; err != nil {
			return err
		}
		if err := tx.Exec(`INSERT INTO stock_levels (code, on_hand, reserved) VALUES ('LDSP16-WHITE', 200, 0), ('PVC2-WHITE', 1000, 0), ('CONFIRMAT', 5000, 0)`).Error; err != nil {
			return err
		}
		for o := 1; o <= orders; o++ {
			due := time.Date(2026, 12, 7+o%14, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
			decor := decors[o%3]
			if err := tx.Exec(`INSERT INTO plan_prod_orders (id, status, route_id, route_name, parts_count, ops_count, eta, planned_eta, priority, cut_seq, band_seq, assemble_seq)
VALUES (?, 'launched', 1, 'Корпус ЛДСП (типовой)', ?, ?, ?, ?, ?, 1, 2, 4)`, o, parts, parts*3+1, due, due, o%3).Error; err != nil {
				return err
			}
			if err := tx.Exec(`INSERT INTO stock_needs (prod_order_id, code, needed) VALUES (?, ?, 1.6), (?, ?, 12.5), (?, 'CONFIRMAT', 24)`,
				o, "LDSP16-"+decor, o, "PVC2-"+decor, o).Error; err != nil {
				return err
			}
			var values []string
			var args []any
			for p := range parts {
				values = append(values, "(?, ?, 1, ?, 'Деталь', 'ЛДСП', ?, 'Дуб', 'length', 500, 300, 16, ?)")
				args = append(args, o, o, p%13+1, "LDSP16-"+decor, fmt.Sprintf("P%d-%d", o, p+1))
			}
			err := tx.Exec(`INSERT INTO plan_parts (prod_order_id, item_id, unit, seq, name, material, board, decor, grain, length_mm, width_mm, thickness_mm, code) VALUES `+
				strings.Join(values, ", "), args...).Error
			if err != nil {
				return err
			}
			err = tx.Exec(`INSERT INTO plan_operations (prod_order_id, item_id, unit, part_id, seq, name, work_center_id, scope, minutes, status)
SELECT prod_order_id, item_id, 1, id, s, 'оп', s, 'part', 2, 'pending'
FROM plan_parts, generate_series(1, 3) AS s WHERE prod_order_id = ?`, o).Error
			if err != nil {
				return err
			}
			err = tx.Exec(`INSERT INTO plan_operations (prod_order_id, item_id, unit, seq, name, work_center_id, scope, minutes, status)
VALUES (?, ?, 1, 4, 'сборка', 4, 'item', 30, 'pending')`, o, o).Error
			if err != nil {
				return err
			}
			if err := scheduleOnDay(tx, o, "2026-12-07"); err != nil {
				return err
			}
		}
		skus := []string{"TMB-PRIK-450", "SHK-KUPE-1600", "SHK-RASP-1200"}
		for i := 1; i <= waiting; i++ {
			options := fmt.Sprintf(`{"корпус": "LDSP16-%s"}`, decors[i%3])
			if err := tx.Exec(`INSERT INTO plan_backlog (item_id, order_id, sku, qty, received_at, event_id, options) VALUES (?, ?, ?, ?, now(), 1, ?)`,
				100000+i, 100000+i, skus[(i/3)%3], 1+i%3/2+(i/9)%2, options).Error; err != nil {
				return err
			}
		}
		return tx.Exec(`SELECT setval(pg_get_serial_sequence('plan_prod_orders', 'id'), ?)`, orders).Error
	})
	if err != nil {
		b.Fatal(err)
	}
	// The statistics a database in service has (autovacuum would take them
	// in its own time).
	if err := env.App.DB.Exec("ANALYZE").Error; err != nil {
		b.Fatal(err)
	}
	// The orders were written with their operations all on one day: a
	// re-plan lays them out (every slot and ETA moves), as a plan in
	// service has them; its time is reported apart, as layout-ms.
	start := time.Now()
	if _, err := env.App.Plan.Replan(context.Background()); err != nil {
		b.Fatal(err)
	}
	layout := time.Since(start)
	var items []plan.BacklogItem
	if err := env.App.DB.Order("item_id").Find(&items).Error; err != nil {
		b.Fatal(err)
	}
	if len(items) != waiting {
		b.Fatalf("%d items", len(items))
	}
	// The first call lays out each kind of item with the cutting
	// optimiser, once for the process (stock's estimates): reported apart,
	// as cold-ms.
	start = time.Now()
	if _, err := env.App.Plan.Promises(context.Background(), items); err != nil {
		b.Fatal(err)
	}
	cold := time.Since(start)
	run := func(b *testing.B, fn func() error) {
		var took []time.Duration
		for b.Loop() {
			start := time.Now()
			if err := fn(); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		b.ReportMetric(float64(took[(len(took)*99)/100].Microseconds())/1000, "p99-ms")
	}
	b.Run("Promises", func(b *testing.B) {
		run(b, func() error {
			ps, err := env.App.Plan.Promises(context.Background(), items)
			if err == nil && (ps[0] == nil || len(ps) != waiting) {
				err = fmt.Errorf("no promise for item %d", items[0].ItemID)
			}
			return err
		})
		b.ReportMetric(float64(cold.Milliseconds()), "cold-ms")
	})
	b.Run("BacklogPage", func(b *testing.B) {
		run(b, func() error {
			if r := env.Admin(http.MethodGet, "/api/v1/plan/backlog?limit=500", nil); r.Status != http.StatusOK {
				return fmt.Errorf("%d %s", r.Status, r.Body)
			}
			return nil
		})
	})
	b.Run("Replan", func(b *testing.B) {
		run(b, func() error {
			if r := env.Admin(http.MethodPost, "/api/v1/plan/replan", nil); r.Status != http.StatusOK {
				return fmt.Errorf("%d %s", r.Status, r.Body)
			}
			return nil
		})
		b.ReportMetric(float64(layout.Milliseconds()), "layout-ms")
	})
}
