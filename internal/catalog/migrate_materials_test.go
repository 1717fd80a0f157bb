package catalog_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// Migration 00022 (materials) turns every free-text material of a product's
// parts and of launched production orders into a board of the catalogue,
// one per text and thickness, named as it was; the parts name their board
// and keep their text, so nothing is lost, and the products stay valid.
func TestMigrate_MaterialsBecomeBoards(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.At(t, d, 21)
			exec := func(q string, args ...any) {
				t.Helper()
				require.NoError(t, db.Exec(q, args...).Error)
			}
			exec(`INSERT INTO catalog_routes (id, name, kind) VALUES (1, 'Корпус', 'case')`)
			exec(`INSERT INTO catalog_products (id, sku, name, kind, route_id) VALUES (1, 'TMB', 'Тумба', 'case', 1)`)
			exec(`INSERT INTO catalog_product_parts (product_id, seq, name, material, length_mm, width_mm, thickness_mm, edging, qty) VALUES
(1, 1, 'Боковина', 'ЛДСП 16 мм', 500, 400, 16, 'ПВХ 2 мм, 1 сторона', 2),
(1, 2, 'Крышка', 'ЛДСП 16 мм', 450, 400, 16, '', 1),
(1, 3, 'Задняя стенка', 'ХДФ 3 мм', 480, 440, 3, '', 1)`)
			exec(`INSERT INTO plan_prod_orders (id, status, route_id, route_name, parts_count, ops_count, eta, planned_eta)
VALUES (7, 'launched', 1, 'Корпус', 2, 2, '2026-12-01', '2026-12-01')`)
			exec(`INSERT INTO plan_prod_order_items (prod_order_id, item_id, order_id, product_id, sku, qty, received_at, event_id)
VALUES (7, 11, 3, 1, 'TMB', 1, '2026-11-20 10:00:00', 1)`)
			exec(`INSERT INTO plan_parts (id, prod_order_id, item_id, unit, seq, name, material, length_mm, width_mm, thickness_mm, edging) VALUES
(5, 7, 11, 1, 1, 'Боковина', 'ЛДСП 16 мм', 500, 400, 16, 'ПВХ 2 мм, 1 сторона'),
(6, 7, 11, 1, 4, 'Полка', 'ЛДСП Дуб', 400, 300, 18, '')`)

			_, err := database.Migrate(ctx, db)
			require.NoError(t, err)

			var boards []catalog.Material
			require.NoError(t, db.Order("code").Find(&boards).Error)
			require.Len(t, boards, 3, "one board per text and thickness, from the catalogue and from launched parts")
			byName := map[string]catalog.Material{}
			for _, b := range boards {
				require.Equal(t, catalog.KindBoard, b.Kind)
				require.Equal(t, catalog.UnitSheet, b.Unit)
				byName[b.Name] = b
			}
			require.InDelta(t, 16, byName["ЛДСП 16 мм"].ThicknessMM, 0)
			require.InDelta(t, 3, byName["ХДФ 3 мм"].ThicknessMM, 0)
			require.InDelta(t, 18, byName["ЛДСП Дуб"].ThicknessMM, 0)

			var parts []catalog.Part
			require.NoError(t, db.Order("seq").Find(&parts).Error)
			require.Len(t, parts, 3)
			for _, p := range parts {
				require.Equal(t, byName[p.Material].Code, p.Board, p.Name)
				require.Equal(t, catalog.GrainNone, p.Grain)
			}
			require.Equal(t, "ПВХ 2 мм, 1 сторона", parts[0].Edging, "the edging text stays")

			var launched []struct{ Material, Board, Edging string }
			require.NoError(t, database.Scan(db.Raw(`SELECT material, board, edging FROM plan_parts ORDER BY id`), &launched))
			require.Equal(t, byName["ЛДСП 16 мм"].Code, launched[0].Board)
			require.Equal(t, "ЛДСП 16 мм", launched[0].Material)
			require.Equal(t, "ПВХ 2 мм, 1 сторона", launched[0].Edging)
			require.Equal(t, byName["ЛДСП Дуб"].Code, launched[1].Board)

			// The migrated product is read and replaced like any other.
			svc := catalog.NewService(db)
			p, err := svc.Product(ctx, 1)
			require.NoError(t, err)
			require.Len(t, p.Parts, 3)
			require.Empty(t, p.Slots)
		})
	}
}
