package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

type salesOrderView struct {
	Status string
	ETA    *string `json:"eta"`
	Items  []struct {
		ID          int64
		Status      string
		ETA         *string `json:"eta"`
		ProdOrderID *int64  `json:"prod_order_id"`
	}
}

func salesOrderOf(t *testing.T, env *apptest.Env, id int64) salesOrderView {
	t.Helper()
	r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var o salesOrderView
	r.JSON(t, &o)
	return o
}

type attentionOrder struct {
	prodOrder
	NeedsAttention  bool   `json:"needs_attention"`
	AttentionReason string `json:"attention_reason"`
}

func prodOrderOf(t *testing.T, env *apptest.Env, id int64) attentionOrder {
	t.Helper()
	r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", id), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var o attentionOrder
	r.JSON(t, &o)
	return o
}

func itemIDsOf(o prodOrder) []int64 {
	ids := []int64{}
	for _, it := range o.Items {
		ids = append(ids, it.ItemID)
	}
	return ids
}

// A sales order cancelled in the window after the planner launched its items
// and before sales heard of it reaches production: its items leave the
// production orders on which no work has started (one left empty is
// cancelled, another keeps its other items with its counts and ETA
// recomputed), and one on which work has started is flagged for the planner.
// Sales follows the plan's events; once it has heard of a launch, a
// cancellation is refused naming the launched items.
func TestCancel_ReachesProduction(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		cancelledID, cancelled := receive(t, env, line{"SHK-KUPE-1600", 1}, line{"TMB-PRIK-450", 2})
		keptID, kept := receive(t, env, line{"SHK-RASP-1200", 1})
		startedID, started := receive(t, env, line{"DIV-CHESTER-3", 1})

		// The figures of the kept item launched alone, for comparison.
		alone := launch(t, env, map[string]any{"items": kept})
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", alone.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Dispatch()

		// Launched, and not yet heard of by sales (no dispatch).
		shared := launch(t, env, map[string]any{"items": []int64{cancelled[0], kept[0]}})
		emptied := launch(t, env, map[string]any{"items": cancelled[1:]})
		sofa := launch(t, env, map[string]any{"items": started})
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/operations/%d/start", sofa.ID, sofa.Operations[0].ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Greater(t, shared.PartsCount, alone.PartsCount)

		for _, id := range []int64{cancelledID, startedID} {
			r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", id), cancelBody)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
		env.Dispatch()

		got := prodOrderOf(t, env, shared.ID)
		require.Equal(t, "launched", got.Status)
		require.Equal(t, kept, itemIDsOf(got.prodOrder), "the cancelled item left it")
		require.Equal(t, alone.PartsCount, got.PartsCount)
		require.Equal(t, alone.OpsCount, got.OpsCount)
		require.Len(t, got.Operations, alone.OpsCount)
		require.Len(t, got.Parts, alone.PartsCount)
		for _, op := range got.Operations {
			require.LessOrEqual(t, op.PlannedEndDay, got.PlannedETA)
		}
		require.False(t, got.NeedsAttention)
		released := eventsOf(t, env, "prod_order.items_released", shared.ID)
		require.Len(t, released, 1)
		require.Equal(t, toAny(cancelled[:1]), released[0].Payload["items"])
		require.Equal(t, toAny(kept), released[0].Payload["remaining"])
		require.EqualValues(t, cancelledID, released[0].Payload["order_id"])

		require.Equal(t, "cancelled", prodOrderOf(t, env, emptied.ID).Status, "a production order left empty is cancelled")
		require.Len(t, eventsOf(t, env, "prod_order.cancelled", emptied.ID), 1)

		s := prodOrderOf(t, env, sofa.ID)
		require.Equal(t, "in_progress", s.Status, "work has started: kept, for the planner to decide")
		require.True(t, s.NeedsAttention)
		require.Contains(t, s.AttentionReason, fmt.Sprintf("sales order %d was cancelled", startedID))
		require.Contains(t, s.AttentionReason, fmt.Sprint(started[0]))
		require.Len(t, eventsOf(t, env, "prod_order.needs_attention", sofa.ID), 1)

		var l struct {
			Items []attentionOrder
		}
		r = env.Admin(http.MethodGet, "/api/v1/production-orders?needs_attention=true", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &l)
		require.Len(t, l.Items, 1)
		require.Equal(t, sofa.ID, l.Items[0].ID)
		require.True(t, l.Items[0].NeedsAttention)
		r = env.Admin(http.MethodGet, "/api/v1/production-orders?needs_attention=false", nil)
		r.JSON(t, &l)
		require.Len(t, l.Items, 3)
		require.False(t, slices.ContainsFunc(l.Items, func(o attentionOrder) bool { return o.ID == sofa.ID }))
		r = env.Admin(http.MethodGet, "/api/v1/production-orders?needs_attention=yes", nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		require.Contains(t, string(r.Body), "needs_attention")

		// Sales learnt all of it from the plan's events.
		o := salesOrderOf(t, env, cancelledID)
		require.Equal(t, "cancelled", o.Status)
		for _, it := range o.Items {
			require.Equal(t, "new", it.Status, "item %d", it.ID)
			require.Nil(t, it.ProdOrderID, "item %d", it.ID)
		}
		o = salesOrderOf(t, env, keptID)
		require.Equal(t, "in_production", o.Status)
		require.Equal(t, got.ETA, *o.Items[0].ETA, "the recomputed ETA reached sales")
		require.Equal(t, got.ETA, *o.ETA)
		require.Equal(t, "cancelled", salesOrderOf(t, env, startedID).Status)
		require.NotContains(t, backlogIDs(t, env), cancelled[0])

		// Once sales has heard of a launch, cancelling is refused, naming the item.
		lateID, late := receive(t, env, line{"TMB-PRIK-450", 1})
		p := launch(t, env, map[string]any{"items": late})
		env.Dispatch()
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", lateID), cancelBody)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		require.Contains(t, r.Map(t)["detail"], fmt.Sprintf("%d (in_production, production order %d)", late[0], p.ID))
		require.Equal(t, "launched", prodOrderOf(t, env, p.ID).Status)
	})
}

// The planner launches while a manager cancels and the dispatcher runs:
// whichever wins, no live production order is left with an item of a
// cancelled order, and the sales order agrees with the outcome.
func TestCancel_RacesLaunch(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		const rounds = 30
		outcomes := map[string]int{}
		for round := range rounds {
			orderID, ids := receive(t, env, line{"TMB-PRIK-450", 1})
			launchStatus, cancelStatus := raceLaunch(env, round, ids, func() int {
				return env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", orderID), cancelBody).Status
			})

			require.Contains(t, []int{http.StatusCreated, http.StatusConflict, http.StatusUnprocessableEntity}, launchStatus, "round %d", round)
			require.Contains(t, []int{http.StatusOK, http.StatusConflict}, cancelStatus, "round %d", round)
			outcomes[fmt.Sprintf("launch %d, cancel %d", launchStatus, cancelStatus)]++
			o := salesOrderOf(t, env, orderID)
			if cancelStatus == http.StatusOK {
				require.Equal(t, "cancelled", o.Status, "round %d", round)
				require.Equal(t, "new", o.Items[0].Status, "round %d", round)
				require.Nil(t, o.Items[0].ProdOrderID, "round %d", round)
			} else {
				require.Equal(t, http.StatusCreated, launchStatus, "round %d: cancel refused without a launch", round)
				require.Equal(t, "in_production", o.Status, "round %d", round)
			}
		}
		t.Logf("outcomes: %v", outcomes)

		// No live production order makes an item of a cancelled order.
		var cancelledItems []int64
		var l struct {
			Items []struct {
				Status string
				Items  []struct {
					ID int64
				}
			}
			NextCursor string `json:"next_cursor"`
		}
		r := env.Admin(http.MethodGet, "/api/v1/orders?status=cancelled&limit=500", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &l)
		for _, o := range l.Items {
			for _, it := range o.Items {
				cancelledItems = append(cancelledItems, it.ID)
			}
		}
		var pl struct{ Items []prodOrder }
		for _, status := range []string{"launched", "in_progress"} {
			env.Admin(http.MethodGet, "/api/v1/production-orders?limit=500&status="+status, nil).JSON(t, &pl)
			for _, p := range pl.Items {
				for _, it := range p.Items {
					require.NotContains(t, cancelledItems, it.ItemID, "live production order %d makes item %d of a cancelled order", p.ID, it.ItemID)
				}
			}
		}
	})
}

// raceLaunch launches the items while other runs (after a delay that moves
// with the round, from before the launch to after the dispatcher has told
// sales of it) and the dispatcher drains all the while; it returns both
// answers' statuses once everything has been dispatched.
func raceLaunch(env *apptest.Env, round int, ids []int64, other func() int) (launchStatus, otherStatus int) {
	var wg sync.WaitGroup
	start, done := make(chan struct{}), make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		launchStatus = env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": ids}).Status
	}()
	go func() {
		defer wg.Done()
		<-start
		time.Sleep(time.Duration(round%10) * 4 * time.Millisecond)
		otherStatus = other()
	}()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		<-start
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for {
			_, _ = env.App.Dispatcher.Drain(ctx)
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	close(start)
	wg.Wait()
	close(done)
	<-drained
	env.Dispatch()
	return launchStatus, otherStatus
}
