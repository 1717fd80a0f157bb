package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

type closedOrder struct {
	ID     int64
	Status string
	Items  []struct {
		ItemID        int64 `json:"item_id"`
		Qty           int
		MadeQty       *int `json:"made_qty"`
		ReturnedQty   *int `json:"returned_qty"`
		WrittenOffQty *int `json:"written_off_qty"`
	}
	ClosedAt        *string `json:"closed_at"`
	CloseReason     string  `json:"close_reason"`
	CloseRest       string  `json:"close_rest"`
	ClosedBy        *string `json:"closed_by"`
	NeedsAttention  bool    `json:"needs_attention"`
	AttentionReason string  `json:"attention_reason"`
}

type closedSalesOrder struct {
	Status string
	Items  []struct {
		ID            int64
		Status        string
		Qty           int
		MadeQty       int    `json:"made_qty"`
		WrittenOffQty int    `json:"written_off_qty"`
		ShippedQty    int    `json:"shipped_qty"`
		ProdOrderID   *int64 `json:"prod_order_id"`
		ETA           *string
	}
}

func closeURL(id int64) string { return fmt.Sprintf("/api/v1/production-orders/%d/close", id) }

func closeOrder(t *testing.T, env *apptest.Env, id int64, body map[string]any) closedOrder {
	t.Helper()
	r := env.Admin(http.MethodPost, closeURL(id), body)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var o closedOrder
	r.JSON(t, &o)
	return o
}

// progress reports qty of route step seq of the production order done.
func progress(t *testing.T, env *apptest.Env, id int64, seq, qty int) {
	t.Helper()
	r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", id), map[string]any{"seq": seq, "qty": qty})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
}

// makeUnits takes units of a nightstand order (6 parts a unit, three part
// steps and two unit steps) through every step, and the parts of one more
// unit through cutting only.
func makeUnits(t *testing.T, env *apptest.Env, id int64, units int) {
	t.Helper()
	for seq := 1; seq <= 3; seq++ {
		progress(t, env, id, seq, 6*units)
	}
	progress(t, env, id, 4, units)
	progress(t, env, id, 5, units)
	progress(t, env, id, 1, 6)
}

func salesOf(t *testing.T, env *apptest.Env, id int64) closedSalesOrder {
	t.Helper()
	r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var o closedSalesOrder
	r.JSON(t, &o)
	return o
}

func intp(n int) *int { return &n }

// Three nightstands: two made and a third cut, then the order is closed
// short with the rest back in the backlog. The made units stay made, the
// third unit's operations (its cut parts too) leave the schedule, the item
// waits in the backlog for one unit, sales shows it new with two made, and
// launching the one left and making it makes the item done and the order
// ready to ship all three.
func TestClose_RestToBacklog(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		orderID, ids := receive(t, env, line{"TMB-PRIK-450", 3})
		o := launch(t, env, map[string]any{"items": ids})
		require.Equal(t, 18, o.PartsCount)
		makeUnits(t, env, o.ID, 2)
		env.Dispatch()
		require.Equal(t, "in_production", salesOf(t, env, orderID).Status)

		reason := "заказчик забирает две тумбы, третью делаем позже"
		closed := closeOrder(t, env, o.ID, map[string]any{"reason": reason, "rest": "backlog"})
		require.Equal(t, "closed", closed.Status)
		require.Equal(t, reason, closed.CloseReason)
		require.Equal(t, "backlog", closed.CloseRest)
		require.NotNil(t, closed.ClosedAt)
		require.NotNil(t, closed.ClosedBy)
		require.Equal(t, "Администратор", *closed.ClosedBy)
		require.Len(t, closed.Items, 1)
		require.Equal(t, intp(2), closed.Items[0].MadeQty)
		require.Equal(t, intp(1), closed.Items[0].ReturnedQty)
		require.Equal(t, intp(0), closed.Items[0].WrittenOffQty)

		// The made units' operations stay, done; the rest (the third unit's
		// cut parts included) are dropped and load no work centre.
		got := prodOrderOf(t, env, o.ID)
		require.Len(t, got.Operations, 2*(6*3+2)+6)
		for _, op := range got.Operations {
			require.Equal(t, "done", op.Status)
		}
		require.Len(t, got.Parts, 18, "the parts stay: they were launched")
		p := requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/progress", o.ID), map[string]any{"seq": 1, "qty": 1}), http.StatusConflict)
		require.Contains(t, p.Detail, "closed")
		var schedule struct {
			WorkCenters []struct {
				Orders []struct {
					ProdOrderID int64 `json:"prod_order_id"`
					Operations  int
					OpsDone     int `json:"ops_done"`
				}
			} `json:"work_centers"`
		}
		env.Admin(http.MethodGet, "/api/v1/plan/schedule", nil).JSON(t, &schedule)
		for _, wc := range schedule.WorkCenters {
			for _, b := range wc.Orders {
				if b.ProdOrderID == o.ID {
					require.Equal(t, b.Operations, b.OpsDone, "a closed order's work not done is no load")
				}
			}
		}

		var list struct{ Items []struct{ ID int64 } }
		env.Admin(http.MethodGet, "/api/v1/production-orders?status=closed", nil).JSON(t, &list)
		require.Len(t, list.Items, 1)
		require.Equal(t, o.ID, list.Items[0].ID)

		closes := eventsOf(t, env, "prod_order.closed", o.ID)
		require.Len(t, closes, 1)
		require.Equal(t, map[string]any{"prod_order_id": float64(o.ID), "items": toAny(ids), "reason": reason, "rest": "backlog",
			"quantities": []any{map[string]any{"item_id": float64(ids[0]), "order_id": float64(orderID), "qty": 3.0, "made": 2.0, "made_reported": 2.0, "returned": 1.0, "written_off": 0.0}},
		}, closes[0].Payload)
		require.Equal(t, "Администратор", closes[0].Actor.Name)

		var backlog struct {
			Items []struct {
				ItemID int64 `json:"item_id"`
				Qty    int
			}
		}
		env.Admin(http.MethodGet, "/api/v1/plan/backlog", nil).JSON(t, &backlog)
		require.Len(t, backlog.Items, 1)
		require.Equal(t, ids[0], backlog.Items[0].ItemID)
		require.Equal(t, 1, backlog.Items[0].Qty)

		env.Dispatch()
		s := salesOf(t, env, orderID)
		require.Equal(t, "received", s.Status, "its only item waits for production again")
		require.Equal(t, "new", s.Items[0].Status)
		require.Equal(t, 2, s.Items[0].MadeQty)
		require.Equal(t, 0, s.Items[0].WrittenOffQty)
		require.Nil(t, s.Items[0].ProdOrderID)
		require.Nil(t, s.Items[0].ETA)
		// Two of it are made: its quantity no longer changes.
		before := rowCounts(t, env)
		_, r := patchOrder(t, env, orderID, map[string]any{"items": []map[string]any{{"id": ids[0], "qty": 4}}})
		prob := requireProblemType(t, r, http.StatusConflict, "conflict")
		require.Contains(t, prob.Detail, fmt.Sprintf("%d (TMB-PRIK-450, new, 2 made)", ids[0]))
		requireRefusedCleanly(t, r, before, rowCounts(t, env))

		// The unit left is launched again, made, and the whole item ships.
		again := launch(t, env, map[string]any{"items": ids})
		require.Equal(t, 6, again.PartsCount)
		require.Equal(t, 1, again.Items[0].Qty)
		env.Dispatch()
		require.Equal(t, "in_production", salesOf(t, env, orderID).Status)
		finish(t, env, again)
		env.Dispatch()
		s = salesOf(t, env, orderID)
		require.Equal(t, "ready", s.Status)
		require.Equal(t, "done", s.Items[0].Status)
		require.Equal(t, 3, s.Items[0].MadeQty)
		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/shipments", orderID), map[string]any{"items": []map[string]any{{"item_id": ids[0], "qty": 3}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		require.Equal(t, "shipped", salesOf(t, env, orderID).Status)
	})
}

// Written off: of an order of three nightstands and a sofa, two nightstands
// are made and the sofa is cut, then both production orders are closed with
// the rest written off. Sales shows the nightstands done with one written
// off and the sofa written off; the order is ready, ships the two made and
// is shipped.
func TestClose_RestWrittenOff(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		orderID, ids := receive(t, env, line{"TMB-PRIK-450", 3}, line{"DIV-CHESTER-3", 1})
		stands := launch(t, env, map[string]any{"items": ids[:1]})
		sofa := launch(t, env, map[string]any{"items": ids[1:]})
		makeUnits(t, env, stands.ID, 2)
		progress(t, env, sofa.ID, sofa.Operations[0].Seq, 1)
		env.Dispatch()

		closed := closeOrder(t, env, stands.ID, map[string]any{"reason": "брак плиты, остаток списан", "rest": "write_off"})
		require.Equal(t, "closed", closed.Status)
		require.Equal(t, "write_off", closed.CloseRest)
		require.Equal(t, intp(2), closed.Items[0].MadeQty)
		require.Equal(t, intp(0), closed.Items[0].ReturnedQty)
		require.Equal(t, intp(1), closed.Items[0].WrittenOffQty)
		closes := eventsOf(t, env, "prod_order.closed", stands.ID)
		require.Len(t, closes, 1)
		require.Equal(t, []any{map[string]any{"item_id": float64(ids[0]), "order_id": float64(orderID), "qty": 3.0, "made": 2.0, "made_reported": 2.0, "returned": 0.0, "written_off": 1.0}},
			closes[0].Payload["quantities"])
		require.NotContains(t, backlogIDs(t, env), ids[0], "nothing written off goes back to the backlog")

		env.Dispatch()
		s := salesOf(t, env, orderID)
		require.Equal(t, "in_production", s.Status, "the sofa is still being made")
		require.Equal(t, "done", s.Items[0].Status)
		require.Equal(t, 2, s.Items[0].MadeQty)
		require.Equal(t, 1, s.Items[0].WrittenOffQty)
		require.Equal(t, stands.ID, *s.Items[0].ProdOrderID)

		closeOrder(t, env, sofa.ID, map[string]any{"reason": "ткань снята с производства", "rest": "write_off"})
		closes = eventsOf(t, env, "prod_order.closed", sofa.ID)
		require.Len(t, closes, 1)
		require.Equal(t, map[string]any{"prod_order_id": float64(sofa.ID), "items": toAny(ids[1:]), "reason": "ткань снята с производства", "rest": "write_off",
			"quantities": []any{map[string]any{"item_id": float64(ids[1]), "order_id": float64(orderID), "qty": 1.0, "made": 0.0, "returned": 0.0, "written_off": 1.0}},
		}, closes[0].Payload)
		env.Dispatch()
		s = salesOf(t, env, orderID)
		require.Equal(t, "ready", s.Status)
		require.Equal(t, "written_off", s.Items[1].Status)
		require.Equal(t, 0, s.Items[1].MadeQty)
		require.Equal(t, 1, s.Items[1].WrittenOffQty)

		ship := func(item int64, qty int) apptest.Response {
			return env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/shipments", orderID), map[string]any{"items": []map[string]any{{"item_id": item, "qty": qty}}})
		}
		p := requireProblem(t, ship(ids[0], 3), http.StatusUnprocessableEntity, "items[0].qty")
		require.Contains(t, p.Errors[0].Message, "written off")
		requireProblem(t, ship(ids[1], 1), http.StatusUnprocessableEntity, "items[0].item_id")
		r := ship(ids[0], 2)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		s = salesOf(t, env, orderID)
		require.Equal(t, "shipped", s.Status, "what was made has shipped; the rest is written off")
		require.Equal(t, "shipped", s.Items[0].Status)
	})
}

// A sales order cancelled after work had started on its items flags the
// production order; closing it is the planner's decision: the flag is
// cleared, and even with rest=backlog nothing of the cancelled order goes
// back to the backlog (it is written off).
func TestClose_FlaggedByCancellation(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		orderID, ids := receive(t, env, line{"TMB-PRIK-450", 2})
		o := launch(t, env, map[string]any{"items": ids})
		progress(t, env, o.ID, 1, 6)
		// Sales has not heard of the launch yet: the order is still received.
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", orderID), cancelBody)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		env.Dispatch()
		require.True(t, prodOrderOf(t, env, o.ID).NeedsAttention)

		closed := closeOrder(t, env, o.ID, map[string]any{"reason": "заказ отменён", "rest": "backlog"})
		require.False(t, closed.NeedsAttention)
		require.Empty(t, closed.AttentionReason)
		require.Equal(t, intp(0), closed.Items[0].ReturnedQty)
		require.Equal(t, intp(2), closed.Items[0].WrittenOffQty)
		require.NotContains(t, backlogIDs(t, env), ids[0])
		var flagged struct{ Items []struct{ ID int64 } }
		env.Admin(http.MethodGet, "/api/v1/production-orders?needs_attention=true", nil).JSON(t, &flagged)
		require.Empty(t, flagged.Items)
		env.Dispatch()
		require.Equal(t, "cancelled", salesOf(t, env, orderID).Status)
	})
}

// Refusals write nothing: no reason, an unknown or missing rest, an order
// on which no work has started (cancel it instead), one done, cancelled or
// closed already, an unknown order, and roles that may not close.
func TestClose_Refusals(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		master := env.UserToken("Мастер смены", "master")
		viewer := env.UserToken("Наблюдатель", "viewer")
		_, ids := receive(t, env, line{"TMB-PRIK-450", 1}, line{"SHK-RASP-1200", 1}, line{"TMB-PRIK-450", 1}, line{"TMB-PRIK-450", 1})
		started := launch(t, env, map[string]any{"items": ids[:1]})
		progress(t, env, started.ID, 1, 1)
		cancelled := launch(t, env, map[string]any{"items": ids[1:2]})
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", cancelled.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		notStarted := launch(t, env, map[string]any{"items": ids[1:2]})
		done := launch(t, env, map[string]any{"items": ids[2:3]})
		finish(t, env, done)
		closed := launch(t, env, map[string]any{"items": ids[3:4]})
		progress(t, env, closed.ID, 1, 1)
		closeOrder(t, env, closed.ID, map[string]any{"reason": "проверка", "rest": "write_off"})
		env.Dispatch()

		ok := `{"reason": "остаток не нужен", "rest": "backlog"}`
		as := func(token string) func() *http.Request {
			return func() *http.Request {
				return newRequest(http.MethodPost, closeURL(started.ID), []byte(ok), "Content-Type", "application/json", "Authorization", "Bearer "+token)
			}
		}
		runRefusals(t, env, []refusal{
			{"NoReason", post(closeURL(started.ID), []byte(`{"rest": "backlog"}`)), 422, "invalid", []string{"reason"}},
			{"BlankReason", post(closeURL(started.ID), []byte(`{"reason": "  ", "rest": "backlog"}`)), 422, "invalid", []string{"reason"}},
			{"ReasonNUL", post(closeURL(started.ID), []byte(`{"reason": "a\u0000", "rest": "backlog"}`)), 422, "invalid", []string{"reason"}},
			{"NoRest", post(closeURL(started.ID), []byte(`{"reason": "остаток не нужен"}`)), 422, "invalid", []string{"rest"}},
			{"UnknownRest", post(closeURL(started.ID), []byte(`{"reason": "остаток не нужен", "rest": "scrap"}`)), 422, "invalid", []string{"rest"}},
			{"NotStarted", post(closeURL(notStarted.ID), []byte(ok)), 409, "conflict", nil},
			{"Done", post(closeURL(done.ID), []byte(ok)), 409, "conflict", nil},
			{"Closed", post(closeURL(closed.ID), []byte(ok)), 409, "conflict", nil},
			{"Cancelled", post(closeURL(cancelled.ID), []byte(ok)), 409, "conflict", nil},
			{"Unknown", post(closeURL(99999), []byte(ok)), 404, "not_found", nil},
			{"Master", as(master), 403, "forbidden", nil},
			{"Viewer", as(viewer), 403, "forbidden", nil},
		})
		p := requireProblem(t, env.Admin(http.MethodPost, closeURL(notStarted.ID), ok), http.StatusConflict)
		require.Contains(t, p.Detail, fmt.Sprintf("/api/v1/production-orders/%d/cancel", notStarted.ID))
	})
}

// An order every item of which is written off before a unit is made will
// never be made or shipped: sales cancels it, telling the shop by
// order.status_changed.
func TestClose_AllWrittenOffCancelsTheSalesOrder(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		orderID, ids := receive(t, env, line{"DIV-CHESTER-3", 1})
		sofa := launch(t, env, map[string]any{"items": ids})
		progress(t, env, sofa.ID, sofa.Operations[0].Seq, 2)
		env.Dispatch()
		require.Equal(t, "in_production", salesOf(t, env, orderID).Status)
		closeOrder(t, env, sofa.ID, map[string]any{"reason": "ткань снята с производства", "rest": "write_off"})
		env.Dispatch()
		s := salesOf(t, env, orderID)
		require.Equal(t, "cancelled", s.Status)
		require.Equal(t, "written_off", s.Items[0].Status)
		r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?type=order.status_changed&aggregate_id=%d", orderID), nil)
		var l struct{ Items []journalEvent }
		r.JSON(t, &l)
		require.NotEmpty(t, l.Items)
		require.Equal(t, "cancelled", l.Items[0].Payload["status"])
		require.Equal(t, "in_production", l.Items[0].Payload["previous_status"])
	})
}
