package input

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// members is what a Go type takes as JSON object members: by exact name,
// the type of each member's value (as encoding/json reads it: tags, field
// names, embedded structs' fields promoted). open is true for a map, whose
// members are free.
type members struct {
	open   bool
	byName map[string]reflect.Type
	names  []string // sorted, for the messages
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	membersCache    sync.Map // reflect.Type → *members
)

// opaque reports whether t reads its JSON itself (json.RawMessage, dates,
// values that tell null from absent): what it takes is its own to check.
func opaque(t reflect.Type) bool {
	return t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// membersOf returns the members of a struct or map type; nil for any other
// type and for types that read their own JSON.
func membersOf(t reflect.Type) *members {
	t = deref(t)
	if t == nil || opaque(t) {
		return nil
	}
	if m, ok := membersCache.Load(t); ok {
		return m.(*members)
	}
	var m *members
	switch t.Kind() {
	case reflect.Map:
		m = &members{open: true}
	case reflect.Struct:
		m = &members{byName: map[string]reflect.Type{}}
		collectFields(t, m, 0)
		for n := range m.byName {
			m.names = append(m.names, n)
		}
		slices.Sort(m.names)
	default:
		return nil
	}
	membersCache.Store(t, m)
	return m
}

// collectFields adds the JSON members of struct t's fields to m, promoting
// those of untagged embedded structs as encoding/json does (a name met at a
// shallower depth wins).
func collectFields(t reflect.Type, m *members, depth int) {
	if depth > 8 {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" && f.Tag.Get("json") == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			if ft := deref(f.Type); ft.Kind() == reflect.Struct && !opaque(ft) {
				collectFields(ft, m, depth+1)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		name := tag
		if name == "" {
			name = f.Name
		}
		if _, ok := m.byName[name]; !ok || depth == 0 {
			m.byName[name] = f.Type
		}
	}
}

// childType is the type of the value that frame f selects within a value
// of type t (a member of a struct or map, an element of a slice or array);
// nil when nothing is known of it (an unknown member, an opaque type, any).
func childType(t reflect.Type, f frame) reflect.Type {
	t = deref(t)
	if t == nil || opaque(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if f.array {
			return t.Elem()
		}
	case reflect.Map:
		if !f.array {
			return t.Elem()
		}
	case reflect.Struct:
		if !f.array {
			if m := membersOf(t); m != nil {
				return m.byName[f.key]
			}
		}
	}
	return nil
}

// memberProblem says what is wrong with the member name key of an object
// inside stack in a body decoded into root; "" when the type takes it (or
// nothing is known of the object's type).
func memberProblem(root reflect.Type, stack []frame, key string) string {
	t := root
	for _, f := range stack {
		if t = childType(t, f); t == nil {
			return ""
		}
	}
	m := membersOf(t)
	if m == nil || m.open {
		return ""
	}
	if _, ok := m.byName[key]; ok {
		return ""
	}
	for _, n := range m.names {
		if strings.EqualFold(n, key) {
			return "is not a member: member names are case-sensitive; did you mean " + n + "?"
		}
	}
	return "is not a member of this object, which takes " + strings.Join(m.names, ", ")
}

// typeAt is the type of the value that stack selects within root, as
// encoding/json fills it: a struct's member by its exact name or, failing
// that, one that matches it regardless of case. nil when nothing is known of
// it.
func typeAt(root reflect.Type, stack []frame) reflect.Type {
	t := root
	for _, f := range stack {
		next := childType(t, f)
		if next == nil && !f.array {
			if st := deref(t); st != nil && st.Kind() == reflect.Struct && !opaque(st) {
				for _, n := range membersOf(st).names {
					if strings.EqualFold(n, f.key) {
						next = membersOf(st).byName[n]
						break
					}
				}
			}
		}
		if t = next; t == nil {
			return nil
		}
	}
	return t
}

// repeatProblem says what is wrong with a member name that repeats an
// earlier one of its object; "" when it does not. In an object read into a
// struct a name of one of its fields repeats regardless of case, since
// encoding/json fills the field from both; any other, only as it is spelt.
func repeatProblem(root reflect.Type, val *value) string {
	switch val.repeats {
	case "":
		return ""
	case *val.key:
		return "comes more than once in this object: send each member once"
	}
	t := deref(typeAt(root, val.stack))
	if t == nil || t.Kind() != reflect.Struct || opaque(t) {
		return ""
	}
	if slices.ContainsFunc(membersOf(t).names, func(n string) bool { return strings.EqualFold(n, *val.key) }) {
		return "repeats " + printable(val.repeats) + " (member names are matched regardless of case here): send each member once"
	}
	return ""
}

// Bounds of a whole number read into an int: the range of the integer
// column (INTEGER, 32 bits on PostgreSQL) tsekh stores an int member in.
// Ids and versions, stored in BIGINT columns, are int64 members.
const (
	MinInt = math.MinInt32
	MaxInt = math.MaxInt32
)

// numberProblem says what is wrong with a JSON number at stack in a body
// read into root; "" when nothing is. Only the range of an int member is
// checked here: encoding/json refuses a fraction or a number beyond int64
// itself.
func numberProblem(root reflect.Type, stack []frame, n json.Number) string {
	t := deref(typeAt(root, stack))
	if t == nil || t.Kind() != reflect.Int {
		return ""
	}
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || (v >= MinInt && v <= MaxInt) {
		return ""
	}
	return fmt.Sprintf("must be a whole number from %d to %d, not %s", MinInt, MaxInt, boundedNumber(n.String()))
}

// kindProblem says what is wrong with a JSON value (a scalar token, or the
// closing delimiter of an object or array) at stack in a body read into
// root, when encoding/json would refuse its kind: a string for a number, an
// object for an array, a fraction for a whole number. "" when nothing is
// known of the type there, the type reads its own JSON, or the kind fits.
// Every such value is named at once, where encoding/json reports the first.
func kindProblem(root reflect.Type, stack []frame, tok any) string {
	t := typeAt(root, stack)
	if t == nil || len(stack) == 0 {
		return ""
	}
	t = deref(t)
	if t.Kind() == reflect.Interface || opaque(t) {
		return ""
	}
	var sent string
	switch tok := tok.(type) {
	case nil:
		return "" // null leaves any value as it is
	case string:
		if t.Kind() == reflect.String {
			return ""
		}
		sent = "string"
	case bool:
		if t.Kind() == reflect.Bool {
			return ""
		}
		sent = "bool"
	case json.Number:
		switch t.Kind() {
		case reflect.Float32, reflect.Float64:
			return ""
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if _, err := strconv.ParseInt(tok.String(), 10, t.Bits()); err == nil {
				return ""
			}
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if _, err := strconv.ParseUint(tok.String(), 10, t.Bits()); err == nil {
				return ""
			}
		}
		sent = "number " + tok.String()
	case json.Delim:
		switch {
		case tok == '}' && (t.Kind() == reflect.Struct || t.Kind() == reflect.Map):
			return ""
		case tok == ']' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			return ""
		case tok == '}':
			sent = "object"
		default:
			sent = "array"
		}
	default:
		return ""
	}
	return fmt.Sprintf("must be %s, not %s", kindOf(t), jsonValue(sent))
}

// boundedNumber shortens a number's text to quote it back.
func boundedNumber(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// foldKey is s with every character replaced by the smallest of those it
// equals regardless of case (unicode.SimpleFold's orbit), so that two
// names are equal folded exactly when strings.EqualFold says they are.
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s) // an ASCII letter's smallest equal is its capital
	}
	var b strings.Builder
	for _, r := range s {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		b.WriteRune(low)
	}
	return b.String()
}
