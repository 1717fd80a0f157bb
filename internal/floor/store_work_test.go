package floor

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/platform/page"
	"github.com/tsekh/tsekh/internal/stock"
)

func idsOfParts(ps []plan.Part) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func (l launched) partsOf(keep func(plan.Part) bool) []plan.Part {
	var out []plan.Part
	for _, p := range l.parts {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

// The store's statements of work done, closing, the saw, scrap and the
// lists, on both databases.
func TestStore_Work(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		l := launchTwo(t, db)
		steps, err := materialSteps(ctx, db, l.order.ID)
		require.NoError(t, err)
		require.Positive(t, steps.Cut)
		require.Equal(t, l.order.MaterialSteps(), steps)

		t.Run("done", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				cut := l.opsOf(func(op plan.Operation) bool { return op.Seq == steps.Cut })
				_, err := markStarted(ctx, db, cut[0].ID)
				require.NoError(t, err)
				n, err := markDone(ctx, db, []int64{cut[0].ID, cut[1].ID}, &events.Actor{ID: 7, Name: "мастер"})
				require.NoError(t, err)
				require.EqualValues(t, 2, n)
				n, err = markDone(ctx, db, []int64{cut[1].ID, cut[2].ID}, nil)
				require.NoError(t, err)
				require.EqualValues(t, 1, n, "one of the two was done already")
				for _, op := range cut[:3] {
					got, err := operationByID(ctx, db, op.ID)
					require.NoError(t, err)
					require.Equal(t, plan.OpDone, got.Status)
					require.NotNil(t, got.CompletedAt)
					require.NotNil(t, got.StartedAt, "a pending operation done is started too")
				}
				got, err := operationByID(ctx, db, cut[0].ID)
				require.NoError(t, err)
				require.Equal(t, "мастер", *got.CompletedBy)
				require.EqualValues(t, 7, *got.CompletedByID)

				left, err := hasOpenOperations(ctx, db, l.order.ID)
				require.NoError(t, err)
				require.True(t, left)
				setDone(t, db, l.ops...)
				left, err = hasOpenOperations(ctx, db, l.order.ID)
				require.NoError(t, err)
				require.False(t, left)
			})
		})

		t.Run("needs", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				a, b, c := l.parts[0], l.parts[1], l.parts[2]
				sheet := stock.SheetRef{PlanID: 9, N: 2}
				require.NoError(t, layOut(ctx, db, a.ID, sheet, 0.25))
				require.NoError(t, layOut(ctx, db, b.ID, sheet, 0.5))
				require.NoError(t, placeOnSheet(ctx, db, []int64{c.ID}, sheet))
				got, err := partByID(ctx, db, b.ID)
				require.NoError(t, err)
				require.InDelta(t, 0.5, got.BoardNeed, 1e-9)
				require.Equal(t, int64(9), *got.SheetPlanID)
				require.Equal(t, 2, *got.SheetN)
				got, err = partByID(ctx, db, c.ID)
				require.NoError(t, err)
				require.InDelta(t, c.BoardNeed, got.BoardNeed, 1e-9, "placing a part on a sheet leaves its need")

				needs, err := lockNeedsOfParts(ctx, db, []int64{a.ID, l.parts[5].ID})
				require.NoError(t, err)
				require.Equal(t, []int64{a.ID, l.parts[5].ID}, []int64{needs[0].ID, needs[1].ID})
				require.InDelta(t, 0.25, needs[0].BoardNeed, 1e-9)
				needs, err = lockNeedsOnSheet(ctx, db, sheet)
				require.NoError(t, err)
				var on []int64
				for _, n := range needs {
					on = append(on, n.ID)
				}
				want := []int64{a.ID, b.ID}
				if c.BoardNeed > 0 {
					want = append(want, c.ID)
				}
				require.Equal(t, want, on, "the live parts on the sheet that need something")
				require.NoError(t, clearBoardNeeds(ctx, db, []int64{a.ID}))
				needs, err = lockNeedsOnSheet(ctx, db, sheet)
				require.NoError(t, err)
				require.Len(t, needs, len(want)-1, "a part that needs nothing is not read")
				needs, err = lockNeedsOnSheet(ctx, db, stock.SheetRef{PlanID: 9, N: 3})
				require.NoError(t, err)
				require.Empty(t, needs)
			})
		})

		t.Run("close", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				require.NoError(t, db.Model(&plan.ProdOrder{}).Where("id = ?", l.order.ID).Update("status", plan.StatusInProgress).Error)
				cut := l.opsOf(func(op plan.Operation) bool { return op.Seq == steps.Cut })
				setDone(t, db, cut[0])
				sheet := stock.SheetRef{PlanID: 4, N: 1}
				require.NoError(t, placeOnSheet(ctx, db, []int64{*cut[0].PartID, *cut[1].PartID}, sheet))

				require.NoError(t, releaseParts(ctx, db, l.order.ID, steps.Cut))
				done, err := partByID(ctx, db, *cut[0].PartID)
				require.NoError(t, err)
				require.Zero(t, done.BoardNeed)
				require.NotNil(t, done.SheetPlanID, "a part cut keeps its sheet")
				uncut, err := partByID(ctx, db, *cut[1].PartID)
				require.NoError(t, err)
				require.Zero(t, uncut.BoardNeed)
				require.Nil(t, uncut.SheetPlanID, "a part not cut lies on no sheet any more")

				require.NoError(t, dropOpenOperations(ctx, db, l.order.ID))
				ops, err := orderOperations(ctx, db, l.order.ID)
				require.NoError(t, err)
				require.Equal(t, []int64{cut[0].ID}, []int64{ops[0].ID}, "only what was done stays")
				require.Len(t, ops, 1)
				require.NoError(t, plan.VerifySchedules(ctx, db), "the operations dropped left the order's schedule")

				it := l.order.Items[0]
				require.NoError(t, releaseItem(ctx, db, l.order.ID, contracts.ClosedQuantities{ItemID: it.ItemID, Made: 1, Returned: 1}))
				var item plan.ProdItem
				require.NoError(t, db.Where("prod_order_id = ? AND item_id = ?", l.order.ID, it.ItemID).First(&item).Error)
				require.True(t, item.Released)

				closed, err := markClosed(ctx, db, l.order.ID, Close{Reason: "брак партии", Rest: contracts.RestBacklog}, &events.Actor{ID: 3, Name: "плановик"})
				require.NoError(t, err)
				require.True(t, closed)
				status, err := orderStatus(ctx, db, l.order.ID)
				require.NoError(t, err)
				require.Equal(t, plan.StatusClosed, status)
				closed, err = markClosed(ctx, db, l.order.ID, Close{Reason: "again", Rest: contracts.RestBacklog}, nil)
				require.NoError(t, err)
				require.False(t, closed, "only an order in progress closes")

				units, err := unitsNotMade(ctx, db, l.order.ID)
				require.NoError(t, err)
				require.Len(t, units, 2)
				require.NoError(t, markClosedBack(ctx, db, []int64{units[1].ID}))
				u, err := unitByCode(ctx, db, units[1].Code)
				require.NoError(t, err)
				require.True(t, u.ClosedBack)
				u, err = unitByCode(ctx, db, units[0].Code)
				require.NoError(t, err)
				require.False(t, u.ClosedBack)
			})
		})

		t.Run("saw", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				ids := idsOfParts(l.parts[:4])
				parts, err := liveParts(ctx, db, []int64{ids[3], ids[1], ids[0], ids[2]})
				require.NoError(t, err)
				require.Equal(t, ids, idsOfParts(parts), "in id order")
				scrapped, err := markScrapped(ctx, db, ids[1], steps.Cut, "chipped", "угол", nil)
				require.NoError(t, err)
				require.True(t, scrapped)
				parts, err = liveParts(ctx, db, ids)
				require.NoError(t, err)
				require.Equal(t, []int64{ids[0], ids[2], ids[3]}, idsOfParts(parts), "a scrapped part is not live")

				cut := l.opsOf(func(op plan.Operation) bool { return op.Seq == steps.Cut && slices.Contains(ids, *op.PartID) })
				setDone(t, db, cut[0])
				open, err := openOperationsOfParts(ctx, db, []int64{ids[3], ids[0], ids[2]}, steps.Cut)
				require.NoError(t, err)
				require.Len(t, open, 2, "the cut one is done")
				require.Less(t, open[0].ID, open[1].ID)
				open, err = openStepsOfParts(ctx, db, []int64{ids[0]})
				require.NoError(t, err)
				require.Len(t, open, len(l.opsOf(func(op plan.Operation) bool { return op.PartID != nil && *op.PartID == ids[0] }))-1)
				for _, op := range open {
					require.Equal(t, l.order.ID, op.ProdOrderID)
					require.NotEqual(t, steps.Cut, op.Seq)
				}
				at, err := stepOperations(ctx, db, l.order.ID, steps.Cut)
				require.NoError(t, err)
				require.Len(t, at, len(l.opsOf(func(op plan.Operation) bool { return op.Seq == steps.Cut })))
			})
		})

		t.Run("scrap", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				p := l.parts[3]
				missing, err := partByID(ctx, db, -1)
				require.NoError(t, err)
				require.Nil(t, missing)
				ops, err := partOperations(ctx, db, p.ID)
				require.NoError(t, err)
				require.NoError(t, plan.FillSlots(ctx, db, ops))
				require.False(t, ops[0].EndDay.IsZero(), "an operation's slot is its order's schedule's")
				require.True(t, slices.IsSortedFunc(ops, func(a, b plan.Operation) int { return a.Seq - b.Seq }))
				setDone(t, db, ops[0])
				scrapped, err := markScrapped(ctx, db, p.ID, ops[1].Seq, "chipped", "скол", &events.Actor{ID: 2, Name: "оператор"})
				require.NoError(t, err)
				require.True(t, scrapped)
				scrapped, err = markScrapped(ctx, db, p.ID, ops[1].Seq, "chipped", "", nil)
				require.NoError(t, err)
				require.False(t, scrapped, "a part is scrapped once")
				got, err := partByID(ctx, db, p.ID)
				require.NoError(t, err)
				require.Equal(t, plan.PartScrapped, got.Status)
				require.Equal(t, ops[1].Seq, *got.ScrapSeq)
				require.Equal(t, "оператор", *got.ScrappedBy)
				require.NoError(t, dropOpenOperationsOfPart(ctx, db, l.order.ID, p.ID))
				left, err := partOperations(ctx, db, p.ID)
				require.NoError(t, err)
				require.Equal(t, []int64{ops[0].ID}, []int64{left[0].ID})
				require.Len(t, left, 1)

				recut := *got
				recut.ID, recut.Code, recut.Status, recut.RecutOf, recut.Scrap = 0, recutCode(p.Code), plan.PartLive, &p.ID, plan.Scrap{}
				require.NoError(t, insertPart(ctx, db, &recut))
				require.Positive(t, recut.ID)
				again := []plan.Operation{ops[0], ops[1]}
				for i := range again {
					again[i].ID, again[i].PartID, again[i].Status = 0, &recut.ID, plan.OpPending
				}
				require.NoError(t, insertOperations(ctx, db, again))
				require.NoError(t, insertOperations(ctx, db, nil))
				ops, err = partOperations(ctx, db, recut.ID)
				require.NoError(t, err)
				require.Len(t, ops, 2)
				require.NoError(t, plan.VerifySchedules(ctx, db), "the re-cut's operations joined the order's schedule")
				require.NoError(t, plan.FillSlots(ctx, db, ops))
				require.Equal(t, again[0].EndDay, ops[0].EndDay, "with the slots they were given")

				codes, err := recutsOf(ctx, db, []int64{p.ID, l.parts[0].ID})
				require.NoError(t, err)
				require.Equal(t, map[int64]string{p.ID: recut.Code}, codes)
				waiting, err := waitingRecuts(ctx, db, 10)
				require.NoError(t, err)
				require.Equal(t, []int64{recut.ID}, idsOfParts(waiting))
				setDone(t, db, ops[0])
				waiting, err = waitingRecuts(ctx, db, 10)
				require.NoError(t, err)
				require.Empty(t, waiting, "a re-cut through its first step waits no more")
			})
		})

		t.Run("lists", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				second := l.partsOf(func(p plan.Part) bool { return p.Unit == 2 })
				got, err := partsPage(ctx, db, l.order.ID, page.Request{Limit: 5}, PartFilter{Unit: 2})
				require.NoError(t, err)
				require.Equal(t, idsOfParts(second[:6]), idsOfParts(got), "a page of the unit's parts, one more than its limit")
				got, err = partsPage(ctx, db, l.order.ID, page.Request{Limit: 100, After: second[2].ID}, PartFilter{Unit: 2})
				require.NoError(t, err)
				require.Equal(t, idsOfParts(second[3:]), idsOfParts(got), "after the cursor")

				cut := l.opsOf(func(op plan.Operation) bool { return op.Seq == steps.Cut })
				setDone(t, db, cut[0], cut[1])
				require.NoError(t, db.Model(&plan.Operation{}).Where("id = ?", cut[2].ID).Update("status", plan.OpInProgress).Error)
				_, err = markScrapped(ctx, db, *cut[3].PartID, steps.Cut, "chipped", "", nil)
				require.NoError(t, err)
				filter := func(f PartFilter) []int64 {
					got, err := partsPage(ctx, db, l.order.ID, page.Request{Limit: 1000}, f)
					require.NoError(t, err)
					return idsOfParts(got)
				}
				require.Equal(t, []int64{*cut[0].PartID, *cut[1].PartID}, filter(PartFilter{Step: steps.Cut, State: StateDone}))
				require.Equal(t, []int64{*cut[2].PartID}, filter(PartFilter{Step: steps.Cut, State: StateInProgress}))
				require.Equal(t, []int64{*cut[3].PartID}, filter(PartFilter{Step: steps.Cut, State: StateScrapped}))
				require.Equal(t, []int64{*cut[3].PartID}, filter(PartFilter{State: StateScrapped}))
				require.Len(t, filter(PartFilter{Step: steps.Cut}), len(l.parts))
				require.Len(t, filter(PartFilter{State: StatePending}), len(l.parts)-4, "a part with a step done or under way is not pending")
				require.Equal(t, []int64{*cut[0].PartID, *cut[1].PartID, *cut[2].PartID}, filter(PartFilter{State: StateInProgress}))
				require.Empty(t, filter(PartFilter{State: StateDone}))

				scope, err := stepScope(ctx, db, l.order.ID, steps.Cut)
				require.NoError(t, err)
				require.Equal(t, "part", scope)
				scope, err = stepScope(ctx, db, l.order.ID, 99)
				require.NoError(t, err)
				require.Empty(t, scope)

				ops, err := operationsOfParts(ctx, db, []int64{l.parts[0].ID, l.parts[1].ID})
				require.NoError(t, err)
				require.Len(t, ops, len(l.opsOf(func(op plan.Operation) bool {
					return op.PartID != nil && (*op.PartID == l.parts[0].ID || *op.PartID == l.parts[1].ID)
				})))
				require.True(t, slices.IsSortedFunc(ops, func(a, b plan.Operation) int { return a.Seq - b.Seq }))

				live, err := orderLiveParts(ctx, db, l.order.ID, 3)
				require.NoError(t, err)
				require.Equal(t, idsOfParts(l.parts[:3]), idsOfParts(live))
				all, err := orderLiveParts(ctx, db, l.order.ID, 1000)
				require.NoError(t, err)
				require.Len(t, all, len(l.parts)-1, "not the scrapped one")
				both, err := partsByID(ctx, db, []int64{l.parts[4].ID, l.parts[0].ID})
				require.NoError(t, err)
				require.Equal(t, []int64{l.parts[0].ID, l.parts[4].ID}, idsOfParts(both))

				found, err := existingOrders(ctx, db, []int64{l.order.ID, l.order.ID + 1})
				require.NoError(t, err)
				require.Equal(t, []int64{l.order.ID}, found)
				items, err := itemsOfOrders(ctx, db, []int64{l.order.ID})
				require.NoError(t, err)
				require.Len(t, items, len(l.order.Items))
				require.Equal(t, "SHK-RASP-1200", items[0].SKU)
				codes, err := unitCodes(ctx, db, l.order.ID)
				require.NoError(t, err)
				require.Equal(t, map[unitKey]string{{l.units[0].ItemID, 1}: l.units[0].Code, {l.units[1].ItemID, 2}: l.units[1].Code}, codes)

				var fittings []plan.Fitting
				require.NoError(t, db.Where("prod_order_id = ?", l.order.ID).Find(&fittings).Error)
				want := map[string]int{}
				for _, f := range fittings {
					want[f.Code] += f.Qty
				}
				sums, err := fittingsOfOrders(ctx, db, []int64{l.order.ID})
				require.NoError(t, err)
				got2 := map[string]int{}
				for _, f := range sums {
					got2[f.Code] += f.Qty
				}
				require.Equal(t, want, got2)
				require.Len(t, sums, len(want), "one row a code")

				rows, err := partRows(ctx, db, []int64{l.order.ID}, "status = ?", plan.PartLive)
				require.NoError(t, err)
				n := 0
				for _, r := range rows {
					n += r.N
				}
				require.Equal(t, len(l.parts)-1, n, "every live part once, identical ones summed")
				require.Less(t, len(rows), len(l.parts)-1, "a wardrobe has identical parts")
			})
		})
	})
}

// Every statement of the store has its case: a function of a store*.go
// file that no test calls fails this test.
func TestStore_EveryStatementHasACase(t *testing.T) {
	t.Parallel()
	dbtest.EveryStatementHasACase(t, "firstOperation") // the query of partOperationAt and unitOperationAt
}
