package input

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
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
