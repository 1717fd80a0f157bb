package render

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"codeberg.org/go-pdf/fpdf"

	"github.com/tsekh/tsekh/internal/cutplan"
	"github.com/tsekh/tsekh/internal/stock"
)

// PlanPDF writes the plan as one PDF for the saw, on A4 landscape pages:
// board by board in the order of cutting, a summary page of the board (its
// totals and its sheets), then a page per sheet of it, drawn as Sheet
// draws it (with its fence settings in cut order).
func PlanPDF(w io.Writer, p cutplan.Plan) error {
	pdf := fpdf.New("L", "mm", "A4", "")
	newPDF(pdf, fmt.Sprintf("Карта раскроя №%d", p.ID))
	var boards []string // in the order their first sheet is cut
	for _, sh := range p.SheetList {
		if !slices.Contains(boards, sh.Board) {
			boards = append(boards, sh.Board)
		}
	}
	if len(boards) == 0 {
		pdf.AddPage()
		pdfLine(pdf, 10, 16, 16, fmt.Sprintf("Карта раскроя №%d: листов нет", p.ID))
	}
	for _, board := range boards {
		var sheets []cutplan.Sheet
		for _, sh := range p.SheetList {
			if sh.Board == board {
				sheets = append(sheets, sh)
			}
		}
		boardPage(pdf, p, board, sheets)
		for _, sh := range sheets {
			pdf.AddPage()
			box := sheetBoxOf(sh)
			const pageW, pageH, m = 297.0, 210.0, 10.0
			k := min((pageW-2*m)/box.W, (pageH-2*m)/box.H)
			drawSheet(pdfCanvas{pdf: pdf, x0: m + (pageW-2*m-box.W*k)/2, y0: m, k: k}, p, sh, box)
		}
	}
	doc, err := outputPDF(pdf)
	if err != nil {
		return err
	}
	_, err = w.Write(doc)
	return err
}

// boardPage is a board's summary page: the plan, the board's totals, and
// a row per sheet of it.
func boardPage(pdf *fpdf.Fpdf, p cutplan.Plan, board string, sheets []cutplan.Sheet) {
	pdf.AddPage()
	first := sheets[0]
	pdfLine(pdf, 10, 16, 16, fmt.Sprintf("Карта раскроя №%d: %s %s, %g мм", p.ID, board, first.Decor, first.ThicknessMM))
	pdfLine(pdf, 10, 24, 10, planLine(p))
	y := 34.0
	for _, bt := range p.Boards {
		if bt.Board == board {
			pdfLine(pdf, 10, y, 11, fmt.Sprintf("%s. Листов %d (из них деловых остатков %d), деталей %d, выход %.1f %%, отход %.2f м², остатков остаётся %d.",
				bt.Name, bt.Sheets, bt.OffcutsUsed, bt.Parts, bt.Yield*100, bt.WasteM2, bt.Offcuts))
			y += 10
		}
	}
	cols := []struct {
		head string
		w    float64
	}{{"Лист", 14}, {"Формат", 30}, {"Деталей", 20}, {"Резов", 16}, {"Этапов", 18}, {"Выход", 20}, {"Отход, м²", 22}, {"Остатки", 137}}
	row := func(cells []string) {
		x := 10.0
		for i, c := range cols {
			pdf.SetXY(x, y)
			pdf.CellFormat(c.w, 6, fitText(printable(cells[i]), 10, c.w-2), "1", 0, "L", false, 0, "")
			x += c.w
		}
		y += 6
	}
	pdf.SetFont("dejavu", "", 10)
	heads := make([]string, len(cols))
	for i, c := range cols {
		heads[i] = c.head
	}
	row(heads)
	for _, sh := range sheets {
		var offcuts []string
		for k, o := range sh.Offcuts {
			offcuts = append(offcuts, fmt.Sprintf("%s %g × %g", stock.OffcutCode(p.ID, sh.N, k+1), o.DX, o.DY))
		}
		if y > 195 {
			pdf.AddPage()
			y = 10
			row(heads)
		}
		row([]string{fmt.Sprint(sh.N), sh.Format, fmt.Sprint(len(sh.Parts)), fmt.Sprint(len(sh.Cuts)), fmt.Sprint(sh.Stages),
			fmt.Sprintf("%.1f %%", sh.Yield*100), fmt.Sprintf("%.2f", sh.WasteM2), cmp.Or(strings.Join(offcuts, ", "), "—")})
	}
}

// pdfLine writes a line of text at x on the baseline y.
func pdfLine(pdf *fpdf.Fpdf, x, y, sizePt float64, s string) {
	pdf.SetFont("dejavu", "", sizePt)
	pdf.SetTextColor(0, 0, 0)
	pdf.Text(x, y, fitText(printable(s), sizePt, 297-2*x))
}
