package render

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tsekh/tsekh/internal/cutplan"
	"github.com/tsekh/tsekh/internal/cutting"
)

// The saw operator's drawings: each sheet to scale (1 px per 2 mm at most
// 1400 px wide), its trims hatched grey, each part a pale box with its cut
// order in a circle, its name, its size as the list gives it (↻ when
// turned) and its production order; offcuts kept green; the cuts as thin
// red lines numbered in saw order, each with the fence's setting for it
// (the strip a rip cuts off, the length a cross-cut does) drawn as a
// dimension from the edge that lies against the fence, and listed in cut
// order under the drawing; the grain direction an arrow. The same drawing
// is an SVG document, a page of the plan's PDF (plan.go), and a page of
// its HTML.

// sheetScale is pixels per millimetre for a sheet of the length.
func sheetScale(length float64) float64 {
	return math.Min(0.5, 1400/math.Max(length, 1))
}

// Sheet writes sheet n of plan p as a standalone SVG document.
func Sheet(w io.Writer, p cutplan.Plan, sh cutplan.Sheet) error {
	_, err := io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+sheetSVG(p, sh))
	return err
}

// Plan writes the whole plan as one printable HTML page: a header
// with the totals per board, then every sheet's drawing on a page of its own.
func Plan(w io.Writer, p cutplan.Plan) error {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8"><title>Карта раскроя №%d</title>`, p.ID)
	b.WriteString(`<style>body{font-family:sans-serif;margin:12mm}table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px;font-size:12px}` +
		`.sheet{page-break-before:always;margin-top:8mm}@media print{.sheet{page-break-before:always}}</style></head><body>`)
	fmt.Fprintf(&b, `<h1>Карта раскроя №%d</h1><p>%s</p>`, p.ID, esc(planLine(p)))
	b.WriteString(`<table><tr><th>Плита</th><th>Декор</th><th>мм</th><th>Листов</th><th>из них остатков</th><th>Деталей</th><th>Выход</th><th>Отход, м²</th></tr>`)
	for _, bt := range p.Boards {
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td><td>%g</td><td>%d</td><td>%d</td><td>%d</td><td>%.1f %%</td><td>%.2f</td></tr>`,
			esc(bt.Board), esc(bt.Decor), bt.ThicknessMM, bt.Sheets, bt.OffcutsUsed, bt.Parts, bt.Yield*100, bt.WasteM2)
	}
	b.WriteString(`</table>`)
	for _, sh := range p.SheetList {
		b.WriteString(`<div class="sheet">`)
		b.WriteString(sheetSVG(p, sh))
		b.WriteString(`</div>`)
	}
	b.WriteString(`</body></html>`)
	_, err := io.WriteString(w, b.String())
	return err
}

// planLine is the plan's settings in a sentence.
func planLine(p cutplan.Plan) string {
	return fmt.Sprintf("Производственные заказы: %s. Пропил %.1f мм, этапов %d, деловой остаток от %d × %d мм.",
		joinIDs(p.ProdOrders), p.KerfMM, p.Stages, p.MinOffcutMM, p.MinOffcutMM)
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprintf("№%d", id)
	}
	return strings.Join(s, ", ")
}

// fence is where the saw's fence is set for a cut: Size mm from the edge
// that lies against it, From (the piece's edge, or where the blade left it
// after the piece's cut before), to the cut. A rip cuts off a strip of
// that width, a cross-cut a length.
type fence struct {
	From, Size float64
}

// fences are the cuts' fence settings, in saw order: the cuts of a piece
// at its stage come one after the other (cutting.Cut), each from where
// the blade left the one before.
func fences(cuts []cutting.Cut, kerf float64) []fence {
	out := make([]fence, len(cuts))
	for i, c := range cuts {
		from := c.Piece.Y
		if c.Direction == cutting.AlongWidth {
			from = c.Piece.X
		}
		if i > 0 && cuts[i-1].Piece == c.Piece && cuts[i-1].Direction == c.Direction {
			from = cuts[i-1].Pos + kerf
		}
		out[i] = fence{From: from, Size: math.Round((c.Pos-from)*10) / 10}
	}
	return out
}

// sheetBox is a sheet drawing's size and layout: k pixels per mm, the
// sheet's width and height in pixels, the fences' list's columns and rows.
type sheetBox struct {
	k, W, H, wpx, hpx float64
	cols, rows        int
}

const (
	sheetMargin, sheetHead = 20.0, 56.0
	fenceCellW, fenceRowH  = 104.0, 18.0
)

func sheetBoxOf(sh cutplan.Sheet) sheetBox {
	k := sheetScale(sh.LengthMM)
	b := sheetBox{k: k, wpx: sh.LengthMM * k, hpx: sh.WidthMM * k}
	// never narrower than the header and the legend need
	b.W = math.Max(b.wpx+2*sheetMargin, 960)
	b.cols = max(1, int((b.W-2*sheetMargin)/fenceCellW))
	b.rows = (len(sh.Cuts) + b.cols - 1) / b.cols
	b.H = sheetHead + b.hpx + 42 + float64(b.rows)*fenceRowH + sheetMargin
	return b
}

// sheetSVG is one sheet's drawing as an SVG element.
func sheetSVG(p cutplan.Plan, sh cutplan.Sheet) string {
	box := sheetBoxOf(sh)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="DejaVu Sans, Arial, sans-serif">`, box.W, box.H, box.W, box.H)
	b.WriteString(svgTrimPattern)
	drawSheet(svgCanvas{&b}, p, sh, box)
	b.WriteString(`</svg>`)
	return b.String()
}

// Colours of the drawing.
const (
	inkText   = "#10243f"
	inkPart   = "#1d4f91"
	inkCut    = "#c0392b"
	inkFence  = "#8e1b10"
	inkOffcut = "#2f6b22"
)

// drawSheet draws the sheet on c. The sheet's length runs left to right,
// its y axis upwards as the plan's coordinates have it.
func drawSheet(c canvas, p cutplan.Plan, sh cutplan.Sheet, box sheetBox) {
	k := box.k
	X := func(mm float64) float64 { return sheetMargin + mm*k }
	Y := func(mm float64) float64 { return sheetHead + box.hpx - mm*k } // y up
	c.rect(0, 0, box.W, box.H, paint{fill: "#fff"})
	what := fmt.Sprintf("лист %g × %g мм", sh.LengthMM, sh.WidthMM)
	if sh.OffcutID != nil {
		what = fmt.Sprintf("деловой остаток №%d, %g × %g мм", *sh.OffcutID, sh.LengthMM, sh.WidthMM)
	}
	c.text(sheetMargin, 22, 16, "start", paint{bold: true}, fmt.Sprintf("Раскрой №%d, лист %d из %d: %s %s, %g мм", p.ID, sh.N, max(p.Sheets, sh.N), sh.Board, sh.Decor, sh.ThicknessMM))
	c.text(sheetMargin, 42, 12, "start", paint{}, fmt.Sprintf("%s; деталей %d; выход %.1f %%; отход %.2f м²; пропил %.1f мм; этапов %d",
		what, len(sh.Parts), sh.Yield*100, sh.WasteM2, p.KerfMM, sh.Stages))
	// the sheet, with its trims hatched
	c.hatch(X(0), Y(sh.WidthMM), box.wpx, box.hpx)
	u := sh.Usable
	c.rect(X(u.X), Y(u.Y+u.DY), u.DX*k, u.DY*k, paint{fill: "#f4f1ea"})
	for _, o := range sh.Offcuts {
		c.rect(X(o.X), Y(o.Y+o.DY), o.DX*k, o.DY*k, paint{fill: "#d9f2d0", stroke: "#4a8f3a", width: 1, dashed: true})
		c.text(X(o.X+o.DX/2), Y(o.Y+o.DY/2)+4, 11, "middle", paint{fill: inkOffcut}, fmt.Sprintf("остаток %g × %g", o.DX, o.DY))
	}
	for _, pt := range sh.Parts {
		drawPart(c, pt, X(pt.X), Y(pt.Y+pt.DY), pt.DX*k, pt.DY*k)
	}
	// the cuts, numbered in saw order, each with its fence
	kerf := p.KerfMM
	fs := fences(sh.Cuts, kerf)
	for i, cut := range sh.Cuts {
		pc, f := cut.Piece, fs[i]
		n := fmt.Sprint(i + 1)
		if cut.Direction == cutting.AlongLength {
			y := Y(cut.Pos + kerf/2)
			c.line(X(pc.X), y, X(pc.X+pc.DX), y, paint{stroke: inkCut, width: 1.5})
			tag(c, X(pc.X)+3, y-3, n, inkCut, false)
			// the strip's width, up from the fence's edge to the cut, at
			// the piece's left end past the parts' circles; a later
			// stage's apart from the first's where their pieces start
			// at the same edge
			x, y0, y1 := X(pc.X)+26, Y(f.From), Y(cut.Pos)
			if cut.Stage > 1 && pc.X == sh.Usable.X {
				x += 56
			}
			dimension(c, x, y0, x, y1)
			tag(c, x+3, (y0+y1)/2+5, fmt.Sprintf("%g", f.Size), inkFence, true)
		} else {
			x := X(cut.Pos + kerf/2)
			c.line(x, Y(pc.Y), x, Y(pc.Y+pc.DY), paint{stroke: inkCut, width: 1.5})
			tag(c, x+3, Y(pc.Y)-4, n, inkCut, false)
			// the length, from the fence's edge to the cut, along the
			// piece's near edge, written by the cut: the parts' circles
			// are at their far corner, their text in their middle
			y, x0, x1 := Y(pc.Y)-5, X(f.From), X(cut.Pos)
			dimension(c, x0, y, x1, y)
			s := fmt.Sprintf("%g", f.Size)
			tag(c, x1-6-textWidth(s, 11), y-4, s, inkFence, true)
		}
	}
	// grain, the legend and the fences in cut order
	ly := sheetHead + box.hpx + 16
	if sh.Grain {
		c.line(sheetMargin, ly-4, sheetMargin+60, ly-4, paint{stroke: "#555", width: 1.5})
		c.triangle([6]float64{sheetMargin + 60, ly - 8, sheetMargin + 66, ly - 4, sheetMargin + 60, ly}, paint{fill: "#555"})
		c.text(sheetMargin+72, ly, 11, "start", paint{}, "текстура")
	}
	c.text(sheetMargin+140, ly, 11, "start", paint{}, "голубые: детали (в кружке — порядок выхода с пилы, ↻ — повёрнута); зелёные: деловой остаток; красные: резы по порядку; серая штриховка: обпил")
	c.text(sheetMargin, ly+22, 11, "start", paint{fill: inkFence, bold: true}, "Упор, мм, по порядку резов (↕ продольный: ширина полосы, ↔ поперечный: длина; от края у упора до реза):")
	for i, cut := range sh.Cuts {
		arrow := "↕"
		if cut.Direction == cutting.AlongWidth {
			arrow = "↔"
		}
		x, y := sheetMargin+float64(i%box.cols)*fenceCellW, ly+40+float64(i/box.cols)*fenceRowH
		c.text(x, y, 13, "start", paint{fill: inkFence}, fmt.Sprintf("%d %s %g", i+1, arrow, fs[i].Size))
	}
}

// drawPart draws a part in its box: the order it comes off the saw in a
// circle, its name, size and production order as the box has room for.
func drawPart(c canvas, pt cutplan.SheetPart, x, y, w, h float64) {
	c.begin(fmt.Sprintf("%s %s, %d × %d мм, ПЗ №%d", pt.Code, pt.Name, pt.LengthMM, pt.WidthMM, pt.ProdOrderID))
	defer c.end()
	c.rect(x, y, w, h, paint{fill: "#cfe0f5", stroke: inkPart, width: 1})
	fs := math.Max(7, math.Min(16, math.Min(w/11, h/4)))
	cx, cy := x+w/2, y+h/2
	if r := math.Min(9, math.Min(w, h)/2-1); r >= 4 {
		c.circle(x+r+2, y+r+2, r, paint{fill: inkPart})
		c.text(x+r+2, y+r+2+r/2.5, r, "middle", paint{fill: "#fff"}, fmt.Sprint(pt.CutOrder))
	}
	size := fmt.Sprintf("%d × %d", pt.LengthMM, pt.WidthMM)
	if pt.Turned {
		size += " ↻"
	}
	lines := []string{pt.Name, size, fmt.Sprintf("ПЗ №%d · %s", pt.ProdOrderID, pt.Code)}
	if h < 3.4*fs {
		lines = []string{pt.Name + " " + size}
	}
	for i, l := range lines {
		dy := (float64(i) - float64(len(lines)-1)/2) * fs * 1.2
		c.text(cx, cy+dy+fs/3, fs, "middle", paint{fill: inkText}, l)
	}
}

// tag writes s on a white tag from x, on the baseline y, with a border
// of its colour unless bold.
func tag(c canvas, x, y float64, s, ink string, bold bool) {
	size := 10.0
	border := paint{fill: "#fff", stroke: ink, width: 0.5}
	if bold {
		size, border = 11, paint{fill: "#fff"}
	}
	c.rect(x-1, y-size, textWidth(s, size)+3, size+2, border)
	c.text(x+1, y, size, "start", paint{fill: ink, bold: bold}, s)
}

// dimension draws a dimension line between two points, with a tick
// across it at either end.
func dimension(c canvas, x0, y0, x1, y1 float64) {
	ink := paint{stroke: inkFence, width: 1}
	c.line(x0, y0, x1, y1, ink)
	if x0 == x1 {
		c.line(x0-3, y0, x0+3, y0, ink)
		c.line(x1-3, y1, x1+3, y1, ink)
	} else {
		c.line(x0, y0-3, x0, y0+3, ink)
		c.line(x1, y1-3, x1, y1+3, ink)
	}
}
