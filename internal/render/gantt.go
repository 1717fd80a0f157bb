package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/tsekh/tsekh/internal/plan"
)

// The Gantt chart of a plan.ScheduleView, drawn as SVG with the standard library:
// one lane per work centre, one bar per production order on it (stacked when
// they overlap), the days on the horizontal axis. Every text is Russian.
//
// Its marks, each with one style used both on the chart and in the legend
// (which shows only the marks the chart has):
//   - a bar is coloured by its production order's state; it is labelled
//     inside when the label fits, beside it otherwise, and always has a
//     tooltip;
//   - an order whose ETA is after its due date has its bars outlined in the
//     "late" colour;
//   - an order's due date, when in the range, is a marker at the end of that
//     day on its last bar's row: dark when the ETA keeps it, "late" when not;
//   - today is a vertical line at the start of the view's Today;
//   - days off are shaded grey; an overloaded day (more planned than the
//     capacity) is the only thing drawn in the overload colour;
//   - work done is drawn on the day it was done, at its minute within the
//     shift (before the shift at the day's start, after it at the day's
//     end, never on the next day); a bar with work done outside the
//     centre's hours (after the shift, on a day off) has a dashed outline
//     in the overtime colour, and its tooltip says how much.

const (
	ganttLabelW   = 260.0
	ganttHeaderH  = 84.0
	ganttRowH     = 22.0
	ganttLanePad  = 8.0
	ganttRightPad = 20.0
	ganttFont     = 11.0 // bar labels
	ganttTextPad  = 4.0
)

// A mark's style: the same on the chart and in the legend.
type ganttStyle struct {
	Fill        string // "none" for no fill
	FillOpacity float64
	Stroke      string // "" for no stroke
	StrokeWidth float64
	Dash        string
}

func (s ganttStyle) attrs() string {
	var b strings.Builder
	fmt.Fprintf(&b, `fill="%s"`, s.Fill)
	if s.FillOpacity > 0 && s.FillOpacity < 1 {
		fmt.Fprintf(&b, ` fill-opacity="%g"`, s.FillOpacity)
	}
	if s.Stroke != "" {
		fmt.Fprintf(&b, ` stroke="%s" stroke-width="%g"`, s.Stroke, s.StrokeWidth)
	}
	if s.Dash != "" {
		fmt.Fprintf(&b, ` stroke-dasharray="%s"`, s.Dash)
	}
	return b.String()
}

// Colours. The overload colour is used for nothing but overloaded days.
const (
	ganttOverloadColor = "#e15759"
	ganttLateColor     = "#7b1fa2"
	ganttDueColor      = "#333333"
	ganttTodayColor    = "#00897b"
	ganttDayOffColor   = "#c8c8c8"
	ganttOvertimeColor = "#d4a000"
)

type barStyle struct {
	fill, text, label string
}

// ganttStatus is how a production order's state is drawn and named.
var ganttStatus = map[string]barStyle{
	plan.StatusLaunched:   {"#4e79a7", "#ffffff", "запущен"},
	plan.StatusInProgress: {"#f28e2b", "#1f1f1f", "в работе"},
	plan.StatusDone:       {"#8cc084", "#1f1f1f", "готов"},
	plan.StatusCancelled:  {"#bab0ac", "#1f1f1f", "отменён"},
	plan.StatusClosed:     {"#59a14f", "#ffffff", "закрыт досрочно"},
}

// ganttOtherStatus draws a state the chart does not know (none today).
var ganttOtherStatus = barStyle{"#9c9c9c", "#1f1f1f", "прочее"}

func statusStyle(status string) barStyle {
	if s, ok := ganttStatus[status]; ok {
		return s
	}
	return ganttOtherStatus
}

var (
	styleOverload = ganttStyle{Fill: ganttOverloadColor, FillOpacity: 0.22, Stroke: ganttOverloadColor, StrokeWidth: 1}
	styleDayOff   = ganttStyle{Fill: ganttDayOffColor, FillOpacity: 0.45}
	styleToday    = ganttStyle{Fill: "none", Stroke: ganttTodayColor, StrokeWidth: 2}
	styleDue      = ganttStyle{Fill: ganttDueColor, Stroke: ganttDueColor, StrokeWidth: 1.5}
	styleDueLate  = ganttStyle{Fill: ganttLateColor, Stroke: ganttLateColor, StrokeWidth: 1.5}
)

// styleOvertime outlines a bar with work done outside the centre's hours.
var styleOvertime = ganttStyle{Fill: "none", Stroke: ganttOvertimeColor, StrokeWidth: 2, Dash: "4 2"}

func barStyleOf(b plan.OrderBar) ganttStyle {
	s := ganttStyle{Fill: statusStyle(b.Status).fill}
	switch {
	case b.Late:
		s.Stroke, s.StrokeWidth = ganttLateColor, 2
	case b.OvertimeOps > 0:
		s.Stroke, s.StrokeWidth, s.Dash = styleOvertime.Stroke, styleOvertime.StrokeWidth, styleOvertime.Dash
	}
	return s
}

// Gantt writes the view as an SVG document. It depends on nothing but
// the view: today is v.Today.
func Gantt(w io.Writer, v plan.ScheduleView) error {
	g := layoutGantt(v)
	var b bytes.Buffer
	g.writeHeader(&b)
	g.writeDaysAxis(&b)
	y := ganttHeaderH
	for i := range v.WorkCenters {
		y = g.writeLane(&b, i, y)
	}
	g.writeToday(&b)
	g.writeLegend(&b)
	fmt.Fprintf(&b, "</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// gantt is a chart laid out: where every bar, label and legend item goes,
// and how large the chart is. layoutGantt makes it; its write methods draw
// it, top to bottom.
type gantt struct {
	v             plan.ScheduleView
	days          []time.Time
	dayW          float64 // a day's width
	chartR        float64 // the right edge of the days
	width, height float64
	lanes         [][]placedBar // per work centre, its bars
	rows          []int         // per work centre, its rows of bars
	lanesBottom   float64
	dueBars       map[int64]dueMarker
	today         int  // the column of v.Today
	todayIn       bool // whether v.Today is in the view
	legend        []legendItem
	legendAt      []legendPos
}

// placedBar is a bar on the chart, with its label.
type placedBar struct {
	bar      plan.OrderBar
	x0, x1   float64 // the bar
	row      int
	label    string
	size     float64 // its font size
	inside   bool    // the label is on the bar
	lx       float64 // where the label starts
	ex0, ex1 float64 // the bar and its label
}

// legendItem is a mark the chart has, as the legend shows it.
type legendItem struct {
	style ganttStyle
	shape string // "rect", "line" or "due"
	text  string
}

type legendPos struct{ x, y float64 }

// layoutGantt places the view's bars, their labels and the legend.
func layoutGantt(v plan.ScheduleView) *gantt {
	g := &gantt{v: v, days: v.Days()}
	g.dayW = math.Max(16, math.Min(64, 1120/float64(len(g.days))))
	g.chartR = ganttLabelW + g.dayW*float64(len(g.days))
	g.width = g.chartR + ganttRightPad

	g.lanes = make([][]placedBar, len(v.WorkCenters))
	g.rows = make([]int, len(v.WorkCenters))
	for i, cs := range v.WorkCenters {
		for _, b := range cs.Orders {
			g.lanes[i] = append(g.lanes[i], g.placeBar(cs, b))
		}
		g.rows[i] = stackRows(g.lanes[i])
	}
	height := ganttHeaderH
	for i := range v.WorkCenters {
		height += float64(g.rows[i])*ganttRowH + 2*ganttLanePad
	}
	g.lanesBottom = height

	g.dueBars = dueMarkers(v)
	g.today, g.todayIn = todayIndex(v)
	g.legend = g.legendItems()
	g.layoutLegend()
	return g
}

// placeBar places bar b of lane cs and its label: on the bar when it fits,
// else beside it, right or left.
func (g *gantt) placeBar(cs plan.CenterSchedule, b plan.OrderBar) placedBar {
	v, days, dayW, chartR := g.v, g.days, g.dayW, g.chartR
	p := placedBar{bar: b}
	p.x0 = dayX(v, days, dayW, b.StartDay.Time, b.StartMin, float64(cs.CapacityMinPerDay))
	p.x1 = dayX(v, days, dayW, b.EndDay.Time, b.EndMin, float64(cs.CapacityMinPerDay))
	if p.x1 < p.x0+3 {
		// Too short to see: widened within its own day, backwards from the
		// day's end, so that work done at the end of a day (after its
		// shift) is not drawn on the next.
		if dayEnd := dayX(v, days, dayW, b.EndDay.Time, float64(cs.CapacityMinPerDay), float64(cs.CapacityMinPerDay)); p.x0+3 > dayEnd {
			p.x0 = p.x1 - 3
		} else {
			p.x1 = p.x0 + 3
		}
	}
	p.ex0, p.ex1 = p.x0, p.x1
	p.label, p.inside, p.size = placeLabel(barLabels(b), p.x0, p.x1, chartR)
	switch {
	case p.inside:
		p.lx = p.x0 + ganttTextPad
	case p.label != "" && p.x1+ganttTextPad+textWidth(p.label, p.size) <= chartR:
		p.lx = p.x1 + ganttTextPad
		p.ex1 = p.lx + textWidth(p.label, p.size) + ganttTextPad
	case p.label != "":
		p.lx = p.x0 - ganttTextPad - textWidth(p.label, p.size)
		p.ex0 = p.lx - ganttTextPad
	}
	return p
}

// stackRows sorts a lane's bars by where they start and gives each, with
// its label, the first row free from its start; it returns the lane's rows
// (at least one).
func stackRows(lane []placedBar) int {
	sort.SliceStable(lane, func(a, b int) bool { return lane[a].ex0 < lane[b].ex0 })
	var ends []float64
	for k := range lane {
		p := &lane[k]
		row := 0
		for row < len(ends) && ends[row] > p.ex0+0.5 {
			row++
		}
		if row == len(ends) {
			ends = append(ends, 0)
		}
		ends[row] = p.ex1
		p.row = row
	}
	return max(1, len(ends))
}

// legendItems are the legend's items: only the marks the chart has, in a
// fixed order.
func (g *gantt) legendItems() []legendItem {
	var legend []legendItem
	usedStatus := map[string]bool{}
	anyLate, anyDue, anyDueLate, anyOff, anyOver, anyOvertime := false, false, false, false, false, false
	for i, cs := range g.v.WorkCenters {
		for _, d := range cs.Days {
			anyOver = anyOver || d.Overload
			anyOff = anyOff || (!d.Overload && !d.Working)
		}
		for _, p := range g.lanes[i] {
			usedStatus[statusStyle(p.bar.Status).label] = true
			anyLate = anyLate || p.bar.Late
			anyOvertime = anyOvertime || (p.bar.OvertimeOps > 0 && !p.bar.Late)
		}
	}
	for _, b := range g.dueBars {
		anyDue = anyDue || !b.Late
		anyDueLate = anyDueLate || b.Late
	}
	for _, st := range []string{plan.StatusLaunched, plan.StatusInProgress, plan.StatusDone, plan.StatusClosed, plan.StatusCancelled} {
		if s := ganttStatus[st]; usedStatus[s.label] {
			legend = append(legend, legendItem{ganttStyle{Fill: s.fill}, "rect", "ПЗ " + s.label})
		}
	}
	if usedStatus[ganttOtherStatus.label] {
		legend = append(legend, legendItem{ganttStyle{Fill: ganttOtherStatus.fill}, "rect", "ПЗ: " + ganttOtherStatus.label})
	}
	if anyLate {
		legend = append(legend, legendItem{ganttStyle{Fill: "none", Stroke: ganttLateColor, StrokeWidth: 2}, "rect", "готовность (ETA) позже срока"})
	}
	if anyOvertime {
		legend = append(legend, legendItem{styleOvertime, "rect", "сделано сверхурочно (после смены или в выходной)"})
	}
	if anyDue {
		legend = append(legend, legendItem{styleDue, "due", "срок заказа"})
	}
	if anyDueLate {
		legend = append(legend, legendItem{styleDueLate, "due", "срок заказа, не успевает"})
	}
	if g.todayIn {
		legend = append(legend, legendItem{styleToday, "line", "сегодня"})
	}
	if anyOff {
		legend = append(legend, legendItem{styleDayOff, "rect", "выходной"})
	}
	if anyOver {
		legend = append(legend, legendItem{styleOverload, "rect", "перегрузка: запланировано больше мощности участка"})
	}
	return legend
}

// layoutLegend lays the legend out under the lanes, in rows as wide as the
// chart, and sets the chart's height to hold it.
func (g *gantt) layoutLegend() {
	pos := make([]legendPos, len(g.legend))
	lx, ly := 8.0, g.lanesBottom+22
	for i, it := range g.legend {
		w := 22 + textWidth(it.text, 11) + 18
		if lx+w > g.width && lx > 8 {
			lx, ly = 8, ly+20
		}
		pos[i] = legendPos{lx, ly}
		lx += w
	}
	g.legendAt = pos
	g.height = ly + 14
}

// writeHeader writes the document's start, its background and its title.
func (g *gantt) writeHeader(b *bytes.Buffer) {
	v, width, height := g.v, g.width, g.height
	fmt.Fprintf(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="DejaVu Sans, Arial, Helvetica, sans-serif" font-size="12">`+"\n", width, height, width, height)
	title := fmt.Sprintf("Загрузка участков %s – %s", v.From.Format("02.01.2006"), v.To.Format("02.01.2006"))
	fmt.Fprintf(b, "<title>%s</title>\n", esc(title))
	fmt.Fprintf(b, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(b, `<text x="8" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", esc(title))
}

// writeDaysAxis writes the days axis: the month where it starts, the day,
// the weekday.
func (g *gantt) writeDaysAxis(b *bytes.Buffer) {
	days, dayW := g.days, g.dayW
	for k, d := range days {
		x := ganttLabelW + float64(k)*dayW
		month := monthRU[d.Month()-1] + " " + d.Format("2006")
		// The month where it starts, and over the first day unless the next
		// month's name starts too close.
		left := len(days) - k
		if next := d.AddDate(0, 1, 1-d.Day()); k == 0 && d.Day() != 1 {
			left = int(next.Sub(d).Hours() / 24)
		}
		if (k == 0 || d.Day() == 1) && (d.Day() == 1 || textWidth(month, 10)+6 <= float64(left)*dayW) {
			fmt.Fprintf(b, `<text x="%.1f" y="%.0f" font-size="10" fill="#555">%s</text>`+"\n", x+2, ganttHeaderH-34, esc(month))
		}
		label := d.Format("02.01")
		if dayW < 34 {
			label = d.Format("02")
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle" font-size="10" fill="#555">%s</text>`+"\n", x+dayW/2, ganttHeaderH-18, esc(label))
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle" font-size="9" fill="#888">%s</text>`+"\n", x+dayW/2, ganttHeaderH-6, weekdayRU[d.Weekday()])
	}
}

// writeLane writes work centre i's lane, whose top is y, and returns the
// top of the next: its background and name, its days off and overloaded
// days, its bars, the due dates on it and the bars' labels.
func (g *gantt) writeLane(b *bytes.Buffer, i int, y float64) float64 {
	cs := g.v.WorkCenters[i]
	h := float64(g.rows[i])*ganttRowH + 2*ganttLanePad
	fmt.Fprintf(b, `<g class="lane" data-work-center-id="%d">`+"\n", cs.ID)
	fill := "#f7f7f7"
	if i%2 == 1 {
		fill = "#ffffff"
	}
	fmt.Fprintf(b, `<rect x="0" y="%.1f" width="%.0f" height="%.1f" fill="%s" stroke="#ddd"/>`+"\n", y, g.width, h, fill)
	fmt.Fprintf(b, `<text x="8" y="%.1f" font-weight="bold">%s</text>`+"\n", y+h/2-2, esc(cs.Code))
	fmt.Fprintf(b, `<text x="8" y="%.1f" font-size="10" fill="#555">%s</text>`+"\n", y+h/2+11, esc(truncate(cs.Name, 40)))
	g.writeLaneDays(b, cs, y, h)
	barY := func(p placedBar) float64 { return y + ganttLanePad + float64(p.row)*ganttRowH + 2 }
	g.writeBars(b, i, barY)
	g.writeDueDates(b, i, barY)
	g.writeLabels(b, i, barY)
	fmt.Fprintf(b, "</g>\n")
	return y + h
}

// ganttBarH is a bar's height.
const ganttBarH = ganttRowH - 4

// writeLaneDays writes lane cs's overloaded days and days off, and the
// lines between its days.
func (g *gantt) writeLaneDays(b *bytes.Buffer, cs plan.CenterSchedule, y, h float64) {
	dayW := g.dayW
	for k, d := range cs.Days {
		x := ganttLabelW + float64(k)*dayW
		switch {
		case d.Overload:
			fmt.Fprintf(b, `<rect class="overload" data-date="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" %s><title>%s</title></rect>`+"\n",
				d.Date, x, y, dayW, h, styleOverload.attrs(), esc(overloadTitle(cs, d)))
		case !d.Working:
			fmt.Fprintf(b, `<rect class="day-off" data-date="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" %s><title>%s</title></rect>`+"\n",
				d.Date, x, y, dayW, h, styleDayOff.attrs(), esc(fmt.Sprintf("%s, %s: выходной", cs.Code, ruDate(d.Date))))
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>`+"\n", x, y, x, y+h)
	}
}

// writeBars writes lane i's bars, each with its tooltip; barY is a bar's top.
func (g *gantt) writeBars(b *bytes.Buffer, i int, barY func(placedBar) float64) {
	cs := g.v.WorkCenters[i]
	for _, p := range g.lanes[i] {
		fmt.Fprintf(b, `<g class="order" data-prod-order-id="%d"><title>%s</title>`, p.bar.ProdOrderID, esc(barTitle(cs, p.bar)))
		fmt.Fprintf(b, `<rect class="bar" data-prod-order-id="%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" %s/></g>`+"\n",
			p.bar.ProdOrderID, p.x0, barY(p), p.x1-p.x0, ganttBarH, barStyleOf(p.bar).attrs())
	}
}

// writeDueDates writes the due dates of the orders whose last bar in the
// view is on lane i, over the bars, under the labels.
func (g *gantt) writeDueDates(b *bytes.Buffer, i int, barY func(placedBar) float64) {
	cs := g.v.WorkCenters[i]
	for _, p := range g.lanes[i] {
		d, ok := g.dueBars[p.bar.ProdOrderID]
		if !ok || d.center != cs.ID {
			continue
		}
		x := dueX(g.v, g.dayW, d.DueDate.Time)
		by := barY(p) - 2
		style := styleDue
		if d.Late {
			style = styleDueLate
		}
		fmt.Fprintf(b, `<g class="due" data-prod-order-id="%d" data-date="%s" data-x="%.1f"><title>%s</title>`, p.bar.ProdOrderID, d.DueDate, x, esc(dueTitle(d.OrderBar)))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" %s/>`, x, by, x, by+ganttRowH, style.attrs())
		fmt.Fprintf(b, `<path d="M%.1f %.1f l-5 -6 h10 z" %s/></g>`+"\n", x, by+6, style.attrs())
	}
}

// writeLabels writes the labels of lane i's bars.
func (g *gantt) writeLabels(b *bytes.Buffer, i int, barY func(placedBar) float64) {
	cs := g.v.WorkCenters[i]
	for _, p := range g.lanes[i] {
		if p.label == "" {
			continue
		}
		// A label beside its bar has a white halo, to stay readable
		// over a due date's marker.
		color, halo := "#1f1f1f", ` stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"`
		if p.inside {
			color, halo = statusStyle(p.bar.Status).text, ""
		}
		fmt.Fprintf(b, `<g class="order-label" data-prod-order-id="%d"><title>%s</title>`, p.bar.ProdOrderID, esc(barTitle(cs, p.bar)))
		fmt.Fprintf(b, `<text class="label" x="%.1f" y="%.1f" font-size="%g" fill="%s"%s>%s</text></g>`+"\n", p.lx, barY(p)+ganttBarH-4.5, p.size, color, halo, esc(p.label))
	}
}

// writeToday writes today's line, when today is in the view.
func (g *gantt) writeToday(b *bytes.Buffer) {
	if !g.todayIn {
		return
	}
	v := g.v
	x := ganttLabelW + float64(g.today)*g.dayW
	fmt.Fprintf(b, `<g class="today" data-date="%s" data-x="%.1f"><title>%s</title>`, v.Today, x, esc("Сегодня, "+ruDate(v.Today)))
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" %s/>`, x, ganttHeaderH-56, x, g.lanesBottom, styleToday.attrs())
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="10" font-weight="bold" fill="%s">сегодня</text></g>`+"\n", x+3, ganttHeaderH-48, ganttTodayColor)
}

// writeLegend writes the legend where layoutLegend placed its items.
func (g *gantt) writeLegend(b *bytes.Buffer) {
	fmt.Fprintf(b, `<g class="legend">`+"\n")
	for i, it := range g.legend {
		x, y := g.legendAt[i].x, g.legendAt[i].y
		fmt.Fprintf(b, `<g class="legend-item">`)
		switch it.shape {
		case "line":
			fmt.Fprintf(b, `<line class="swatch" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" %s/>`, x+7, y-11, x+7, y+3, it.style.attrs())
		case "due":
			fmt.Fprintf(b, `<path class="swatch" d="M%.1f %.1f l-5 -6 h10 z" %s/>`, x+7, y-3, it.style.attrs())
			fmt.Fprintf(b, `<line class="swatch" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" %s/>`, x+7, y-9, x+7, y+3, it.style.attrs())
		default:
			fmt.Fprintf(b, `<rect class="swatch" x="%.1f" y="%.1f" width="16" height="12" rx="2" %s/>`, x, y-10, it.style.attrs())
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11">%s</text></g>`+"\n", x+22, y, esc(it.text))
	}
	fmt.Fprintf(b, "</g>\n")
}

// placeLabel chooses a bar's label (from labels, longest first, as
// barLabels makes them) and where it goes: the longest that fits on the bar;
// else the one with the SKU beside the bar, right or left, where there is
// room; else the shortest that fits on the bar; else none (the tooltip
// stays).
func placeLabel(labels []string, x0, x1, chartR float64) (label string, inside bool, size float64) {
	fits := func(l string, size float64) bool { return textWidth(l, size)+2*ganttTextPad <= x1-x0 }
	for _, size := range []float64{ganttFont, ganttFont - 1} {
		for _, l := range labels[:2] {
			if fits(l, size) {
				return l, true, size
			}
		}
	}
	if w := textWidth(labels[1], ganttFont); x1+ganttTextPad+w <= chartR || x0-ganttTextPad-w >= ganttLabelW {
		return labels[1], false, ganttFont
	}
	for _, l := range labels[2:] {
		if fits(l, ganttFont) {
			return l, true, ganttFont
		}
	}
	return "", false, ganttFont
}

// barLabels are a bar's labels, longest first; the last is the shortest.
func barLabels(b plan.OrderBar) []string {
	short := fmt.Sprintf("№%d", b.ProdOrderID)
	po := fmt.Sprintf("ПЗ №%d", b.ProdOrderID)
	mid := po
	if len(b.SKUs) > 0 {
		mid += " · " + b.SKUs[0]
		if len(b.SKUs) > 1 {
			mid += fmt.Sprintf(" +%d", len(b.SKUs)-1)
		}
	}
	long := mid
	if s := salesOrders(b.SalesOrderIDs); s != "" {
		long += " · " + s
	}
	if !b.DueDate.IsZero() {
		long += " · срок " + ruDate(b.DueDate)
	}
	return []string{long, mid, po, short}
}

func salesOrders(ids []int64) string {
	switch len(ids) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("заказ №%d", ids[0])
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprintf("№%d", id)
	}
	return "заказы " + strings.Join(s, ", ")
}

// barTitle is a bar's tooltip.
func barTitle(cs plan.CenterSchedule, b plan.OrderBar) string {
	var t strings.Builder
	fmt.Fprintf(&t, "ПЗ №%d", b.ProdOrderID)
	if st, ok := ganttStatus[b.Status]; ok {
		fmt.Fprintf(&t, " — %s", st.label)
	}
	if s := salesOrders(b.SalesOrderIDs); s != "" {
		r := []rune(s)
		fmt.Fprintf(&t, "\n%s", string(unicode.ToUpper(r[0]))+string(r[1:]))
	}
	if len(b.SKUs) > 0 {
		fmt.Fprintf(&t, "\nАртикулы: %s", strings.Join(b.SKUs, ", "))
	}
	fmt.Fprintf(&t, "\n%s: операций %d, выполнено %d, %s мин", cs.Code, b.Operations, b.OpsDone, minutes(b.Minutes))
	fmt.Fprintf(&t, "\nНа участке: %s – %s", ruDate(b.StartDay), ruDate(b.EndDay))
	if b.OvertimeOps > 0 {
		fmt.Fprintf(&t, "\nСверхурочно (после смены или в выходной): операций %d", b.OvertimeOps)
	}
	if !b.ETA.IsZero() {
		fmt.Fprintf(&t, "\nГотовность (ETA): %s", ruDate(b.ETA))
	}
	if !b.DueDate.IsZero() {
		fmt.Fprintf(&t, "\nСрок: %s", ruDate(b.DueDate))
		if b.Late {
			fmt.Fprintf(&t, ", не успевает на %s", daysRU(lateDays(b)))
		}
	}
	return t.String()
}

func dueTitle(b plan.OrderBar) string {
	t := fmt.Sprintf("Срок ПЗ №%d: %s", b.ProdOrderID, ruDate(b.DueDate))
	if s := salesOrders(b.SalesOrderIDs); s != "" {
		t += " (" + s + ")"
	}
	if b.Late {
		return t + fmt.Sprintf("\nГотовность (ETA) %s — позже срока на %s", ruDate(b.ETA), daysRU(lateDays(b)))
	}
	return t + fmt.Sprintf("\nГотовность (ETA) %s — в срок", ruDate(b.ETA))
}

func overloadTitle(cs plan.CenterSchedule, d plan.DayLoad) string {
	return fmt.Sprintf("%s, %s: перегрузка — запланировано %s мин при мощности %s мин", cs.Code, ruDate(d.Date), minutes(d.LoadMin), minutes(d.CapacityMin))
}

func lateDays(b plan.OrderBar) int { return int(b.ETA.Sub(b.DueDate.Time).Hours() / 24) }

// daysRU is n days in Russian: 1 день, 2 дня, 5 дней.
func daysRU(n int) string {
	word := "дней"
	switch n10, n100 := n%10, n%100; {
	case n10 == 1 && n100 != 11:
		word = "день"
	case n10 >= 2 && n10 <= 4 && (n100 < 12 || n100 > 14):
		word = "дня"
	}
	return fmt.Sprintf("%d %s", n, word)
}

func minutes(m float64) string {
	if m == math.Trunc(m) {
		return fmt.Sprintf("%.0f", m)
	}
	return strings.Replace(fmt.Sprintf("%.1f", m), ".", ",", 1)
}

type dueMarker struct {
	plan.OrderBar
	center int64 // the lane of the order's last bar in the view
}

// dueMarkers are the orders whose due date is in the view's range, each on
// the lane of its bar that ends last.
func dueMarkers(v plan.ScheduleView) map[int64]dueMarker {
	out := map[int64]dueMarker{}
	for _, cs := range v.WorkCenters {
		for _, b := range cs.Orders {
			if b.DueDate.IsZero() || b.DueDate.Before(v.From.Time) || b.DueDate.After(v.To.Time) {
				continue
			}
			m, ok := out[b.ProdOrderID]
			if !ok || (plan.Moment{Day: m.EndDay.Time, Min: m.EndMin}).Before(plan.Moment{Day: b.EndDay.Time, Min: b.EndMin}) {
				out[b.ProdOrderID] = dueMarker{OrderBar: b, center: cs.ID}
			}
		}
	}
	return out
}

// dueX is the end of day d on the chart: an order due on d is on time when
// ready by then.
func dueX(v plan.ScheduleView, dayW float64, d time.Time) float64 {
	return ganttLabelW + (d.Sub(v.From.Time).Hours()/24+1)*dayW
}

// todayIndex is the column of v.Today, and whether it is in the view.
func todayIndex(v plan.ScheduleView) (int, bool) {
	if v.Today.IsZero() || v.Today.Before(v.From.Time) || v.Today.After(v.To.Time) {
		return 0, false
	}
	return int(math.Round(v.Today.Sub(v.From.Time).Hours() / 24)), true
}

// dayX is the x of minute min of day d's capacity on the chart, clamped to the chart's days.
func dayX(v plan.ScheduleView, days []time.Time, dayW float64, d time.Time, minute, capacity float64) float64 {
	k := d.Sub(v.From.Time).Hours() / 24
	frac := 0.0
	if capacity > 0 {
		frac = math.Min(math.Max(minute/capacity, 0), 1)
	}
	pos := k + frac
	pos = math.Min(math.Max(pos, 0), float64(len(days)))
	return ganttLabelW + pos*dayW
}

// textWidth estimates the width of s in a sans-serif font of the given
// size, on the wide side (DejaVu Sans), so that a label said to fit does.
func textWidth(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case r == ' ' || r == '.' || r == ',' || r == ':' || r == '·' || r == '|' || r == 'i' || r == 'l' || r == 'I':
			w += 0.34
		case r == '-' || r == '(' || r == ')':
			w += 0.40
		case r == '№' || r == 'ш' || r == 'щ' || r == 'ж' || r == 'ю' || r == 'м' || r == 'm' || r == 'w':
			w += 0.95
		case unicode.IsDigit(r):
			w += 0.64
		case unicode.IsUpper(r):
			w += 0.74
		default:
			w += 0.62
		}
	}
	return w * size
}

func ruDate(d interface{ Format(string) string }) string { return d.Format("02.01") }

var weekdayRU = [...]string{"вс", "пн", "вт", "ср", "чт", "пт", "сб"}

var monthRU = [...]string{"январь", "февраль", "март", "апрель", "май", "июнь", "июль", "август", "сентябрь", "октябрь", "ноябрь", "декабрь"}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
