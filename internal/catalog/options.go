package catalog

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tsekh/tsekh/internal/platform/input"
)

// Options are an ordered item's choices of board per decor slot of its
// product: {"корпус": "LDSP16-SONOMA"}, stored as a JSON object.
type Options map[string]string

// Value implements driver.Valuer.
func (o Options) Value() (driver.Value, error) {
	if len(o) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(map[string]string(o))
	return string(b), err
}

// Scan implements sql.Scanner.
func (o *Options) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	case nil:
		*o = Options{}
		return nil
	default:
		return fmt.Errorf("catalog: cannot scan %T into options", src)
	}
	m := map[string]string{}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*o = m
	return nil
}

// Get returns the choice for the slot, whatever the case of its name.
func (o Options) Get(slot string) (string, bool) {
	if v, ok := o[slot]; ok {
		return v, true
	}
	for k, v := range o {
		if strings.EqualFold(k, slot) {
			return v, true
		}
	}
	return "", false
}

// BoardFor returns the code of the board a part of the slot is cut from for
// an item with the options: its choice when the slot still allows it, else
// the slot's default. "" when the product has no such slot.
func (p Product) BoardFor(slot string, o Options) string {
	allowed := p.SlotBoards(slot)
	if len(allowed) == 0 {
		return ""
	}
	if v, ok := o.Get(slot); ok {
		if i := slices.IndexFunc(allowed, func(b string) bool { return strings.EqualFold(b, v) }); i >= 0 {
			return allowed[i]
		}
	}
	return allowed[0]
}

// Boards returns, for every decor slot of the product, the code of the
// board its parts are cut from for an item with the options (BoardFor):
// chosen or the slot's default; empty for a product without slots.
func (p Product) Boards(o Options) Options {
	out := Options{}
	for _, s := range p.Slots {
		out[s.Name] = p.BoardFor(s.Name, o)
	}
	return out
}

// ResolveOption finds the board an item's choice for the slot names among
// the slot's allowed boards: by code, or by decor (either regardless of
// case). It returns the board's code, or an error saying what may be chosen.
func (p Product) ResolveOption(slot, value string, all map[string]Material) (string, error) {
	var name string
	for _, s := range p.Slots {
		if strings.EqualFold(s.Name, slot) {
			name = s.Name
		}
	}
	if name == "" {
		names := make([]string, len(p.Slots))
		for i, s := range p.Slots {
			names[i] = fmt.Sprintf("%q", s.Name)
		}
		if len(names) == 0 {
			return "", fmt.Errorf("%s has no decor slots to choose in", p.SKU)
		}
		return "", fmt.Errorf("%s has no decor slot %q; its slots are %s", p.SKU, slot, strings.Join(names, ", "))
	}
	allowed := p.SlotBoards(name)
	var choices []string
	for _, code := range allowed {
		b := all[input.CodeKey(code)]
		if input.CodeKey(code) == input.CodeKey(value) || (b.Decor != "" && strings.EqualFold(b.Decor, value)) {
			return b.Code, nil
		}
		choices = append(choices, fmt.Sprintf("%s (%s)", b.Decor, code))
	}
	return "", fmt.Errorf("%q is not a decor or board the slot %q of %s allows; it allows %s", value, name, p.SKU, strings.Join(choices, ", "))
}
