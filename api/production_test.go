package api_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// line is one line of a sales order to create.
type line struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

// receive creates a sales order with the lines, lets the plan's backlog
// receive it and returns the order's id and its item ids.
func receive(t *testing.T, env *apptest.Env, lines ...line) (int64, []int64) {
	t.Helper()
	return receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Иван Петров"}, "items": lines})
}

// receiveOrder is receive with the order's whole body.
func receiveOrder(t *testing.T, env *apptest.Env, body map[string]any) (int64, []int64) {
	t.Helper()
	r := env.Admin(http.MethodPost, "/api/v1/orders", body)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var o struct {
		ID    int64
		Items []struct{ ID int64 }
	}
	r.JSON(t, &o)
	env.Dispatch()
	ids := make([]int64, len(o.Items))
	for i, it := range o.Items {
		ids[i] = it.ID
	}
	return o.ID, ids
}

type prodOrder struct {
	ID     int64
	Status string
	Route  struct {
		ID   int64
		Name string
	}
	Items []struct {
		ItemID int64 `json:"item_id"`
		SKU    string
		Qty    int
	}
	PartsCount int      `json:"parts_count"`
	OpsCount   int      `json:"ops_count"`
	Short      []string `json:"short"`
	ETA        string   `json:"eta"`
	PlannedETA string   `json:"planned_eta"`
	Progress   struct {
		OpsTotal      int     `json:"ops_total"`
		OpsInProgress int     `json:"ops_in_progress"`
		OpsDone       int     `json:"ops_done"`
		Percent       float64 `json:"percent"`
	}
	Parts []struct {
		ID        int64
		ItemID    int64 `json:"item_id"`
		Unit      int
		Code      string
		Status    string
		Board     string
		BoardNeed float64 `json:"board_need"`
	}
	Operations []struct {
		ID              int64
		Seq             int
		Scope           string
		WorkCenterID    int64  `json:"work_center_id"`
		PartID          *int64 `json:"part_id"`
		Status          string
		Minutes         float64
		PlannedStartDay string  `json:"planned_start_day"`
		PlannedStartMin float64 `json:"planned_start_min"`
		PlannedEndDay   string  `json:"planned_end_day"`
		PlannedEndMin   float64 `json:"planned_end_min"`
	}
}

func launch(t *testing.T, env *apptest.Env, body map[string]any) prodOrder {
	t.Helper()
	r := env.Admin(http.MethodPost, "/api/v1/production-orders", body)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var o prodOrder
	r.JSON(t, &o)
	return o
}

type journalEvent struct {
	ID      int64
	Type    string
	Object  string
	Payload map[string]any
	Actor   *struct{ Name string }
}

// eventsOf returns the journal's events of the type about the production order, oldest first.
func eventsOf(t *testing.T, env *apptest.Env, typ string, prodOrderID int64) []journalEvent {
	t.Helper()
	r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?type=%s&aggregate_type=plan_prod_orders&aggregate_id=%d", typ, prodOrderID), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var l struct{ Items []journalEvent }
	r.JSON(t, &l)
	for i, j := 0, len(l.Items)-1; i < j; i, j = i+1, j-1 {
		l.Items[i], l.Items[j] = l.Items[j], l.Items[i]
	}
	return l.Items
}

func backlogIDs(t *testing.T, env *apptest.Env) []int64 {
	t.Helper()
	var l struct {
		Items []struct {
			ItemID int64 `json:"item_id"`
		}
	}
	env.Admin(http.MethodGet, "/api/v1/plan/backlog?limit=500", nil).JSON(t, &l)
	ids := []int64{}
	for _, it := range l.Items {
		ids = append(ids, it.ItemID)
	}
	return ids
}

// The launches of the journal screen, from the demo catalog: 13 parts → 41
// operations, two units of a 6-part product → 12 and 40, 18 → 56, a 5-part
// sofa → 8.
func TestProduction_LaunchSeedFigures(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		_, kupe := receive(t, env, line{"SHK-KUPE-1600", 1})
		_, tumbas := receive(t, env, line{"TMB-PRIK-450", 1}, line{"TMB-PRIK-450", 1})
		_, tumba2 := receive(t, env, line{"TMB-PRIK-450", 2})
		_, rasp := receive(t, env, line{"SHK-RASP-1200", 1})
		_, sofa := receive(t, env, line{"DIV-CHESTER-3", 1})
		const caseRoute, softRoute = "Корпус ЛДСП (типовой)", "Мягкая мебель (типовой)"
		for _, tc := range []struct {
			name         string
			items        []int64
			route        string
			parts, ops   int
			partsPerItem int
		}{
			{"SHK-KUPE-1600", kupe, caseRoute, 13, 41, 13},
			{"TMB-PRIK-450 two items", tumbas, caseRoute, 12, 40, 6},
			{"TMB-PRIK-450 two units", tumba2, caseRoute, 12, 40, 12},
			{"SHK-RASP-1200", rasp, caseRoute, 18, 56, 18},
			{"DIV-CHESTER-3", sofa, softRoute, 5, 8, 5},
		} {
			t.Run(tc.name, func(t *testing.T) {
				events := env.Count("events")
				o := launch(t, env, map[string]any{"items": tc.items})
				require.Equal(t, "launched", o.Status)
				require.Equal(t, tc.route, o.Route.Name)
				require.Equal(t, tc.parts, o.PartsCount)
				require.Equal(t, tc.ops, o.OpsCount)
				require.Len(t, o.Parts, tc.parts)
				require.Len(t, o.Operations, tc.ops)
				require.Equal(t, tc.ops, o.Progress.OpsTotal)
				require.Equal(t, o.PlannedETA, o.ETA)
				_, err := time.Parse(time.DateOnly, o.ETA)
				require.NoError(t, err)
				perItem := map[int64]int{}
				for _, p := range o.Parts {
					perItem[p.ItemID]++
				}
				for _, id := range tc.items {
					require.Equal(t, tc.partsPerItem, perItem[id])
				}
				for _, op := range o.Operations {
					require.Equal(t, "pending", op.Status)
					require.Equal(t, op.Scope == "part", op.PartID != nil)
					require.LessOrEqual(t, op.PlannedEndDay, o.ETA)
					require.GreaterOrEqual(t, op.PlannedEndDay, op.PlannedStartDay)
				}

				// One event, with exactly the seed's payload, by the admin;
				// and in the same transaction what stock reserves for it.
				require.Equal(t, events+2, env.Count("events"))
				reserved := catalogEventsOf(t, env, "stock.reserved")
				require.NotEmpty(t, reserved)
				require.EqualValues(t, o.ID, reserved[0].Payload["prod_order_id"])
				require.NotEmpty(t, reserved[0].Payload["lines"], "what it needs of each material")
				evs := eventsOf(t, env, "prod_order.launched", o.ID)
				require.Len(t, evs, 1)
				ev := evs[0]
				require.Equal(t, fmt.Sprintf("plan_prod_orders #%d", o.ID), ev.Object)
				require.Equal(t, "Администратор", ev.Actor.Name)
				want := map[string]any{"prod_order_id": float64(o.ID), "route": tc.route, "parts_count": float64(tc.parts),
					"ops_count": float64(tc.ops), "eta": o.ETA, "items": toAny(tc.items)}
				require.Equal(t, want, ev.Payload)

				// The items left the backlog; reading the order gives what the launch returned.
				for _, id := range tc.items {
					require.NotContains(t, backlogIDs(t, env), id)
				}
				var got prodOrder
				env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", o.ID), nil).JSON(t, &got)
				require.Equal(t, o, got)
			})
		}
		var l struct{ Items []prodOrder }
		env.Admin(http.MethodGet, "/api/v1/production-orders", nil).JSON(t, &l)
		require.Len(t, l.Items, 5)
		require.Greater(t, l.Items[0].ID, l.Items[1].ID, "newest first")
		require.Empty(t, l.Items[0].Operations, "the list carries no operations")
		require.Equal(t, 8, l.Items[0].Progress.OpsTotal)
		env.Admin(http.MethodGet, "/api/v1/production-orders?status=done", nil).JSON(t, &l)
		require.Empty(t, l.Items)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/production-orders?status=nope", nil), http.StatusUnprocessableEntity, "status")
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/production-orders/99999", nil), http.StatusNotFound)
	})
}

func toAny(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = float64(id)
	}
	return out
}

func TestProduction_LaunchRefusals(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		nothingWritten := func(t *testing.T, fn func()) {
			t.Helper()
			orders, events, backlog := env.Count("plan_prod_orders"), env.Count("events"), env.Count("plan_backlog")
			fn()
			require.Equal(t, orders, env.Count("plan_prod_orders"))
			require.Equal(t, events, env.Count("events"))
			require.Equal(t, backlog, env.Count("plan_backlog"))
		}
		post := func(body any) apptest.Response {
			return env.Admin(http.MethodPost, "/api/v1/production-orders", body)
		}

		t.Run("ErrInvalid", func(t *testing.T) {
			_, ids := receive(t, env, line{"SHK-KUPE-1600", 1})
			nothingWritten(t, func() {
				requireProblem(t, post(map[string]any{"items": []int64{}}), http.StatusUnprocessableEntity, "items")
				requireProblem(t, post(map[string]any{}), http.StatusUnprocessableEntity, "items")
				requireProblem(t, post(map[string]any{"items": []int64{ids[0], ids[0], -1}}), http.StatusUnprocessableEntity, "items[1]", "items[2]")
				requireProblem(t, post(map[string]any{"items": ids, "eta": "20.11.2026"}), http.StatusUnprocessableEntity, "eta")
				requireProblem(t, post(map[string]any{"items": ids, "eta": "2020-01-01"}), http.StatusUnprocessableEntity, "eta")
				requireProblem(t, post(`{"items": "one"}`), http.StatusUnprocessableEntity, "items")
				requireProblem(t, post(`{"items": [`), http.StatusBadRequest)
			})
		})

		t.Run("ErrUnknownItem", func(t *testing.T) {
			_, ids := receive(t, env, line{"SHK-KUPE-1600", 1})
			nothingWritten(t, func() {
				requireProblem(t, post(map[string]any{"items": []int64{ids[0], 999999}}), http.StatusUnprocessableEntity, "items[1]")
			})
			require.Contains(t, backlogIDs(t, env), ids[0])
		})

		t.Run("ErrMixedRoutes", func(t *testing.T) {
			_, ids := receive(t, env, line{"SHK-KUPE-1600", 1}, line{"DIV-CHESTER-3", 1})
			nothingWritten(t, func() {
				p := requireProblem(t, post(map[string]any{"items": ids}), http.StatusUnprocessableEntity, "items[1]")
				require.Contains(t, p.Detail, "different routes")
				// A route given must suit every product's kind.
				var routes struct {
					Items []struct {
						ID   int64
						Kind string
					}
				}
				env.Admin(http.MethodGet, "/api/v1/routes", nil).JSON(t, &routes)
				require.Equal(t, "case", routes.Items[0].Kind)
				requireProblem(t, post(map[string]any{"items": ids, "route_id": routes.Items[0].ID}), http.StatusUnprocessableEntity, "items[1]")
				requireProblem(t, post(map[string]any{"items": ids[:1], "route_id": 99999}), http.StatusUnprocessableEntity, "route_id")
			})
			// Each on its own route is fine.
			require.Equal(t, 13, launch(t, env, map[string]any{"items": ids[:1]}).PartsCount)
			require.Equal(t, 5, launch(t, env, map[string]any{"items": ids[1:]}).PartsCount)
		})

		t.Run("ErrTooLarge", func(t *testing.T) {
			// 300 wardrobes of 18 parts: 5,400 parts, over the 5,000 of one launch.
			_, ids := receive(t, env, line{"SHK-RASP-1200", 300})
			nothingWritten(t, func() {
				p := requireProblem(t, post(map[string]any{"items": ids}), http.StatusUnprocessableEntity, "items")
				require.Contains(t, p.Errors[0].Message, "make 5400 parts and 16800 operations")
			})
			require.Contains(t, backlogIDs(t, env), ids[0])
		})

		t.Run("ErrAlreadyLaunched", func(t *testing.T) {
			_, ids := receive(t, env, line{"SHK-KUPE-1600", 1}, line{"SHK-RASP-1200", 1})
			o := launch(t, env, map[string]any{"items": ids[:1]})
			nothingWritten(t, func() {
				p := requireProblem(t, post(map[string]any{"items": ids[:1]}), http.StatusConflict)
				require.Contains(t, p.Detail, fmt.Sprintf("production order %d", o.ID))
				requireProblem(t, post(map[string]any{"items": []int64{ids[1], ids[0]}}), http.StatusConflict)
			})
			require.Contains(t, backlogIDs(t, env), ids[1], "a refused launch takes nothing out of the backlog")
		})

		t.Run("ErrCancelledOrder", func(t *testing.T) {
			orderID, ids := receive(t, env, line{"SHK-KUPE-1600", 1})
			require.Contains(t, backlogIDs(t, env), ids[0])
			r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", orderID), cancelBody)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			env.Dispatch()
			require.NotContains(t, backlogIDs(t, env), ids[0])
			nothingWritten(t, func() {
				requireProblem(t, post(map[string]any{"items": ids}), http.StatusUnprocessableEntity, "items[0]")
			})
		})

		t.Run("ErrForbidden", func(t *testing.T) {
			_, ids := receive(t, env, line{"SHK-KUPE-1600", 1})
			for _, role := range []string{"viewer", "manager"} {
				tok := env.UserToken("Гость "+role, role)
				nothingWritten(t, func() {
					requireProblem(t, env.Do(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": ids}, tok), http.StatusForbidden)
				})
				require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/api/v1/production-orders", nil, tok).Status)
			}
			requireProblem(t, env.Do(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": ids}, ""), http.StatusUnauthorized)
			planner := env.UserToken("Ольга Планова", "planner")
			r := env.Do(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": ids}, planner)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			var o prodOrder
			r.JSON(t, &o)
			require.Equal(t, "Ольга Планова", eventsOf(t, env, "prod_order.launched", o.ID)[0].Actor.Name)
		})
	})
}

// Two launches of the same item at the same moment: exactly one wins.
func TestProduction_LaunchRace(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		for round := range 5 {
			_, ids := receive(t, env, line{"TMB-PRIK-450", 1}, line{"SHK-KUPE-1600", 1})
			const racers = 4
			statuses := make([]int, racers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range racers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					// Each racer asks for the shared item, half of them with the other one too.
					items := ids[:1]
					if i%2 == 1 {
						items = ids
					}
					statuses[i] = env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": items}).Status
				}()
			}
			close(start)
			wg.Wait()
			won := 0
			for _, s := range statuses {
				switch s {
				case http.StatusCreated:
					won++
				case http.StatusConflict:
				default:
					t.Fatalf("round %d: status %d", round, s)
				}
			}
			require.Equal(t, 1, won, "round %d: %v", round, statuses)
			var n int64
			require.NoError(t, database.Scan(env.App.DB.Raw("SELECT count(*) FROM plan_prod_order_items WHERE item_id = ?", ids[0]), &n))
			require.EqualValues(t, 1, n)
		}
	})
}

// The ETA follows the load: a second launch plans after the first, an
// explicit ETA overrides the computed one, and a cancelled launch frees its
// capacity.
func TestProduction_ETA(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		monday := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
		env.App.Plan.SetToday(func() time.Time { return monday })

		// An explicit ETA wins; the computed one is kept as planned_eta.
		_, c := receive(t, env, line{"DIV-CHESTER-3", 1})
		sofa := launch(t, env, map[string]any{"items": c, "eta": "2027-01-15"})
		require.Equal(t, "2027-01-15", sofa.ETA)
		require.Equal(t, "2026-11-16", sofa.PlannedETA)
		require.Equal(t, "2027-01-15", eventsOf(t, env, "prod_order.launched", sofa.ID)[0].Payload["eta"])

		// 40 wardrobes: 720 parts, 2,880 minutes of cutting at 960 a day.
		_, a := receive(t, env, line{"SHK-RASP-1200", 40})
		first := launch(t, env, map[string]any{"items": a})
		require.Equal(t, 720, first.PartsCount)
		require.Equal(t, 720*3+40*2, first.OpsCount)
		// Drilling, 1,440 minutes at 480 a day, ends on Thursday at the
		// earliest; assembly and packing of the last unit follow it.
		require.GreaterOrEqual(t, first.ETA, "2026-11-19")
		require.Less(t, first.ETA, "2026-11-30")
		for _, op := range first.Operations {
			require.GreaterOrEqual(t, op.PlannedStartDay, "2026-11-16")
			wd := mustDay(t, op.PlannedStartDay).Weekday()
			require.NotEqual(t, time.Saturday, wd)
			require.NotEqual(t, time.Sunday, wd)
		}

		_, b := receive(t, env, line{"SHK-RASP-1200", 40})
		second := launch(t, env, map[string]any{"items": b})
		require.Greater(t, second.ETA, first.ETA, "the second launch is planned after the work already launched")
		cutCenter := first.Operations[0].WorkCenterID
		firstCutEnd := ""
		for _, op := range first.Operations {
			if op.WorkCenterID == cutCenter && op.PlannedEndDay > firstCutEnd {
				firstCutEnd = op.PlannedEndDay
			}
		}
		for _, op := range second.Operations {
			if op.WorkCenterID == cutCenter {
				require.GreaterOrEqual(t, op.PlannedStartDay, firstCutEnd)
			}
		}

		// Cancelling the second frees its capacity: the same launch again is
		// planned as the second was.
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", second.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		again := launch(t, env, map[string]any{"items": b})
		require.Equal(t, second.ETA, again.ETA)
	})
}

func mustDay(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	require.NoError(t, err)
	return d
}

// The production order's state machine: launched → in_progress with the
// first operation started → done with the last one completed; cancelled only
// before any start, with the items back in the backlog.
func TestProduction_ShopFloor(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		opURL := func(o prodOrder, op int64, action string) string {
			return fmt.Sprintf("/api/v1/production-orders/%d/operations/%d/%s", o.ID, op, action)
		}
		type change struct {
			Operation struct {
				ID          int64
				Status      string
				StartedAt   *string `json:"started_at"`
				CompletedAt *string `json:"completed_at"`
			}
			ProdOrder prodOrder `json:"prod_order"`
		}
		do := func(url string) change {
			t.Helper()
			r := env.Admin(http.MethodPost, url, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var ch change
			r.JSON(t, &ch)
			return ch
		}

		t.Run("OK", func(t *testing.T) {
			_, ids := receive(t, env, line{"DIV-CHESTER-3", 1})
			o := launch(t, env, map[string]any{"items": ids})
			require.Len(t, o.Operations, 8)
			first := o.Operations[0].ID

			ch := do(opURL(o, first, "start"))
			require.Equal(t, "in_progress", ch.Operation.Status)
			require.NotNil(t, ch.Operation.StartedAt)
			require.Equal(t, "in_progress", ch.ProdOrder.Status)
			require.Equal(t, 1, ch.ProdOrder.Progress.OpsInProgress)
			started := eventsOf(t, env, "prod_order.started", o.ID)
			require.Len(t, started, 1)
			require.Equal(t, map[string]any{"prod_order_id": float64(o.ID), "items": toAny(ids)}, started[0].Payload)

			requireProblem(t, env.Admin(http.MethodPost, opURL(o, first, "start"), nil), http.StatusConflict)
			requireProblem(t, env.Admin(http.MethodPost, opURL(o, o.Operations[1].ID, "complete"), nil), http.StatusConflict)
			requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", o.ID), nil), http.StatusConflict)

			for i, op := range o.Operations {
				if i > 0 {
					ch = do(opURL(o, op.ID, "start"))
					require.Equal(t, "in_progress", ch.ProdOrder.Status)
				}
				require.Empty(t, eventsOf(t, env, "prod_order.completed", o.ID))
				ch = do(opURL(o, op.ID, "complete"))
				require.Equal(t, "done", ch.Operation.Status)
				require.NotNil(t, ch.Operation.CompletedAt)
			}
			require.Equal(t, "done", ch.ProdOrder.Status)
			require.Equal(t, 100.0, ch.ProdOrder.Progress.Percent)
			require.Len(t, eventsOf(t, env, "prod_order.started", o.ID), 1, "started once")
			completed := eventsOf(t, env, "prod_order.completed", o.ID)
			require.Len(t, completed, 1)
			require.Equal(t, map[string]any{"prod_order_id": float64(o.ID), "items": toAny(ids)}, completed[0].Payload)

			requireProblem(t, env.Admin(http.MethodPost, opURL(o, first, "start"), nil), http.StatusConflict)
			requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", o.ID), nil), http.StatusConflict)
			var got prodOrder
			env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", o.ID), nil).JSON(t, &got)
			require.Equal(t, "done", got.Status)
			require.Equal(t, 8, got.Progress.OpsDone)
		})

		t.Run("Cancel", func(t *testing.T) {
			_, ids := receive(t, env, line{"SHK-KUPE-1600", 1}, line{"TMB-PRIK-450", 2})
			o := launch(t, env, map[string]any{"items": ids})
			require.NotContains(t, backlogIDs(t, env), ids[0])
			r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", o.ID), nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var got prodOrder
			r.JSON(t, &got)
			require.Equal(t, "cancelled", got.Status)
			cancelled := eventsOf(t, env, "prod_order.cancelled", o.ID)
			require.Len(t, cancelled, 1)
			require.Equal(t, map[string]any{"prod_order_id": float64(o.ID), "items": toAny(ids)}, cancelled[0].Payload)
			require.Subset(t, backlogIDs(t, env), ids, "the items are back in the backlog")

			requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", o.ID), nil), http.StatusConflict)
			requireProblem(t, env.Admin(http.MethodPost, opURL(o, o.Operations[0].ID, "start"), nil), http.StatusConflict)
			// They can be launched again.
			again := launch(t, env, map[string]any{"items": ids})
			require.Equal(t, 13+12, again.PartsCount)
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			_, ids := receive(t, env, line{"DIV-CHESTER-3", 1})
			o := launch(t, env, map[string]any{"items": ids})
			_, ids2 := receive(t, env, line{"DIV-CHESTER-3", 1})
			other := launch(t, env, map[string]any{"items": ids2})
			requireProblem(t, env.Admin(http.MethodPost, opURL(o, other.Operations[0].ID, "start"), nil), http.StatusNotFound)
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/production-orders/99999/operations/1/start", nil), http.StatusNotFound)
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/production-orders/99999/cancel", nil), http.StatusNotFound)
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/production-orders/x/operations/1/complete", nil), http.StatusUnprocessableEntity, "id")
			tok := env.UserToken("Мастер смены", "viewer")
			requireProblem(t, env.Do(http.MethodPost, opURL(o, o.Operations[0].ID, "start"), nil, tok), http.StatusForbidden)
		})
	})
}

// The sales order follows its production through the plan's events: in
// production with the latest ETA of its launched items, back to received
// when its only launch is cancelled, ready when every item is made.
func TestProduction_SalesOrderFollows(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		orderID, ids := receive(t, env, line{"SHK-KUPE-1600", 1}, line{"DIV-CHESTER-3", 1})
		type salesOrder struct {
			Status string
			ETA    *string `json:"eta"`
			Items  []struct {
				ID     int64
				Status string
			}
		}
		read := func() salesOrder {
			t.Helper()
			env.Dispatch()
			var o salesOrder
			env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", orderID), nil).JSON(t, &o)
			return o
		}
		finish := func(o prodOrder) {
			t.Helper()
			for _, op := range o.Operations {
				for _, action := range []string{"start", "complete"} {
					r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/operations/%d/%s", o.ID, op.ID, action), nil)
					require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
				}
			}
		}

		// ETAs a month ahead of today, whatever today is.
		soon, later := time.Now().AddDate(0, 0, 30).Format(time.DateOnly), time.Now().AddDate(0, 0, 40).Format(time.DateOnly)
		cabinet := launch(t, env, map[string]any{"items": ids[:1], "eta": soon})
		o := read()
		require.Equal(t, "in_production", o.Status)
		require.Equal(t, soon, *o.ETA)
		require.Equal(t, "in_production", o.Items[0].Status)
		require.Equal(t, "new", o.Items[1].Status)

		sofa := launch(t, env, map[string]any{"items": ids[1:], "eta": later})
		require.Equal(t, later, *read().ETA, "the latest ETA of the launched items")
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", sofa.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		o = read()
		require.Equal(t, "new", o.Items[1].Status)
		require.Equal(t, soon, *o.ETA)

		finish(cabinet)
		o = read()
		require.Equal(t, "done", o.Items[0].Status)
		require.Equal(t, "in_production", o.Status, "the sofa is still to be made")

		finish(launch(t, env, map[string]any{"items": ids[1:]}))
		o = read()
		require.Equal(t, "ready", o.Status)
		require.Equal(t, "done", o.Items[1].Status)
	})
}

// Operations started at the same moment: each starts once and the order
// writes prod_order.started once.
func TestProduction_ConcurrentStarts(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		_, ids := receive(t, env, line{"DIV-CHESTER-3", 1})
		o := launch(t, env, map[string]any{"items": ids})
		statuses := make([]int, 2*len(o.Operations))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				op := o.Operations[i/2] // every operation twice
				statuses[i] = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/operations/%d/start", o.ID, op.ID), nil).Status
			}()
		}
		close(start)
		wg.Wait()
		ok, conflict := 0, 0
		for _, s := range statuses {
			switch s {
			case http.StatusOK:
				ok++
			case http.StatusConflict:
				conflict++
			}
		}
		require.Equal(t, len(o.Operations), ok, "%v", statuses)
		require.Equal(t, len(o.Operations), conflict, "%v", statuses)
		require.Len(t, eventsOf(t, env, "prod_order.started", o.ID), 1)
		var got prodOrder
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", o.ID), nil).JSON(t, &got)
		require.Equal(t, "in_progress", got.Status)
		require.Equal(t, len(o.Operations), got.Progress.OpsInProgress)
	})
}
