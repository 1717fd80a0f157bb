package render

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/render/svgtest"
)

// overtimeView is Friday 20.11 to Monday 23.11 on one centre of an eight
// hours' shift: work done on Friday evening after the shift (its minutes
// clamped to the shift's end), on Saturday (a day off) and within
// Friday's shift.
func overtimeView() plan.ScheduleView {
	var days []plan.DayLoad
	for d := day("2026-11-20"); !d.After(day("2026-11-23")); d = d.AddDate(0, 0, 1) {
		wd := d.Weekday()
		dl := plan.DayLoad{Date: database.DateOf(d), Working: wd != 0 && wd != 6}
		if dl.Working {
			dl.CapacityMin = 480
		}
		days = append(days, dl)
	}
	bar := func(id int64, d string, from, to float64, overtime int) plan.OrderBar {
		return plan.OrderBar{ProdOrderID: id, Status: plan.StatusDone, StartDay: date(d), StartMin: from, EndDay: date(d), EndMin: to,
			Operations: 2, OpsDone: 2, Minutes: 30, SalesOrderIDs: []int64{id}, SKUs: []string{"TMB-PRIK-450"}, ETA: date(d), OvertimeOps: overtime}
	}
	return plan.ScheduleView{From: date("2026-11-20"), To: date("2026-11-23"), Today: date("2026-11-23"),
		WorkCenters: []plan.CenterSchedule{{ID: 1, Code: "CUT", Name: "Раскрой", CapacityMinPerDay: 480, Days: days, Orders: []plan.OrderBar{
			bar(11, "2026-11-20", 480, 480, 2), bar(12, "2026-11-21", 120, 180, 1), bar(13, "2026-11-20", 60, 150, 0),
		}}}}
}

// Work is drawn on the day it was done, never on the next, and work done
// outside the centre's hours says so: a dashed outline of its own colour,
// its tooltip, and the legend.
func TestRenderGantt_OvertimeOnItsDay(t *testing.T) {
	t.Parallel()
	_, nodes := renderNodes(t, overtimeView())
	g := layoutGantt(overtimeView())
	column := func(d string) (float64, float64) {
		k := date(d).Sub(date("2026-11-20").Time).Hours() / 24
		return ganttLabelW + k*g.dayW, ganttLabelW + (k+1)*g.dayW
	}
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		return f
	}
	bars, titles := map[string]*svgtest.Node{}, map[string]string{}
	for _, b := range svgtest.ByClass(nodes, "bar") {
		bars[b.Attr["data-prod-order-id"]] = b
	}
	for _, o := range svgtest.ByClass(nodes, "order") {
		titles[o.Attr["data-prod-order-id"]] = o.Title
	}
	within := func(id, d string) {
		x0, x1 := column(d)
		x, w := num(bars[id].Attr["x"]), num(bars[id].Attr["width"])
		require.GreaterOrEqual(t, x, x0-0.05, "bar %s starts on %s", id, d)
		require.LessOrEqual(t, x+w, x1+0.05, "bar %s ends on %s, not the day after", id, d)
		require.Greater(t, w, 2.0, "bar %s can be seen", id)
	}
	within("11", "2026-11-20")
	within("12", "2026-11-21")
	within("13", "2026-11-20")
	for _, id := range []string{"11", "12"} {
		require.Equal(t, ganttOvertimeColor, bars[id].Attr["stroke"], id)
		require.NotEmpty(t, bars[id].Attr["stroke-dasharray"], id)
	}
	require.Empty(t, bars["13"].Attr["stroke"], "work within the shift is no overtime")
	require.Contains(t, titles["11"], "Сверхурочно (после смены или в выходной): операций 2")
	require.NotContains(t, titles["13"], "Сверхурочно")
	var legend []string
	for _, n := range nodes {
		if n.Name == "text" && n.In("legend-item") {
			legend = append(legend, n.Text)
		}
	}
	require.Contains(t, legend, "сделано сверхурочно (после смены или в выходной)")
}
