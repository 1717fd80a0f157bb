package render

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/render/scantest"
)

// testLabels are n labels of parts, re-cuts, units and offcuts, with codes
// of every length the factory's numbering gives.
func testLabels(n int) []Label {
	var out []Label
	for i := 1; i <= n; i++ {
		var code string
		switch i % 6 {
		case 0:
			code = fmt.Sprintf("P%d-%d", i, i*37)
		case 1:
			code = fmt.Sprintf("P%d-%d.%d", 1000+i, i, i%3+1)
		case 2:
			code = fmt.Sprintf("U%d-%d", 7*i, i%5+1)
		case 3:
			code = fmt.Sprintf("O%d-%d-%d", i, i%22+1, i%4+1)
		case 4:
			code = fmt.Sprintf("P%d-%d", 123456+i, 1000+i)
		default:
			code = fmt.Sprintf("P%d-%d", i%9+1, i)
		}
		p := floor.Part{Part: plan.Part{Code: code, Name: "Боковина левая шкафа-купе", LengthMM: 2000 + i, WidthMM: 580,
			Board: "LDSP16-SONOMA", Decor: "Дуб сонома", ThicknessMM: 16, ProdOrderID: int64(i)}, UnitCode: fmt.Sprintf("U%d-1", i),
			OrderID: int64(100 + i), Customer: "Мария Иванова 🌸"}
		out = append(out, PartLabelOf(p).Label())
	}
	return out
}

// Every label's barcode reads with zbar in both layouts at the
// resolutions of label printers (203, 300 dpi) and office printers (300,
// 600 dpi), rendered as a printer would (pdftoppm). LABELS_DIR, when set,
// keeps the PDFs for a look.
func TestLabels_BarcodesRead(t *testing.T) {
	scantest.Tools(t)
	t.Parallel()
	labels := testLabels(45) // two A4 pages and three labels of a third
	for _, layout := range []string{LayoutLabel, LayoutA4} {
		pdf, err := Labels(labels, FormatPDF, LabelOptions{Layout: layout})
		require.NoError(t, err)
		if dir := os.Getenv("LABELS_DIR"); dir != "" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "labels-"+layout+".pdf"), pdf, 0o644))
		}
		perPage := 1
		if layout == LayoutA4 {
			perPage = 21
		}
		for _, dpi := range []int{203, 300, 600} {
			t.Run(fmt.Sprintf("%s/%d", layout, dpi), func(t *testing.T) {
				t.Parallel()
				pages := scantest.DecodePDF(t, pdf, dpi)
				require.Len(t, pages, (len(labels)+perPage-1)/perPage)
				read := 0
				for i, got := range pages {
					var want []string
					for _, l := range labels[i*perPage : min(len(labels), (i+1)*perPage)] {
						want = append(want, l.Code)
					}
					slices.Sort(want)
					read += len(got)
					require.Equal(t, want, got, "page %d at %d dpi", i+1, dpi)
				}
				t.Logf("%s at %d dpi: %d of %d labels read", layout, dpi, read, len(labels))
			})
		}
	}
}

// The barcode's geometry, whatever the code: at least 10 modules of white
// either side inside the label, a module no thinner than a dot of a 203
// dpi printer, the symbol's left edge and module on the layout's dot grid.
func TestLabels_BarcodeGeometry(t *testing.T) {
	t.Parallel()
	for _, dpi := range []int{labelDPI, officeDPI, ZPL300} {
		dot := 25.4 / float64(dpi)
		for _, l := range testLabels(12) {
			for _, x := range []float64{0, 6, 76.33} {
				sym, err := code128Symbol(l.Code)
				require.NoError(t, err)
				pl, err := layOutLabel(l, sym, x, 3.1, 58, 40, dpi)
				require.NoError(t, err)
				width := float64(pl.sym.modules) * pl.module
				require.GreaterOrEqual(t, pl.module, 25.4/labelDPI-1e-9, "%s: module", l.Code)
				require.GreaterOrEqual(t, pl.barX-x, 10*pl.module-1e-9, "%s: left quiet zone", l.Code)
				require.GreaterOrEqual(t, x+58-(pl.barX+width), 10*pl.module-1e-9, "%s: right quiet zone", l.Code)
				onGrid := func(mm float64) bool { return math.Abs(mm/dot-math.Round(mm/dot)) < 1e-6 }
				require.True(t, onGrid(pl.barX) && onGrid(pl.module), "%s: on the %d dpi grid", l.Code, dpi)
				// the bars are runs: no bar touches the next
				for i := 1; i < len(pl.sym.bars); i++ {
					require.Less(t, pl.sym.bars[i-1][1], pl.sym.bars[i][0])
				}
			}
		}
	}
	// A code too long for the label is a 422 naming it, not a barcode without its quiet zones.
	long := strings.Repeat("X", 40)
	sym, err := code128Symbol(long)
	require.NoError(t, err)
	_, err = layOutLabel(Label{Code: long}, sym, 0, 0, 40, 25, labelDPI)
	require.Equal(t, apperr.EINVALID, apperr.Code(err))
	require.Equal(t, "code", apperr.As(err).Fields[0].Field)
}

// BenchmarkLabels draws 1,000 part labels a document, as PDF on label
// printers' pages and as ZPL, and reports the document's size per label:
// a cutting plan of 15,000 parts is fifteen times one op.
func BenchmarkLabels(b *testing.B) {
	labels := testLabels(1000)
	for _, format := range []string{FormatPDF, FormatZPL} {
		b.Run(format, func(b *testing.B) {
			var size int
			for b.Loop() {
				doc, err := Labels(labels, format, LabelOptions{})
				if err != nil {
					b.Fatal(err)
				}
				size = len(doc)
			}
			b.ReportMetric(float64(size)/float64(len(labels)), "bytes/label")
		})
	}
}
