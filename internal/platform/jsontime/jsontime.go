// Package jsontime writes times as tsekh shows them everywhere (the API, the
// shop's callbacks): RFC 3339 in UTC with exactly three fraction digits, so
// that the text order of two times is their order in time.
package jsontime

import "time"

// Layout is how every time tsekh sends is written.
const Layout = "2006-01-02T15:04:05.000Z"

// Format writes t in Layout: in UTC, truncated (never rounded) to the
// millisecond, so that a time not before another stays not before it.
func Format(t time.Time) string { return t.UTC().Truncate(time.Millisecond).Format(Layout) }

// Fix rewrites, in a JSON text, every string value that is an RFC
// 3339 date-time (with seconds and a zone) in TimeLayout. Dates alone
// ("2026-12-20") and other text stay as they are. A text typed by a person
// that is exactly such a time is rewritten too: it names the same instant.
func Fix(js []byte) []byte {
	var out []byte // nil until something changes
	last := 0
	for i := 0; i < len(js); i++ {
		if js[i] != '"' {
			continue
		}
		// A string: find its end, stepping over escapes.
		j := i + 1
		plain := true
		for j < len(js) && js[j] != '"' {
			if js[j] == '\\' {
				plain = false
				j++
			}
			j++
		}
		if j >= len(js) {
			break
		}
		if s := js[i+1 : j]; plain && looksLikeTime(s) {
			if t, err := time.Parse(time.RFC3339Nano, string(s)); err == nil {
				if f := Format(t); f != string(s) {
					if out == nil {
						out = make([]byte, 0, len(js)+64)
					}
					out = append(out, js[last:i+1]...)
					out = append(out, f...)
					last = j
				}
			}
		}
		i = j
	}
	if out == nil {
		return js
	}
	return append(out, js[last:]...)
}

// looksLikeTime is a quick test before parsing: yyyy-mm-ddThh:mm:ss and a
// zone.
func looksLikeTime(s []byte) bool {
	if len(s) < len("2006-01-02T15:04:05Z") || len(s) > len("2006-01-02T15:04:05.999999999-07:00") {
		return false
	}
	if s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return false
	}
	switch s[len(s)-1] {
	case 'Z', 'z':
		return true
	}
	return len(s) >= 25 && s[len(s)-3] == ':' && (s[len(s)-6] == '+' || s[len(s)-6] == '-')
}
