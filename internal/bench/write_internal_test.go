package bench

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/sales"
)

// statements records the statements gorm runs, their values blanked out.
// The event's insert is not among them: it travels with the commit, past
// gorm (database.WithCommit).
type statements struct {
	logger.Interface
	mu   sync.Mutex
	sqls []string
}

var values = regexp.MustCompile(`'(?:[^']|'')*'|\b\d+(?:\.\d+)?\b`)

func (s *statements) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	q, _ := fc()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sqls = append(s.sqls, values.ReplaceAllString(q, "?"))
}

func (s *statements) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sqls
	s.sqls = nil
	return out
}

// The write overhead compares the sales module's order creation with the
// bench's copy of it without the event: the copy must run the same
// statements, or the ratio measures the difference between the two.
func TestCreateOrderWithoutEvent_FollowsSales(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dbtest.New(t, database.Postgres)
	_, err := catalog.NewService(db).SeedDemo(ctx)
	require.NoError(t, err)
	var skus []string
	require.NoError(t, database.Scan(db.Raw("SELECT sku FROM catalog_products ORDER BY id LIMIT 2"), &skus))
	require.Len(t, skus, 2)
	in := func() sales.NewOrder {
		return sales.NewOrder{Customer: sales.Customer{Name: "Bench customer", Phone: "+7 900 000-00-00"},
			Items: []sales.NewItem{{SKU: skus[0], Qty: 1}, {SKU: skus[1], Qty: 2}}}
	}
	rec := &statements{Interface: logger.Discard}
	recorded := db.Session(&gorm.Session{Logger: rec})

	_, err = sales.NewService(recorded).CreateOrder(ctx, in())
	require.NoError(t, err)
	withEvent := rec.take()
	// Without its event, the order is a change the tests' journal check
	// refuses, unless it is written as a fixture: a transaction around it,
	// which makes its own a savepoint (left out).
	require.NoError(t, dbtest.Fixture(db, func(tx *gorm.DB) error {
		return createOrderWithoutEvent(ctx, tx.Session(&gorm.Session{Logger: rec}), in())
	}))
	withoutEvent := slices.DeleteFunc(rec.take(), func(q string) bool { return strings.Contains(q, "SAVEPOINT ") })
	require.Equal(t, withEvent, withoutEvent)
	require.GreaterOrEqual(t, len(withEvent), 4, "the order, its products, its items, the read back: %q", withEvent)
}

// The kinds take turns block by block, the pair's order flipping from one
// pair to the next (ABBA), and each block's mean is its own kind's.
func TestAlternate_BlocksInTurn(t *testing.T) {
	t.Parallel()
	var order []bool
	var calls []int
	without, with, err := alternate(3, 2, func(withEvent bool, i int) error {
		order = append(order, withEvent)
		calls = append(calls, i)
		if withEvent {
			// the event's cost, in this test: long beside what a loaded
			// machine's scheduler may add to a call (2 ms was once
			// outlasted by 6.8 ms beside stress-ng)
			time.Sleep(100 * time.Millisecond)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []bool{false, false, true, true, true, true, false, false, false, false, true, true}, order)
	require.Equal(t, []int{0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5}, calls, "each pair writes the same items with and without")
	require.Len(t, without, 3)
	require.Len(t, with, 3)
	for p := range with {
		require.GreaterOrEqual(t, with[p]-without[p], 50_000.0, "pair %d: the 100 ms a call with the event took, in µs", p)
	}
	require.Equal(t, 3.0, pairMedian([]float64{5, 1, 3, 2}), "the upper middle of an even count, as the peers take it")
	require.Equal(t, 2.0, pairMedian([]float64{3, 1, 2}))
}
