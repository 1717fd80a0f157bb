package sales_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/platform/page"
	"github.com/tsekh/tsekh/internal/sales"
)

// Migration 00011 fills customer_search for the orders already there, as
// sales writes it for new ones, so that the customer filter finds them too.
func TestMigrate_CustomerSearchOfExistingOrders(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.At(t, d, 9)
			customers := []sales.Customer{
				{Name: "Иван Петров", Phone: "+7 900 000-00-00"},
				{Name: "ЁЛКИНА Ольга", Phone: ""},
				{Name: "Smith", Phone: "8 (912) 345-67-89"},
			}
			for _, c := range customers {
				require.NoError(t, db.Exec(`INSERT INTO sales_orders (status, source, customer_name, customer_phone) VALUES ('received', 'manual', ?, ?)`,
					c.Name, c.Phone).Error)
			}
			_, err := database.Migrate(ctx, db)
			require.NoError(t, err)
			var keys []string
			require.NoError(t, database.Scan(db.Raw("SELECT customer_search FROM sales_orders ORDER BY id"), &keys))
			require.Len(t, keys, len(customers))
			for i, c := range customers {
				require.Equal(t, c.SearchKey(), keys[i], c.Name)
			}
			svc := sales.NewService(db)
			for q, want := range map[string]string{"ИВАН": "Иван Петров", "елкина": "ЁЛКИНА Ольга", "89123456789": "Smith", "smith": "Smith"} {
				os, _, err := svc.Orders(ctx, sales.OrderFilter{Customer: q}, page.Request{Limit: 10})
				require.NoError(t, err)
				require.Len(t, os, 1, q)
				require.Equal(t, want, os[0].Customer.Name)
			}
		})
	}
}
