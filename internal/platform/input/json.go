package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// MaxDepth is how deeply a JSON body may nest objects and arrays; tsekh's
// own bodies need four levels.
const MaxDepth = 32

// maxProblems bounds the fields one refusal names, so that a body full of
// bad strings does not make an answer as large as itself.
const maxProblems = 20

// DecodeObject decodes body, which must be one JSON object, into v. It
// returns EBADREQUEST when the body is empty, is not JSON, is truncated,
// nests deeper than MaxDepth, is not an object or holds more than one value;
// and EINVALID naming every string (member names included) that is not valid
// UTF-8 or holds a control character other than tab and newline, or the field
// of the wrong type, with its indices ("items[0].qty"); and EINVALID naming
// every member that v's type does not take, exactly as it is spelt (a
// case-variant, "QTY" for "qty", is unknown too: encoding/json alone would
// take it): the office's bodies are the office's own, and a member it
// misspells must not be dropped silently. Every value of the wrong kind (a
// string for a number, a fraction for a whole number) is EINVALID naming it,
// all of them at once. Below a value of a type that reads
// its own JSON (json.RawMessage, a date) or of a map, members are not
// checked. A member that comes twice in one object (or, in an object read
// into a struct, twice regardless of case, as encoding/json matches them) is
// EINVALID naming it: encoding/json would keep the last silently. A whole
// number read into an int is EINVALID naming it when it is outside the int
// column's range (MinInt..MaxInt), the same on both databases. The strings'
// own limits (single line, length) are the services' to check.
func DecodeObject(body []byte, v any) error {
	return decode(body, v, true, true)
}

// DecodeTolerant is DecodeObject taking members v's type does not know (and
// ignoring them), for a partner's body (the shop's webhook) that may carry
// more than tsekh reads.
func DecodeTolerant(body []byte, v any) error {
	return decode(body, v, true, false)
}

// DecodeEnvelope is DecodeObject without the check of the strings, for a body
// whose parts are json.RawMessage values decoded and checked one by one later
// (the rows of an import), so that a bad part is reported as that part.
func DecodeEnvelope(body []byte, v any) error {
	return decode(body, v, false, true)
}

func decode(body []byte, v any, checkStrings, onlyKnownMembers bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return apperr.Errorf(apperr.EBADREQUEST, "the body is empty; a JSON object is expected")
	}
	root := reflect.TypeOf(v)
	var problems []apperr.FieldError
	var kinds problemKinds
	err := walk(body, func(val *value) {
		if len(problems) >= maxProblems {
			return
		}
		if val.key != nil {
			if msg := repeatProblem(root, val); msg != "" {
				problems = append(problems, apperr.Field(val.keyPath(), "%s", msg))
				kinds.repeated = true
				return
			}
			if checkStrings {
				if msg := stringProblem(val.raw, *val.key); msg != "" {
					problems = append(problems, apperr.Field(val.keyPath(), "is a member name that %s", msg))
					kinds.text = true
					return
				}
			}
			if onlyKnownMembers {
				if msg := memberProblem(root, val.stack, *val.key); msg != "" {
					problems = append(problems, apperr.Field(val.keyPath(), "%s", msg))
					kinds.unknown = true
				}
			}
			return
		}
		if msg := kindProblem(root, val.stack, val.token); msg != "" {
			problems = append(problems, apperr.Field(val.path(), "%s", msg))
			kinds.kind = true
			return
		}
		if n, ok := val.token.(json.Number); ok {
			if msg := numberProblem(root, val.stack, n); msg != "" {
				problems = append(problems, apperr.Field(val.path(), "%s", msg))
				kinds.number = true
			}
			return
		}
		if !checkStrings {
			return
		}
		if s, ok := val.token.(string); ok {
			if msg := stringProblem(val.raw, s); msg != "" {
				problems = append(problems, apperr.Field(val.path(), "%s", msg))
				kinds.text = true
			}
		}
	})
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return apperr.Invalid(kinds.String(), problems...)
	}
	if err := json.Unmarshal(body, v); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			if typ.Field == "" {
				return apperr.Errorf(apperr.EBADREQUEST, "the body must be a JSON object")
			}
			return apperr.Invalid("a field has the wrong type",
				apperr.Field(locate(body, typ), "must be %s, not %s", kindOf(typ.Type), jsonValue(typ.Value)))
		}
		return apperr.Errorf(apperr.EBADREQUEST, "the body cannot be read: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// problemKinds are the kinds of problem a body was found to have.
type problemKinds struct{ unknown, repeated, kind, number, text bool }

// String sums them up for a refusal's detail, in the order they are checked.
func (k problemKinds) String() string {
	var parts []string
	for _, p := range []struct {
		found bool
		says  string
	}{
		{k.unknown, "some members are unknown"}, {k.repeated, "some members are repeated"},
		{k.kind, "some fields have the wrong type"},
		{k.number, "some whole numbers are out of range"},
		{k.text, "some text is not valid UTF-8, holds control characters or lone surrogates"},
	} {
		if p.found {
			parts = append(parts, p.says)
		}
	}
	return strings.Join(parts, ", and ")
}

// stringProblem says what is wrong with a JSON string, raw as sent (quotes
// and the separators before it included) and decoded; "" when nothing is.
// Tab and newline pass here: single-line fields refuse them in the services.
func stringProblem(raw []byte, decoded string) string {
	if !utf8.Valid(raw) {
		return "must be valid UTF-8"
	}
	if esc := loneSurrogate(raw); esc != "" {
		// encoding/json would turn it into U+FFFD silently, and two
		// different strings into one.
		return "must not hold a lone UTF-16 surrogate (" + esc + "): escape a character outside the BMP as a pair of them, or send it as UTF-8"
	}
	return problemOf(decoded, true)
}

// loneSurrogate returns the first \uXXXX escape of a JSON string as sent
// that is half of a surrogate pair without its other half; "" when none.
func loneSurrogate(raw []byte) string {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // a two-character escape, \\ included
			continue
		}
		r, ok := hex4(raw, i+2)
		if !ok {
			continue // the decoder refuses it
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := hex4(raw, i+8); ok && i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' && lo >= 0xDC00 && lo <= 0xDFFF {
				i += 11
				continue
			}
			return string(raw[i : i+6])
		case r >= 0xDC00 && r <= 0xDFFF:
			return string(raw[i : i+6])
		}
		i += 5
	}
	return ""
}

// hex4 reads the four hex digits at raw[i:i+4].
func hex4(raw []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(raw) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[i:i+4]), 16, 16)
	return rune(n), err == nil //nolint:gosec // four hex digits fit a rune
}

// value is one token of a JSON document met by walk.
type value struct {
	token      json.Token
	key        *string // set when the token is a member name
	raw        []byte  // the token as sent, with the separators before it
	start, end int64   // the value's bytes, [start, end), whole objects and arrays included
	stack      []frame // the containers around it
	// repeats is, for a member name, the spelling of an earlier member of
	// the same object that is the same name regardless of case ("" when
	// none is).
	repeats string
}

// frame is an object or array being walked.
type frame struct {
	array   bool
	index   int    // arrays: the current element
	key     string // objects: the current member
	haveKey bool   // objects: key is read, its value comes next
	start   int64
	// keys are the object's member names met so far, by foldKey, each with
	// its first spelling.
	keys map[string]string
}

// path is the value's field path as clients name it: "items[0].qty".
func (v *value) path() string {
	var b strings.Builder
	for i, f := range v.stack {
		if f.array {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(printable(f.key))
	}
	return b.String()
}

// keyPath is the path of the member whose name is the token.
func (v *value) keyPath() string {
	p := v.path()
	if p != "" {
		p += "."
	}
	return p + printable(*v.key)
}

// names is the path as encoding/json names a field in its errors: the
// members only, without indices ("items.qty").
func (v *value) names() string {
	var parts []string
	for _, f := range v.stack {
		if !f.array {
			parts = append(parts, f.key)
		}
	}
	return strings.Join(parts, ".")
}

// printable escapes what cannot be shown of a member name.
func printable(s string) string {
	if problemOf(s, false) == "" {
		return s
	}
	q := strconv.QuoteToASCII(s)
	return q[1 : len(q)-1]
}

// walk reads body token by token, calling fn for every member name and
// value (objects and arrays when they close), and returns EBADREQUEST when
// body is not exactly one JSON object no deeper than MaxDepth.
func walk(body []byte, fn func(*value)) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []frame
	var prev int64
	started := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return readError(err, dec.InputOffset(), started && len(stack) == 0)
		}
		if started && len(stack) == 0 {
			return apperr.Errorf(apperr.EBADREQUEST, "the body must hold one JSON object, not more")
		}
		end := dec.InputOffset()
		start := skipSeparators(body, prev)
		prev = end
		if !started {
			started = true
			if tok != json.Delim('{') {
				return apperr.Errorf(apperr.EBADREQUEST, "the body must be a JSON object")
			}
		}
		if n := len(stack); n > 0 && !stack[n-1].array {
			if key, ok := tok.(string); ok && !stack[n-1].haveKey {
				f := &stack[n-1]
				f.key, f.haveKey = key, true
				if f.keys == nil {
					f.keys = map[string]string{}
				}
				folded := foldKey(key)
				repeats, seen := f.keys[folded]
				if !seen {
					f.keys[folded] = key
				}
				fn(&value{token: tok, key: &key, repeats: repeats, raw: body[start:end], start: start, end: end, stack: stack[:n-1]})
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= MaxDepth {
				return apperr.Errorf(apperr.EBADREQUEST, "the body nests objects and arrays deeper than %d levels", MaxDepth)
			}
			stack = append(stack, frame{array: tok == json.Delim('['), start: start})
			continue
		case json.Delim('}'), json.Delim(']'):
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			fn(&value{token: tok, start: f.start, end: end, stack: stack})
		default:
			fn(&value{token: tok, raw: body[start:end], start: start, end: end, stack: stack})
		}
		// A value is complete: move its container on.
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].haveKey = false
			}
		}
	}
}

// readError turns the decoder's error into a problem a client can act on;
// io.EOF after one whole value is the end of a good body (nil).
func readError(err error, offset int64, complete bool) error {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF) && complete:
		return nil
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.Errorf(apperr.EBADREQUEST, "the body is truncated: its JSON ends at byte %d before it is complete", offset)
	case complete:
		return apperr.Errorf(apperr.EBADREQUEST, "the body must hold one JSON object, not more")
	case errors.As(err, &syn):
		return apperr.Errorf(apperr.EBADREQUEST, "the body is not valid JSON: %s (at byte %d)", syn.Error(), syn.Offset)
	}
	return apperr.Errorf(apperr.EBADREQUEST, "the body is not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func skipSeparators(body []byte, i int64) int64 {
	for i < int64(len(body)) {
		switch body[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
		default:
			return i
		}
	}
	return i
}

// locate finds the path, with indices, of the value a type error is about:
// the innermost value that encoding/json's field names match and whose bytes
// hold the error's offset. It falls back on the error's own field names.
func locate(body []byte, typ *json.UnmarshalTypeError) string {
	best, bestStart := typ.Field, int64(-1)
	_ = walk(body, func(v *value) {
		if v.key != nil || v.start >= typ.Offset || typ.Offset > v.end || v.start <= bestStart {
			return
		}
		if strings.EqualFold(v.names(), typ.Field) {
			best, bestStart = v.path(), v.start
		}
	})
	return best
}

// kindOf names a Go type as a JSON client knows it.
func kindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// jsonValue names what was sent instead: "a string", "the number 1.5".
func jsonValue(v string) string {
	switch {
	case v == "array", v == "object", v == "string", v == "number":
		return "a JSON " + v
	case v == "bool":
		return "true or false"
	case strings.HasPrefix(v, "number "):
		n := strings.TrimPrefix(v, "number ")
		if len(n) > 32 {
			n = n[:32] + "…"
		}
		return "the number " + n
	}
	return v
}
