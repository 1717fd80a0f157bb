package asyncapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
)

// Changes are the differences between two versions of the document's
// schemas (components.schemas), from a reader's point of view.
type Changes struct {
	// Additive changes keep every reader of the older contract working: a
	// new type, a new optional field, a new enumerated value, a description.
	Additive []string
	// Breaking changes do not: a removed type or field, a field made
	// required or no longer required, a changed type, format or pattern.
	// Such a change is a new event type name instead (docs/journal.md, "Events").
	Breaking []string
}

// Diff compares the schemas of two documents made by Build.
func Diff(older, newer []byte) (Changes, error) {
	var c Changes
	o, err := componentSchemas(older)
	if err != nil {
		return c, fmt.Errorf("the older document: %w", err)
	}
	n, err := componentSchemas(newer)
	if err != nil {
		return c, fmt.Errorf("the newer document: %w", err)
	}
	for _, name := range unionKeys(o, n) {
		os, inOld := o[name].(map[string]any)
		ns, inNew := n[name].(map[string]any)
		switch {
		case !inNew:
			c.Breaking = append(c.Breaking, name+": removed")
		case !inOld:
			c.Additive = append(c.Additive, name+": new")
		default:
			c.compare(name, os, ns)
		}
	}
	return c, nil
}

func componentSchemas(doc []byte) (map[string]any, error) {
	var d struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	return d.Components.Schemas, nil
}

// compare records the changes from the schema o to n at path.
func (c *Changes) compare(path string, o, n map[string]any) {
	for _, kw := range unionKeys(o, n) {
		ov, nv := o[kw], n[kw]
		if reflect.DeepEqual(ov, nv) {
			continue
		}
		switch kw {
		case "description", "title", "examples":
			c.Additive = append(c.Additive, fmt.Sprintf("%s: %s changed", path, kw))
		case "properties":
			c.compareProperties(path, o, n)
		case "required":
			// compareProperties tells the required fields that are new.
			for _, f := range stringList(ov) {
				if !slices.Contains(stringList(nv), f) {
					c.Breaking = append(c.Breaking, fmt.Sprintf("%s.%s: no longer required", path, f))
				}
			}
			for _, f := range stringList(nv) {
				if !slices.Contains(stringList(ov), f) && hasProperty(o, f) {
					c.Breaking = append(c.Breaking, fmt.Sprintf("%s.%s: now required (older events lack it)", path, f))
				}
			}
		case "enum":
			for _, v := range anyList(ov) {
				if !slices.ContainsFunc(anyList(nv), func(x any) bool { return reflect.DeepEqual(x, v) }) {
					c.Breaking = append(c.Breaking, fmt.Sprintf("%s: value %v removed", path, v))
				}
			}
			for _, v := range anyList(nv) {
				if !slices.ContainsFunc(anyList(ov), func(x any) bool { return reflect.DeepEqual(x, v) }) {
					c.Additive = append(c.Additive, fmt.Sprintf("%s: new value %v", path, v))
				}
			}
		case "items":
			om, ok1 := ov.(map[string]any)
			nm, ok2 := nv.(map[string]any)
			if ok1 && ok2 {
				c.compare(path+"[]", om, nm)
			} else {
				c.Breaking = append(c.Breaking, fmt.Sprintf("%s: items changed", path))
			}
		default:
			c.Breaking = append(c.Breaking, fmt.Sprintf("%s: %s changed from %v to %v", path, kw, show(ov), show(nv)))
		}
	}
}

func (c *Changes) compareProperties(path string, o, n map[string]any) {
	op, _ := o["properties"].(map[string]any)
	np, _ := n["properties"].(map[string]any)
	for _, f := range unionKeys(op, np) {
		os, inOld := op[f].(map[string]any)
		ns, inNew := np[f].(map[string]any)
		switch {
		case !inNew:
			c.Breaking = append(c.Breaking, fmt.Sprintf("%s.%s: removed", path, f))
		case !inOld && slices.Contains(stringList(n["required"]), f):
			c.Breaking = append(c.Breaking, fmt.Sprintf("%s.%s: new and required (older events lack it)", path, f))
		case !inOld:
			c.Additive = append(c.Additive, fmt.Sprintf("%s.%s: new optional field", path, f))
		default:
			c.compare(path+"."+f, os, ns)
		}
	}
}

func hasProperty(s map[string]any, f string) bool {
	p, _ := s["properties"].(map[string]any)
	_, ok := p[f]
	return ok
}

func stringList(v any) []string {
	var out []string
	for _, x := range anyList(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

func show(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func unionKeys(a, b map[string]any) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
