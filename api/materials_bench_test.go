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

// BenchmarkMaterialLists measures, on PostgreSQL, the cutting list,
// the requirements of a period and the shortages over 200 launched
// production orders of 50 parts each (three decors, banded sides,
// fittings, three part operations per part) and 200 items in the backlog,
// each request through the whole app; it reports each one's p99.
//
//	go test -run '^$' -bench MaterialLists ./api/
func BenchmarkMaterialLists(b *testing.B) {
	const orders, parts = 200, 50
	env := apptest.New(b, database.Postgres, nil)
	boards := []string{"LDSP16-WHITE", "LDSP16-SONOMA", "LDSP16-SHIMO"}
	err := dbtest.Fixture(env.App.DB, func(tx *gorm.DB) error {
		for o := 1; o <= orders; o++ {
			due := time.Date(2026, 12, 7+o%7, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
			if err := tx.Exec(`INSERT INTO plan_prod_orders (id, status, route_id, route_name, parts_count, ops_count, eta, planned_eta)
VALUES (?, 'launched', 1, 'Корпус ЛДСП (типовой)', ?, ?, ?, ?)`, o, parts, parts*3, due, due).Error; err != nil {
				return err
			}
			if err := tx.Exec(`INSERT INTO plan_prod_order_items (prod_order_id, item_id, order_id, product_id, sku, qty, due_date, received_at, event_id)
VALUES (?, ?, ?, 1, 'SHK-KUPE-1600', 1, ?, now(), 1)`, o, o, o, due).Error; err != nil {
				return err
			}
			if err := tx.Exec(`INSERT INTO plan_fittings (prod_order_id, item_id, code, name, qty) VALUES (?, ?, 'CONFIRMAT', 'Конфирмат', 24), (?, ?, 'HINGE-110', 'Петля', 6)`,
				o, o, o, o).Error; err != nil {
				return err
			}
			var values []string
			var args []any
			for p := range parts {
				board := boards[(o+p)%3]
				band := "PVC2-" + strings.TrimPrefix(board, "LDSP16-")
				values = append(values, "(?, ?, 1, ?, ?, 'ЛДСП', ?, 'Дуб', 'length', ?, ?, 16, ?, '', ?, '', ?)")
				args = append(args, o, o, p%13+1, fmt.Sprintf("Деталь %d", p%13), board, 300+(p%13)*100, 200+(p%7)*50, band, band,
					fmt.Sprintf("P%d-%d", o, p+1))
			}
			err := tx.Exec(`INSERT INTO plan_parts (prod_order_id, item_id, unit, seq, name, material, board, decor, grain, length_mm, width_mm, thickness_mm,
edge_l1, edge_l2, edge_w1, edging, code) VALUES `+strings.Join(values, ", "), args...).Error
			if err != nil {
				return err
			}
			err = tx.Exec(`INSERT INTO plan_operations (prod_order_id, item_id, unit, part_id, seq, name, work_center_id, scope, minutes, status)
SELECT prod_order_id, item_id, 1, id, s, 'оп', 1, 'part', 3, 'pending'
FROM plan_parts, generate_series(1, 3) AS s WHERE prod_order_id = ?`, o).Error
			if err != nil {
				return err
			}
			if err := scheduleOnDay(tx, o, "2026-12-07"); err != nil {
				return err
			}
			if err := tx.Exec(`INSERT INTO plan_backlog (item_id, order_id, sku, qty, due_date, received_at, event_id, options)
VALUES (?, ?, 'TMB-PRIK-450', 2, ?, now(), 1, '{"корпус": "LDSP16-SONOMA"}')`, 100000+o, 100000+o, due).Error; err != nil {
				return err
			}
		}
		return tx.Exec(`SELECT setval(pg_get_serial_sequence('plan_prod_orders', 'id'), ?)`, orders).Error
	})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, orders)
	for i := range ids {
		ids[i] = fmt.Sprint(i + 1)
	}
	for _, c := range []struct{ name, path string }{
		{"CuttingList", "/api/v1/production-orders/cutting-list?ids=" + strings.Join(ids, ",")},
		{"Requirements", "/api/v1/materials/requirements?from=2026-12-07&to=2026-12-13"},
		{"Shortages", "/api/v1/materials/shortages"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				r := env.Admin(http.MethodGet, c.path, nil)
				took = append(took, time.Since(start))
				if r.Status != http.StatusOK {
					b.Fatalf("%d %s", r.Status, r.Body)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[(len(took)*99)/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// scheduleOnDay stores production order id's schedule: each of its
// operations planned on the day from the start of its capacity.
func scheduleOnDay(tx *gorm.DB, id int, day string) error {
	d, err := database.ParseDate(day)
	if err != nil {
		return err
	}
	var ops []plan.Operation
	if err := tx.Where("prod_order_id = ?", id).Find(&ops).Error; err != nil {
		return err
	}
	for i := range ops {
		ops[i].StartDay, ops[i].EndDay, ops[i].EndMin = d, d, ops[i].Minutes
	}
	return plan.StoreSchedules(context.Background(), tx, ops)
}
