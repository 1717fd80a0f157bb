package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// Migrations 00033 and 00034 carry the stock of an older tsekh over to
// stock that follows what physically moved: each reservation becomes what
// its order still needs; the offcuts in stock keep their ids and get
// codes; every cutting plan's sheet is registered (a sheet cut already as
// gone to the saw); a live part not yet cut lies on the uncut sheet of the
// newest plan that lays it out and needs its share of it, or its area of
// its board otherwise; what an order needs of a board is then its parts'
// needs, and reserved their sum; an order knows its route's material steps.
func TestMigrate_PhysicalStock(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.At(t, d, 32)
			exec := func(q string, args ...any) {
				t.Helper()
				require.NoError(t, db.Exec(q, args...).Error)
			}
			exec(`INSERT INTO catalog_materials (id, kind, code, name, unit, grain, formats, trim_l1_mm, trim_l2_mm, trim_w1_mm, trim_w2_mm)
VALUES (1, 'board', 'LDSP16-WHITE', 'ЛДСП Белый', 'sheet', false, '[{"length_mm":2800,"width_mm":2070}]', 10, 10, 10, 10),
       (2, 'band', 'PVC2-WHITE', 'Кромка', 'm', false, '[]', 0, 0, 0, 0)`)
			exec(`INSERT INTO plan_prod_orders (id, status, route_id, route_name, parts_count, ops_count, eta, planned_eta) VALUES
(7, 'in_progress', 1, 'r', 3, 6, '2026-12-01', '2026-12-01'), (8, 'done', 1, 'r', 1, 1, '2026-12-01', '2026-12-01')`)
			for _, p := range []struct {
				id, order int64
				length    int
				done      bool
			}{{51, 7, 1000, false}, {52, 7, 500, false}, {53, 7, 2000, true}} {
				exec(`INSERT INTO plan_parts (id, prod_order_id, item_id, unit, seq, name, material, length_mm, width_mm, thickness_mm, board, code, status)
VALUES (?, ?, 11, 1, 1, 'Бок', 'ЛДСП', ?, 500, 16, 'LDSP16-WHITE', ?, 'live')`, p.id, p.order, p.length, "P7-"+string(rune('0'+p.id-50)))
				status := "pending"
				if p.done {
					status = "done"
				}
				for _, seq := range []int{1, 2} {
					st := status
					if seq == 2 {
						st = "pending"
					}
					exec(`INSERT INTO plan_operations (prod_order_id, item_id, unit, part_id, seq, name, work_center_id, scope, minutes, status, start_day, start_min, end_day, end_min)
VALUES (7, 11, 1, ?, ?, 'op', 1, 'part', 4, ?, '2026-11-30', 0, '2026-11-30', 4)`, p.id, seq, st)
				}
			}
			exec(`INSERT INTO plan_operations (prod_order_id, item_id, unit, seq, name, work_center_id, scope, minutes, status, start_day, start_min, end_day, end_min)
VALUES (7, 11, 1, 4, 'Сборка', 4, 'item', 30, 'pending', '2026-11-30', 0, '2026-11-30', 30)`)
			exec(`INSERT INTO stock_reservations (prod_order_id, code, kind, step, total, done, needed, consumed, released) VALUES
(7, 'LDSP16-WHITE', 'board', 1, 3, 1, 2, 1, false), (7, 'PVC2-WHITE', 'band', 2, 3, 0, 3.5, 1, false), (8, 'LDSP16-WHITE', 'board', 1, 1, 1, 1, 1, true)`)
			exec(`INSERT INTO stock_levels (code, on_hand, reserved) VALUES ('LDSP16-WHITE', 9, 1), ('PVC2-WHITE', 40, 2.5)`)
			// Plan 1 lays parts 51 and 52 out on sheet 1 (uncut, leaving an
			// offcut) and part 53 on sheet 2 (cut, which kept offcut 5).
			exec(`INSERT INTO cutting_plans (id, prod_orders, kerf_mm, stages, min_offcut_mm, sheets, parts) VALUES (1, '[7]', 4.4, 3, 300, 2, 3)`)
			exec(`INSERT INTO cutting_sheets (plan_id, n, board, layout, cut_at) VALUES
(1, 1, 'LDSP16-WHITE', '{"grain":false,"parts":[{"part_id":51,"dx_mm":1000,"dy_mm":500},{"part_id":52,"dx_mm":500,"dy_mm":500}],"offcuts":[{"dx_mm":400,"dy_mm":1500}]}', NULL),
(1, 2, 'LDSP16-WHITE', '{"grain":false,"parts":[{"part_id":53,"dx_mm":2000,"dy_mm":500}],"offcuts":[{"dx_mm":700,"dy_mm":2000}]}', '2026-11-30 10:00:00')`)
			exec(`INSERT INTO cutting_offcuts (id, board, length_mm, width_mm, plan_id, sheet, status) VALUES (5, 'LDSP16-WHITE', 2000, 700, 1, 2, 'available')`)

			_, err := database.Migrate(ctx, db)
			require.NoError(t, err)

			var needs []struct {
				ProdOrderID int64
				Code        string
				Needed      float64
				Consumed    float64
			}
			require.NoError(t, database.Scan(db.Raw(`SELECT prod_order_id, code, needed, consumed FROM stock_needs ORDER BY prod_order_id, code`), &needs))
			require.Len(t, needs, 3)
			require.Equal(t, int64(7), needs[0].ProdOrderID)
			require.Equal(t, "LDSP16-WHITE", needs[0].Code)
			require.InDelta(t, 1.0, needs[0].Needed, 1e-9, "parts 51 and 52 share sheet 1 whole")
			require.InDelta(t, 1.0, needs[0].Consumed, 1e-9)
			require.Equal(t, "PVC2-WHITE", needs[1].Code)
			require.InDelta(t, 2.5, needs[1].Needed, 1e-9, "what was reserved and not used up")
			require.Zero(t, needs[2].Needed, "a released reservation needs nothing")

			var parts []struct {
				ID          int64
				BoardNeed   float64
				SheetPlanID *int64
				SheetN      *int
			}
			require.NoError(t, database.Scan(db.Raw(`SELECT id, board_need, sheet_plan_id, sheet_n FROM plan_parts ORDER BY id`), &parts))
			require.InDelta(t, 2.0/3, parts[0].BoardNeed, 1e-6, "its share of sheet 1 by area")
			require.InDelta(t, 1.0/3, parts[1].BoardNeed, 1e-6)
			require.Equal(t, 1, *parts[0].SheetN)
			require.Zero(t, parts[2].BoardNeed, "cut already")
			require.Nil(t, parts[2].SheetPlanID)

			var sheets []struct {
				N          int
				Keep       string
				DocumentID *int64
			}
			require.NoError(t, database.Scan(db.Raw(`SELECT n, keep, document_id FROM stock_plan_sheets WHERE plan_id = 1 ORDER BY n`), &sheets))
			require.Len(t, sheets, 2)
			require.Nil(t, sheets[0].DocumentID, "not yet on the saw")
			require.JSONEq(t, `[{"code":"O1-1-1","length_mm":1500,"width_mm":400}]`, sheets[0].Keep, "its length along its longer side, the board having no grain")
			require.NotNil(t, sheets[1].DocumentID, "cut before stock kept documents of it")

			var offcut struct {
				ID     int64
				Code   string
				Status string
			}
			require.NoError(t, database.Scan(db.Raw(`SELECT id, code, status FROM stock_offcuts`), &offcut))
			require.Equal(t, int64(5), offcut.ID, "its id kept: the plans' sheets name it")
			require.Equal(t, "O1-2-1", offcut.Code)

			var reserved float64
			require.NoError(t, database.Scan(db.Raw(`SELECT reserved FROM stock_levels WHERE code = 'LDSP16-WHITE'`), &reserved))
			require.InDelta(t, 1.0, reserved, 1e-9, "reserved = what the orders need")
			var steps struct{ CutSeq, BandSeq, AssembleSeq int }
			require.NoError(t, database.Scan(db.Raw(`SELECT cut_seq, band_seq, assemble_seq FROM plan_prod_orders WHERE id = 7`), &steps))
			require.Equal(t, struct{ CutSeq, BandSeq, AssembleSeq int }{1, 2, 4}, steps)
		})
	}
}
