package events

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/invopop/jsonschema"
)

// keyOrder is the declared order of an object's properties, with that of
// the objects nested in them (a property's object, or its array's items).
type keyOrder struct {
	keys   []string
	nested map[string]*keyOrder
}

func orderOf(s *jsonschema.Schema) *keyOrder {
	if s == nil || s.Properties == nil {
		return nil
	}
	o := &keyOrder{nested: map[string]*keyOrder{}}
	for key, v := range s.Properties.FromOldest() {
		o.keys = append(o.keys, key)
		if n := orderOf(v); n != nil {
			o.nested[key] = n
		} else if v.Items != nil {
			if n := orderOf(v.Items); n != nil {
				o.nested[key] = n
			}
		}
	}
	return o
}

// InDeclaredOrder returns the payload of an event of the type with its keys
// in the order the type's contract declares them (keys it does not declare
// follow, sorted), as Add wrote them. PostgreSQL stores payloads as jsonb,
// which keeps keys in an order of its own, so the journal API and the relay
// put them back in order. The payload of a type not declared with Declare,
// or one that is not a JSON object, is returned as it is.
func InDeclaredOrder(eventType string, payload json.RawMessage) json.RawMessage {
	t, ok := DeclaredType(eventType)
	if !ok || t.order == nil {
		return payload
	}
	out, ok := t.order.apply(payload)
	if !ok {
		return payload
	}
	return out
}

// apply writes the JSON object raw with its keys in order; ok is false when
// raw is not an object.
func (o *keyOrder) apply(raw json.RawMessage) (json.RawMessage, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, false
	}
	var b bytes.Buffer
	b.WriteByte('{')
	write := func(key string) {
		v := fields[key]
		if n := o.nested[key]; n != nil {
			v = n.applyValue(v)
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
		delete(fields, key)
	}
	for _, key := range o.keys {
		if _, ok := fields[key]; ok {
			write(key)
		}
	}
	rest := make([]string, 0, len(fields))
	for key := range fields {
		rest = append(rest, key)
	}
	sort.Strings(rest)
	for _, key := range rest {
		write(key)
	}
	b.WriteByte('}')
	return b.Bytes(), true
}

// applyValue orders an object, or each object of an array; anything else is
// returned as it is.
func (o *keyOrder) applyValue(v json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(v)
	if len(trimmed) == 0 {
		return v
	}
	switch trimmed[0] {
	case '{':
		if out, ok := o.apply(trimmed); ok {
			return out
		}
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(trimmed, &items); err != nil {
			return v
		}
		var b bytes.Buffer
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(o.applyValue(it))
		}
		b.WriteByte(']')
		return b.Bytes()
	}
	return v
}
