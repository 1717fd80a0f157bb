package plan

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"time"
)

// The Gantt chart of a ScheduleView, drawn as SVG with the standard library:
// one lane per work centre, one bar per production order on it (stacked when
// they overlap), the days on the horizontal axis, days off shaded and
// overloaded days marked in red.

const (
	ganttLabelW  = 260.0
	ganttHeaderH = 56.0
	ganttRowH    = 20.0
	ganttLanePad = 8.0
	ganttLegendH = 34.0
)

var ganttPalette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#e15759", "#bab0ac", "#86bcb6"}

// RenderGantt writes the view as an SVG document.
func RenderGantt(w io.Writer, v ScheduleView) error {
	days := v.days()
	dayW := math.Max(16, math.Min(64, 1120/float64(len(days))))
	width := ganttLabelW + dayW*float64(len(days)) + 20

	type placed struct {
		bar    OrderBar
		x0, x1 float64
		row    int
	}
	lanes := make([][]placed, len(v.WorkCenters))
	rows := make([]int, len(v.WorkCenters))
	height := ganttHeaderH
	for i, cs := range v.WorkCenters {
		var ends []float64 // per row, where its last bar ends
		for _, b := range cs.Orders {
			x0 := dayX(v, days, dayW, b.StartDay.Time, b.StartMin, float64(cs.CapacityMinPerDay))
			x1 := dayX(v, days, dayW, b.EndDay.Time, b.EndMin, float64(cs.CapacityMinPerDay))
			x1 = math.Max(x1, x0+2)
			row := 0
			for row < len(ends) && ends[row] > x0+0.5 {
				row++
			}
			if row == len(ends) {
				ends = append(ends, 0)
			}
			ends[row] = x1
			lanes[i] = append(lanes[i], placed{bar: b, x0: x0, x1: x1, row: row})
		}
		rows[i] = max(1, len(ends))
		height += float64(rows[i])*ganttRowH + 2*ganttLanePad
	}
	height += ganttLegendH

	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(fmt.Sprintf("План загрузки участков %s – %s", v.From, v.To)))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="8" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", esc(fmt.Sprintf("Загрузка участков %s – %s", v.From, v.To)))

	// The days axis.
	for k, d := range days {
		x := ganttLabelW + float64(k)*dayW
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" font-size="10" fill="#555">%s</text>`+"\n", x+dayW/2, ganttHeaderH-20, esc(d.Format("02.01")))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" font-size="9" fill="#888">%s</text>`+"\n", x+dayW/2, ganttHeaderH-8, weekdayRU[d.Weekday()])
	}

	y := ganttHeaderH
	for i, cs := range v.WorkCenters {
		h := float64(rows[i])*ganttRowH + 2*ganttLanePad
		fmt.Fprintf(&b, `<g class="lane" data-work-center-id="%d">`+"\n", cs.ID)
		fill := "#f7f7f7"
		if i%2 == 1 {
			fill = "#ffffff"
		}
		fmt.Fprintf(&b, `<rect x="0" y="%.1f" width="%.0f" height="%.1f" fill="%s" stroke="#ddd"/>`+"\n", y, width, h, fill)
		fmt.Fprintf(&b, `<text x="8" y="%.1f" font-weight="bold">%s</text>`+"\n", y+h/2-2, esc(cs.Code))
		fmt.Fprintf(&b, `<text x="8" y="%.1f" font-size="10" fill="#555">%s</text>`+"\n", y+h/2+11, esc(truncate(cs.Name, 40)))
		for k, d := range cs.Days {
			x := ganttLabelW + float64(k)*dayW
			switch {
			case d.Overload:
				fmt.Fprintf(&b, `<rect class="overload" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#e15759" fill-opacity="0.18" stroke="#e15759"><title>%s</title></rect>`+"\n",
					x, y, dayW, h, esc(fmt.Sprintf("%s: перегрузка, %.0f из %.0f мин", d.Date, d.LoadMin, d.CapacityMin)))
			case !d.Working:
				fmt.Fprintf(&b, `<rect class="day-off" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#cccccc" fill-opacity="0.35"/>`+"\n", x, y, dayW, h)
			}
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>`+"\n", x, y, x, y+h)
		}
		for _, p := range lanes[i] {
			color := ganttPalette[int(p.bar.ProdOrderID)%len(ganttPalette)]
			opacity := "0.9"
			if p.bar.Status == StatusDone {
				opacity = "0.4"
			}
			by := y + ganttLanePad + float64(p.row)*ganttRowH + 2
			fmt.Fprintf(&b, `<rect class="bar" data-prod-order-id="%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="%s" fill-opacity="%s"><title>%s</title></rect>`+"\n",
				p.bar.ProdOrderID, p.x0, by, p.x1-p.x0, ganttRowH-4, color, opacity,
				esc(fmt.Sprintf("ПЗ #%d (%s): операций %d, выполнено %d, %.0f мин, %s – %s",
					p.bar.ProdOrderID, p.bar.Status, p.bar.Operations, p.bar.OpsDone, p.bar.Minutes, p.bar.StartDay, p.bar.EndDay)))
			if label := fmt.Sprintf("#%d", p.bar.ProdOrderID); p.x1-p.x0 >= float64(len(label))*7 {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" fill="#fff">%s</text>`+"\n", p.x0+3, by+ganttRowH-8, esc(label))
			}
		}
		fmt.Fprintf(&b, "</g>\n")
		y += h
	}

	// The legend.
	ly := y + 22
	fmt.Fprintf(&b, `<rect x="8" y="%.1f" width="14" height="10" fill="#4e79a7"/><text x="28" y="%.1f" font-size="11">производственный заказ (ПЗ)</text>`+"\n", ly-9, ly)
	fmt.Fprintf(&b, `<rect x="230" y="%.1f" width="14" height="10" fill="#cccccc" fill-opacity="0.35" stroke="#bbb"/><text x="250" y="%.1f" font-size="11">выходной</text>`+"\n", ly-9, ly)
	fmt.Fprintf(&b, `<rect x="340" y="%.1f" width="14" height="10" fill="#e15759" fill-opacity="0.18" stroke="#e15759"/><text x="360" y="%.1f" font-size="11">перегрузка: запланировано больше минут, чем мощность участка</text>`+"\n", ly-9, ly)
	fmt.Fprintf(&b, "</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// dayX is the x of minute min of day d's capacity on the chart, clamped to the chart's days.
func dayX(v ScheduleView, days []time.Time, dayW float64, d time.Time, minute, capacity float64) float64 {
	k := d.Sub(v.From.Time).Hours() / 24
	frac := 0.0
	if capacity > 0 {
		frac = math.Min(math.Max(minute/capacity, 0), 1)
	}
	pos := k + frac
	pos = math.Min(math.Max(pos, 0), float64(len(days)))
	return ganttLabelW + pos*dayW
}

var weekdayRU = [...]string{"вс", "пн", "вт", "ср", "чт", "пт", "сб"}

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
