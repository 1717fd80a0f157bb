package render

import (
	"bytes"
	"cmp"
	_ "embed" // the labels' font
	"fmt"
	"image/color"
	"slices"
	"strings"

	"codeberg.org/go-pdf/fpdf"

	"github.com/tsekh/tsekh/internal/cutplan"
	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/stock"
)

// labelFont is DejaVu Sans Condensed (labelfont/NOTICE): labels carry
// Cyrillic names, which PDF's standard fonts cannot print.
//
//go:embed labelfont/DejaVuSansCondensed.ttf
var labelFont []byte

// Label layouts and formats.
const (
	// LayoutLabel is one label per page, for a label printer.
	LayoutLabel = "label"
	// LayoutA4 is A4 sheets of as many labels as fit (3 × 7 of 58 × 40 mm).
	LayoutA4 = "a4"
	// FormatPDF and FormatZPL are the documents labels come in: PDF for
	// any printer, ZPL for a Zebra-compatible thermal label printer.
	FormatPDF = "pdf"
	FormatZPL = "zpl"
)

// LabelSize is a label's size in millimetres.
type LabelSize struct {
	WidthMM, HeightMM float64
}

// DefaultLabelSize is the common 58 × 40 mm label.
var DefaultLabelSize = LabelSize{WidthMM: 58, HeightMM: 40}

// LabelOptions say how labels are printed: the layout of a PDF, the
// label's size, and the resolution of the printer a ZPL document is for.
type LabelOptions struct {
	Layout string    // LayoutLabel (default) or LayoutA4
	Size   LabelSize // DefaultLabelSize when zero
	DPI    int       // ZPL only: 203 (default) or 300
}

// Label is what one label says: its code, as a Code 128 barcode with the
// code under it, then lines of text, the most important first (lines that
// do not fit the label's height are left off).
type Label struct {
	Code  string
	Lines []LabelLine
}

// LabelLine is a line of a label's text and its size in points.
type LabelLine struct {
	Text   string
	SizePt float64
}

// PartLabel is what one part's label says. Cut names, for a label printed
// from a cutting plan, the plan, the sheet and the order the part comes
// off the saw in.
type PartLabel struct {
	Code        string
	Name        string
	LengthMM    int
	WidthMM     int
	Board       plan.Board
	Unit        string // the unit's code
	ProdOrderID int64
	OrderID     int64 // the sales order
	Customer    string
	SKU         string
	Cut         string
}

// PartLabelOf is the label of a part as the plan module describes it.
func PartLabelOf(p floor.Part) PartLabel {
	return PartLabel{Code: p.Code, Name: p.Name, LengthMM: p.LengthMM, WidthMM: p.WidthMM, Board: p.CutFrom(), Unit: p.UnitCode,
		ProdOrderID: p.ProdOrderID, OrderID: p.OrderID, Customer: p.Customer, SKU: p.SKU}
}

// Label is the part's label: its name and size large, then its board,
// edges, where it belongs, the cutting plan's sheet if any, and the
// customer.
func (l PartLabel) Label() Label {
	size := fmt.Sprintf("%d × %d", l.LengthMM, l.WidthMM)
	if l.Board.ThicknessMM > 0 {
		size += fmt.Sprintf(" × %d", l.Board.ThicknessMM)
	}
	edges := l.Board.EdgesText()
	if edges == "" {
		edges = "без кромки"
	}
	lines := []LabelLine{{l.Name, 9}, {size + " мм", 9}, {l.Board.Label(), 7}, {"Кромка: " + edges, 7},
		{fmt.Sprintf("ПЗ %d · заказ %d · %s", l.ProdOrderID, l.OrderID, l.Unit), 7}}
	if l.Cut != "" {
		lines = append(lines, LabelLine{l.Cut, 7})
	}
	return Label{Code: l.Code, Lines: append(lines, LabelLine{strings.TrimSpace(l.Customer), 7})}
}

// OffcutLabel is what a kept offcut's label says.
type OffcutLabel struct {
	Code        string // stock.OffcutCode
	Board       string
	Decor       string
	ThicknessMM float64
	LengthMM    float64 // along the sheet's length (and its grain)
	WidthMM     float64
	PlanID      int64
	Sheet       int
}

// Label is the offcut's label: what it is, its size, its board, and the
// plan and sheet that left it.
func (l OffcutLabel) Label() Label {
	board := l.Board
	if l.Decor != "" {
		board += ", " + l.Decor
	}
	if l.ThicknessMM > 0 {
		board += fmt.Sprintf(", %g мм", l.ThicknessMM)
	}
	return Label{Code: l.Code, Lines: []LabelLine{{"Деловой остаток", 9}, {fmt.Sprintf("%g × %g мм", l.LengthMM, l.WidthMM), 9},
		{board, 7}, {fmt.Sprintf("Раскрой №%d · лист %d", l.PlanID, l.Sheet), 7}}}
}

// CutPlanLabels are the labels of a cutting plan's sheets (all, or sheet
// n alone when n > 0), sheet by sheet in the order of cutting: each
// sheet's parts in the order they come off the saw, then a label for
// each offcut it leaves. parts has the details of the plan's live parts
// by id; a part not in it (scrapped since the plan was made) gets none.
func CutPlanLabels(p cutplan.Plan, parts map[int64]floor.Part, n int) []Label {
	var out []Label
	for _, sh := range p.SheetList {
		if n > 0 && sh.N != n {
			continue
		}
		for _, sp := range inCutOrder(sh.Parts) {
			fp, ok := parts[sp.PartID]
			if !ok {
				continue
			}
			pl := PartLabelOf(fp)
			pl.Cut = fmt.Sprintf("Раскрой №%d · лист %d · с пилы №%d", p.ID, sh.N, sp.CutOrder)
			out = append(out, pl.Label())
		}
		for k, o := range sh.Offcuts {
			out = append(out, OffcutLabel{Code: stock.OffcutCode(p.ID, sh.N, k+1), Board: sh.Board, Decor: sh.Decor, ThicknessMM: sh.ThicknessMM,
				LengthMM: o.DX, WidthMM: o.DY, PlanID: p.ID, Sheet: sh.N}.Label())
		}
	}
	return out
}

// Labels renders the labels, one per label in the order given, as a PDF
// (FormatPDF) or a ZPL document (FormatZPL). It returns EINVALID naming
// layout or dpi for one it does not know.
func Labels(labels []Label, format string, o LabelOptions) ([]byte, error) {
	if err := CheckLabelOptions(format, o); err != nil {
		return nil, err
	}
	if o.Size == (LabelSize{}) {
		o.Size = DefaultLabelSize
	}
	if format == FormatZPL {
		return labelsZPL(labels, o)
	}
	if o.Layout == "" {
		o.Layout = LayoutLabel
	}
	return labelsPDF(labels, o)
}

// CheckLabelOptions refuses, as Labels would, a layout or a dpi the format
// does not know (a 422 naming it), before any label is drawn: a request
// for labels made in the background is refused before it is queued.
func CheckLabelOptions(format string, o LabelOptions) error {
	if o.Size == (LabelSize{}) {
		o.Size = DefaultLabelSize
	}
	if format == FormatZPL {
		if o.DPI != 0 && o.DPI != ZPL203 && o.DPI != ZPL300 {
			return apperr.Invalid("invalid query", apperr.Field("dpi", "must be %d or %d (the label printer's resolution)", ZPL203, ZPL300))
		}
		return nil
	}
	if o.Layout != "" && o.Layout != LayoutLabel && o.Layout != LayoutA4 {
		return apperr.Invalid("invalid query", apperr.Field("layout", "must be %s (%g × %g mm, one per page) or %s (A4 sheets of them)",
			LayoutLabel, o.Size.WidthMM, o.Size.HeightMM, LayoutA4))
	}
	return nil
}

// A4Grid is how many labels of the size an A4 sheet holds across and down.
func A4Grid(s LabelSize) (cols, rows int) {
	return max(1, int(210/s.WidthMM)), max(1, int(297/s.HeightMM))
}

// labelsPDF writes the labels as a PDF in the layout. The barcodes' bars
// lie on the dot grid of the printer the layout is for (a 203 dpi label
// printer, a 300/600 dpi office printer), so that each bar prints as the
// same number of dots.
func labelsPDF(labels []Label, o LabelOptions) ([]byte, error) {
	w, h := o.Size.WidthMM, o.Size.HeightMM
	var pdf *fpdf.Fpdf
	dpi := labelDPI
	if o.Layout == LayoutA4 {
		pdf = fpdf.New("P", "mm", "A4", "")
		dpi = officeDPI
	} else {
		pdf = fpdf.NewCustom(&fpdf.InitType{UnitStr: "mm", Size: fpdf.SizeType{Wd: w, Ht: h}})
	}
	newPDF(pdf, "Этикетки")
	if len(labels) == 0 {
		pdf.AddPage()
	}
	cols, rows := A4Grid(o.Size)
	cellW, cellH := 210/float64(cols), 297/float64(rows)
	for i, l := range labels {
		x, y := 0.0, 0.0
		if o.Layout == LayoutA4 {
			n := i % (cols * rows)
			if n == 0 {
				pdf.AddPage()
			}
			// the label in the middle of its cell, the cells outlined for cutting
			x, y = float64(n%cols)*cellW+(cellW-w)/2, float64(n/cols)*cellH+(cellH-h)/2
			pdf.SetDrawColor(200, 200, 200)
			pdf.SetLineWidth(0.1)
			pdf.Rect(float64(n%cols)*cellW, float64(n/cols)*cellH, cellW, cellH, "D")
		} else {
			pdf.AddPage()
		}
		sym, err := code128Symbol(l.Code)
		if err != nil {
			return nil, err
		}
		pl, err := layOutLabel(l, sym, x, y, w, h, dpi)
		if err != nil {
			return nil, err
		}
		drawLabelPDF(pdf, pl)
	}
	return outputPDF(pdf)
}

// newPDF sets up a document of tsekh's: no margins or page breaks of the
// library's, the embedded font.
func newPDF(pdf *fpdf.Fpdf, title string) {
	pdf.SetMargins(0, 0, 0)
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetCreator("tsekh", true)
	pdf.SetTitle(printable(title), true)
	pdf.AddUTF8FontFromBytes("dejavu", "", labelFont)
	pdf.SetFont("dejavu", "", 10)
}

// outputPDF closes the document and returns it.
func outputPDF(pdf *fpdf.Fpdf) ([]byte, error) {
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("render: pdf: %w", err)
	}
	return buf.Bytes(), nil
}

// drawLabelPDF draws a placed label: its bars, each a rectangle, and its
// text.
func drawLabelPDF(pdf *fpdf.Fpdf, pl placedLabel) {
	pdf.SetFillColor(0, 0, 0)
	for _, b := range pl.sym.bars {
		pdf.Rect(pl.barX+float64(b[0])*pl.module, pl.barY, float64(b[1]-b[0])*pl.module, pl.barH, "F")
	}
	pdf.SetTextColor(0, 0, 0)
	for _, t := range pl.texts {
		pdf.SetFont("dejavu", "", t.sizePt)
		pdf.Text(t.x, t.baseline, t.text)
	}
}

// placedLabel is a label laid out in millimetres on its page: the symbol's
// left edge, top, height and module, and each line of text.
type placedLabel struct {
	sym                       symbol
	barX, barY, barH, module  float64
	moduleDots                int
	texts                     []placedText
	labelX, labelY, labelW, h float64
}

// placedText is a line of text from x, on its baseline.
type placedText struct {
	x, baseline, sizePt float64
	text                string
}

// layOutLabel lays the label out in the w × h box at x, y of its page:
// the code's symbol at the top, centred, its bars on the dpi grid with at least
// quietModules of white either side, the code under it, then the lines
// that fit, each shortened with an ellipsis to the label's width.
func layOutLabel(l Label, sym symbol, x, y, w, h float64, dpi int) (placedLabel, error) {
	const pad = 2.0
	pl := placedLabel{labelX: x, labelY: y, labelW: w, h: h}
	dots, err := sym.moduleDots(w, dpi, l.Code)
	if err != nil {
		return pl, err
	}
	pl.sym, pl.moduleDots = sym, dots
	pl.module = float64(dots) * 25.4 / float64(dpi)
	pl.barX = snap(x+(w-float64(sym.modules)*pl.module)/2, dpi)
	pl.barY = snap(y+1.5, dpi)
	pl.barH = snap(min(10, h/4), dpi)
	top := pl.barY + pl.barH + 0.4
	add := func(text string, sizePt float64, centre bool) bool {
		mm := sizePt * 25.4 / 72
		if top+1.1*mm > y+h-1 {
			return false
		}
		text = fitText(printable(text), sizePt, w-2*pad)
		tx := x + pad
		if centre {
			tx = x + (w-textWidthMM(text, sizePt))/2
		}
		pl.texts = append(pl.texts, placedText{x: tx, baseline: top + 0.8*mm, sizePt: sizePt, text: text})
		top += 1.12 * mm
		return true
	}
	add(l.Code, 11, true)
	for _, ln := range l.Lines {
		if !add(ln.Text, ln.SizePt, false) {
			break
		}
	}
	return pl, nil
}

// dark tells a barcode's bar from its space.
func dark(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r+g+b < 3*0x8000
}

// inCutOrder is the sheet's parts in the order they come off the saw.
func inCutOrder(parts []cutplan.SheetPart) []cutplan.SheetPart {
	out := slices.Clone(parts)
	slices.SortStableFunc(out, func(a, b cutplan.SheetPart) int { return cmp.Compare(a.CutOrder, b.CutOrder) })
	return out
}
