package render

import (
	"math"

	"github.com/boombuler/barcode/code128"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// Code 128 as printers print it and scanners read it.
const (
	// quietModules is the white a Code 128 symbol needs either side of
	// its bars, in modules (ISO/IEC 15417 asks for 10).
	quietModules = 10
	// labelDPI is the resolution of the common thermal label printer, and
	// minDPI's dot the thinnest module the labels draw: a narrower bar
	// would not print at all on such a printer.
	labelDPI = 203
	// officeDPI is the grid of the A4 layout: office printers print at
	// 300, 600 or 1200 dpi, all multiples of it.
	officeDPI = 300
	// maxModuleMM bounds the module: wider bars read no better and
	// leave the label's width to the quiet zones.
	maxModuleMM = 0.4
)

// symbol is a Code 128 symbol: its width in modules and its bars, each a
// run [from, to) of dark modules, so that a bar is drawn as one
// rectangle. Drawn module by module, a bar was a row of rectangles
// whose rounded edges left hairline gaps inside it, and scanners read the
// gaps as spaces.
type symbol struct {
	modules int
	bars    [][2]int
}

// code128Symbol encodes the code.
func code128Symbol(code string) (symbol, error) {
	bc, err := code128.Encode(code)
	if err != nil {
		return symbol{}, apperr.Invalid("the label cannot be printed", apperr.Field("code", "%q cannot be a Code 128 barcode: %v", code, err))
	}
	b := bc.Bounds()
	s := symbol{modules: b.Dx()}
	for m := 0; m < s.modules; m++ {
		if !dark(bc.At(b.Min.X+m, b.Min.Y)) {
			continue
		}
		if n := len(s.bars); n > 0 && s.bars[n-1][1] == m {
			s.bars[n-1][1] = m + 1
		} else {
			s.bars = append(s.bars, [2]int{m, m + 1})
		}
	}
	return s, nil
}

// moduleDots is the widest module, in dots of the dpi grid, with which
// the symbol and its quiet zones fit in width mm: no wider than
// maxModuleMM, no narrower than a dot of a labelDPI printer. An error
// when even that does not fit.
func (s symbol) moduleDots(width float64, dpi int, code string) (int, error) {
	dot := 25.4 / float64(dpi)
	least := int(math.Ceil(float64(dpi) / labelDPI))
	most := max(least, int(maxModuleMM/dot))
	// two dots spare: snapping the centred symbol to the grid moves it
	// by up to one
	n := min(most, int((width-2*dot)/(dot*float64(s.modules+2*quietModules))))
	if n < least {
		return 0, apperr.Invalid("the label cannot be printed", apperr.Field("code", "%q takes %d modules of Code 128 and its quiet zones: more than a label %.0f mm wide holds at %d dpi",
			code, s.modules+2*quietModules, width, dpi))
	}
	return n, nil
}

// snap rounds mm down to the dpi grid.
func snap(mm float64, dpi int) float64 {
	dot := 25.4 / float64(dpi)
	return math.Floor(mm/dot+1e-9) * dot
}
