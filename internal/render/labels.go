package render

import (
	"bytes"
	_ "embed" // the labels' font
	"fmt"
	"image/color"
	"strings"

	"github.com/boombuler/barcode/code128"
	"github.com/go-pdf/fpdf"

	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// labelFont is DejaVu Sans Condensed (labelfont/NOTICE): labels carry
// Cyrillic names, which PDF's standard fonts cannot print.
//
//go:embed labelfont/DejaVuSansCondensed.ttf
var labelFont []byte

// Label layouts.
const (
	// LayoutLabel is one 58 × 40 mm label per page, for a label printer.
	LayoutLabel = "label"
	// LayoutA4 is A4 sheets of 21 labels (3 × 7 of 70 × 42.3 mm).
	LayoutA4 = "a4"
)

// Labels renders the parts' labels, one per part in the order given, as a
// PDF in the layout (LayoutLabel, the default, or LayoutA4). It returns
// EINVALID naming layout for another layout.
func Labels(parts []floor.Part, layout string) ([]byte, error) {
	if layout == "" {
		layout = LayoutLabel
	}
	if layout != LayoutLabel && layout != LayoutA4 {
		return nil, apperr.Invalid("invalid query", apperr.Field("layout", "must be %s (58 × 40 mm, one per page) or %s (A4 sheets of 3 × 7)", LayoutLabel, LayoutA4))
	}
	labels := make([]PartLabel, len(parts))
	for i, p := range parts {
		labels[i] = PartLabel{Code: p.Code, Name: p.Name, LengthMM: p.LengthMM, WidthMM: p.WidthMM, Board: p.CutFrom(), Unit: p.UnitCode,
			ProdOrderID: p.ProdOrderID, OrderID: p.OrderID, Customer: p.Customer, SKU: p.SKU}
	}
	return labelsPDF(labels, layout)
}

// PartLabel is what one part's label says.
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
}

// labelsPDF writes the labels as a PDF in the layout.
func labelsPDF(labels []PartLabel, layout string) ([]byte, error) {
	var pdf *fpdf.Fpdf
	const w, h = 58.0, 40.0
	if layout == LayoutA4 {
		pdf = fpdf.New("P", "mm", "A4", "")
	} else {
		pdf = fpdf.NewCustom(&fpdf.InitType{UnitStr: "mm", Size: fpdf.SizeType{Wd: w, Ht: h}})
	}
	pdf.SetMargins(0, 0, 0)
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetCreator("tsekh", true)
	pdf.SetTitle("Этикетки деталей", true)
	pdf.AddUTF8FontFromBytes("label", "", labelFont)
	if len(labels) == 0 {
		pdf.AddPage()
	}
	const cols, rows = 3, 7
	const cellW, cellH = 70.0, 297.0 / 7
	for i, l := range labels {
		x, y := 0.0, 0.0
		if layout == LayoutA4 {
			n := i % (cols * rows)
			if n == 0 {
				pdf.AddPage()
			}
			// the 58 × 40 label in the middle of its 70 × 42.4 cell
			x, y = float64(n%cols)*cellW+(cellW-w)/2, float64(n/cols)*cellH+(cellH-h)/2
			pdf.SetDrawColor(200, 200, 200)
			pdf.SetLineWidth(0.1)
			pdf.Rect(float64(n%cols)*cellW, float64(n/cols)*cellH, cellW, cellH, "D")
		} else {
			pdf.AddPage()
		}
		if err := drawLabel(pdf, l, x, y, w, h); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("render: labels: %w", err)
	}
	return buf.Bytes(), nil
}

// drawLabel draws one label in the w × h box at x, y: the code's Code 128
// barcode with the code under it, then the part, its size, board and
// edges, and where it belongs.
func drawLabel(pdf *fpdf.Fpdf, l PartLabel, x, y, w, h float64) error {
	const pad = 2.0
	inner := w - 2*pad
	pdf.SetTextColor(0, 0, 0)
	pdf.SetFillColor(0, 0, 0)

	bc, err := code128.Encode(l.Code)
	if err != nil {
		return fmt.Errorf("render: label barcode of %q: %w", l.Code, err)
	}
	modules := bc.Bounds().Dx()
	// Quiet zones of 2 mm either side; the bars fill the rest.
	barW := inner - 4
	module := barW / float64(modules)
	bx, by, bh := x+pad+2, y+pad, 10.0
	for m := 0; m < modules; m++ {
		if dark(bc.At(bc.Bounds().Min.X+m, bc.Bounds().Min.Y)) {
			pdf.Rect(bx+float64(m)*module, by, module, bh, "F")
		}
	}
	line := func(yy, size float64, text string) {
		pdf.SetFont("label", "", size)
		text = fit(pdf, text, inner)
		pdf.SetXY(x+pad, yy)
		pdf.CellFormat(inner, size*0.42, text, "", 0, "L", false, 0, "")
	}
	pdf.SetFont("label", "", 11)
	pdf.SetXY(x+pad, by+bh+0.6)
	pdf.CellFormat(inner, 4.6, l.Code, "", 0, "C", false, 0, "")

	yy := by + bh + 5.6
	line(yy, 9, l.Name)
	yy += 4.2
	size := fmt.Sprintf("%d × %d", l.LengthMM, l.WidthMM)
	if l.Board.ThicknessMM > 0 {
		size += fmt.Sprintf(" × %d", l.Board.ThicknessMM)
	}
	line(yy, 9, size+" мм")
	yy += 4.0
	line(yy, 7, l.Board.Label())
	yy += 3.2
	edges := l.Board.EdgesText()
	if edges == "" {
		edges = "без кромки"
	}
	line(yy, 7, "Кромка: "+edges)
	yy += 3.2
	line(yy, 7, fmt.Sprintf("ПЗ %d · заказ %d · %s", l.ProdOrderID, l.OrderID, l.Unit))
	yy += 3.2
	line(yy, 7, strings.TrimSpace(l.Customer))
	return pdf.Error()
}

// dark tells a barcode's bar from its space.
func dark(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r+g+b < 3*0x8000
}

// fit shortens text with an ellipsis to fit the width in the current font.
func fit(pdf *fpdf.Fpdf, text string, width float64) string {
	if pdf.GetStringWidth(text) <= width {
		return text
	}
	r := []rune(text)
	for len(r) > 1 && pdf.GetStringWidth(string(r)+"…") > width {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}
