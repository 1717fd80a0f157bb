package sales

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// MaxOptions is the most decor-slot choices one item may make.
const MaxOptions = 20

// itemOptions resolves each item's choices of board per decor slot of its
// product ({"корпус": "Дуб сонома"}, by the board's decor or code) to the
// boards' codes, keyed by the slots' own names. It returns EINVALID naming
// field[i].options.<slot> for each choice that names no slot of the product,
// or a board the slot does not allow. Items whose SKU is unknown are
// skipped (productsOf names them).
func itemOptions(ctx context.Context, tx *gorm.DB, items []NewItem, field string) ([]catalog.Options, error) {
	out := make([]catalog.Options, len(items))
	var skus []string
	for _, it := range items {
		if len(it.Options) > 0 {
			skus = append(skus, it.SKU)
		}
	}
	if len(skus) == 0 {
		return out, nil
	}
	specs, err := catalog.ProductSpecs(ctx, tx, skus)
	if err != nil {
		return nil, err
	}
	all, err := catalog.AllMaterials(ctx, tx)
	if err != nil {
		return nil, err
	}
	var fields []apperr.FieldError
	for i, it := range items {
		if len(it.Options) == 0 {
			continue
		}
		at := fmt.Sprintf("%s[%d].options", field, i)
		if len(it.Options) > MaxOptions {
			fields = append(fields, apperr.Field(at, "must choose at most %d decor slots", MaxOptions))
			continue
		}
		p, ok := specs[it.SKU]
		if !ok {
			continue
		}
		slots := make([]string, 0, len(it.Options))
		for slot := range it.Options {
			slots = append(slots, slot)
		}
		sort.Strings(slots)
		chosen := catalog.Options{}
		for _, slot := range slots {
			value := strings.TrimSpace(it.Options[slot])
			f := at + "." + slot
			if bad := append(input.RequiredLine(f, strings.TrimSpace(slot), input.MaxName), input.RequiredLine(f, value, input.MaxName)...); len(bad) > 0 {
				fields = append(fields, bad[0])
				continue
			}
			code, err := p.ResolveOption(strings.TrimSpace(slot), value, all)
			if err != nil {
				fields = append(fields, apperr.Field(f, "%s", err))
				continue
			}
			for _, s := range p.Slots {
				if strings.EqualFold(s.Name, strings.TrimSpace(slot)) {
					if _, dup := chosen[s.Name]; dup {
						fields = append(fields, apperr.Field(f, "chooses for the slot %q twice", s.Name))
					}
					chosen[s.Name] = code
				}
			}
		}
		out[i] = chosen
	}
	if len(fields) > 0 {
		return nil, apperr.Invalid("the order chooses decors its products do not have", fields...)
	}
	return out, nil
}
