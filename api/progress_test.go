package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// A work centre with no working day within the scheduling horizon refuses a
// launch with a 422 that names it, not a 500; fixing its calendar lets the
// same launch through.
func TestProduction_CentreThatNeverWorks(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		monday := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
		env.App.Plan.SetToday(func() time.Time { return monday })
		_, ids := receive(t, env, line{"DIV-CHESTER-3", 1})

		var wcs struct {
			Items []struct {
				ID                int64
				Code              string
				Name              string
				CapacityMinPerDay int `json:"capacity_min_per_day"`
			}
		}
		env.Admin(http.MethodGet, "/api/v1/work-centers?limit=500", nil).JSON(t, &wcs)
		// The sofa's route starts on the first work centre of its route: find it
		// from a launch that is cancelled straight away.
		o := launch(t, env, map[string]any{"items": ids})
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", o.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		centre := o.Operations[0].WorkCenterID
		var code, name string
		var capacity int
		for _, wc := range wcs.Items {
			if wc.ID == centre {
				code, name, capacity = wc.Code, wc.Name, wc.CapacityMinPerDay
			}
		}
		require.NotEmpty(t, code)

		// Mondays only, and every Monday for three and a quarter years a holiday.
		var holidays []string
		for d := monday; d.Before(monday.AddDate(3, 3, 0)); d = d.AddDate(0, 0, 7) {
			holidays = append(holidays, d.Format(time.DateOnly))
		}
		put := func(weekdays []int, holidays []string) {
			t.Helper()
			r := env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", centre), map[string]any{"code": code, "name": name,
				"capacity_min_per_day": capacity, "calendar": map[string]any{"weekdays": weekdays, "holidays": holidays}})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
		put([]int{1}, holidays)

		p := requireProblem(t, env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": ids}), http.StatusUnprocessableEntity)
		require.Contains(t, p.Detail, name)
		require.Contains(t, p.Detail, code)
		require.Contains(t, backlogIDs(t, env), ids[0], "the items stay in the backlog")

		put([]int{1, 2, 3, 4, 5}, holidays)
		launch(t, env, map[string]any{"items": ids})
	})
}

// The shop floor's master reports progress and reads the plan; they launch,
// cancel and change nothing else.
func TestProduction_MasterRole(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		tok := env.UserToken("Мастер смены", "master")
		var me struct{ Role string }
		env.Do(http.MethodGet, "/api/v1/me", nil, tok).JSON(t, &me)
		require.Equal(t, "master", me.Role)

		_, ids := receive(t, env, line{"DIV-CHESTER-3", 1})
		p := requireProblem(t, env.Do(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": ids}, tok), http.StatusForbidden)
		require.Contains(t, p.Detail, "master")
		o := launch(t, env, map[string]any{"items": ids})

		for _, path := range []string{"/api/v1/plan/backlog", "/api/v1/plan/schedule", "/api/v1/production-orders",
			fmt.Sprintf("/api/v1/production-orders/%d", o.ID), "/api/v1/work-centers", "/api/v1/routes", "/api/v1/products"} {
			r := env.Do(http.MethodGet, path, nil, tok)
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
		}
		op := o.Operations[0].ID
		for _, action := range []string{"start", "complete"} {
			r := env.Do(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/operations/%d/%s", o.ID, op, action), nil, tok)
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", action, r.Body)
		}
		started := eventsOf(t, env, "prod_order.started", o.ID)
		require.Len(t, started, 1)
		require.NotNil(t, started[0].Actor)
		require.Equal(t, "Мастер смены", started[0].Actor.Name)

		for _, c := range []struct {
			method, path string
			body         any
		}{
			{http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", o.ID), nil},
			{http.MethodPost, "/api/v1/work-centers", map[string]any{"code": "CNC", "name": "ЧПУ", "capacity_min_per_day": 900}},
			{http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", o.Operations[0].WorkCenterID), map[string]any{"code": "CNC", "name": "ЧПУ", "capacity_min_per_day": 900}},
			{http.MethodPost, "/api/v1/routes", map[string]any{}},
			{http.MethodPost, "/api/v1/products", map[string]any{}},
			{http.MethodPost, "/api/v1/orders", validOrder},
			{http.MethodPost, "/api/v1/users", map[string]any{"name": "x", "role": "master"}},
		} {
			requireProblem(t, env.Do(c.method, c.path, c.body, tok), http.StatusForbidden)
		}
	})
}

type progressReport struct {
	Seq       int
	Name      string
	Scope     string
	Done      int
	Total     int
	Ready     int
	ProdOrder prodOrder `json:"prod_order"`
}

// The shop floor reports in quantities, in route order: two nightstands
// are 12 parts through cutting, edge banding and drilling, then 2 units
// through assembly and packing.
func TestProduction_ProgressByQuantity(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		master := env.UserToken("Мастер смены", "master")
		_, ids := receive(t, env, line{"TMB-PRIK-450", 2})
		o := launch(t, env, map[string]any{"items": ids})
		require.Equal(t, 12, o.PartsCount)
		url := fmt.Sprintf("/api/v1/production-orders/%d/progress", o.ID)
		report := func(body map[string]any) progressReport {
			t.Helper()
			r := env.Do(http.MethodPost, url, body, master)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var rep progressReport
			r.JSON(t, &rep)
			return rep
		}
		refuse := func(body map[string]any, status int, fields ...string) problem {
			t.Helper()
			return requireProblem(t, env.Do(http.MethodPost, url, body, master), status, fields...)
		}

		rep := report(map[string]any{"seq": 1, "qty": 10, "minutes": 40})
		require.Equal(t, progressReport{Seq: 1, Name: rep.Name, Scope: "part", Done: 10, Total: 12, Ready: 2, ProdOrder: rep.ProdOrder}, rep)
		require.Equal(t, "in_progress", rep.ProdOrder.Status)
		require.Equal(t, 10, rep.ProdOrder.Progress.OpsDone)
		require.Len(t, eventsOf(t, env, "prod_order.started", o.ID), 1)

		// Refusals: ahead of the step before, more than remains, unknown step,
		// scrap per unit, nothing reported, a role that may not.
		p := refuse(map[string]any{"seq": 2, "qty": 11}, http.StatusConflict)
		require.Contains(t, p.Detail, "10")
		refuse(map[string]any{"seq": 1, "qty": 3}, http.StatusUnprocessableEntity, "qty")
		refuse(map[string]any{"seq": 1, "qty": 2, "scrap_parts": []map[string]any{{"code": o.Parts[0].Code, "reason": "chipped"}}}, http.StatusUnprocessableEntity, "qty")
		// Scrap names its parts: a count alone scraps nothing, and says how to report it.
		p = refuse(map[string]any{"seq": 1, "qty": 1, "scrap": 1}, http.StatusUnprocessableEntity, "scrap")
		require.Contains(t, p.Errors[0].Message, "scrap_parts")
		require.Contains(t, p.Errors[0].Message, "/api/v1/floor/scrap")
		refuse(map[string]any{"seq": 4, "qty": 1}, http.StatusConflict)
		refuse(map[string]any{"seq": 9, "qty": 1}, http.StatusUnprocessableEntity, "seq")
		refuse(map[string]any{"seq": 4, "scrap": 1}, http.StatusUnprocessableEntity, "scrap")
		refuse(map[string]any{"seq": 1}, http.StatusUnprocessableEntity, "qty")
		refuse(map[string]any{"seq": 1, "qty": -1, "minutes": -5}, http.StatusUnprocessableEntity, "qty", "minutes")
		refuse(map[string]any{"seq": 1, "qty": int64(1) << 62, "scrap": int64(1) << 62}, http.StatusUnprocessableEntity, "qty", "scrap")
		viewer := env.UserToken("Наблюдатель", "viewer")
		requireProblem(t, env.Do(http.MethodPost, url, map[string]any{"seq": 1, "qty": 1}, viewer), http.StatusForbidden)
		requireProblem(t, env.Do(http.MethodPost, "/api/v1/production-orders/99999/progress", map[string]any{"seq": 1, "qty": 1}, master), http.StatusNotFound)

		// Edge banding: 8 done, 2 spoilt, named: each is scrapped and a re-cut takes its place.
		var atBanding struct{ Items []floorPart }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d/parts?step=2&state=pending", o.ID), nil).JSON(t, &atBanding)
		require.Len(t, atBanding.Items, 12)
		var ready2 []floorPart
		for _, fp := range atBanding.Items {
			if fp.AtSeq != nil && *fp.AtSeq == 2 {
				ready2 = append(ready2, fp)
			}
		}
		require.Len(t, ready2, 10)
		spoilt := []map[string]any{{"code": ready2[0].Code, "reason": "edge_defect"}, {"code": ready2[1].Code, "reason": "chipped", "note": "скол"}}
		rep = report(map[string]any{"seq": 2, "qty": 8, "scrap": 2, "scrap_parts": spoilt})
		require.Equal(t, 8, rep.Done)
		require.Equal(t, 0, rep.Ready, "the two left at edge banding and the re-cuts are not cut yet")
		var got prodOrder
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", o.ID), nil).JSON(t, &got)
		cut, scrapped := 0, 0
		for _, op := range got.Operations {
			if op.Seq == 1 && op.Status == "done" {
				cut++
			}
		}
		for _, part := range got.Parts {
			if part.Status == "scrapped" {
				scrapped++
			}
		}
		require.Equal(t, 10, cut, "10 were cut, 2 of them spoilt at banding")
		require.Equal(t, 2, scrapped, "the parts named are scrapped")
		require.Len(t, got.Parts, 14, "and cut again")
		var recuts struct {
			Boards []struct {
				Parts []struct {
					RecutOf string `json:"recut_of"`
					Reason  string
				}
			}
		}
		env.Admin(http.MethodGet, "/api/v1/floor/recuts", nil).JSON(t, &recuts)
		require.Len(t, recuts.Boards, 1)
		require.Len(t, recuts.Boards[0].Parts, 2)
		require.ElementsMatch(t, []string{ready2[0].Code, ready2[1].Code}, []string{recuts.Boards[0].Parts[0].RecutOf, recuts.Boards[0].Parts[1].RecutOf})
		require.Equal(t, "edge_defect", recuts.Boards[0].Parts[0].Reason)
		refuse(map[string]any{"seq": 2, "qty": 1}, http.StatusConflict)

		report(map[string]any{"seq": 1, "qty": 4})
		report(map[string]any{"seq": 2, "qty": 4})
		rep = report(map[string]any{"seq": 3, "qty": 12})
		require.Empty(t, eventsOf(t, env, "prod_order.completed", o.ID))
		require.Equal(t, "in_progress", rep.ProdOrder.Status)
		report(map[string]any{"seq": 4, "qty": 2})
		require.Empty(t, eventsOf(t, env, "prod_order.completed", o.ID))
		rep = report(map[string]any{"seq": 5, "qty": 2})
		require.Equal(t, "done", rep.ProdOrder.Status)
		require.Equal(t, 100.0, rep.ProdOrder.Progress.Percent)
		require.Len(t, eventsOf(t, env, "prod_order.completed", o.ID), 1)
		refuse(map[string]any{"seq": 5, "qty": 1}, http.StatusConflict)

		reports := eventsOf(t, env, "prod_order.progress_reported", o.ID)
		require.Len(t, reports, 7)
		require.Equal(t, map[string]any{"prod_order_id": float64(o.ID), "items": toAny(ids), "seq": 1.0, "operation": reports[0].Payload["operation"],
			"scope": "part", "qty": 10.0, "scrap": 0.0, "minutes": 40.0, "done": 10.0, "total": 12.0}, reports[0].Payload)
		require.Equal(t, 2.0, reports[1].Payload["scrap"])
		require.Equal(t, "Мастер смены", reports[0].Actor.Name)
	})
}

// The per-operation endpoints keep the route order too, and share the state
// with the reports in quantities.
func TestProduction_RouteOrder(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		opURL := func(o prodOrder, op int64, action string) string {
			return fmt.Sprintf("/api/v1/production-orders/%d/operations/%d/%s", o.ID, op, action)
		}
		ok := func(url string) {
			t.Helper()
			r := env.Admin(http.MethodPost, url, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
		// Edge banding before cutting.
		_, ids := receive(t, env, line{"TMB-PRIK-450", 1})
		o := launch(t, env, map[string]any{"items": ids})
		var band int64
		for _, op := range o.Operations {
			if op.Seq == 2 && op.PartID != nil && *op.PartID == *o.Operations[0].PartID {
				band = op.ID
			}
		}
		require.NotZero(t, band)
		ok(opURL(o, band, "start"))
		p := requireProblem(t, env.Admin(http.MethodPost, opURL(o, band, "complete"), nil), http.StatusConflict)
		require.Contains(t, p.Detail, fmt.Sprint(o.Operations[0].ID))
		ok(opURL(o, o.Operations[0].ID, "start"))
		ok(opURL(o, o.Operations[0].ID, "complete"))
		ok(opURL(o, band, "complete"))

		// Assembly before the sofa's parts are cut; then the cutting reported
		// in a quantity lets it through.
		_, ids = receive(t, env, line{"DIV-CHESTER-3", 1})
		sofa := launch(t, env, map[string]any{"items": ids})
		sewing := sofa.Operations[5]
		require.Equal(t, "item", sewing.Scope)
		ok(opURL(sofa, sewing.ID, "start"))
		requireProblem(t, env.Admin(http.MethodPost, opURL(sofa, sewing.ID, "complete"), nil), http.StatusConflict)
		url := fmt.Sprintf("/api/v1/production-orders/%d/progress", sofa.ID)
		r := env.Admin(http.MethodPost, url, map[string]any{"seq": sofa.Operations[0].Seq, "qty": 4})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		requireProblem(t, env.Admin(http.MethodPost, opURL(sofa, sewing.ID, "complete"), nil), http.StatusConflict)
		r = env.Admin(http.MethodPost, url, map[string]any{"seq": sofa.Operations[0].Seq, "qty": 1})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		ok(opURL(sofa, sewing.ID, "complete"))
		requireProblem(t, env.Admin(http.MethodPost, url, map[string]any{"seq": sewing.Seq, "qty": 1}), http.StatusUnprocessableEntity, "qty")
		for _, op := range sofa.Operations[6:] {
			r = env.Admin(http.MethodPost, url, map[string]any{"seq": op.Seq, "qty": 1})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
		var got prodOrder
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", sofa.ID), nil).JSON(t, &got)
		require.Equal(t, "done", got.Status)
		require.Len(t, eventsOf(t, env, "prod_order.completed", sofa.ID), 1)
	})
}
