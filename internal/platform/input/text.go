// Package input checks what comes into tsekh from outside, through the API
// and the command line alike: JSON bodies, decoded with errors a client can
// act on; text fields, which must be valid UTF-8 without control characters
// and are bounded in characters; and dates, which must lie between MinDate
// and MaxDate. Every problem is an apperr error naming the field at fault, so
// that PostgreSQL and SQLite refuse the same input the same way.
package input

import (
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// Bounds of text fields, in characters (Unicode code points, not bytes).
const (
	MaxName  = 200  // names of people, products, routes, operations, parts, materials, tokens
	MaxPhone = 50   // a phone number as people write it
	MaxEmail = 254  // an email address (RFC 5321's path limit)
	MaxNote  = 2000 // free text on an order line
	MaxCode  = 32   // a work centre's code
	MaxSKU   = 64   // a product's SKU
	MaxQuery = 100  // a free-text query parameter (an event type, a table name)
)

// Line checks an optional single-line text field: valid UTF-8, no control
// characters (tab and newline included) and at most max characters.
func Line(field, s string, max int) []apperr.FieldError {
	return check(field, s, max, false)
}

// RequiredLine is Line for a field that must not be empty.
func RequiredLine(field, s string, max int) []apperr.FieldError {
	if s == "" {
		return []apperr.FieldError{apperr.Field(field, "is required")}
	}
	return check(field, s, max, false)
}

// Note checks an optional free-text field: as Line, but tab, newline and
// carriage return are allowed.
func Note(field, s string, max int) []apperr.FieldError {
	return check(field, s, max, true)
}

func check(field, s string, max int, multiline bool) []apperr.FieldError {
	if msg := problemOf(s, multiline); msg != "" {
		return []apperr.FieldError{apperr.Field(field, "%s", msg)}
	}
	if n := utf8.RuneCountInString(s); max > 0 && n > max {
		return []apperr.FieldError{apperr.Field(field, "must be at most %d characters, not %d", max, n)}
	}
	return nil
}

// lineSpace tells the control characters free text may hold: tab, line feed
// and carriage return.
func lineSpace(r rune) bool { return r == '\t' || r == '\n' || r == '\r' }

// problemOf says what is wrong with the characters of s, or "" when nothing is.
func problemOf(s string, multiline bool) string {
	n := 0
	for i, r := range s {
		n++
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return fmt.Sprintf("must be valid UTF-8 (an invalid byte 0x%02X at character %d)", s[i], n)
			}
		}
		if unicode.IsControl(r) && (!multiline || !lineSpace(r)) {
			what := "control characters"
			if multiline {
				what = "control characters other than tab and newline"
			}
			return fmt.Sprintf("must not contain %s (U+%04X at character %d)", what, r, n)
		}
	}
	return ""
}

// Email checks an optional e-mail address ("" passes): one line of at most
// MaxEmail characters that is an address alone (local@domain, as
// net/mail reads RFC 5322, without a display name or angle brackets), whose
// domain has a dot and no empty label.
func Email(field, s string) []apperr.FieldError {
	if s == "" {
		return nil
	}
	if f := Line(field, s, MaxEmail); len(f) > 0 {
		return f
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return []apperr.FieldError{apperr.Field(field, "must be an e-mail address alone, e.g. ivan@example.com")}
	}
	at := strings.LastIndexByte(s, '@')
	domain := s[at+1:]
	if !strings.Contains(domain, ".") || slices.Contains(strings.Split(domain, "."), "") || strings.HasPrefix(domain, "[") {
		return []apperr.FieldError{apperr.Field(field, "must be an e-mail address whose domain has a dot, e.g. ivan@example.com")}
	}
	return nil
}
