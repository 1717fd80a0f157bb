package events

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"
)

// Contract is an event type declared once, with the Go type P of its
// payload: the writer builds its events with New and every reader decodes
// them with Decode, so both use the same type, and the payload's JSON Schema
// is generated from P. A Contract is made by Declare; the zero Contract
// names no type, and Add refuses its events.
type Contract[P any] struct {
	typ *Type
}

// typeNamePattern is what an event type's name looks like: lower-case words
// joined by dots, at least two of them ("order.received"). The name is the
// last part of a NATS subject, so it has no spaces, '*' or '>'.
var typeNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)

// declared is the catalogue of every contract declared in this binary, by
// name, so that a type is declared once across all packages and so that
// tests can check every event they wrote against its schema.
var declared = struct {
	sync.Mutex
	types map[string]Type
}{types: map[string]Type{}}

// Declare declares the event type name with payload P: owner is the module
// that writes it, aggregateType the owner's table its events are about, and
// description what happened. The payload's JSON Schema is generated from P
// (see SchemaOf). Declarations are package-level variables, so Declare
// panics, at start-up, on a malformed name, a missing owner or table, a
// payload that is not a struct, or a name declared twice.
func Declare[P any](name, owner, aggregateType, description string) Contract[P] {
	t, err := declareType[P](name, owner, aggregateType, description)
	if err != nil {
		panic(err)
	}
	return Contract[P]{typ: &t}
}

func declareType[P any](name, owner, aggregateType, description string) (Type, error) {
	if !typeNamePattern.MatchString(name) {
		return Type{}, fmt.Errorf("events: event type %q: a name is lower-case words joined by dots, e.g. order.received", name)
	}
	if owner == "" || aggregateType == "" || description == "" {
		return Type{}, fmt.Errorf("events: event type %s needs an owner, an aggregate type and a description", name)
	}
	pt := reflect.TypeFor[P]()
	if pt.Kind() != reflect.Struct {
		return Type{}, fmt.Errorf("events: event type %s: the payload must be a struct, not %s", name, pt)
	}
	s := reflectSchema(pt)
	schema, err := schemaMap(s)
	if err != nil {
		return Type{}, fmt.Errorf("events: event type %s: %w", name, err)
	}
	t := Type{Type: name, Owner: owner, AggregateType: aggregateType, Description: description, Schema: schema,
		shape: shapeOf(s), order: orderOf(s)}
	declared.Lock()
	defer declared.Unlock()
	if prev, ok := declared.types[name]; ok {
		return Type{}, fmt.Errorf("events: event type %s is declared twice (owners %s and %s)", name, prev.Owner, owner)
	}
	declared.types[name] = t
	return t, nil
}

// Declared returns every event type declared with Declare in this binary,
// sorted by name.
func Declared() []Type {
	declared.Lock()
	defer declared.Unlock()
	out := make([]Type, 0, len(declared.types))
	for _, t := range declared.types {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

// DeclaredType returns the event type declared with Declare under the name.
func DeclaredType(name string) (Type, bool) {
	declared.Lock()
	defer declared.Unlock()
	t, ok := declared.types[name]
	return t, ok
}

// Name is the event type's name, e.g. "order.received".
func (c Contract[P]) Name() string {
	if c.typ == nil {
		return ""
	}
	return c.typ.Type
}

// Describe returns the event type for a Registry, with its payload schema.
func (c Contract[P]) Describe() Type {
	if c.typ == nil {
		return Type{}
	}
	return *c.typ
}

// New returns the event about the owner's row aggregateID with the payload,
// to be written with Add in the owner's transaction.
func (c Contract[P]) New(aggregateID int64, payload P) New {
	if c.typ == nil {
		return New{AggregateID: aggregateID, Payload: payload}
	}
	return New{Type: c.typ.Type, AggregateType: c.typ.AggregateType, AggregateID: aggregateID, Payload: payload}
}

// Decode returns the payload of ev, which must be of this type.
func (c Contract[P]) Decode(ev Event) (P, error) {
	var p P
	if ev.Type != c.Name() {
		return p, fmt.Errorf("events: event %d is %s, not %s", ev.ID, ev.Type, c.Name())
	}
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		return p, fmt.Errorf("events: event %d: %s payload: %w", ev.ID, ev.Type, err)
	}
	return p, nil
}

// Names returns the names of the contracts, for a Subscriber's Types.
func Names(cs ...interface{ Name() string }) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name()
	}
	return out
}

// SchemaOf returns the JSON Schema (2020-12) of values of the struct type t,
// as the JSON encoder writes them: properties named by their json tags, every
// field required unless tagged omitempty, integers as integers, time.Time as
// a date-time; a string field tagged `jsonschema:"format=date"` is a
// "YYYY-MM-DD" day, and `jsonschema_description` describes a field (see
// github.com/invopop/jsonschema for the other keywords). Objects allow
// properties beyond those declared, so that a new optional field does not
// break a reader that validates with an older schema.
func SchemaOf(t reflect.Type) (map[string]any, error) {
	m, err := schemaMap(reflectSchema(t))
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", t, err)
	}
	return m, nil
}

func reflectSchema(t reflect.Type) *jsonschema.Schema {
	r := &jsonschema.Reflector{
		Anonymous:                 true,
		DoNotReference:            true,
		ExpandedStruct:            true,
		AllowAdditionalProperties: true,
	}
	return r.ReflectFromType(t)
}

func schemaMap(s *jsonschema.Schema) (map[string]any, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = json.Unmarshal(raw, &m)
	return m, err
}

// shapeOf renders an object schema's properties in declared order, optional
// ones marked with "?", nested objects and arrays of objects spelled out.
func shapeOf(s *jsonschema.Schema) string {
	if s == nil || s.Properties == nil {
		return "{}"
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	var b strings.Builder
	b.WriteString("{")
	i := 0
	for key, v := range s.Properties.FromOldest() {
		if i > 0 {
			b.WriteString(", ")
		}
		i++
		fmt.Fprintf(&b, "%q", key)
		if !required[key] {
			b.WriteString("?")
		}
		switch {
		case v.Type == "object" && v.Properties != nil:
			b.WriteString(": " + shapeOf(v))
		case v.Type == "array" && v.Items != nil && v.Items.Type == "object" && v.Items.Properties != nil:
			b.WriteString(": [" + shapeOf(v.Items) + "]")
		}
	}
	b.WriteString("}")
	return b.String()
}

// Shape is the payload as docs/journal.md shows it, fields in their declared
// order and optional ones marked with "?": {"order_id", "sync_id"?}. It is
// empty for a type declared without a contract.
func (t Type) Shape() string { return t.shape }

// Describe returns t, so that a Type can be declared to a Registry like a
// Contract.
func (t Type) Describe() Type { return t }
