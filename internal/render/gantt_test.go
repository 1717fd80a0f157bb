package render

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/render/svgtest"
)

func renderNodes(t *testing.T, v plan.ScheduleView) (string, []*svgtest.Node) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, Gantt(&b, v))
	nodes, err := svgtest.Parse(b.Bytes())
	require.NoError(t, err, "the SVG is not well-formed XML")
	return b.String(), nodes
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func date(s string) database.Date { return database.DateOf(day(s)) }

// ganttView is a week from Saturday 14.11.2026, today Monday 16.11: a
// cutting centre overloaded on Tuesday with a long late bar, a sliver of
// done work, an order due on Friday and one in a state the chart does not
// know; an empty assembly centre.
func ganttView() plan.ScheduleView {
	days := func(over string) []plan.DayLoad {
		var out []plan.DayLoad
		for d := day("2026-11-14"); !d.After(day("2026-11-20")); d = d.AddDate(0, 0, 1) {
			wd := d.Weekday()
			dl := plan.DayLoad{Date: database.DateOf(d), Working: wd != 0 && wd != 6}
			if dl.Working {
				dl.CapacityMin = 480
			}
			if d.Format("2006-01-02") == over {
				dl.LoadMin, dl.Overload = 600, true
			}
			out = append(out, dl)
		}
		return out
	}
	return plan.ScheduleView{
		From: date("2026-11-14"), To: date("2026-11-20"), Today: date("2026-11-16"),
		WorkCenters: []plan.CenterSchedule{
			{ID: 1, Code: "CUT", Name: `Раскрой <А&Б> "Ф"`, CapacityMinPerDay: 480, Days: days("2026-11-17"), Orders: []plan.OrderBar{
				{ProdOrderID: 7, Status: plan.StatusInProgress, StartDay: date("2026-11-16"), EndDay: date("2026-11-20"), EndMin: 480,
					Operations: 40, OpsDone: 12, Minutes: 1440, SalesOrderIDs: []int64{3, 4}, SKUs: []string{"SHK-<1>&2", "TMB-PRIK-450"},
					DueDate: date("2026-11-17"), ETA: date("2026-11-20"), Late: true},
				{ProdOrderID: 8, Status: plan.StatusDone, StartDay: date("2026-11-16"), EndDay: date("2026-11-16"), EndMin: 10,
					Operations: 2, OpsDone: 2, Minutes: 10, SalesOrderIDs: []int64{5}, SKUs: []string{"TMB-PRIK-450"}, ETA: date("2026-11-16")},
				{ProdOrderID: 9, Status: plan.StatusLaunched, StartDay: date("2026-11-19"), EndDay: date("2026-11-19"), StartMin: 100, EndMin: 400,
					Operations: 5, Minutes: 300, SalesOrderIDs: []int64{6}, SKUs: []string{"DIV-CHESTER-3"},
					DueDate: date("2026-11-20"), ETA: date("2026-11-19")},
				{ProdOrderID: 10, Status: "on_hold", StartDay: date("2026-11-20"), EndDay: date("2026-11-20"), EndMin: 50,
					Operations: 1, Minutes: 50, SalesOrderIDs: []int64{}, SKUs: []string{}, ETA: date("2026-11-20")},
			}},
			{ID: 2, Code: "ASM", Name: "Сборка", CapacityMinPerDay: 960, Days: days(""), Orders: []plan.OrderBar{}},
		},
	}
}

func TestRenderGantt(t *testing.T) {
	t.Parallel()
	const left, dayW = 260.0, 64.0 // seven days of 64 px after the lanes' names
	doc, nodes := renderNodes(t, ganttView())
	of := func(class string) []*svgtest.Node { return svgtest.ByClass(nodes, class) }
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		return f
	}

	t.Run("Escaped", func(t *testing.T) {
		require.Contains(t, doc, `Раскрой &lt;А&amp;Б&gt; &#34;Ф&#34;`)
		names := map[string]bool{}
		for _, n := range nodes {
			names[n.Text] = true
		}
		require.True(t, names[`Раскрой <А&Б> "Ф"`], "the name reads back as it was")
	})

	t.Run("Russian", func(t *testing.T) {
		for st, want := range map[string]string{plan.StatusLaunched: "запущен", plan.StatusInProgress: "в работе", plan.StatusDone: "готов", plan.StatusCancelled: "отменён"} {
			require.Equal(t, want, ganttStatus[st].label, st)
		}
		english := regexp.MustCompile(`\b(launched|in_progress|done|cancelled|pending|closed)\b`)
		for _, n := range nodes {
			require.False(t, english.MatchString(n.Text), "%s: %q", n.Name, n.Text)
		}
		titles := map[string]string{}
		for _, g := range of("order") {
			titles[g.Attr["data-prod-order-id"]] = g.Title
		}
		require.Len(t, titles, 4, "every bar has a tooltip")
		require.Contains(t, titles["7"], "ПЗ №7 — в работе\nЗаказы №3, №4\nАртикулы: SHK-<1>&2, TMB-PRIK-450\nCUT: операций 40, выполнено 12, 1440 мин")
		require.Contains(t, titles["7"], "Готовность (ETA): 20.11\nСрок: 17.11, не успевает на 3 дня")
		require.Contains(t, titles["8"], "ПЗ №8 — готов\nЗаказ №5")
		require.Contains(t, titles["9"], "ПЗ №9 — запущен")
		require.True(t, strings.HasPrefix(titles["10"], "ПЗ №10\n"), "a state without a Russian name is left out: %q", titles["10"])
	})

	t.Run("Labels", func(t *testing.T) {
		labels := map[string]*svgtest.Node{}
		for _, l := range of("label") {
			labels[l.Parent.Attr["data-prod-order-id"]] = l
			require.NotEmpty(t, l.Parent.Title, "a label has its bar's tooltip")
		}
		bars := map[string]*svgtest.Node{}
		for _, b := range of("bar") {
			bars[b.Attr["data-prod-order-id"]] = b
		}
		// The long bar: on it, with both sales orders; the sliver: beside it.
		require.Equal(t, "ПЗ №7 · SHK-<1>&2 +1 · заказы №3, №4 · срок 17.11", labels["7"].Text)
		require.Less(t, num(labels["7"].Attr["x"]), num(bars["7"].Attr["x"])+num(bars["7"].Attr["width"]))
		require.Equal(t, "ПЗ №8 · TMB-PRIK-450", labels["8"].Text)
		require.GreaterOrEqual(t, num(labels["8"].Attr["x"]), num(bars["8"].Attr["x"])+num(bars["8"].Attr["width"]))
		require.Equal(t, "ПЗ №9 · DIV-CHESTER-3", labels["9"].Text)
	})

	t.Run("OverloadColour", func(t *testing.T) {
		over := of("overload")
		require.Len(t, over, 1)
		require.Equal(t, "2026-11-17", over[0].Attr["data-date"])
		require.Equal(t, "1", over[0].Parent.Attr["data-work-center-id"])
		for _, n := range nodes {
			if slices.Contains(n.Colors(), ganttOverloadColor) {
				require.Contains(t, []string{"overload", "swatch"}, n.Attr["class"], "%s %v", n.Name, n.Attr)
			}
		}
	})

	t.Run("Legend", func(t *testing.T) {
		legend, marks := map[string]bool{}, map[string]bool{}
		for _, n := range nodes {
			switch {
			case n.In("swatch"):
				for _, c := range n.Colors() {
					legend[c] = true
				}
			case n.In("bar") || n.In("overload") || n.In("day-off") || n.In("due") || n.In("today"):
				for _, c := range n.Colors() {
					marks[c] = true
				}
			}
		}
		require.Equal(t, marks, legend)
		var texts []string
		for _, n := range nodes {
			if n.Name == "text" && n.In("legend-item") {
				texts = append(texts, n.Text)
			}
		}
		require.Equal(t, []string{"ПЗ запущен", "ПЗ в работе", "ПЗ готов", "ПЗ: прочее", "готовность (ETA) позже срока",
			"срок заказа", "срок заказа, не успевает", "сегодня", "выходной", "перегрузка: запланировано больше мощности участка"}, texts)
	})

	t.Run("Today", func(t *testing.T) {
		today := of("today")
		require.Len(t, today, 1)
		var line *svgtest.Node
		for _, n := range nodes {
			if n.Name == "line" && n.In("today") {
				line = n
			}
		}
		require.InDelta(t, left+2*dayW, num(line.Attr["x1"]), 0.05)
		require.Equal(t, ganttTodayColor, line.Attr["stroke"])
	})

	t.Run("DueDates", func(t *testing.T) {
		due := map[string]*svgtest.Node{}
		for _, n := range nodes {
			if n.Name == "line" && n.In("due") {
				due[n.Parent.Attr["data-prod-order-id"]] = n
			}
		}
		require.Len(t, due, 2, "orders 7 and 9; 8 and 10 have no due date")
		require.InDelta(t, left+4*dayW, num(due["7"].Attr["x1"]), 0.05, "the end of 17.11")
		require.Equal(t, ganttLateColor, due["7"].Attr["stroke"])
		require.InDelta(t, left+7*dayW, num(due["9"].Attr["x1"]), 0.05, "the end of 20.11")
		require.Equal(t, ganttDueColor, due["9"].Attr["stroke"])
		for _, b := range of("bar") {
			if b.Attr["data-prod-order-id"] == "7" {
				require.Equal(t, ganttLateColor, b.Attr["stroke"], "a late order's bars are outlined")
			} else {
				require.Empty(t, b.Attr["stroke"])
			}
		}
	})

	t.Run("OnlyTheMarksDrawn", func(t *testing.T) {
		v := ganttView()
		v.Today = date("2026-11-21") // after the range
		v.WorkCenters[0].Orders = v.WorkCenters[0].Orders[2:3]
		v.WorkCenters[0].Days[3].Overload = false
		v.WorkCenters[0].Orders[0].DueDate = date("2026-11-21") // after the range
		_, nodes := renderNodes(t, v)
		var texts []string
		for _, n := range nodes {
			require.NotEqual(t, "today", n.Attr["class"])
			require.NotEqual(t, "due", n.Attr["class"])
			require.NotEqual(t, "overload", n.Attr["class"])
			if n.Name == "text" && n.In("legend-item") {
				texts = append(texts, n.Text)
			}
		}
		require.Equal(t, []string{"ПЗ запущен", "выходной"}, texts)
	})
}

func TestDaysRU(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{1: "1 день", 2: "2 дня", 4: "4 дня", 5: "5 дней", 11: "11 дней", 12: "12 дней", 21: "21 день", 22: "22 дня", 111: "111 дней", 114: "114 дней"} {
		require.Equal(t, want, daysRU(n))
	}
}
