package plan

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// A launch or a progress report that comes while a re-plan is under way
// waits for it: the launch plans on the load the re-plan leaves (no two
// operations still to do share a centre's minutes), the report counts on
// the re-plan's slots. Without the lock the launch would plan on the load the
// re-plan is moving away. (SQLite runs one transaction at a time anyway.)
func TestReplan_WhatComesMeanwhileWaits(t *testing.T) {
	t.Parallel()
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		for _, meanwhile := range []string{"launch", "progress"} {
			t.Run(string(d)+"/"+meanwhile, func(t *testing.T) {
				t.Parallel()
				s, db := seededPlan(t, d)
				ctx := context.Background()
				receiveItem(t, db, 1, "SHK-RASP-1200", 10)
				first, err := s.LaunchProdOrder(ctx, Launch{Items: []int64{1}})
				require.NoError(t, err)
				// Less cutting capacity: the re-plan moves the launched work.
				require.NoError(t, dbtest.Fixture(db, func(tx *gorm.DB) error {
					return tx.Model(&catalog.WorkCenter{}).Where("code = ?", "CUT").Update("capacity_min_per_day", 120).Error
				}))
				receiveItem(t, db, 2, "SHK-RASP-1200", 2)

				computed, resume := make(chan struct{}), make(chan struct{})
				var once sync.Once
				release := func() { once.Do(func() { close(resume) }) }
				defer release() // a failure below must not leave the re-plan waiting
				s.planned = func() { close(computed); <-resume }
				replanned := make(chan error, 1)
				go func() {
					_, err := s.Replan(ctx)
					replanned <- err
				}()
				<-computed
				s.planned = nil
				done := make(chan error, 1)
				go func() {
					var err error
					if meanwhile == "launch" {
						_, err = s.LaunchProdOrder(ctx, Launch{Items: []int64{2}})
					} else {
						// the shop floor's report locks the order's row first (floor, LockOrder)
						err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
							_, err := LockOrder(ctx, tx, first.ID)
							return err
						})
					}
					done <- err
				}()
				select {
				case err := <-done:
					release()
					<-replanned
					t.Fatalf("the %s did not wait for the re-plan: %v", meanwhile, err)
				case <-time.After(300 * time.Millisecond):
				}
				release()
				require.NoError(t, <-replanned)
				require.NoError(t, <-done)
				requireNoOverlap(t, db)
			})
		}
	}
}

// requireNoOverlap checks that no two operations still to do take the same
// minutes of a centre's day, where that is known: a slot's first day from
// its start (to its end or the day's capacity), and its last day up to its end.
func requireNoOverlap(t *testing.T, db *gorm.DB) {
	t.Helper()
	wcs, err := catalog.AllWorkCenters(context.Background(), db)
	require.NoError(t, err)
	var ops []Operation
	require.NoError(t, db.Where("status <> ?", OpDone).Order("id").Find(&ops).Error)
	type key struct {
		centre int64
		day    string
	}
	type span struct {
		from, to float64
		op       int64
	}
	taken := map[key][]span{}
	for _, op := range ops {
		first := key{op.WorkCenterID, op.StartDay.String()}
		if op.StartDay.Equal(op.EndDay.Time) {
			taken[first] = append(taken[first], span{op.StartMin, op.EndMin, op.ID})
			continue
		}
		taken[first] = append(taken[first], span{op.StartMin, float64(wcs[op.WorkCenterID].CapacityMinPerDay), op.ID})
		last := key{op.WorkCenterID, op.EndDay.String()}
		taken[last] = append(taken[last], span{op.EndMin - 0.01, op.EndMin, op.ID})
	}
	require.NotEmpty(t, taken)
	for k, spans := range taken {
		for i, a := range spans {
			for _, b := range spans[i+1:] {
				require.False(t, a.from < b.to-0.001 && b.from < a.to-0.001, "work centre %d on %s: operations %d (%.2f–%.2f) and %d (%.2f–%.2f) overlap",
					k.centre, k.day, a.op, a.from, a.to, b.op, b.from, b.to)
			}
		}
	}
}
