package plan

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/stock"
)

// What the backlog needs is counted a batch of items at a time, an item
// met before replayed rather than worked out again: over a backlog of
// several batches the requirements and shortages are exactly what the
// same items give in one batch, and what each kind of item needs alone,
// times how many there are of it (within the rounding of each alone).
func TestBacklogNeeds_StreamedAsWhole(t *testing.T) {
	t.Parallel()
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s, db := seededPlan(t, d)
			ctx := context.Background()
			kinds := []struct {
				sku  string
				qty  int
				opts catalog.Options
			}{
				{"TMB-PRIK-450", 1, catalog.Options{"корпус": "LDSP16-SONOMA"}},
				{"TMB-PRIK-450", 1, catalog.Options{"корпус": "LDSP16-WHITE"}},
				{"TMB-PRIK-450", 1, nil},
				{"TMB-PRIK-450", 2, nil},
				{"SHK-KUPE-1600", 1, catalog.Options{"фасад": "LDSP16-SHIMO"}},
				{"SHK-RASP-1200", 1, nil},
				{"DIV-CHESTER-3", 3, nil},
				{"NO-SUCH-SKU", 1, nil},
			}
			const n = 2*backlogBatch + 150
			count := make([]int, len(kinds))
			require.NoError(t, dbtest.Fixture(db, func(tx *gorm.DB) error {
				rows := make([]BacklogItem, 0, n)
				for i := range n {
					k := (i*7 + i/5) % len(kinds)
					count[k]++
					rows = append(rows, BacklogItem{ItemID: int64(i + 1), OrderID: int64(i + 1), SKU: kinds[k].sku, Qty: kinds[k].qty,
						Options: kinds[k].opts, ReceivedAt: time.Now().UTC(), EventID: 1, Note: fmt.Sprintf("item %d", i)})
				}
				return tx.CreateInBatches(rows, 200).Error
			}))
			var all []BacklogItem
			require.NoError(t, db.Order("item_id").Find(&all).Error)
			require.Len(t, all, n)

			streamed, err := s.stock.Requirements(ctx, nil, s.BacklogItems(), nil)
			require.NoError(t, err)
			whole, err := s.stock.Requirements(ctx, nil, stock.Items(stockItems(all)), nil)
			require.NoError(t, err)
			require.Equal(t, whole, streamed, "batches of %d give what one batch gives", backlogBatch)
			require.Len(t, streamed.BacklogItems, n, "every item, once")

			shortStreamed, err := s.stock.Shortages(ctx, s.BacklogItems())
			require.NoError(t, err)
			shortWhole, err := s.stock.Shortages(ctx, stock.Items(stockItems(all)))
			require.NoError(t, err)
			require.Equal(t, shortWhole, shortStreamed)
			require.NotEmpty(t, shortStreamed)

			want := map[string]float64{}
			for k, kind := range kinds {
				one, err := s.stock.Requirements(ctx, nil, stock.Items([]stock.Item{{ItemID: 1, SKU: kind.sku, Qty: kind.qty, Options: kind.opts}}), nil)
				require.NoError(t, err)
				for _, m := range one.Materials {
					want[m.Code] += m.Backlog * float64(count[k])
				}
			}
			require.NotEmpty(t, want)
			for _, m := range streamed.Materials {
				half := 0.0005 // each alone is shown to the thousandth of a sheet, to the centimetre
				if m.Unit == catalog.UnitMetre {
					half = 0.005
				}
				require.InDelta(t, want[m.Code], m.Backlog, half*n+1e-6, "%s", m.Code)
				delete(want, m.Code)
			}
			for code, q := range want {
				require.InDelta(t, 0, q, 1e-9, "%s is needed but not counted", code)
			}
		})
	}
}

// stockItems are backlog rows as stock counts them.
func stockItems(rows []BacklogItem) []stock.Item {
	out := make([]stock.Item, len(rows))
	for i, b := range rows {
		out[i] = stock.Item{ItemID: b.ItemID, SKU: b.SKU, Qty: b.Qty, Options: b.Options}
	}
	return out
}
