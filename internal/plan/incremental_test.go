package plan

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// planSnapshot is the whole schedule: the slot of every operation of the
// live orders and every live order's planned and promised ETA.
type planSnapshot struct {
	Ops    []string
	Orders []string
}

func snapshotPlan(t *testing.T, db *gorm.DB) planSnapshot {
	t.Helper()
	require.NoError(t, VerifySchedules(context.Background(), db))
	scheds, _, err := liveSchedules(context.Background(), db, "1 = 1")
	require.NoError(t, err)
	var ops []liveOp
	for _, s := range scheds {
		ops = append(ops, s...)
	}
	slices.SortFunc(ops, func(a, b liveOp) int { return cmp.Compare(a.ID, b.ID) })
	var orders []struct {
		ID              int64
		Priority        int
		ETA, PlannedETA database.Date
	}
	require.NoError(t, database.Scan(db.Table("plan_prod_orders").Select("id, priority, eta, planned_eta").
		Where("status IN ?", []string{StatusLaunched, StatusInProgress}).Order("id"), &orders))
	var out planSnapshot
	for _, o := range ops {
		sl := slotOfBlob(o.Slot)
		out.Ops = append(out.Ops, fmt.Sprintf("op %d: %s %.6f – %s %.6f", o.ID, sl.Start.Day.Format(time.DateOnly), sl.Start.Min,
			sl.End.Day.Format(time.DateOnly), sl.End.Min))
	}
	for _, o := range orders {
		out.Orders = append(out.Orders, fmt.Sprintf("order %d (priority %d): eta %s, planned %s", o.ID, o.Priority, o.ETA, o.PlannedETA))
	}
	return out
}

// A launch and a change of priority re-plan only the order and what is
// behind it in the plan, a work centre's new capacity only the orders from
// the first with work on it; after every step of a random sequence of them
// the schedule is exactly what a re-plan of everything gives (at the same
// moment: the clock stands still here, as within one instant).
func TestIncremental_SameAsFullReplan(t *testing.T) {
	t.Parallel()
	for k, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s, db := seededPlan(t, d)
			s.SetNow(func() time.Time { return time.Date(2026, 11, 16, 10, 30, 0, 0, time.UTC) })
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(43, uint64(k)))
			skus := []string{"TMB-PRIK-450", "SHK-KUPE-1600", "SHK-RASP-1200", "DIV-CHESTER-3"}
			var live []int64
			var centers []int64
			require.NoError(t, database.Scan(db.Raw("SELECT id FROM catalog_work_centers ORDER BY id"), &centers))
			moves, launches, changes, capacities := 0, 0, 0, 0
			// Changes of priority whose orders behind both places all stayed,
			// some of which were placed again (one at a time here, the load
			// checked after each), and all of which were.
			settled := map[string]int{}
			s.tailBatch = 1
			s.settled = func(placed, behind int) {
				switch {
				case placed == 0:
					settled["none"]++
				case placed < behind:
					settled["some"]++
				default:
					settled["all"]++
				}
			}
			for step := range 40 {
				what := "launch"
				switch {
				case len(live) > 2 && rng.IntN(5) == 0:
					wc, minutes := centers[rng.IntN(len(centers))], 60*(2+rng.IntN(14))
					changeCapacity(t, s, db, wc, minutes)
					what = fmt.Sprintf("capacity of centre %d to %d minutes", wc, minutes)
					capacities++
				case len(live) > 2 && rng.IntN(5) < 2:
					id, p := live[rng.IntN(len(live))], rng.IntN(5)-2
					ch, err := s.SetPriority(ctx, id, p)
					require.NoError(t, err)
					require.LessOrEqual(t, ch.Replan.Replanned, len(live))
					what = fmt.Sprintf("priority of %d to %d (%d re-planned)", id, p, ch.Replan.Replanned)
					changes++
				default:
					item := int64(step + 1)
					receiveItem(t, db, item, skus[rng.IntN(len(skus))], 1+rng.IntN(3))
					o, err := s.LaunchProdOrder(ctx, Launch{Items: []int64{item}, Priority: rng.IntN(5) - 2})
					require.NoError(t, err)
					live = append(live, o.ID)
					launches++
				}
				got := snapshotPlan(t, db)
				full, err := s.Replan(ctx)
				require.NoError(t, err)
				require.Equal(t, got, snapshotPlan(t, db), "step %d (%s): a re-plan of everything moves nothing", step, what)
				require.Empty(t, full.Moved, "step %d (%s)", step, what)
				moves += len(got.Ops)
			}
			require.Positive(t, changes)
			t.Logf("changes of priority whose orders behind were placed again: none %d, some %d, all %d", settled["none"], settled["some"], settled["all"])
			require.Positive(t, settled["none"], "a change whose orders behind stay")
			require.Positive(t, settled["some"]+settled["all"], "a change that moves orders behind")
			require.Positive(t, capacities)
			require.Positive(t, launches)
			require.Positive(t, moves)
		})
	}
}

// changeCapacity gives work centre wc minutes a day and has the plan follow
// its work_center.updated, as the plan.capacity subscriber does.
func changeCapacity(t *testing.T, s *Service, db *gorm.DB, wc int64, minutes int) {
	t.Helper()
	ctx := context.Background()
	cat := catalog.NewService(db)
	w, err := cat.WorkCenter(ctx, wc)
	require.NoError(t, err)
	_, err = cat.UpdateWorkCenter(ctx, wc, catalog.WorkCenterInput{Code: w.Code, Name: w.Name, CapacityMinPerDay: minutes,
		ShiftStart: w.ShiftStart, Calendar: w.Calendar})
	require.NoError(t, err)
	ev := events.Event{Type: contracts.WorkCenterUpdated.Name()}
	var payload string
	require.NoError(t, db.Raw("SELECT id, payload FROM events WHERE type = ? ORDER BY id DESC LIMIT 1", ev.Type).Row().Scan(&ev.ID, &payload))
	ev.Payload = []byte(payload)
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error { return s.capacityChanged(ctx, tx, ev) }))
}
