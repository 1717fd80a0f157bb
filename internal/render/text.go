package render

import (
	"strings"
	"sync"
	"unicode"

	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// replacement stands in for a character the labels' font cannot print.
const replacement = '\uFFFD'

// fontFace is the embedded font, parsed.
var fontFace = sync.OnceValue(func() *sfnt.Font {
	f, err := sfnt.Parse(labelFont)
	if err != nil {
		panic("render: the embedded font cannot be read: " + err.Error())
	}
	return f
})

// fontRunes is the set of characters the embedded font has a glyph for,
// read from its character map once. Only the Basic Multilingual Plane
// counts: the PDF library maps a font's characters in a table of 65,536
// entries, and a character beyond it made it panic while writing the font
// (a customer's "Мария 🌸" made the labels of a whole order a 500).
var fontRunes = sync.OnceValue(func() []bool {
	has := make([]bool, 0x10000)
	f := fontFace()
	var buf sfnt.Buffer
	for r := range rune(len(has)) {
		if g, err := f.GlyphIndex(&buf, r); err == nil && g != 0 {
			has[r] = true
		}
	}
	return has
})

// printable is s as the PDF documents may draw it: every character the
// font has no glyph for (emoji, scripts it lacks, characters beyond the
// Basic Multilingual Plane), every control character and every
// noncharacter (U+FFFE, U+FFFF, …) becomes U+FFFD, and a line break a
// space. Nothing the PDF library is handed can then make it fail.
func printable(s string) string {
	has := fontRunes()
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r) || isNonCharacter(r):
			return replacement
		case r < 0x10000 && has[r]:
			return r
		}
		return replacement
	}, s)
}

// isNonCharacter tells Unicode's noncharacters: U+FDD0–U+FDEF and the last
// two code points of every plane.
func isNonCharacter(r rune) bool {
	return (r >= 0xFDD0 && r <= 0xFDEF) || r&0xFFFE == 0xFFFE
}

// textWidthMM is how wide text is in the embedded font at sizePt, in
// millimetres: the sum of its characters' advances, as the PDF library
// sets them.
func textWidthMM(text string, sizePt float64) float64 {
	f := fontFace()
	var buf sfnt.Buffer
	upem := fixed.I(int(f.UnitsPerEm()))
	var sum fixed.Int26_6
	for _, r := range text {
		g, err := f.GlyphIndex(&buf, r)
		if err != nil {
			continue
		}
		if adv, err := f.GlyphAdvance(&buf, g, upem, font.HintingNone); err == nil {
			sum += adv
		}
	}
	return float64(sum) / float64(upem) * sizePt * 25.4 / 72
}

// fitText shortens text with an ellipsis to fit width mm at sizePt.
func fitText(text string, sizePt, width float64) string {
	if textWidthMM(text, sizePt) <= width {
		return text
	}
	r := []rune(text)
	lo, hi := 0, len(r) // the longest prefix that fits with "…", by bisection
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if textWidthMM(string(r[:mid])+"…", sizePt) <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return strings.TrimRightFunc(string(r[:lo]), unicode.IsSpace) + "…"
}
