package floor

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/stock"
)

// launched is a production order of two wardrobes launched on db with the
// demo catalogue, and its parts, units and operations as the launch wrote
// them.
type launched struct {
	order plan.ProdOrder
	parts []plan.Part
	units []plan.Unit
	ops   []plan.Operation
}

func launchTwo(t *testing.T, db *gorm.DB) launched {
	t.Helper()
	ctx := context.Background()
	_, err := catalog.NewService(db).SeedDemo(ctx)
	require.NoError(t, err)
	s := plan.NewService(db, stock.NewService(db, stock.DefaultSettings()))
	s.SetToday(func() time.Time { return time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC) })
	require.NoError(t, db.Create(&plan.BacklogItem{ItemID: 1, OrderID: 1, SKU: "SHK-RASP-1200", Qty: 2, ReceivedAt: time.Now().UTC(), EventID: 1}).Error)
	o, err := s.LaunchProdOrder(ctx, plan.Launch{Items: []int64{1}})
	require.NoError(t, err)
	var l launched
	l.order = o.ProdOrder
	require.NoError(t, db.Where("prod_order_id = ?", o.ID).Order("id").Find(&l.parts).Error)
	require.NoError(t, db.Where("prod_order_id = ?", o.ID).Order("id").Find(&l.units).Error)
	require.NoError(t, db.Where("prod_order_id = ?", o.ID).Order("id").Find(&l.ops).Error)
	require.Len(t, l.units, 2)
	require.NotEmpty(t, l.parts)
	return l
}

// opsOf returns the operations of l that keep to keep, in id order.
func (l launched) opsOf(keep func(plan.Operation) bool) []plan.Operation {
	var out []plan.Operation
	for _, op := range l.ops {
		if keep(op) {
			out = append(out, op)
		}
	}
	return out
}

func setDone(t *testing.T, db *gorm.DB, ops ...plan.Operation) {
	t.Helper()
	ids := make([]int64, 0, len(ops))
	for _, op := range ops {
		ids = append(ids, op.ID)
	}
	require.NoError(t, db.Model(&plan.Operation{}).Where("id IN ?", ids).Update("status", plan.OpDone).Error)
}

// The floor's store, statement by statement, on both databases: what each
// finds, what it leaves out, and what it changes.
func TestStore(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		l := launchTwo(t, db)
		part, unit := l.parts[0], l.units[0]
		partOps := l.opsOf(func(op plan.Operation) bool { return op.PartID != nil && *op.PartID == part.ID })
		unitOps := l.opsOf(func(op plan.Operation) bool {
			return op.Scope == catalog.ScopeItem && op.ItemID == unit.ItemID && op.Unit == unit.Unit
		})
		require.NotEmpty(t, partOps)
		require.NotEmpty(t, unitOps)

		t.Run("codes", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				p, err := partByCode(ctx, db, part.Code)
				require.NoError(t, err)
				require.Equal(t, part.ID, p.ID)
				p, err = partByCode(ctx, db, unit.Code)
				require.NoError(t, err)
				require.Nil(t, p, "a unit's code names no part")
				u, err := unitByCode(ctx, db, unit.Code)
				require.NoError(t, err)
				require.Equal(t, unit.ID, u.ID)
				u, err = unitByCode(ctx, db, part.Code)
				require.NoError(t, err)
				require.Nil(t, u, "a part's code names no unit")
				codes, err := partCodes(ctx, db, []int64{l.parts[2].ID, l.parts[0].ID, l.parts[1].ID}, 2)
				require.NoError(t, err)
				require.Equal(t, []string{l.parts[0].Code, l.parts[1].Code}, codes, "by id, at most the limit")
				codes, err = partCodes(ctx, db, nil, 10)
				require.NoError(t, err)
				require.Empty(t, codes)
			})
		})

		t.Run("operations at a step", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				op, err := partOperationAt(ctx, db, part.ID, partOps[0].Seq)
				require.NoError(t, err)
				require.Equal(t, partOps[0].ID, op.ID)
				op, err = partOperationAt(ctx, db, part.ID, unitOps[0].Seq)
				require.NoError(t, err)
				require.Nil(t, op, "a part has no operation at a unit's step")
				op, err = unitOperationAt(ctx, db, unit, unitOps[0].Seq)
				require.NoError(t, err)
				require.Equal(t, unitOps[0].ID, op.ID)
				op, err = unitOperationAt(ctx, db, unit, partOps[0].Seq)
				require.NoError(t, err)
				require.Nil(t, op, "a unit has no operation of its own at a part's step")
				other := l.units[1]
				op, err = unitOperationAt(ctx, db, other, unitOps[0].Seq)
				require.NoError(t, err)
				require.NotEqual(t, unitOps[0].ID, op.ID, "each unit its own operation")

				got, found, err := operationOf(ctx, db, l.order.ID, partOps[0].ID)
				require.NoError(t, err)
				require.True(t, found)
				require.Equal(t, partOps[0].ID, got.ID)
				_, found, err = operationOf(ctx, db, l.order.ID+1, partOps[0].ID)
				require.NoError(t, err)
				require.False(t, found, "another order's id finds nothing")
			})
		})

		t.Run("route steps", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				steps, err := routeSteps(ctx, db, l.order.ID)
				require.NoError(t, err)
				var want []routeStep
				for _, op := range l.ops {
					s := routeStep{Seq: op.Seq, Name: op.Name, Scope: op.Scope}
					if !slices.Contains(want, s) {
						want = append(want, s)
					}
				}
				slices.SortFunc(want, func(a, b routeStep) int { return a.Seq - b.Seq })
				require.Equal(t, want, steps)
				steps, err = routeSteps(ctx, db, l.order.ID+1)
				require.NoError(t, err)
				require.Empty(t, steps)
			})
		})

		t.Run("order of the route", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				first := unitOps[0]
				before, err := openOperationsBefore(ctx, db, first)
				require.NoError(t, err)
				want := l.opsOf(func(op plan.Operation) bool {
					return op.ItemID == first.ItemID && op.Unit == first.Unit && op.Seq < first.Seq
				})
				require.Equal(t, len(want), len(before), "the unit's operations before its step, of its parts and its own")
				for i := 1; i < len(before); i++ {
					require.LessOrEqual(t, before[i-1].Seq, before[i].Seq, "by step")
				}
				setDone(t, db, want[len(want)-1])
				before, err = openOperationsBefore(ctx, db, first)
				require.NoError(t, err)
				require.Equal(t, len(want)-1, len(before), "a done operation is not open")

				seq, ok, err := nextOpenStep(ctx, db, partOps[0], &part.ID)
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, partOps[0].Seq, seq)
				setDone(t, db, partOps[0])
				seq, ok, err = nextOpenStep(ctx, db, partOps[0], &part.ID)
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, partOps[1].Seq, seq, "the part's next step once its first is done")
				seq, ok, err = nextOpenStep(ctx, db, unitOps[0], nil)
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, unitOps[0].Seq, seq, "a unit's next step is its own")
			})
		})

		t.Run("started", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				op := l.ops[len(l.ops)-1]
				started, err := markStarted(ctx, db, op.ID)
				require.NoError(t, err)
				require.True(t, started)
				now, err := operationByID(ctx, db, op.ID)
				require.NoError(t, err)
				require.Equal(t, plan.OpInProgress, now.Status)
				require.NotNil(t, now.StartedAt)
				started, err = markStarted(ctx, db, op.ID)
				require.NoError(t, err)
				require.False(t, started, "only a pending operation starts")
			})
		})

		t.Run("units", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				status, err := orderStatus(ctx, db, l.order.ID)
				require.NoError(t, err)
				require.Equal(t, plan.StatusLaunched, status)
				status, err = orderStatus(ctx, db, l.order.ID+1)
				require.NoError(t, err)
				require.Empty(t, status)

				done, err := unitsDone(ctx, db, l.order.ID, nil)
				require.NoError(t, err)
				require.Empty(t, done)
				second := l.units[1]
				setDone(t, db, l.opsOf(func(op plan.Operation) bool { return op.ItemID == second.ItemID && op.Unit == second.Unit })...)
				k := unitKey{second.ItemID, second.Unit}
				done, err = unitsDone(ctx, db, l.order.ID, nil)
				require.NoError(t, err)
				require.Equal(t, []unitKey{k}, done, "every operation of the second unit done, and only of it")
				done, err = unitsDone(ctx, db, l.order.ID, &unitKey{unit.ItemID, unit.Unit})
				require.NoError(t, err)
				require.Empty(t, done, "narrowed to the first unit")

				made, err := unitIsMade(ctx, db, l.order.ID, second.ItemID, second.Unit)
				require.NoError(t, err)
				require.False(t, made)
				u, made, err := markUnitMade(ctx, db, l.order.ID, k)
				require.NoError(t, err)
				require.True(t, made)
				require.Equal(t, second.ID, u.ID)
				_, made, err = markUnitMade(ctx, db, l.order.ID, k)
				require.NoError(t, err)
				require.False(t, made, "a unit is made once")
				made, err = unitIsMade(ctx, db, l.order.ID, second.ItemID, second.Unit)
				require.NoError(t, err)
				require.True(t, made)
				made, err = unitIsMade(ctx, db, l.order.ID, unit.ItemID, unit.Unit)
				require.NoError(t, err)
				require.False(t, made, "the other unit is not")
				counts, err := unitsMadeByItem(ctx, db, l.order.ID)
				require.NoError(t, err)
				require.Equal(t, map[int64]int{second.ItemID: 1}, counts)
			})
		})
	})
}
