package plan

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/stock"
)

// The explosion: physical parts per unit, operations in route order, and
// each operation after the right predecessors.
func TestExplode(t *testing.T) {
	t.Parallel()
	product := catalog.Product{SKU: "P", Parts: []catalog.Part{{Seq: 1, Name: "A", Qty: 2}, {Seq: 2, Name: "B", Qty: 1}}}
	route := catalog.Route{Operations: []catalog.Operation{
		{Seq: 1, WorkCenterID: 1, Scope: catalog.ScopePart, Minutes: 1},
		{Seq: 2, WorkCenterID: 2, Scope: catalog.ScopePart, Minutes: 1},
		{Seq: 3, WorkCenterID: 3, Scope: catalog.ScopeItem, Minutes: 1},
		{Seq: 4, WorkCenterID: 1, Scope: catalog.ScopePart, Minutes: 1},
		{Seq: 5, WorkCenterID: 4, Scope: catalog.ScopeItem, Minutes: 1},
	}}
	x := explode([]BacklogItem{{ItemID: 7, SKU: "P", Qty: 2}}, map[string]catalog.Product{"P": product}, route)

	// 2 units × 3 parts; 6 parts × 3 part operations + 2 units × 2 item operations.
	require.Equal(t, launchSize{parts: 6, units: 2, ops: 6*3 + 2*2}, sizeOf([]BacklogItem{{ItemID: 7, SKU: "P", Qty: 2}}, map[string]catalog.Product{"P": product}, route))
	require.Equal(t, 6, x.partsCount)
	require.Len(t, x.parts, 6)
	require.Len(t, x.ops, 6*3+2*2)
	require.Len(t, x.tasks, len(x.ops))
	require.Equal(t, []int{1, 1, 1, 2, 2, 2}, []int{x.parts[0].Unit, x.parts[1].Unit, x.parts[2].Unit, x.parts[3].Unit, x.parts[4].Unit, x.parts[5].Unit})

	type key struct{ seq, unit, part int }
	at := map[key]int{}
	for i, op := range x.ops {
		at[key{op.Seq, op.Unit, x.opPart[i]}] = i
		require.Equal(t, op.Scope == catalog.ScopePart, x.opPart[i] >= 0)
		for _, a := range x.tasks[i].After {
			require.Less(t, a, i, "predecessors come first")
		}
	}
	after := func(seq, unit, part int) []int { return x.tasks[at[key{seq, unit, part}]].After }
	require.Empty(t, after(1, 1, 0), "the first operation waits for nothing")
	require.Equal(t, []int{at[key{1, 1, 0}]}, after(2, 1, 0), "part after part: the same part's previous operation")
	require.ElementsMatch(t, []int{at[key{2, 1, 0}], at[key{2, 1, 1}], at[key{2, 1, 2}]}, after(3, 1, -1), "item after parts: every part of the unit")
	require.ElementsMatch(t, []int{at[key{2, 2, 3}], at[key{2, 2, 4}], at[key{2, 2, 5}]}, after(3, 2, -1), "and only of its own unit")
	require.Equal(t, []int{at[key{3, 2, -1}]}, after(4, 2, 4), "part after item: the unit's item operation")
	require.ElementsMatch(t, []int{at[key{4, 1, 0}], at[key{4, 1, 1}], at[key{4, 1, 2}]}, after(5, 1, -1))

	// The schedule of an exploded launch keeps every predecessor ahead.
	centers := map[int64]Center{}
	for id := int64(1); id <= 4; id++ {
		centers[id] = Center{Capacity: 2, Weekdays: []int{1, 2, 3, 4, 5}}
	}
	p, err := Schedule(Problem{Today: day("2026-11-16"), Centers: centers, Tasks: x.tasks})
	require.NoError(t, err)
	for i, s := range p.Slots {
		for _, a := range x.tasks[i].After {
			require.False(t, s.Start.Before(p.Slots[a].End))
		}
	}
}

// seededPlan is a plan service over a fresh database with the demo catalog.
func seededPlan(tb testing.TB, d database.Dialect) (*Service, *gorm.DB) {
	tb.Helper()
	db := dbtest.New(tb, d)
	_, err := catalog.NewService(db).SeedDemo(context.Background())
	require.NoError(tb, err)
	s := NewService(db, stock.NewService(db, stock.DefaultSettings()))
	s.SetToday(func() time.Time { return time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC) })
	return s, db
}

// receiveItem puts an item in the backlog, as the plan.backlog subscriber does.
func receiveItem(tb testing.TB, db *gorm.DB, id int64, sku string, qty int) {
	tb.Helper()
	require.NoError(tb, db.Create(&BacklogItem{ItemID: id, OrderID: id, SKU: sku, Qty: qty, ReceivedAt: time.Now().UTC(), EventID: 1}).Error)
}

// BenchmarkLaunchProdOrder launches ten wardrobes (180 parts, 560
// operations) at a time on a growing load.
func BenchmarkLaunchProdOrder(b *testing.B) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		b.Run(string(d), func(b *testing.B) {
			s, db := seededPlan(b, d)
			ctx := context.Background()
			for i := range b.N {
				id := int64(i + 1)
				b.StopTimer()
				receiveItem(b, db, id, "SHK-RASP-1200", 10)
				b.StartTimer()
				o, err := s.LaunchProdOrder(ctx, Launch{Items: []int64{id}})
				if err != nil {
					b.Fatal(err)
				}
				if o.OpsCount != 560 {
					b.Fatalf("ops_count %d", o.OpsCount)
				}
			}
		})
	}
}

// BenchmarkSchedule places 2,240 operations (40 wardrobes) after 10,000
// operations already launched.
func BenchmarkSchedule(b *testing.B) {
	week := []int{1, 2, 3, 4, 5}
	centers := map[int64]Center{
		1: {Capacity: 960, Weekdays: week}, 2: {Capacity: 960, Weekdays: week}, 3: {Capacity: 480, Weekdays: week},
		4: {Capacity: 960, Weekdays: week}, 5: {Capacity: 480, Weekdays: week, Holidays: []string{"2026-12-31", "2027-01-01"}},
	}
	var route catalog.Route
	for i, sc := range []string{catalog.ScopePart, catalog.ScopePart, catalog.ScopePart, catalog.ScopeItem, catalog.ScopeItem} {
		route.Operations = append(route.Operations, catalog.Operation{Seq: i + 1, WorkCenterID: int64(i + 1), Scope: sc, Minutes: float64(2 + i)})
	}
	product := catalog.Product{SKU: "P", Parts: []catalog.Part{{Seq: 1, Qty: 18}}}
	x := explode([]BacklogItem{{ItemID: 1, SKU: "P", Qty: 40}}, map[string]catalog.Product{"P": product}, route)
	var load []Booking
	for i := range 10000 {
		load = append(load, Booking{Center: int64(i%5 + 1), Day: day("2026-11-16").AddDate(0, 0, i/200), Level: 400})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Schedule(Problem{Today: day("2026-11-16"), Centers: centers, Load: load, Tasks: x.tasks}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(x.tasks)), "ops")
}

func TestLaunchProdOrder_ETAOnLoad(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		_, err := catalog.NewService(db).SeedDemo(context.Background())
		require.NoError(t, err)
		s := NewService(db, stock.NewService(db, stock.DefaultSettings()))
		s.SetToday(func() time.Time { return time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC) })
		ctx := context.Background()
		// Each launch of 14 wardrobes needs 1,008 minutes of cutting at 960 a
		// day and 504 of drilling at 480: more than a day of each, so every
		// launch ends later than the one before.
		prev := ""
		for i := range 3 {
			id := int64(100 + i)
			receiveItem(t, db, id, "SHK-RASP-1200", 14)
			o, err := s.LaunchProdOrder(ctx, Launch{Items: []int64{id}})
			require.NoError(t, err)
			require.Greater(t, o.ETA.String(), prev, fmt.Sprint("launch ", i))
			prev = o.ETA.String()
		}
	})
}

// The schema keeps an item in at most one live production order, whatever
// the code above it does; a cancelled (released) launch lets it go.
func TestProdOrderItems_OneLiveLaunchPerItem(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		order := func() int64 {
			o := ProdOrder{Status: StatusLaunched, Route: RouteRef{ID: 1, Name: "r"}, ETA: database.DateOf(time.Now()), PlannedETA: database.DateOf(time.Now())}
			require.NoError(t, dbtest.Fixture(db, func(tx *gorm.DB) error {
				return tx.Omit("Items", "CreatedAt", "StartedAt", "CompletedAt", "CancelledAt").Create(&o).Error
			}))
			return o.ID
		}
		// The rows are written as the schema sees them, not as a launch does.
		create := func(v any) error { return dbtest.Fixture(db, func(tx *gorm.DB) error { return tx.Create(v).Error }) }
		item := func(prodOrderID int64) ProdItem {
			return ProdItem{ProdOrderID: prodOrderID, ItemID: 42, OrderID: 1, ProductID: 1, SKU: "X", Qty: 1, ReceivedAt: time.Now().UTC(), EventID: 1}
		}
		first, second := order(), order()
		require.NoError(t, create(&[]ProdItem{item(first)}))
		err := create(&[]ProdItem{item(second)})
		require.True(t, database.IsUniqueViolation(err), "%v", err)
		require.NoError(t, dbtest.Fixture(db, func(tx *gorm.DB) error {
			return tx.Model(&ProdItem{}).Where("prod_order_id = ?", first).Update("released", true).Error
		}))
		require.NoError(t, create(&[]ProdItem{item(second)}))
	})
}

// A launch's size is counted from the quantities, and a count that would
// overflow stops at its ceiling instead of wrapping round to a small number.
func TestSizeOf_Overflow(t *testing.T) {
	t.Parallel()
	route := catalog.Route{Operations: []catalog.Operation{{Scope: catalog.ScopePart}, {Scope: catalog.ScopeItem}}}
	huge := catalog.Product{SKU: "H", Parts: []catalog.Part{{Qty: math.MaxInt / 2}, {Qty: math.MaxInt / 2}, {Qty: 7}}}
	s := sizeOf([]BacklogItem{{SKU: "H", Qty: 3}}, map[string]catalog.Product{"H": huge}, route)
	require.Equal(t, int64(math.MaxInt64), s.parts)
	require.Equal(t, int64(math.MaxInt64), s.ops)
	require.Equal(t, int64(3), s.units)
	require.Contains(t, countText(s.parts), "more than")

	big := catalog.Product{SKU: "B", Parts: []catalog.Part{{Qty: 1 << 40}}}
	s = sizeOf([]BacklogItem{{SKU: "B", Qty: 1 << 22}, {SKU: "B", Qty: 1 << 22}}, map[string]catalog.Product{"B": big}, route)
	require.Equal(t, int64(math.MaxInt64), s.parts, "2 × 2^62 parts")
	require.Equal(t, int64(math.MaxInt64), s.ops)
}

// A launch far over the limits (5 items × 10,000 wardrobes of 18 parts:
// 900,000 parts) is refused from its counts before a part is built, so it
// allocates about what a small launch does; building the parts first
// allocated hundreds of megabytes. The test does not run in parallel: it
// reads the process's allocation counter.
func TestLaunchProdOrder_TooLargeIsRefusedBeforeBuilding(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			s, db := seededPlan(t, d)
			ctx := context.Background()
			ids := []int64{1, 2, 3, 4, 5}
			for _, id := range ids {
				receiveItem(t, db, id, "SHK-RASP-1200", 10_000)
			}
			launch := func() error {
				_, err := s.LaunchProdOrder(ctx, Launch{Items: ids})
				return err
			}
			err := launch() // warm up: prepared statements, caches
			require.Equal(t, apperr.EINVALID, apperr.Code(err), "%v", err)
			fields := apperr.As(err).Fields
			require.Len(t, fields, 1)
			require.Equal(t, "items", fields[0].Field)
			// 5 × 10,000 × 18 parts; 900,000 parts × 3 part operations + 50,000 units × 2 item operations.
			require.Contains(t, fields[0].Message, "make 900000 parts and 2800000 operations")

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			err = launch()
			runtime.ReadMemStats(&after)
			require.Equal(t, apperr.EINVALID, apperr.Code(err), "%v", err)
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("a refused launch of 900,000 parts allocated %d KiB", allocated>>10)
			require.Less(t, allocated, uint64(2<<20), "a refused launch must not build its parts (900,000 parts take >100 MiB)")

			var n int64
			require.NoError(t, db.Model(&ProdOrder{}).Count(&n).Error)
			require.Zero(t, n)
			require.NoError(t, db.Model(&BacklogItem{}).Count(&n).Error)
			require.Equal(t, int64(len(ids)), n, "the items stay in the backlog")
		})
	}
}
