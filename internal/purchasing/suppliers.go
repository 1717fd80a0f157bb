// Package purchasing owns what the factory buys and from whom: suppliers
// with their terms per material (their code, price, lead time in working
// days, minimum order and pack), purchase orders and their lines, the
// receipts delivered against them, and the proposals of what to buy, per
// supplier, from the shortages (docs/planning.md, "Purchasing"). Stock is
// booked through the stock module in the same transaction (stock.ReceiveTx).
package purchasing

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/platform/page"
	"github.com/tsekh/tsekh/internal/stock"
)

// Limits of a supplier's terms.
const (
	MaxTerms    = 500
	MaxPrice    = 100_000_000
	MaxLeadDays = 365
	MaxQty      = stock.MaxQty
)

// Service keeps suppliers and purchase orders.
type Service struct {
	db    *gorm.DB
	stock *stock.Service
}

// NewService returns the purchasing service over db, booking receipts into
// st.
func NewService(db *gorm.DB, st *stock.Service) *Service { return &Service{db: db, stock: st} }

// Supplier is a company the factory buys materials from, with its terms per
// material.
type Supplier struct {
	ID      int64  `json:"id" gorm:"primaryKey" example:"1"`
	Name    string `json:"name" example:"ООО «Плита»"`
	Contact string `json:"contact" example:"Сергей Иванов"`
	Phone   string `json:"phone" example:"+7 900 555-12-12"`
	Email   string `json:"email" example:"zakaz@plita.example"`
	Note    string `json:"note" example:"доставка по вторникам"`
	// Materials are its terms, per material of the catalogue, in code order.
	Materials []Terms `json:"materials" gorm:"-"`
}

// TableName is purchasing's supplier table.
func (Supplier) TableName() string { return "purchasing_suppliers" }

// Terms are what a supplier sells a material on.
type Terms struct {
	SupplierID int64 `json:"-" gorm:"primaryKey"`
	// Code is the material's code in the catalogue.
	Code string `json:"code" gorm:"primaryKey" example:"LDSP16-SONOMA"`
	// SupplierCode is the supplier's own article for it.
	SupplierCode string `json:"supplier_code" example:"EG-H1145-16"`
	// Price is per unit of the material (a sheet, a metre, a piece).
	Price float64 `json:"price" example:"3150"`
	// LeadDays is how many working days an order takes to arrive.
	LeadDays int `json:"lead_days" example:"5"`
	// MinQty is the least it takes an order for, in the material's unit.
	MinQty float64 `json:"min_qty" example:"10"`
	// PackQty is what it sells in: sheets in a pack, metres in a roll; 0 or
	// 1: any whole quantity (metres to the centimetre).
	PackQty float64 `json:"pack_qty" example:"5"`
}

// TableName is purchasing's table of suppliers' terms.
func (Terms) TableName() string { return "purchasing_supplier_materials" }

// SupplierInput is a supplier's content for creating or replacing it.
type SupplierInput struct {
	Name, Contact, Phone, Email, Note string
	Materials                         []Terms
}

// validate normalises in and returns EINVALID naming the fields at fault:
// name required, materials[i].code a material of the catalogue named once,
// price, lead_days, min_qty and pack_qty within their bounds (min_qty and
// pack_qty on the material's step).
func (in *SupplierInput) validate(ctx context.Context, tx *gorm.DB) error {
	in.Name, in.Contact, in.Phone, in.Email = strings.TrimSpace(in.Name), strings.TrimSpace(in.Contact), strings.TrimSpace(in.Phone), strings.TrimSpace(in.Email)
	fields := input.RequiredLine("name", in.Name, input.MaxName)
	fields = append(fields, input.Line("contact", in.Contact, input.MaxName)...)
	fields = append(fields, input.Line("phone", in.Phone, input.MaxPhone)...)
	if in.Email != "" {
		fields = append(fields, input.Email("email", in.Email)...)
	}
	fields = append(fields, input.Note("note", in.Note, input.MaxNote)...)
	if len(in.Materials) > MaxTerms {
		fields = append(fields, apperr.Field("materials", "must list at most %d materials", MaxTerms))
		return apperr.Invalid("the supplier is not valid", fields...)
	}
	codes := make([]string, len(in.Materials))
	for i, t := range in.Materials {
		codes[i] = input.NormalCode(t.Code)
	}
	known, err := catalog.MaterialsByCode(ctx, tx, codes)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for i := range in.Materials {
		t := &in.Materials[i]
		at := func(f string) string { return fmt.Sprintf("materials[%d].%s", i, f) }
		m, ok := known[input.CodeKey(codes[i])]
		switch {
		case codes[i] == "":
			fields = append(fields, apperr.Field(at("code"), "is required"))
		case !ok:
			fields = append(fields, apperr.Field(at("code"), "no material has the code %q", t.Code))
		case seen[m.Code]:
			fields = append(fields, apperr.Field(at("code"), "repeats %q: give its terms once", t.Code))
		default:
			seen[m.Code], t.Code = true, m.Code
		}
		t.SupplierCode = strings.TrimSpace(t.SupplierCode)
		fields = append(fields, input.Line(at("supplier_code"), t.SupplierCode, input.MaxSKU)...)
		if bad(t.Price) || t.Price < 0 || t.Price > MaxPrice {
			fields = append(fields, apperr.Field(at("price"), "must be from 0 to %d", MaxPrice))
		}
		if t.LeadDays < 0 || t.LeadDays > MaxLeadDays {
			fields = append(fields, apperr.Field(at("lead_days"), "must be from 0 to %d working days", MaxLeadDays))
		}
		for _, q := range []struct {
			f string
			v *float64
		}{{"min_qty", &t.MinQty}, {"pack_qty", &t.PackQty}} {
			switch v, on := catalog.OnStep(m.Unit, *q.v); {
			case bad(*q.v) || *q.v < 0 || *q.v > MaxQty:
				fields = append(fields, apperr.Field(at(q.f), "must be from 0 to %d", MaxQty))
			case ok && !on:
				fields = append(fields, apperr.Field(at(q.f), "%s is counted in %s", m.Code, catalog.StepText(m.Unit)))
			default:
				*q.v = v
			}
		}
	}
	if len(fields) > 0 {
		return apperr.Invalid("the supplier is not valid", fields...)
	}
	return nil
}

func bad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

// CreateSupplier adds a supplier with its terms and writes supplier.created;
// EINVALID as SupplierInput's validation says, nothing written then.
func (s *Service) CreateSupplier(ctx context.Context, in SupplierInput) (Supplier, error) {
	var out Supplier
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := in.validate(ctx, tx); err != nil {
			return err
		}
		sup := Supplier{Name: in.Name, Contact: in.Contact, Phone: in.Phone, Email: in.Email, Note: in.Note}
		if err := tx.Omit("ID").Create(&sup).Error; err != nil {
			return err
		}
		var err error
		if out, err = putTerms(ctx, tx, sup, in.Materials); err != nil {
			return err
		}
		return events.Add(ctx, tx, contracts.SupplierCreated.New(out.ID, supplierPayload(out)))
	})
	return out, err
}

// UpdateSupplier replaces the supplier's content and terms and writes
// supplier.updated; ENOTFOUND for no such supplier, EINVALID as
// CreateSupplier.
func (s *Service) UpdateSupplier(ctx context.Context, id int64, in SupplierInput) (Supplier, error) {
	var out Supplier
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := supplierTx(ctx, tx, id); err != nil {
			return err
		}
		if err := in.validate(ctx, tx); err != nil {
			return err
		}
		sup := Supplier{ID: id, Name: in.Name, Contact: in.Contact, Phone: in.Phone, Email: in.Email, Note: in.Note}
		if err := tx.Model(&Supplier{}).Where("id = ?", id).Updates(map[string]any{"name": sup.Name, "contact": sup.Contact,
			"phone": sup.Phone, "email": sup.Email, "note": sup.Note}).Error; err != nil {
			return err
		}
		if err := tx.Where("supplier_id = ?", id).Delete(&Terms{}).Error; err != nil {
			return err
		}
		var err error
		if out, err = putTerms(ctx, tx, sup, in.Materials); err != nil {
			return err
		}
		return events.Add(ctx, tx, contracts.SupplierUpdated.New(out.ID, supplierPayload(out)))
	})
	return out, err
}

func putTerms(ctx context.Context, tx *gorm.DB, sup Supplier, terms []Terms) (Supplier, error) {
	for i := range terms {
		terms[i].SupplierID = sup.ID
	}
	if len(terms) > 0 {
		if err := tx.WithContext(ctx).Create(&terms).Error; err != nil {
			return Supplier{}, err
		}
	}
	return supplierTx(ctx, tx, sup.ID)
}

// Supplier returns the supplier with its terms; ENOTFOUND when there is none.
func (s *Service) Supplier(ctx context.Context, id int64) (Supplier, error) {
	return supplierTx(ctx, s.db, id)
}

func supplierTx(ctx context.Context, db *gorm.DB, id int64) (Supplier, error) {
	var sup Supplier
	if err := db.WithContext(ctx).First(&sup, id).Error; errors.Is(err, gorm.ErrRecordNotFound) {
		return Supplier{}, apperr.NotFound("supplier %d not found", id)
	} else if err != nil {
		return Supplier{}, err
	}
	sup.Materials = []Terms{}
	err := db.WithContext(ctx).Where("supplier_id = ?", id).Order("code").Find(&sup.Materials).Error
	return sup, err
}

// Suppliers returns a page of suppliers in id order, each with its terms;
// of those selling the material when code is set.
func (s *Service) Suppliers(ctx context.Context, code string, pr page.Request) ([]Supplier, string, error) {
	var sups []Supplier
	q := s.db.WithContext(ctx).Where("id > ?", pr.After)
	if code != "" {
		q = q.Where("id IN (SELECT supplier_id FROM purchasing_supplier_materials WHERE lower(code) = ?)", input.CodeKey(code))
	}
	if err := q.Order("id").Limit(pr.Limit + 1).Find(&sups).Error; err != nil {
		return nil, "", err
	}
	ids := make([]int64, len(sups))
	for i, sp := range sups {
		ids[i] = sp.ID
	}
	var terms []Terms
	if len(ids) > 0 {
		if err := s.db.WithContext(ctx).Where("supplier_id IN ?", ids).Order("code").Find(&terms).Error; err != nil {
			return nil, "", err
		}
	}
	by := map[int64][]Terms{}
	for _, t := range terms {
		by[t.SupplierID] = append(by[t.SupplierID], t)
	}
	for i := range sups {
		sups[i].Materials = by[sups[i].ID]
		if sups[i].Materials == nil {
			sups[i].Materials = []Terms{}
		}
	}
	out, next := page.Next(sups, pr.Limit, func(sp Supplier) int64 { return sp.ID })
	return out, next, nil
}

func supplierPayload(sp Supplier) contracts.SupplierPayload {
	p := contracts.SupplierPayload{SupplierID: sp.ID, Name: sp.Name, Materials: []contracts.SupplierTerms{}}
	for _, t := range sp.Materials {
		p.Materials = append(p.Materials, contracts.SupplierTerms{Code: t.Code, SupplierCode: t.SupplierCode, Price: t.Price,
			LeadDays: t.LeadDays, MinQty: t.MinQty, PackQty: t.PackQty})
	}
	return p
}
