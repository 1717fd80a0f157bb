package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// A cutting plan is a job: POST answers 202 at once with the job's
// location, the job waits in the queue (listed, in the journal) until a
// runner takes it; a planner may cancel it while it waits, and then it
// never runs; an ended job cannot be cancelled. A viewer follows jobs but
// cancels none.
func TestJobs_CuttingPlanQueuedAndCancelled(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		_, ids := receive(t, env, line{"TMB-PRIK-450", 1})
		po := launch(t, env, map[string]any{"items": ids})
		r := env.Admin(http.MethodPost, "/api/v1/cutting-plans", map[string]any{"prod_orders": []int64{po.ID}})
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		loc := r.Header.Get("Location")
		var queued jobOf
		r.JSON(t, &queued)
		require.Equal(t, fmt.Sprintf("/api/v1/jobs/%d", queued.ID), loc)
		require.Equal(t, "cutting_plan", queued.Kind)
		require.Equal(t, "queued", queued.Status)
		require.Zero(t, env.Count("cutting_plans"), "nothing laid out while the client waited")

		viewer := env.UserToken("Наблюдатель", "viewer")
		g := env.Do(http.MethodGet, loc, nil, viewer)
		require.Equal(t, http.StatusOK, g.Status, "%s", g.Body)
		var list struct{ Items []jobOf }
		env.Do(http.MethodGet, "/api/v1/jobs?kind=cutting_plan", nil, viewer).JSON(t, &list)
		require.Len(t, list.Items, 1)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/jobs?kind=nope", nil), http.StatusUnprocessableEntity, "kind")
		requireProblem(t, env.Do(http.MethodPost, loc+"/cancel", nil, viewer), http.StatusForbidden)

		c := env.Admin(http.MethodPost, loc+"/cancel", nil)
		require.Equal(t, http.StatusOK, c.Status, "%s", c.Body)
		var cancelled jobOf
		c.JSON(t, &cancelled)
		require.Equal(t, "cancelled", cancelled.Status)
		require.Zero(t, env.RunJobs(), "a cancelled job never runs")
		require.Zero(t, env.Count("cutting_plans"))
		requireProblem(t, env.Admin(http.MethodPost, loc+"/cancel", nil), http.StatusConflict)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/jobs/999999", nil), http.StatusNotFound)
		requireProblem(t, env.Admin(http.MethodPost, "/api/v1/jobs/999999/cancel", nil), http.StatusNotFound)

		for _, typ := range []string{"job.queued", "job.cancelled"} {
			evs := catalogEventsOf(t, env, typ)
			require.Len(t, evs, 1, typ)
			require.Equal(t, "Администратор", actorName(evs[0]), typ)
		}

		// Queued again, it runs: done, its plan in the job, laid out in its requester's name.
		j := runJob(t, env, env.Admin(http.MethodPost, "/api/v1/cutting-plans", map[string]any{"prod_orders": []int64{po.ID}}))
		require.Equal(t, "done", j.Status)
		require.InDelta(t, 1.0, j.Progress, 1e-9)
		require.Equal(t, fmt.Sprintf("/api/v1/cutting-plans/%d", j.Plan.ID), j.ResultURL)
		created := catalogEventsOf(t, env, "cutting_plan.created")
		require.Len(t, created, 1)
		require.Equal(t, "Администратор", actorName(created[0]))
	})
}
