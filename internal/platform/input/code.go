package input

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// Codes name what people and scanners type a name of: materials, parts,
// units, offcuts. Every code is read in its normal form (NormalCode) and
// compared by its key (CodeKey), in the catalogue and in every lookup alike,
// so that one code is never two and two are never one.

// CodeChars are the characters a new code (a material's) holds. They are
// ASCII: a code
// goes on labels and into barcodes (Code 128 carries ASCII), and letters of
// other scripts that look like Latin ones (Cyrillic І, Greek Ο), invisible
// characters (U+200B, U+FEFF), direction marks (U+202E) and emoji would make
// codes that look alike but are not.
const CodeChars = "letters A–Z and a–z, digits 0–9, '-', '_', '.' and '/'"

// NormalCode is a code as tsekh reads it: in Unicode's NFKC form (a
// fullwidth ＬＤＳＰ is LDSP, a long ſ is s, a no-break space a space),
// without blanks around it.
func NormalCode(s string) string { return strings.TrimSpace(norm.NFKC.String(s)) }

// CodeKey is the one rule by which codes are equal: their normal forms in
// lower case. Codes of CodeChars differ in ASCII letters' case only, which
// every database's lower() folds alike; a code kept from before codes had
// their character set is folded by Unicode's rules.
func CodeKey(s string) string { return strings.ToLower(NormalCode(s)) }

// Code checks a new code of at most max characters and returns its normal
// form: it is required and holds CodeChars only, once normalised.
func Code(field, s string, max int) (string, []apperr.FieldError) {
	c := NormalCode(s)
	if msg := problemOf(c, false); msg != "" {
		return c, []apperr.FieldError{apperr.Field(field, "%s", msg)}
	}
	if c == "" {
		return c, []apperr.FieldError{apperr.Field(field, "is required")}
	}
	if n := utf8.RuneCountInString(c); n > max {
		return c, []apperr.FieldError{apperr.Field(field, "must be at most %d characters, not %d", max, n)}
	}
	for i, r := range c {
		if !codeChar(r) {
			return c, []apperr.FieldError{apperr.Field(field, "may hold %s only, not %s (character %d)", CodeChars, describeRune(r), utf8.RuneCountInString(c[:i])+1)}
		}
	}
	return c, nil
}

func codeChar(r rune) bool {
	switch {
	case 'A' <= r && r <= 'Z', 'a' <= r && r <= 'z', '0' <= r && r <= '9':
		return true
	}
	return r == '-' || r == '_' || r == '.' || r == '/'
}

// describeRune names a character for a message: a visible one as itself
// with its code point, an invisible one (a space, a format character such
// as U+200B, a noncharacter) by its code point alone.
func describeRune(r rune) string {
	if unicode.IsGraphic(r) && !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r) {
		return fmt.Sprintf("%q (U+%04X)", r, r)
	}
	return fmt.Sprintf("U+%04X", r)
}
