package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// Migration 00014 (closing short) keeps the production orders an older
// tsekh left, with their items, parts and operations pointing at them (on
// SQLite the table is rebuilt), lets an order be closed, and counts the
// items made already as made whole.
func TestMigrate_CloseShortKeepsProductionOrders(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.At(t, d, 13)

			exec := func(q string, args ...any) {
				t.Helper()
				require.NoError(t, db.Exec(q, args...).Error)
			}
			exec(`INSERT INTO plan_prod_orders (id, status, route_id, route_name, parts_count, ops_count, eta, planned_eta, needs_attention, attention_reason, priority, eta_given)
VALUES (7, 'in_progress', 1, 'Корпус ЛДСП (типовой)', 1, 1, '2026-12-01', '2026-12-01', true, 'sales order 3 was cancelled', 5, true)`)
			exec(`INSERT INTO plan_prod_order_items (prod_order_id, item_id, order_id, product_id, sku, qty, received_at, event_id)
VALUES (7, 11, 3, 1, 'TMB-PRIK-450', 1, '2026-11-20 10:00:00', 1)`)
			exec(`INSERT INTO plan_parts (id, prod_order_id, item_id, unit, seq, name, material, length_mm, width_mm, thickness_mm)
VALUES (5, 7, 11, 1, 1, 'Бок', 'ЛДСП', 400, 300, 16)`)
			exec(`INSERT INTO plan_operations (prod_order_id, item_id, unit, part_id, seq, name, work_center_id, scope, minutes, status, start_day, start_min, end_day, end_min)
VALUES (7, 11, 1, 5, 1, 'Раскрой', 1, 'part', 4, 'done', '2026-11-30', 0, '2026-11-30', 4)`)
			exec(`INSERT INTO sales_orders (id, status, source, customer_name) VALUES (3, 'ready', 'manual', 'Иван')`)
			exec(`INSERT INTO sales_order_items (id, order_id, product_id, sku, qty, status) VALUES (11, 3, 1, 'TMB-PRIK-450', 2, 'done'), (12, 3, 1, 'TMB-PRIK-450', 1, 'new')`)

			_, err := database.Migrate(ctx, db)
			require.NoError(t, err)

			var o struct {
				Status          string
				RouteName       string
				NeedsAttention  bool
				AttentionReason string
				CloseReason     string
				CloseRest       string
				Priority        int
				ETAGiven        bool `gorm:"column:eta_given"`
			}
			require.NoError(t, database.Scan(db.Raw("SELECT * FROM plan_prod_orders WHERE id = 7"), &o))
			require.Equal(t, "in_progress", o.Status)
			require.Equal(t, "Корпус ЛДСП (типовой)", o.RouteName)
			require.True(t, o.NeedsAttention)
			require.Equal(t, 5, o.Priority, "the priority (00012) survives the rebuild")
			require.True(t, o.ETAGiven)
			require.Equal(t, "sales order 3 was cancelled", o.AttentionReason)
			require.Empty(t, o.CloseReason)
			require.Empty(t, o.CloseRest)
			var n int64
			require.NoError(t, database.Scan(db.Raw(`SELECT count(*) FROM plan_operations JOIN plan_parts ON plan_parts.id = plan_operations.part_id
JOIN plan_prod_orders ON plan_prod_orders.id = plan_operations.prod_order_id JOIN plan_prod_order_items ON plan_prod_order_items.prod_order_id = plan_prod_orders.id`), &n))
			require.Equal(t, int64(1), n)
			if d == database.SQLite {
				var broken []map[string]any
				require.NoError(t, database.Scan(db.Raw("PRAGMA foreign_key_check"), &broken))
				require.Empty(t, broken)
			}

			exec(`UPDATE plan_prod_orders SET status = 'closed', close_reason = 'остаток не нужен', close_rest = 'write_off' WHERE id = 7`)
			require.Error(t, db.Exec(`UPDATE plan_prod_orders SET close_rest = 'scrap' WHERE id = 7`).Error)
			require.Error(t, db.Exec(`UPDATE plan_prod_orders SET status = 'lost' WHERE id = 7`).Error)
			if d == database.SQLite { // the rebuilt table's ids go on from where they were
				exec(`INSERT INTO plan_prod_orders (status, route_id, route_name, parts_count, ops_count, eta, planned_eta) VALUES ('launched', 1, 'r', 0, 0, '2026-12-01', '2026-12-01')`)
				var ids []int64
				require.NoError(t, database.Scan(db.Raw("SELECT id FROM plan_prod_orders ORDER BY id"), &ids))
				require.Equal(t, []int64{7, 8}, ids)
			}

			var made []int
			require.NoError(t, database.Scan(db.Raw("SELECT made_qty FROM sales_order_items ORDER BY id"), &made))
			require.Equal(t, []int{2, 0}, made)
		})
	}
}
