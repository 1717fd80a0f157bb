package render

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/database"
)

var updateGolden = flag.Bool("update-gantt", false, "rewrite the Gantt charts of testdata/gantt from Gantt")

// goldenViews are the views whose charts testdata/gantt keeps, between them
// every mark and placement Gantt has: the week of ganttView, today
// outside it, and two months of many orders (narrow days, month names,
// stacked rows, labels inside, beside and left of their bars, every state,
// a legend over several rows).
func goldenViews() map[string]plan.ScheduleView {
	week := ganttView()
	past := ganttView()
	past.Today = date("2026-11-21")

	r := rand.New(rand.NewPCG(1, 2))
	from, to := day("2026-10-20"), day("2026-12-18")
	statuses := []string{plan.StatusLaunched, plan.StatusInProgress, plan.StatusDone, plan.StatusCancelled, plan.StatusClosed, "on_hold"}
	months := plan.ScheduleView{From: database.DateOf(from), To: database.DateOf(to), Today: date("2026-11-02")}
	for c := range 3 {
		cs := plan.CenterSchedule{ID: int64(c + 1), Code: fmt.Sprintf("WC%d", c+1), Name: fmt.Sprintf("Участок с очень длинным названием номер %d", c+1),
			CapacityMinPerDay: 480, Orders: []plan.OrderBar{}}
		for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
			dl := plan.DayLoad{Date: database.DateOf(d), Working: d.Weekday() != 0 && d.Weekday() != 6}
			if dl.Working {
				dl.CapacityMin = 480
				dl.LoadMin = float64(r.IntN(700))
				dl.Overload = dl.LoadMin > 480
			}
			cs.Days = append(cs.Days, dl)
		}
		for n := range 14 {
			start := from.AddDate(0, 0, r.IntN(58)-2)
			end := start.AddDate(0, 0, r.IntN(9))
			b := plan.OrderBar{ProdOrderID: int64(100*c + n), Status: statuses[r.IntN(len(statuses))],
				StartDay: database.DateOf(start), StartMin: float64(r.IntN(480)), EndDay: database.DateOf(end), EndMin: float64(r.IntN(481)),
				Operations: 1 + r.IntN(30), Minutes: float64(r.IntN(4000)) / 2, SalesOrderIDs: []int64{}, SKUs: []string{}}
			b.OpsDone = r.IntN(b.Operations + 1)
			for range r.IntN(4) {
				b.SalesOrderIDs = append(b.SalesOrderIDs, int64(r.IntN(900)))
				b.SKUs = append(b.SKUs, fmt.Sprintf("SKU-%d", r.IntN(99)))
			}
			b.ETA = database.DateOf(end.AddDate(0, 0, r.IntN(3)))
			if r.IntN(3) > 0 {
				b.DueDate = database.DateOf(end.AddDate(0, 0, r.IntN(9)-4))
				b.Late = b.ETA.After(b.DueDate.Time)
			}
			cs.Orders = append(cs.Orders, b)
		}
		months.WorkCenters = append(months.WorkCenters, cs)
	}
	return map[string]plan.ScheduleView{"week": week, "today-after": past, "months": months,
		"empty": {From: date("2026-11-30"), To: date("2026-12-01"), WorkCenters: []plan.CenterSchedule{}}}
}

// Gantt draws each golden view byte for byte as testdata/gantt keeps
// it: a change to the chart's code that is not meant to change the chart
// changes nothing. After a change that is meant to, look at the charts and
// rewrite them: go test ./internal/render/ -run TestRenderGanttGolden -update-gantt.
func TestRenderGanttGolden(t *testing.T) {
	t.Parallel()
	for name, v := range goldenViews() {
		var b bytes.Buffer
		require.NoError(t, Gantt(&b, v))
		path := filepath.Join("testdata", "gantt", name+".svg")
		if *updateGolden {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err)
		if got := b.String(); got != string(want) {
			wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
			n := 0
			for n < len(wl) && n < len(gl) && wl[n] == gl[n] {
				n++
			}
			line := func(l []string) string {
				if n < len(l) {
					return l[n]
				}
				return "(the end)"
			}
			t.Errorf("%s differs from its golden chart from line %d:\nwant %s\ngot  %s", path, n+1, line(wl), line(gl))
		}
	}
}
