package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// Migration 00025 gives the parts and units an older tsekh launched their
// codes: P<order>-<n> in part id order, U<order>-<n> in item and unit order,
// unique in the database.
func TestMigrate_FloorCodesForExistingParts(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.At(t, d, 21)
			exec := func(q string, args ...any) {
				t.Helper()
				require.NoError(t, db.Exec(q, args...).Error)
			}
			for _, id := range []int{7, 8} {
				exec(`INSERT INTO plan_prod_orders (id, status, route_id, route_name, parts_count, ops_count, eta, planned_eta) VALUES (?, 'in_progress', 1, 'r', 2, 3, '2026-12-01', '2026-12-01')`, id)
				for _, part := range []int{1, 2} {
					exec(`INSERT INTO plan_parts (id, prod_order_id, item_id, unit, seq, name, material, length_mm, width_mm, thickness_mm) VALUES (?, ?, 11, ?, 1, 'Бок', 'ЛДСП', 400, 300, 16)`,
						id*10+part, id, part)
					exec(`INSERT INTO plan_operations (prod_order_id, item_id, unit, part_id, seq, name, work_center_id, scope, minutes, status, start_day, start_min, end_day, end_min)
VALUES (?, 11, ?, ?, 1, 'Раскрой', 1, 'part', 4, 'done', '2026-11-30', 0, '2026-11-30', 4)`, id, part, id*10+part)
				}
			}
			_, err := database.Migrate(ctx, db)
			require.NoError(t, err)
			var codes []string
			require.NoError(t, database.Scan(db.Raw("SELECT code FROM plan_parts ORDER BY id"), &codes))
			require.Equal(t, []string{"P7-1", "P7-2", "P8-1", "P8-2"}, codes)
			require.NoError(t, database.Scan(db.Raw("SELECT code FROM plan_units ORDER BY prod_order_id, unit"), &codes))
			require.Equal(t, []string{"U7-1", "U7-2", "U8-1", "U8-2"}, codes)
			var status []string
			require.NoError(t, database.Scan(db.Raw("SELECT status FROM plan_parts"), &status))
			require.Equal(t, []string{"live", "live", "live", "live"}, status)
			require.Error(t, db.Exec("UPDATE plan_parts SET code = 'P7-1' WHERE id = 72").Error, "codes are unique")
		})
	}
}
