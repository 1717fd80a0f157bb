package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/cutplan"
	"github.com/tsekh/tsekh/internal/cutting"
	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/render/svgtest"
)

// everyPlane is text with characters of every Unicode plane: each
// plane's first letters, its last two code points (noncharacters), the
// Basic Multilingual Plane's control characters, surrogates' neighbours,
// private use, U+FFFD, U+FFFE and U+FFFF, an emoji, a right-to-left and a
// combining mark, and bytes that are not UTF-8 at all.
func everyPlane() string {
	var b strings.Builder
	b.WriteString("Мария 🌸 \x00\x01\x1b\x7f\u0085\u200f\u202e\ud7ff\ue000\ufdd0\ufffd\ufffe\uffff e\u0301 שלום 中文 \xff\xfe")
	for plane := rune(1); plane <= 16; plane++ {
		b.WriteRune(plane<<16 | 0x0041)
		b.WriteRune(plane<<16 | 0xFFFE)
		b.WriteRune(plane<<16 | 0xFFFF)
	}
	return b.String()
}

// Every plane through the labels (PDF in both layouts, ZPL), a sheet's
// SVG, the plan's PDF and HTML, and the Gantt chart: no error, no panic,
// and the SVGs are well-formed XML.
func TestEveryPlane(t *testing.T) {
	t.Parallel()
	s := everyPlane()
	require.False(t, utf8.ValidString(s), "the text holds bytes that are not UTF-8 too")
	p := floor.Part{Part: plan.Part{Code: "P1-1", Name: s, LengthMM: 700, WidthMM: 500, Board: s, Decor: s, Material: s}, UnitCode: s, Customer: s, SKU: s}
	labels := []Label{PartLabelOf(p).Label(), OffcutLabel{Code: "O1-1-1", Board: s, Decor: s, LengthMM: 600, WidthMM: 400, PlanID: 1, Sheet: 1}.Label()}
	for _, layout := range []string{LayoutLabel, LayoutA4} {
		pdf, err := Labels(labels, FormatPDF, LabelOptions{Layout: layout})
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(pdf, []byte("%PDF-")))
	}
	zpl, err := Labels(labels, FormatZPL, LabelOptions{})
	require.NoError(t, err)
	require.True(t, utf8.Valid(zpl))

	sh := cutplan.Sheet{N: 1, Board: s, Decor: s, Format: s, ThicknessMM: 16, LengthMM: 2800, WidthMM: 2070, Grain: true,
		Usable: cutting.Rect{X: 10, Y: 10, DX: 2780, DY: 2050},
		Parts:  []cutplan.SheetPart{{Code: s, Name: s, LengthMM: 700, WidthMM: 500, X: 10, Y: 10, DX: 700, DY: 500, CutOrder: 1, Turned: true}},
		Cuts: []cutting.Cut{{Stage: 1, Direction: cutting.AlongLength, Pos: 510, Piece: cutting.Rect{X: 10, Y: 10, DX: 2780, DY: 2050}},
			{Stage: 2, Direction: cutting.AlongWidth, Pos: 710, Piece: cutting.Rect{X: 10, Y: 10, DX: 2780, DY: 500}}},
		Offcuts: []cutting.Rect{{X: 10, Y: 514.4, DX: 2780, DY: 1545.6}}}
	cp := cutplan.Plan{ID: 1, ProdOrders: cutplan.IDList{1}, KerfMM: 4.4, Stages: 3, Sheets: 1, Parts: 1,
		Boards: cutplan.BoardList{{Board: s, Name: s, Decor: s, Sheets: 1, Parts: 1}}, SheetList: []cutplan.Sheet{sh}}
	var svg bytes.Buffer
	require.NoError(t, Sheet(&svg, cp, sh))
	_, err = svgtest.Parse(svg.Bytes())
	require.NoError(t, err, "the sheet's SVG is well-formed XML")
	require.True(t, utf8.Valid(svg.Bytes()))
	var doc bytes.Buffer
	require.NoError(t, PlanPDF(&doc, cp))
	require.True(t, bytes.HasPrefix(doc.Bytes(), []byte("%PDF-")))
	doc.Reset()
	require.NoError(t, Plan(&doc, cp))

	v := ganttView()
	for i := range v.WorkCenters {
		v.WorkCenters[i].Code, v.WorkCenters[i].Name = s, s
		for j := range v.WorkCenters[i].Orders {
			v.WorkCenters[i].Orders[j].SKUs = []string{s, fmt.Sprint(j)}
		}
	}
	_, nodes := renderNodes(t, v)
	require.NotEmpty(t, nodes, "the Gantt chart's SVG is well-formed XML")
}

// printable keeps what the font has and replaces the rest.
func TestPrintable(t *testing.T) {
	t.Parallel()
	require.Equal(t, "Мария № 1 × 2 ↻ �", printable("Мария № 1 × 2 ↻ 🌸"))
	require.Equal(t, "a b�����", printable("a\tb\x00\ufffe\uffff\U0010FFFF\xff"))
}
