package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// Limits of a product; the SKU's length is in characters.
const (
	MaxSKULen    = input.MaxSKU
	MaxPartLines = 200
	MaxPartQty   = 1000
	MaxDimension = 10000 // millimetres
)

// ProductInput is the content of a product, for creating or replacing one.
type ProductInput struct {
	SKU     string
	Name    string
	Kind    string
	RouteID int64
	Parts   []PartInput
	// Slots and Fittings are optional: a product whose parts all name
	// their boards has no slots.
	Slots    []SlotInput
	Fittings []FittingInput
}

// PartInput is one line of a ProductInput's parts specification.
type PartInput struct {
	Name        string
	Material    string
	LengthMM    int
	WidthMM     int
	ThicknessMM int // 0: the board's
	Edging      string
	Qty         int
	Board       string // a board's code
	Slot        string // or a decor slot's name
	Grain       string // length, width or none; "": length on a board with grain, else none
	Edges       Edges
}

func (in *ProductInput) validate(ctx context.Context, tx *gorm.DB) error {
	var fields []apperr.FieldError
	in.SKU, in.Name = strings.TrimSpace(in.SKU), strings.TrimSpace(in.Name)
	fields = append(fields, input.RequiredLine("sku", in.SKU, MaxSKULen)...)
	fields = append(fields, checkName("name", in.Name)...)
	if !validKind(in.Kind) {
		fields = append(fields, apperr.Field("kind", "must be %s", strings.Join(Kinds, " or ")))
	}
	var r Route
	switch err := tx.WithContext(ctx).First(&r, in.RouteID).Error; {
	case errors.Is(err, gorm.ErrRecordNotFound):
		fields = append(fields, apperr.Field("route_id", "no route has the id %d", in.RouteID))
	case err != nil:
		return err
	case validKind(in.Kind) && r.Kind != in.Kind:
		fields = append(fields, apperr.Field("route_id", "route %q is for %s products, not %s", r.Name, r.Kind, in.Kind))
	}
	switch {
	case len(in.Parts) == 0:
		fields = append(fields, apperr.Field("parts", "must list at least one part"))
	case len(in.Parts) > MaxPartLines:
		fields = append(fields, apperr.Field("parts", "must list at most %d parts", MaxPartLines))
	}
	for i := range in.Parts {
		p := &in.Parts[i]
		at := func(f string) string { return fmt.Sprintf("parts[%d].%s", i, f) }
		p.Name, p.Material, p.Edging = strings.TrimSpace(p.Name), strings.TrimSpace(p.Material), strings.TrimSpace(p.Edging)
		fields = append(fields, checkName(at("name"), p.Name)...)
		fields = append(fields, input.Line(at("material"), p.Material, MaxNameLen)...)
		if strings.TrimSpace(p.Material+p.Board+p.Slot) == "" {
			fields = append(fields, apperr.Field(at("material"), "is required: name the part's board (board, its code), a decor slot of the product (slot), or a board by its name (material)"))
		}
		fields = append(fields, input.Line(at("edging"), p.Edging, MaxNameLen)...)
		for f, v := range map[string]int{"length_mm": p.LengthMM, "width_mm": p.WidthMM} {
			if v < 1 || v > MaxDimension {
				fields = append(fields, apperr.Field(at(f), "must be a whole number of millimetres from 1 to %d", MaxDimension))
			}
		}
		if p.ThicknessMM < 0 || p.ThicknessMM > MaxDimension {
			fields = append(fields, apperr.Field(at("thickness_mm"), "must be a whole number of millimetres from 1 to %d, or absent for the board's", MaxDimension))
		}
		if p.Qty < 1 || p.Qty > MaxPartQty {
			fields = append(fields, apperr.Field(at("qty"), "must be a whole number from 1 to %d", MaxPartQty))
		}
	}
	if len(fields) == 0 {
		more, err := in.checkMaterials(ctx, tx)
		if err != nil {
			return err
		}
		fields = append(fields, more...)
	}
	if len(fields) > 0 {
		return apperr.Invalid("the product is not valid", fields...)
	}
	return nil
}

func (in ProductInput) parts(productID int64) []Part {
	out := make([]Part, len(in.Parts))
	for i, p := range in.Parts {
		out[i] = Part{ProductID: productID, Seq: i + 1, Name: p.Name, Material: p.Material, Board: p.Board, Slot: p.Slot, LengthMM: p.LengthMM,
			WidthMM: p.WidthMM, ThicknessMM: p.ThicknessMM, Grain: p.Grain, Edges: p.Edges, Edging: p.Edging, Qty: p.Qty}
	}
	return out
}

// CreateProduct validates and stores a product with its parts specification
// and its product.created event. It returns EINVALID for bad input (an
// unknown route, or a route of another kind, included) and ECONFLICT when the
// SKU is taken.
func (s *Service) CreateProduct(ctx context.Context, in ProductInput) (Product, error) {
	var p Product
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := database.LockName(tx, specLock); err != nil {
			return err
		}
		if err := in.validate(ctx, tx); err != nil {
			return err
		}
		p = Product{SKU: in.SKU, Name: in.Name, Kind: in.Kind, RouteID: in.RouteID}
		if err := tx.Omit("ID", "Parts", "Slots", "Fittings").Create(&p).Error; err != nil {
			return skuTaken(err, in.SKU)
		}
		if err := in.saveSpec(tx, &p); err != nil {
			return err
		}
		return events.Add(ctx, tx, contracts.ProductCreated.New(p.ID, productPayload(p)))
	})
	return p, err
}

// UpdateProduct replaces the product's content and parts and writes
// product.updated. It returns ENOTFOUND, EINVALID, or ECONFLICT when the SKU
// is another product's. Items launched already keep the parts they were
// exploded into; items still waiting are exploded with the new parts.
func (s *Service) UpdateProduct(ctx context.Context, id int64, in ProductInput) (Product, error) {
	var p Product
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := database.LockName(tx, specLock); err != nil {
			return err
		}
		if err := tx.First(&p, id).Error; errors.Is(err, gorm.ErrRecordNotFound) {
			return apperr.NotFound("product %d does not exist", id)
		} else if err != nil {
			return err
		}
		if err := in.validate(ctx, tx); err != nil {
			return err
		}
		p.SKU, p.Name, p.Kind, p.RouteID = in.SKU, in.Name, in.Kind, in.RouteID
		if err := tx.Omit("Parts", "Slots", "Fittings").Save(&p).Error; err != nil {
			return skuTaken(err, in.SKU)
		}
		for _, table := range []any{&Part{}, &Slot{}, &ProductFitting{}} {
			if err := tx.Where("product_id = ?", id).Delete(table).Error; err != nil {
				return err
			}
		}
		if err := in.saveSpec(tx, &p); err != nil {
			return err
		}
		return events.Add(ctx, tx, contracts.ProductUpdated.New(p.ID, productPayload(p)))
	})
	return p, err
}

func skuTaken(err error, sku string) error {
	if database.IsUniqueViolation(err) {
		return apperr.Conflict("a product with the SKU %q exists already", sku)
	}
	return err
}

// ProductSpecs returns the products with the SKUs and their parts in order,
// keyed by SKU, read through db (which may be the caller's transaction);
// unknown SKUs are absent.
func ProductSpecs(ctx context.Context, db *gorm.DB, skus []string) (map[string]Product, error) {
	out := map[string]Product{}
	if len(skus) == 0 {
		return out, nil
	}
	var ps []Product
	err := db.WithContext(ctx).Scopes(withSpec).
		Where("sku IN ?", skus).Find(&ps).Error
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		out[p.SKU] = p
	}
	return out, nil
}
