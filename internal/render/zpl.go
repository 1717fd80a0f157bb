package render

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"math"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// Thermal printers' resolutions ZPL labels are made for.
const (
	ZPL203 = 203
	ZPL300 = 300
)

// labelsZPL writes the labels as one ZPL II document, a format (^XA … ^XZ)
// per label, for a printer of o.DPI. The barcode is the printer's own
// Code 128 (^BC), so that its bars are whole dots of that printer; the
// text is a graphic field (^GF) drawn here in the labels' font, since the
// printers' resident fonts lack Cyrillic or differ from model to model.
func labelsZPL(labels []Label, o LabelOptions) ([]byte, error) {
	if o.DPI == 0 { // CheckLabelOptions took the others
		o.DPI = ZPL203
	}
	var b bytes.Buffer
	dots := func(mm float64) int { return int(math.Round(mm * float64(o.DPI) / 25.4)) }
	for _, l := range labels {
		sym, err := subsetBSymbol(l.Code)
		if err != nil {
			return nil, err
		}
		pl, err := layOutLabel(l, sym, 0, 0, o.Size.WidthMM, o.Size.HeightMM, o.DPI)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "^XA\n^CI28\n^PW%d\n^LL%d\n^LH0,0\n", dots(o.Size.WidthMM), dots(o.Size.HeightMM))
		// Code 128 in subset B throughout (mode N): the printer draws what
		// placeLabel measured; ">" starts an invocation code in that mode,
		// "><" is the character itself.
		fmt.Fprintf(&b, "^FO%d,%d^BY%d^BCN,%d,N,N,N,N^FD%s^FS\n", dots(pl.barX), dots(pl.barY), pl.moduleDots, dots(pl.barH),
			strings.ReplaceAll(l.Code, ">", "><"))
		if top, img := textBitmap(pl, o.DPI); img != nil {
			fmt.Fprintf(&b, "^FO0,%d%s^FS\n", top, graphicField(img))
		}
		b.WriteString("^PQ1\n^XZ\n")
	}
	return b.Bytes(), nil
}

// subsetBSymbol is the size of the code's symbol as the printer draws it
// in mode N: a start character, the code in subset B, a check
// character and the stop (13 modules); the printer draws the bars.
// A code with a character outside printable ASCII, or with ZPL's command
// prefixes ^ and ~, cannot be sent: EINVALID naming code.
func subsetBSymbol(code string) (symbol, error) {
	for _, r := range code {
		if r < ' ' || r > '~' || r == '^' || r == '~' {
			return symbol{}, apperr.Invalid("the label cannot be printed", apperr.Field("code", "%q has %q, which a ZPL barcode cannot carry", code, r))
		}
	}
	return symbol{modules: 11*(len(code)+2) + 13}, nil
}

// textBitmap draws the label's text at dpi, black on white, and returns
// the row of the label it starts at and the drawing (nil when no text).
func textBitmap(pl placedLabel, dpi int) (int, *image.RGBA) {
	if len(pl.texts) == 0 {
		return 0, nil
	}
	px := func(mm float64) int { return int(math.Round(mm * float64(dpi) / 25.4)) }
	top := px(pl.barY + pl.barH)
	// RGBA, not Gray: image/draw draws a glyph onto RGBA by its fast path,
	// and onto Gray pixel by pixel through the generic colour model (four
	// times the time of the whole label).
	img := image.NewRGBA(image.Rect(0, 0, px(pl.labelW), max(1, px(pl.h)-top)))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	faces := map[float64]font.Face{}
	for _, t := range pl.texts {
		face, ok := faces[t.sizePt]
		if !ok {
			var err error
			if face, err = opentype.NewFace(fontFace(), &opentype.FaceOptions{Size: t.sizePt, DPI: float64(dpi), Hinting: font.HintingFull}); err != nil {
				continue // the embedded font always gives a face
			}
			faces[t.sizePt] = face
		}
		d := font.Drawer{Dst: img, Src: image.Black, Face: face,
			Dot: fixed.P(px(t.x), px(t.baseline)-top)}
		d.DrawString(t.text)
	}
	return top, img
}

// hexDigits are the digits of a graphic field's bytes.
const hexDigits = "0123456789ABCDEF"

// graphicField is the 1-bit image as ^GFA, a dot where the drawing is
// darker than half (black on white: its red channel tells), its rows in
// ZPL's compressed hexadecimal.
func graphicField(img *image.RGBA) string {
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	row := (w + 7) / 8
	var data strings.Builder
	prev := ""
	hex := make([]byte, 0, 2*row)
	for y := range h {
		hex = hex[:0]
		pix := img.Pix[y*img.Stride:]
		for bx := range row {
			var v byte
			for i := range 8 {
				if x := bx*8 + i; x < w && pix[4*x] < 0x80 {
					v |= 0x80 >> i
				}
			}
			hex = append(hex, hexDigits[v>>4], hexDigits[v&0x0f])
		}
		line := compressRow(string(hex))
		if line == prev {
			data.WriteByte(':') // the row above again
			continue
		}
		data.WriteString(line)
		prev = line
	}
	return fmt.Sprintf("^GFA,%d,%d,%d,%s", row*h, row*h, row, data.String())
}

// compressRow is a row of hexadecimal digits in ZPL's ASCII compression:
// "," for zeros to the end of the row, and a run of one digit as its count
// (G–Y for 1–19, g–z for 20–400 in twenties) before the digit.
func compressRow(hex string) string {
	trimmed := strings.TrimRight(hex, "0")
	var b strings.Builder
	for i := 0; i < len(trimmed); {
		j := i
		for j < len(trimmed) && trimmed[j] == trimmed[i] {
			j++
		}
		b.WriteString(runCount(j - i))
		b.WriteByte(trimmed[i])
		i = j
	}
	if len(trimmed) < len(hex) {
		b.WriteByte(',')
	}
	return b.String()
}

// runCount is ZPL's count of n repeats ("" for one).
func runCount(n int) string {
	if n == 1 {
		return ""
	}
	var b strings.Builder
	for n > 400 {
		b.WriteByte('z')
		n -= 400
	}
	if n >= 20 {
		b.WriteByte(byte('g' + n/20 - 1))
		n %= 20
	}
	if n > 0 {
		b.WriteByte(byte('G' + n - 1))
	}
	return b.String()
}
