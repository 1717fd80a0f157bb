package render

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"codeberg.org/go-pdf/fpdf"
)

// canvas is what a drawing is drawn on, in its own units (an SVG's
// pixels): an SVG document or a page of a PDF. The sheets' drawing is
// written once, for both.
type canvas interface {
	rect(x, y, w, h float64, p paint)
	line(x1, y1, x2, y2 float64, p paint)
	circle(cx, cy, r float64, p paint)
	// text on its baseline at y, from, around or up to x (anchor start,
	// middle or end).
	text(x, y, size float64, anchor string, p paint, s string)
	// triangle fills the three points.
	triangle(pts [6]float64, p paint)
	// hatch fills the box grey, hatched: the sheet's trims.
	hatch(x, y, w, h float64)
	// begin and end a group of elements, with a title (an SVG tooltip).
	begin(title string)
	end()
}

// paint is how an element is drawn: colours as "#rrggbb" ("" for none),
// the stroke's width, whether dashed, whether bold (text).
type paint struct {
	fill, stroke string
	width        float64
	dashed, bold bool
}

// svgCanvas writes SVG elements.
type svgCanvas struct{ b *strings.Builder }

func (p paint) svg() string {
	fill := p.fill
	if fill == "" {
		fill = "none"
	}
	s := fmt.Sprintf(` fill="%s"`, fill)
	if p.stroke != "" {
		s += fmt.Sprintf(` stroke="%s" stroke-width="%g"`, p.stroke, p.width)
	}
	if p.dashed {
		s += ` stroke-dasharray="4 2"`
	}
	if p.bold {
		s += ` font-weight="bold"`
	}
	return s
}

func (c svgCanvas) rect(x, y, w, h float64, p paint) {
	fmt.Fprintf(c.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"%s/>`, x, y, w, h, p.svg())
}

func (c svgCanvas) line(x1, y1, x2, y2 float64, p paint) {
	fmt.Fprintf(c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"%s/>`, x1, y1, x2, y2, p.svg())
}

func (c svgCanvas) circle(cx, cy, r float64, p paint) {
	fmt.Fprintf(c.b, `<circle cx="%.1f" cy="%.1f" r="%.1f"%s/>`, cx, cy, r, p.svg())
}

func (c svgCanvas) text(x, y, size float64, anchor string, p paint, s string) {
	p.fill = cmp.Or(p.fill, "#000")
	a := ""
	if anchor != "start" {
		a = ` text-anchor="` + anchor + `"`
	}
	fmt.Fprintf(c.b, `<text x="%.1f" y="%.1f" font-size="%.1f"%s%s>%s</text>`, x, y, size, a, p.svg(), esc(s))
}

func (c svgCanvas) triangle(pts [6]float64, p paint) {
	fmt.Fprintf(c.b, `<path d="M%.1f %.1f L%.1f %.1f L%.1f %.1f z"%s/>`, pts[0], pts[1], pts[2], pts[3], pts[4], pts[5], p.svg())
}

func (c svgCanvas) hatch(x, y, w, h float64) {
	fmt.Fprintf(c.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#trim)" stroke="#333" stroke-width="1.5"/>`, x, y, w, h)
}

func (c svgCanvas) begin(title string) { fmt.Fprintf(c.b, `<g><title>%s</title>`, esc(title)) }
func (c svgCanvas) end()               { c.b.WriteString(`</g>`) }

// svgTrimPattern is the hatching svgCanvas.hatch fills with.
const svgTrimPattern = `<defs><pattern id="trim" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#eee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bbb" stroke-width="2"/></pattern></defs>`

// pdfCanvas draws on a PDF page: a unit of the drawing is k mm, from the
// page's x0, y0.
type pdfCanvas struct {
	pdf    *fpdf.Fpdf
	x0, y0 float64
	k      float64
}

func (c pdfCanvas) X(x float64) float64 { return c.x0 + x*c.k }
func (c pdfCanvas) Y(y float64) float64 { return c.y0 + y*c.k }

// rgb reads "#rrggbb" or "#rgb".
func rgb(hex string) (r, g, b int) {
	hex = strings.TrimPrefix(hex, "#")
	if len(hex) == 3 {
		hex = string([]byte{hex[0], hex[0], hex[1], hex[1], hex[2], hex[2]})
	}
	v, _ := strconv.ParseUint(hex, 16, 32)
	return int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)
}

// style sets the paint's colours and line and returns fpdf's style string.
func (c pdfCanvas) style(p paint) string {
	s := ""
	if p.fill != "" {
		c.pdf.SetFillColor(rgb(p.fill))
		s += "F"
	}
	if p.stroke != "" {
		c.pdf.SetDrawColor(rgb(p.stroke))
		c.pdf.SetLineWidth(max(p.width*c.k, 0.05))
		s += "D"
	}
	if p.dashed {
		c.pdf.SetDashPattern([]float64{4 * c.k, 2 * c.k}, 0)
	} else {
		c.pdf.SetDashPattern(nil, 0)
	}
	return s
}

func (c pdfCanvas) rect(x, y, w, h float64, p paint) {
	if s := c.style(p); s != "" {
		c.pdf.Rect(c.X(x), c.Y(y), w*c.k, h*c.k, s)
	}
}

func (c pdfCanvas) line(x1, y1, x2, y2 float64, p paint) {
	c.style(p)
	c.pdf.Line(c.X(x1), c.Y(y1), c.X(x2), c.Y(y2))
}

func (c pdfCanvas) circle(cx, cy, r float64, p paint) {
	c.pdf.Circle(c.X(cx), c.Y(cy), r*c.k, c.style(p))
}

func (c pdfCanvas) text(x, y, size float64, anchor string, p paint, s string) {
	s = printable(s)
	c.pdf.SetFont("dejavu", "", size*c.k*72/25.4)
	c.pdf.SetTextColor(rgb(cmp.Or(p.fill, "#000")))
	x = c.X(x)
	switch anchor {
	case "middle":
		x -= c.pdf.GetStringWidth(s) / 2
	case "end":
		x -= c.pdf.GetStringWidth(s)
	}
	c.pdf.Text(x, c.Y(y), s)
	if p.bold { // the one font has no bold: overprint it a hair to the right
		c.pdf.Text(x+0.12*c.k, c.Y(y), s)
	}
}

func (c pdfCanvas) triangle(pts [6]float64, p paint) {
	c.pdf.Polygon([]fpdf.PointType{{X: c.X(pts[0]), Y: c.Y(pts[1])}, {X: c.X(pts[2]), Y: c.Y(pts[3])}, {X: c.X(pts[4]), Y: c.Y(pts[5])}}, c.style(p))
}

func (c pdfCanvas) hatch(x, y, w, h float64) {
	c.rect(x, y, w, h, paint{fill: "#eee"})
	c.pdf.ClipRect(c.X(x), c.Y(y), w*c.k, h*c.k, false)
	grey := paint{stroke: "#bbb", width: 2}
	for d := -h; d < w; d += 6 * 1.4142 {
		c.line(x+d, y+h, x+d+h, y, grey)
	}
	c.pdf.ClipEnd()
	c.rect(x, y, w, h, paint{stroke: "#333", width: 1.5})
}

func (c pdfCanvas) begin(string) {}
func (c pdfCanvas) end()         {}
