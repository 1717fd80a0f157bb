// Package textsearch makes text searchable by substring, whatever its case,
// alike on PostgreSQL and SQLite. Neither database can be trusted to lower
// Cyrillic: PostgreSQL's lower() and ILIKE follow the database's locale, and
// SQLite's lower() and LIKE know only ASCII. So the text is folded in Go
// (Fold) into a key stored beside it (Key), and a query is folded the same
// way into a LIKE pattern over that key (Pattern), which then compares
// exactly on both.
package textsearch

import "strings"

// Fold is s as it is searched: lower case (Unicode, Cyrillic included), ё as
// е, runs of spaces as one space, without leading or trailing spaces.
func Fold(s string) string {
	s = strings.ToLower(s)
	s = strings.ReplaceAll(s, "ё", "е")
	return strings.Join(strings.Fields(s), " ")
}

// Digits is the digits of s alone: "+7 (900) 000-00-00" is "79000000000".
func Digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// separator ends each part of a key. A query never holds it (query
// parameters are refused with control characters), so a match never spans
// two parts.
const separator = "\n"

// Key is the searchable form of the fields: each folded, and the digits of
// each field that has any (so that a phone number is found whichever way it
// is written), every part ended by a line break.
func Key(fields ...string) string {
	var b strings.Builder
	for _, f := range fields {
		b.WriteString(Fold(f))
		b.WriteString(separator)
		if d := Digits(f); d != "" {
			b.WriteString(d)
			b.WriteString(separator)
		}
	}
	return b.String()
}

// Escape is the escape character of Pattern's patterns:
// `column LIKE ? ESCAPE '\'`.
const Escape = `\`

// Pattern is the LIKE pattern that finds q as a substring of a Key: q folded,
// or, when q looks like a phone number (digits with spaces, +, -, ., ( and )
// between them), its digits alone, so that "900 000-00-00" and "9000000000"
// both find "+7 900 000-00-00". It returns "" when q is empty once folded.
func Pattern(q string) string {
	q = Fold(q)
	if phoneLike(q) {
		q = Digits(q)
	}
	if q == "" {
		return ""
	}
	r := strings.NewReplacer(Escape, Escape+Escape, "%", Escape+"%", "_", Escape+"_")
	return "%" + r.Replace(q) + "%"
}

// phoneLike tells whether q is digits, with at least one digit, and only the
// marks people put between the digits of a phone number.
func phoneLike(q string) bool {
	digits := false
	for _, r := range q {
		switch {
		case r >= '0' && r <= '9':
			digits = true
		case strings.ContainsRune(" +-.()", r):
		default:
			return false
		}
	}
	return digits
}
