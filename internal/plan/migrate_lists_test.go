package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// The backlog and production-order items received before order.received
// carried the customer and the note get them from the sales order once, when
// the migration adds them.
func TestMigrate_BacklogCustomerAndNote(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.At(t, d, 12)

			exec := func(q string, args ...any) { require.NoError(t, db.Exec(q, args...).Error, q) }
			exec(`INSERT INTO sales_orders (id, source, customer_name) VALUES (1, 'manual', 'Анна Смирнова'), (2, 'manual', 'Пётр')`)
			exec(`INSERT INTO sales_order_items (id, order_id, product_id, sku, qty, note) VALUES
(11, 1, 1, 'TMB-PRIK-450', 2, 'белый глянец'), (12, 1, 1, 'TMB-PRIK-450', 1, ''), (21, 2, 1, 'TMB-PRIK-450', 1, 'срочно')`)
			exec(`INSERT INTO plan_backlog (item_id, order_id, sku, qty, received_at, event_id) VALUES
(11, 1, 'TMB-PRIK-450', 2, '2026-11-01 10:00:00', 1), (12, 1, 'TMB-PRIK-450', 1, '2026-11-01 10:00:00', 1),
(99, 9, 'TMB-PRIK-450', 1, '2026-11-01 10:00:00', 3)`)
			exec(`INSERT INTO plan_prod_orders (id, route_id, route_name, parts_count, ops_count, eta, planned_eta) VALUES
(1, 1, 'Корпус ЛДСП (типовой)', 6, 22, '2026-12-01', '2026-12-01')`)
			exec(`INSERT INTO plan_prod_order_items (prod_order_id, item_id, order_id, product_id, sku, qty, received_at, event_id) VALUES
(1, 21, 2, 1, 'TMB-PRIK-450', 1, '2026-11-01 10:00:00', 2)`)

			_, err := database.Migrate(ctx, db)
			require.NoError(t, err)

			type row struct {
				ItemID   int64
				Customer string
				Note     string
			}
			var backlog, items []row
			require.NoError(t, database.Scan(db.Raw(`SELECT item_id, customer, note FROM plan_backlog ORDER BY item_id`), &backlog))
			require.Equal(t, []row{{11, "Анна Смирнова", "белый глянец"}, {12, "Анна Смирнова", ""}, {99, "", ""}}, backlog)
			require.NoError(t, database.Scan(db.Raw(`SELECT item_id, customer, note FROM plan_prod_order_items`), &items))
			require.Equal(t, []row{{21, "Пётр", "срочно"}}, items)
		})
	}
}
