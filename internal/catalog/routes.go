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
	"github.com/tsekh/tsekh/internal/platform/page"
)

// Limits of a route.
const (
	MaxOperations = 50
	MaxOpMinutes  = 10000
)

// Kinds lists the product kinds.
var Kinds = []string{KindCase, KindUpholstered}

// RouteInput is the content of a route template, for creating or replacing one.
type RouteInput struct {
	Name       string
	Kind       string
	Operations []OperationInput // in order; seq is their position, from 1
}

// OperationInput is one operation of a RouteInput.
type OperationInput struct {
	Name         string
	WorkCenterID int64
	Scope        string
	Minutes      float64
}

// validate normalises the input and returns EINVALID naming every field at
// fault; it checks the work centres through tx.
func (in *RouteInput) validate(ctx context.Context, tx *gorm.DB) error {
	var fields []apperr.FieldError
	in.Name = strings.TrimSpace(in.Name)
	fields = append(fields, checkName("name", in.Name)...)
	if !validKind(in.Kind) {
		fields = append(fields, apperr.Field("kind", "must be %s", strings.Join(Kinds, " or ")))
	}
	switch {
	case len(in.Operations) == 0:
		fields = append(fields, apperr.Field("operations", "must list at least one operation"))
	case len(in.Operations) > MaxOperations:
		fields = append(fields, apperr.Field("operations", "must list at most %d operations", MaxOperations))
	}
	centers, err := AllWorkCenters(ctx, tx)
	if err != nil {
		return err
	}
	for i := range in.Operations {
		op := &in.Operations[i]
		at := func(f string) string { return fmt.Sprintf("operations[%d].%s", i, f) }
		op.Name = strings.TrimSpace(op.Name)
		fields = append(fields, checkName(at("name"), op.Name)...)
		if _, ok := centers[op.WorkCenterID]; !ok {
			fields = append(fields, apperr.Field(at("work_center_id"), "no work centre has the id %d", op.WorkCenterID))
		}
		if op.Scope != ScopePart && op.Scope != ScopeItem {
			fields = append(fields, apperr.Field(at("scope"), "must be %s (once per physical part) or %s (once per unit)", ScopePart, ScopeItem))
		}
		if op.Minutes <= 0 || op.Minutes > MaxOpMinutes {
			fields = append(fields, apperr.Field(at("minutes"), "must be more than 0 and at most %d", MaxOpMinutes))
		}
	}
	if len(fields) > 0 {
		return apperr.Invalid("the route is not valid", fields...)
	}
	return nil
}

func validKind(k string) bool { return k == KindCase || k == KindUpholstered }

func (in RouteInput) operations(routeID int64) []Operation {
	ops := make([]Operation, len(in.Operations))
	for i, op := range in.Operations {
		ops[i] = Operation{RouteID: routeID, Seq: i + 1, Name: op.Name, WorkCenterID: op.WorkCenterID, Scope: op.Scope, Minutes: op.Minutes}
	}
	return ops
}

func withOperations(db *gorm.DB) *gorm.DB {
	return db.Preload("Operations", func(db *gorm.DB) *gorm.DB { return db.Order("seq") })
}

// Routes returns a page of route templates with their operations, in id order.
func (s *Service) Routes(ctx context.Context, pr page.Request) ([]Route, string, error) {
	var rs []Route
	err := withOperations(s.db.WithContext(ctx)).Where("id > ?", pr.After).Order("id").Limit(pr.Limit + 1).Find(&rs).Error
	if err != nil {
		return nil, "", err
	}
	rs, next := page.Next(rs, pr.Limit, func(r Route) int64 { return r.ID })
	return rs, next, nil
}

// Route returns the route with its operations, or ENOTFOUND.
func (s *Service) Route(ctx context.Context, id int64) (Route, error) {
	return RouteByID(ctx, s.db, id)
}

// RouteByID returns the route with its operations in order, read through db
// (which may be the caller's transaction), or ENOTFOUND.
func RouteByID(ctx context.Context, db *gorm.DB, id int64) (Route, error) {
	var r Route
	err := withOperations(db.WithContext(ctx)).First(&r, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return r, apperr.NotFound("route %d does not exist", id)
	}
	return r, err
}

// CreateRoute validates and stores a route template with its operations and
// its route.created event. It returns EINVALID for bad input (unknown work
// centres included) and ECONFLICT when the name is taken.
func (s *Service) CreateRoute(ctx context.Context, in RouteInput) (Route, error) {
	var r Route
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := in.validate(ctx, tx); err != nil {
			return err
		}
		r = Route{Name: in.Name, Kind: in.Kind}
		if err := tx.Omit("ID", "Operations").Create(&r).Error; err != nil {
			return nameTaken(err, in.Name)
		}
		r.Operations = in.operations(r.ID)
		if err := tx.Create(&r.Operations).Error; err != nil {
			return err
		}
		return events.Add(ctx, tx, contracts.RouteCreated.New(r.ID, routePayload(r)))
	})
	return r, err
}

// UpdateRoute replaces the route's name, kind and operations and writes
// route.updated. It returns ENOTFOUND, EINVALID, or ECONFLICT when the name is
// another route's. Production orders already launched keep the operations
// they were exploded into.
func (s *Service) UpdateRoute(ctx context.Context, id int64, in RouteInput) (Route, error) {
	var r Route
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.First(&r, id).Error; errors.Is(err, gorm.ErrRecordNotFound) {
			return apperr.NotFound("route %d does not exist", id)
		} else if err != nil {
			return err
		}
		if err := in.validate(ctx, tx); err != nil {
			return err
		}
		if in.Kind != r.Kind {
			var n int64
			if err := tx.Model(&Product{}).Where("route_id = ? AND kind <> ?", id, in.Kind).Count(&n).Error; err != nil {
				return err
			}
			if n > 0 {
				return apperr.Invalid("the route is not valid", apperr.Field("kind", "%d products of another kind use this route", n))
			}
		}
		r.Name, r.Kind = in.Name, in.Kind
		if err := tx.Omit("Operations").Save(&r).Error; err != nil {
			return nameTaken(err, in.Name)
		}
		if err := tx.Where("route_id = ?", id).Delete(&Operation{}).Error; err != nil {
			return err
		}
		r.Operations = in.operations(r.ID)
		if err := tx.Create(&r.Operations).Error; err != nil {
			return err
		}
		return events.Add(ctx, tx, contracts.RouteUpdated.New(r.ID, routePayload(r)))
	})
	return r, err
}

// OpsByScope counts the route's part-scope and item-scope operations.
func (r Route) OpsByScope() (part, item int) {
	for _, op := range r.Operations {
		if op.Scope == ScopePart {
			part++
		} else {
			item++
		}
	}
	return part, item
}

func nameTaken(err error, name string) error {
	if database.IsUniqueViolation(err) {
		return apperr.Conflict("a route named %q exists already", name)
	}
	return err
}
