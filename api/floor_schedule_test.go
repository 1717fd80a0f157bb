package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// The schedule tells the truth. Planning runs at noon of a day a month
// ahead while the shop floor works today:
//   - an order launched mid-shift loads each centre with its operations'
//     minutes from where they are planned (not from the day's minute 0);
//   - once done, its operations load nothing and are drawn today, when they
//     were done, not where they were planned;
//   - the next order launched loads only its own work (no 560/480 from
//     done work left at its old slots);
//   - an order closed short loads nothing.
func TestFloor_ScheduleTellsTheTruth(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		moscow, err := time.LoadLocation("Europe/Moscow")
		require.NoError(t, err)
		today := time.Now().In(moscow).Format(time.DateOnly)
		planDay := time.Now().In(moscow).AddDate(0, 0, 30)
		noon := time.Date(planDay.Year(), planDay.Month(), planDay.Day(), 12, 0, 0, 0, moscow)
		env.App.Plan.SetNow(func() time.Time { return noon })
		from, to := today, planDay.AddDate(0, 0, 20).Format(time.DateOnly)
		view := func() scheduleView {
			t.Helper()
			r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/plan/schedule?from=%s&to=%s", from, to), nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var v scheduleView
			r.JSON(t, &v)
			return v
		}
		loads := func(v scheduleView) map[int64]float64 {
			out := map[int64]float64{}
			for _, wc := range v.WorkCenters {
				for _, d := range wc.Days {
					out[wc.ID] += d.LoadMin
				}
			}
			return out
		}
		minutesOf := func(id int64) map[int64]float64 {
			out := map[int64]float64{}
			for _, op := range prodOrderOf(t, env, id).Operations {
				out[op.WorkCenterID] += op.Minutes
			}
			return out
		}
		requireLoads := func(want map[int64]float64, v scheduleView) {
			t.Helper()
			got := loads(v)
			for wc, m := range got {
				require.InDelta(t, want[wc], m, 0.05, "work centre %d", wc)
			}
		}

		_, first := receive(t, env, line{"TMB-PRIK-450", 1})
		a := launch(t, env, map[string]any{"items": first})
		requireLoads(minutesOf(a.ID), view())
		startsMidShift := false
		for _, op := range prodOrderOf(t, env, a.ID).Operations {
			startsMidShift = startsMidShift || op.PlannedStartMin > 0
		}
		require.True(t, startsMidShift, "planned from noon, mid-shift")

		for seq := 1; seq <= 5; seq++ {
			qty := 6
			if seq > 3 {
				qty = 1
			}
			progress(t, env, a.ID, seq, qty)
		}
		require.Equal(t, "done", prodOrderOf(t, env, a.ID).Status)
		v := view()
		requireLoads(map[int64]float64{}, v)
		drawn := 0
		for _, wc := range v.WorkCenters {
			for _, o := range wc.Orders {
				if o.ProdOrderID == a.ID {
					require.Equal(t, today, o.StartDay, "drawn when it was done")
					require.Equal(t, today, o.EndDay)
					drawn++
				}
			}
		}
		require.NotZero(t, drawn)

		_, second := receive(t, env, line{"TMB-PRIK-450", 1})
		b := launch(t, env, map[string]any{"items": second})
		requireLoads(minutesOf(b.ID), view())

		progress(t, env, b.ID, 1, 6)
		closeOrder(t, env, b.ID, map[string]any{"reason": "не нужно", "rest": "write_off"})
		requireLoads(map[int64]float64{}, view())
	})
}
