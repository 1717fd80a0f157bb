package plan_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// Migrations 00054–00056 move the planned slots of the operations an
// older tsekh left into their orders' schedules, bit for bit (a minute
// that is no short decimal, an operation over two days, part and item
// scope), drop the columns, and their Down puts the slots back.
func TestMigrate_SlotsMoveToSchedules(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.At(t, d, 53)
			exec := func(q string, args ...any) {
				t.Helper()
				require.NoError(t, db.Exec(q, args...).Error)
			}
			odd := 0.1 + 0.2 // 0.30000000000000004
			for _, o := range []int{7, 9} {
				exec(`INSERT INTO plan_prod_orders (id, status, route_id, route_name, parts_count, ops_count, eta, planned_eta)
VALUES (?, 'launched', 1, 'Корпус', 1, 2, '2026-12-02', '2026-12-02')`, o)
				exec(`INSERT INTO plan_parts (id, prod_order_id, item_id, unit, seq, name, material, length_mm, width_mm, thickness_mm, code)
VALUES (?, ?, ?, 1, 1, 'Бок', 'ЛДСП', 400, 300, 16, ?)`, o*10, o, o+100, fmt.Sprintf("P%d-1", o))
			}
			exec(`INSERT INTO plan_operations (id, prod_order_id, item_id, unit, part_id, seq, name, work_center_id, scope, minutes, status, start_day, start_min, end_day, end_min)
VALUES (31, 7, 107, 1, 70, 1, 'Раскрой', 1, 'part', 4, 'done', '2026-11-30', ?, '2026-11-30', 4.25),
       (33, 7, 107, 1, NULL, 2, 'Сборка', 4, 'item', 600, 'pending', '2026-11-30', 450.5, '2026-12-02', 90),
       (32, 9, 109, 1, 90, 1, 'Раскрой', 1, 'part', 2.5, 'pending', '2026-12-01', 0, '2026-12-01', ?)`, odd, odd)

			_, err := database.Migrate(ctx, db)
			require.NoError(t, err)
			require.NoError(t, plan.VerifySchedules(ctx, db))
			var ops []plan.Operation
			require.NoError(t, db.Order("id").Find(&ops).Error)
			require.NoError(t, plan.FillSlots(ctx, db, ops))
			type slot struct {
				start, end       string
				startMin, endMin uint64
			}
			got := map[int64]slot{}
			for _, op := range ops {
				got[op.ID] = slot{op.StartDay.String(), op.EndDay.String(), math.Float64bits(op.StartMin), math.Float64bits(op.EndMin)}
			}
			want := map[int64]slot{
				31: {"2026-11-30", "2026-11-30", math.Float64bits(odd), math.Float64bits(4.25)},
				32: {"2026-12-01", "2026-12-01", 0, math.Float64bits(odd)},
				33: {"2026-11-30", "2026-12-02", math.Float64bits(450.5), math.Float64bits(90)},
			}
			require.Equal(t, want, got)
			var spans []struct{ ProdOrderID, FirstDay, LastDay string }
			require.NoError(t, database.Scan(db.Raw("SELECT prod_order_id, first_day, last_day FROM plan_schedules ORDER BY prod_order_id"), &spans))
			require.Len(t, spans, 2)
			require.Equal(t, "2026-11-30", spans[0].FirstDay[:10])
			require.Equal(t, "2026-12-02", spans[0].LastDay[:10])
			require.Error(t, db.Exec("SELECT start_day FROM plan_operations").Error, "the columns are gone")

			require.NoError(t, database.MigrateDownTo(ctx, db, 53))
			var back []struct {
				ID               int64
				StartDay, EndDay database.Date
				StartMin, EndMin float64
			}
			require.NoError(t, database.Scan(db.Raw("SELECT id, start_day, start_min, end_day, end_min FROM plan_operations ORDER BY id"), &back))
			require.Len(t, back, 3)
			for _, b := range back {
				require.Equal(t, want[b.ID], slot{b.StartDay.String(), b.EndDay.String(), math.Float64bits(b.StartMin), math.Float64bits(b.EndMin)}, "operation %d", b.ID)
			}
		})
	}
}
