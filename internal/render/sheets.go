package render

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tsekh/tsekh/internal/cutplan"
)

// The saw operator's drawings: each sheet to scale (1 px per 2 mm at most
// 1400 px wide), its trims hatched grey, each part a pale box with its cut
// order in a circle, its name, its size as the list gives it (↻ when
// turned) and its production order; offcuts kept green; the cuts as thin
// red lines numbered in saw order; the grain direction an arrow. A plan is
// an HTML page of every sheet, one per printed page.

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
	fmt.Fprintf(&b, `<h1>Карта раскроя №%d</h1><p>Производственные заказы: %s. Пропил %.1f мм, этапов %d, деловой остаток от %d × %d мм.</p>`,
		p.ID, joinIDs(p.ProdOrders), p.KerfMM, p.Stages, p.MinOffcutMM, p.MinOffcutMM)
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

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprintf("№%d", id)
	}
	return strings.Join(s, ", ")
}

// sheetSVG is one sheet's drawing. The sheet's length runs left to right,
// its y axis upwards as the plan's coordinates have it.
func sheetSVG(p cutplan.Plan, sh cutplan.Sheet) string {
	k := sheetScale(sh.LengthMM)
	const margin, head = 20.0, 56.0
	wpx, hpx := sh.LengthMM*k, sh.WidthMM*k
	W, H := wpx+2*margin, hpx+head+margin+20
	X := func(mm float64) float64 { return margin + mm*k }
	Y := func(mm float64) float64 { return head + hpx - mm*k } // y up
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="DejaVu Sans, Arial, sans-serif">`, W, H, W, H)
	b.WriteString(`<defs><pattern id="trim" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#eee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bbb" stroke-width="2"/></pattern></defs>`)
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="#fff"/>`, W, H)
	what := fmt.Sprintf("лист %g × %g мм", sh.LengthMM, sh.WidthMM)
	if sh.OffcutID != nil {
		what = fmt.Sprintf("деловой остаток №%d, %g × %g мм", *sh.OffcutID, sh.LengthMM, sh.WidthMM)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="22" font-size="16" font-weight="bold">Раскрой №%d, лист %d из %d: %s %s, %g мм</text>`, margin, p.ID, sh.N, max(p.Sheets, sh.N), esc(sh.Board), esc(sh.Decor), sh.ThicknessMM)
	fmt.Fprintf(&b, `<text x="%.0f" y="42" font-size="12">%s; деталей %d; выход %.1f %%; отход %.2f м²; пропил %.1f мм; этапов %d</text>`,
		margin, esc(what), len(sh.Parts), sh.Yield*100, sh.WasteM2, p.KerfMM, sh.Stages)
	// the sheet, with its trims hatched
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#trim)" stroke="#333" stroke-width="1.5"/>`, X(0), Y(sh.WidthMM), wpx, hpx)
	u := sh.Usable
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#f4f1ea" stroke="none"/>`, X(u.X), Y(u.Y+u.DY), u.DX*k, u.DY*k)
	for _, o := range sh.Offcuts {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#d9f2d0" stroke="#4a8f3a" stroke-dasharray="4 2"/>`, X(o.X), Y(o.Y+o.DY), o.DX*k, o.DY*k)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#2f6b22" text-anchor="middle">остаток %g × %g</text>`, X(o.X+o.DX/2), Y(o.Y+o.DY/2)+4, o.DX, o.DY)
	}
	for _, pt := range sh.Parts {
		x, y, w, h := X(pt.X), Y(pt.Y+pt.DY), pt.DX*k, pt.DY*k
		fmt.Fprintf(&b, `<g><title>%s %s, %d × %d мм, ПЗ №%d</title>`, esc(pt.Code), esc(pt.Name), pt.LengthMM, pt.WidthMM, pt.ProdOrderID)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#cfe0f5" stroke="#1d4f91" stroke-width="1"/>`, x, y, w, h)
		fs := math.Max(7, math.Min(16, math.Min(w/11, h/4)))
		cx, cy := x+w/2, y+h/2
		r := math.Min(9, math.Min(w, h)/2-1)
		if r >= 4 {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="#1d4f91"/><text x="%.1f" y="%.1f" font-size="%.1f" fill="#fff" text-anchor="middle">%d</text>`,
				x+r+2, y+r+2, r, x+r+2, y+r+2+r/2.5, r, pt.CutOrder)
		}
		size := fmt.Sprintf("%d × %d", pt.LengthMM, pt.WidthMM)
		if pt.Turned {
			size += " ↻"
		}
		lines := []string{esc(pt.Name), size, fmt.Sprintf("ПЗ №%d · %s", pt.ProdOrderID, esc(pt.Code))}
		if h < 3.4*fs {
			lines = []string{esc(pt.Name) + " " + size}
		}
		for i, l := range lines {
			dy := (float64(i) - float64(len(lines)-1)/2) * fs * 1.2
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%.1f" text-anchor="middle" fill="#10243f">%s</text>`, cx, cy+dy+fs/3, fs, l)
		}
		b.WriteString(`</g>`)
	}
	// the cuts, numbered in saw order
	kerf := p.KerfMM
	for i, c := range sh.Cuts {
		pc := c.Piece
		var x1, y1, x2, y2 float64
		if c.Direction == "along_length" {
			x1, x2 = X(pc.X), X(pc.X+pc.DX)
			y1 = Y(c.Pos + kerf/2)
			y2 = y1
		} else {
			y1, y2 = Y(pc.Y), Y(pc.Y+pc.DY)
			x1 = X(c.Pos + kerf/2)
			x2 = x1
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#c0392b" stroke-width="1.5"/>`, x1, y1, x2, y2)
		// the cut's number where it starts, on a white tag
		tx, ty := x1+3, y1-3
		if c.Direction != "along_length" {
			tx, ty = x1+3, y1-4
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%d" height="12" fill="#fff" stroke="#c0392b" stroke-width="0.5"/><text x="%.1f" y="%.1f" font-size="10" fill="#c0392b">%d</text>`,
			tx-1, ty-10, 7*len(fmt.Sprint(i+1))+3, tx+1, ty, i+1)
	}
	// grain and the legend
	ly := head + hpx + 16
	if sh.Grain {
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#555" stroke-width="1.5"/><path d="M%.0f %.0f l-6 -4 v8 z" fill="#555"/><text x="%.0f" y="%.0f" font-size="11">текстура</text>`,
			margin, ly-4, margin+60, ly-4, margin+60, ly-4, margin+66, ly)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11">голубые: детали (в кружке — порядок выхода с пилы, ↻ — повёрнута); зелёные: деловой остаток; красные: резы с их номером по порядку; серая штриховка: обпил</text>`, margin+140, ly)
	b.WriteString(`</svg>`)
	return b.String()
}
