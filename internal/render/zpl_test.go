package render

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/render/scantest"
)

// zplLabel is a label of a ZPL document as a printer would print it, for
// the commands labelsZPL writes (^PW, ^LL, ^FO, ^BY, ^BC, ^FD, ^GFA), and
// what its barcode field says.
type zplLabel struct {
	img          *image.Gray
	code         string
	x, module    int // the barcode's left edge and module, in dots
	width, label int // the barcode's width in subset B, the label's, in dots
}

// printZPL reads the document's formats. The printer draws ^BC itself: here
// the bars come from the PDF's encoder, which may pack digits tighter than
// the printer's subset B, so the quiet zones are checked on subset B's width.
func printZPL(t *testing.T, doc string) []zplLabel {
	t.Helper()
	var out []zplLabel
	for _, format := range strings.Split(doc, "^XZ") {
		if strings.TrimSpace(format) == "" {
			continue
		}
		require.True(t, strings.HasPrefix(strings.TrimSpace(format), "^XA"), "a format starts with ^XA")
		var l zplLabel
		var h, fx, fy, barH int
		for _, cmd := range strings.Split(format, "^")[1:] {
			cmd = strings.TrimSpace(cmd)
			name, args := cmd[:2], strings.Split(cmd[2:], ",")
			num := func(i int) int {
				n, err := strconv.Atoi(args[i])
				require.NoError(t, err, "^%s", cmd)
				return n
			}
			switch name {
			case "PW":
				l.label = num(0)
			case "LL":
				h = num(0)
				l.img = image.NewGray(image.Rect(0, 0, l.label, h))
				draw.Draw(l.img, l.img.Bounds(), image.White, image.Point{}, draw.Src)
			case "FO":
				fx, fy = num(0), num(1)
			case "BY":
				l.module = num(0)
			case "BC":
				require.Equal(t, []string{"N", args[1], "N", "N", "N", "N"}, args, "Code 128 in mode N, no text line")
				barH = num(1)
			case "FD":
				l.code, l.x = strings.ReplaceAll(cmd[2:], "><", ">"), fx
				l.width = (11*(len(l.code)+2) + 13) * l.module
				sym, err := code128Symbol(l.code)
				require.NoError(t, err)
				for _, b := range sym.bars {
					draw.Draw(l.img, image.Rect(fx+b[0]*l.module, fy, fx+b[1]*l.module, fy+barH), image.Black, image.Point{}, draw.Src)
				}
			case "GF":
				require.Equal(t, "A", args[0])
				drawGraphicField(t, l.img, fx, fy, num(3), strings.Join(args[4:], ","))
			}
		}
		out = append(out, l)
	}
	return out
}

// drawGraphicField draws ^GFA's rows of bytesPerRow from ZPL's compressed
// hexadecimal at x, y.
func drawGraphicField(t *testing.T, img *image.Gray, x, y, bytesPerRow int, data string) {
	t.Helper()
	var rows []string
	var row strings.Builder
	count := 0
	flush := func() {
		rows = append(rows, row.String())
		row.Reset()
	}
	for _, c := range data {
		switch {
		case c >= 'G' && c <= 'Y':
			count += int(c-'G') + 1
		case c >= 'g' && c <= 'z':
			count += (int(c-'g') + 1) * 20
		case c == ',':
			row.WriteString(strings.Repeat("0", 2*bytesPerRow-row.Len()))
		case c == ':':
			require.NotEmpty(t, rows, "':' repeats the row above")
			row.WriteString(rows[len(rows)-1])
		case strings.ContainsRune("0123456789ABCDEF", c):
			row.WriteString(strings.Repeat(string(c), max(1, count)))
			count = 0
		default:
			t.Fatalf("^GFA: %q", c)
		}
		require.LessOrEqual(t, row.Len(), 2*bytesPerRow, "a row overflows")
		if row.Len() == 2*bytesPerRow {
			flush()
		}
	}
	require.Zero(t, row.Len(), "the data ends inside a row")
	for ry, r := range rows {
		for bx := range bytesPerRow {
			v, err := strconv.ParseUint(r[2*bx:2*bx+2], 16, 8)
			require.NoError(t, err)
			for i := range 8 {
				if v&(0x80>>i) != 0 {
					require.True(t, image.Pt(x+bx*8+i, y+ry).In(img.Bounds()), "the text stays on the label")
					img.SetGray(x+bx*8+i, y+ry, color.Gray{})
				}
			}
		}
	}
}

// The ZPL labels at 203 and 300 dpi: one format per label, the label's
// size in dots, the barcode in whole dots with 10 modules of white either
// side, no thinner than a dot at 203 dpi, and every barcode reads with
// zbar once printed. ZPL_DIR, when set, keeps the documents and the
// printed labels for a look.
func TestLabels_ZPL(t *testing.T) {
	scantest.Tools(t)
	t.Parallel()
	labels := testLabels(18) // each of the six kinds of code three times
	labels = append(labels, OffcutLabel{Code: "O12-3-1", Board: "LDSP16-WHITE", Decor: "Белый", ThicknessMM: 16, LengthMM: 1568.2, WidthMM: 461.6, PlanID: 12, Sheet: 3}.Label())
	for _, dpi := range []int{ZPL203, ZPL300} {
		t.Run(strconv.Itoa(dpi), func(t *testing.T) {
			t.Parallel()
			doc, err := Labels(labels, FormatZPL, LabelOptions{DPI: dpi})
			require.NoError(t, err)
			dir := t.TempDir()
			if keep := os.Getenv("ZPL_DIR"); keep != "" {
				dir = keep
				require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("labels-%d.zpl", dpi)), doc, 0o644))
			}
			printed := printZPL(t, string(doc))
			require.Len(t, printed, len(labels))
			for i, l := range printed {
				require.Equal(t, labels[i].Code, l.code)
				require.Equal(t, int(58*float64(dpi)/25.4+0.5), l.label, "58 mm")
				require.Equal(t, int(40*float64(dpi)/25.4+0.5), l.img.Bounds().Dy(), "40 mm")
				require.GreaterOrEqual(t, l.module*203, dpi, "%s: the module is at least a dot at 203 dpi", l.code)
				require.GreaterOrEqual(t, l.x, 10*l.module, "%s: left quiet zone", l.code)
				require.LessOrEqual(t, l.x+l.width, l.label-10*l.module, "%s: right quiet zone", l.code)
				file := filepath.Join(dir, fmt.Sprintf("label-%d-%02d.png", dpi, i+1))
				f, err := os.Create(file)
				require.NoError(t, err)
				require.NoError(t, (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(f, l.img))
				require.NoError(t, f.Close())
				require.Equal(t, []string{l.code}, scantest.Decode(t, file), "label %d at %d dpi", i+1, dpi)
			}
		})
	}
	_, err := Labels(labels, FormatZPL, LabelOptions{DPI: 600})
	require.Equal(t, "dpi", apperr.As(err).Fields[0].Field)
	_, err = Labels([]Label{{Code: "P1^XZ"}}, FormatZPL, LabelOptions{})
	require.Equal(t, "code", apperr.As(err).Fields[0].Field)
}

// ZPL's compression of a row: runs as counts, zeros to the end as ",".
func TestCompressRow(t *testing.T) {
	t.Parallel()
	require.Equal(t, ",", compressRow("0000"))
	require.Equal(t, "F,", compressRow("F000"))
	require.Equal(t, "IF0F", compressRow("FFF0F"))
	require.Equal(t, "gGA", compressRow(strings.Repeat("A", 21)))
	require.Equal(t, "zhKB,", compressRow(strings.Repeat("B", 445)+"00"))
}
