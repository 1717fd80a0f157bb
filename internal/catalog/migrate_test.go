package catalog_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// Migration 00018 (codes one regardless of case) does not fail on a
// database that holds codes repeated in another case: the first keeps its
// code, the later ones are marked code_duplicate (none renamed), and from
// then on no two unmarked centres share a code in any case.
func TestMigrate_CodeCaseKeepsDuplicates(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.At(t, d, 14)
			require.NoError(t, db.Exec(`INSERT INTO catalog_work_centers (id, code, name, capacity_min_per_day) VALUES
(1, 'CUT', 'Раскрой', 480), (2, 'cut', 'Раскрой 2', 480), (3, 'Cut', 'Раскрой 3', 480), (4, 'SAW', 'Пила', 100000)`).Error)

			_, err := database.Migrate(ctx, db)
			require.NoError(t, err)

			var rows []struct {
				ID            int64
				Code          string
				CodeDuplicate bool
			}
			require.NoError(t, database.Scan(db.Raw(`SELECT id, code, code_duplicate FROM catalog_work_centers ORDER BY id`), &rows))
			require.Len(t, rows, 4)
			for i, code := range []string{"CUT", "cut", "Cut", "SAW"} {
				require.Equal(t, code, rows[i].Code, "no code renamed")
				require.Equal(t, i == 1 || i == 2, rows[i].CodeDuplicate, code)
			}
			err = db.Exec(`INSERT INTO catalog_work_centers (code, name, capacity_min_per_day) VALUES ('saw', 'Пила 2', 480)`).Error
			require.True(t, database.IsUniqueViolation(err), "%v", err)
		})
	}
}
