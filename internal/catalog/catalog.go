// Package catalog owns what the factory makes and how: work centres with
// their capacity and calendar, route templates with ordered operations, and
// products with their parts specification.
package catalog

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// Product kinds.
const (
	KindCase        = "case"        // case furniture from laminated chipboard (Корпус ЛДСП)
	KindUpholstered = "upholstered" // upholstered furniture (Мягкая мебель)
)

// Operation scopes.
const (
	ScopePart = "part" // done once for every physical part
	ScopeItem = "item" // done once per ordered unit
)

// WorkCenter is a machine or team with a daily capacity and a calendar.
type WorkCenter struct {
	ID                int64  `json:"id" gorm:"primaryKey"`
	Code              string `json:"code"`
	Name              string `json:"name"`
	CapacityMinPerDay int    `json:"capacity_min_per_day"`
	// ShiftStart is when its day's capacity starts, "HH:MM" in the
	// factory's time zone (FACTORY_TIMEZONE).
	ShiftStart string   `json:"shift_start" example:"08:00"`
	Calendar   Calendar `json:"calendar" gorm:"embedded"`
	// CodeDuplicate marks a centre whose code repeats, in another case, the
	// code of one created before codes were one regardless of case
	// (migration 00018): rename it. Absent on every other centre.
	CodeDuplicate bool `json:"code_duplicate,omitempty" validate:"optional"`
}

// TableName is the catalog's work-centre table.
func (WorkCenter) TableName() string { return "catalog_work_centers" }

// Calendar says on which days a work centre works.
type Calendar struct {
	Weekdays IntList    `json:"weekdays" gorm:"column:weekdays"` // ISO weekdays, 1 = Monday … 7 = Sunday
	Holidays StringList `json:"holidays" gorm:"column:holidays"` // "YYYY-MM-DD"
}

// Route is a route template: the ordered operations that make a product.
type Route struct {
	ID         int64       `json:"id" gorm:"primaryKey"`
	Name       string      `json:"name"`
	Kind       string      `json:"kind"`
	Operations []Operation `json:"operations" gorm:"foreignKey:RouteID"`
}

// TableName is the catalog's route table.
func (Route) TableName() string { return "catalog_routes" }

// Operation is one step of a route.
type Operation struct {
	RouteID      int64   `json:"-" gorm:"primaryKey"`
	Seq          int     `json:"seq" gorm:"primaryKey"`
	Name         string  `json:"name"`
	WorkCenterID int64   `json:"work_center_id"`
	Scope        string  `json:"scope"`
	Minutes      float64 `json:"minutes"`
}

// TableName is the catalog's route-operation table.
func (Operation) TableName() string { return "catalog_route_operations" }

// Product is something the factory sells, with its default route, parts,
// decor slots and fittings.
type Product struct {
	ID      int64  `json:"id" gorm:"primaryKey"`
	SKU     string `json:"sku" gorm:"column:sku"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	RouteID int64  `json:"route_id"`
	Parts   []Part `json:"parts" gorm:"foreignKey:ProductID"`
	// Slots are the product's decor slots (корпус, фасад, задняя стенка):
	// an ordered item chooses a board for each among those allowed.
	Slots []Slot `json:"slots" gorm:"foreignKey:ProductID"`
	// Fittings are the fittings one unit needs.
	Fittings []ProductFitting `json:"fittings" gorm:"foreignKey:ProductID"`
}

// TableName is the catalog's product table.
func (Product) TableName() string { return "catalog_products" }

// Part grains: the direction of the decor's grain on the part.
const (
	GrainLength = "length" // along the part's length
	GrainWidth  = "width"  // along the part's width
	GrainNone   = "none"   // either way (a board without grain, or it does not matter)
)

// Grains are the part grains, in the order the API names them.
var Grains = []string{GrainLength, GrainWidth, GrainNone}

// Part is one line of a product's parts specification.
type Part struct {
	ProductID int64  `json:"-" gorm:"primaryKey"`
	Seq       int    `json:"-" gorm:"primaryKey"`
	Name      string `json:"name"`
	// Material is the board's name as text (for a slot, its default
	// board's), as before parts named boards.
	Material string `json:"material"`
	// Board is the code of the part's board; empty when a slot chooses it.
	Board string `json:"board" example:"LDSP16-WHITE"`
	// Slot is the decor slot whose board the ordered item chooses; empty
	// when the part names its board.
	Slot        string `json:"slot" example:"корпус"`
	LengthMM    int    `json:"length_mm" gorm:"column:length_mm"`
	WidthMM     int    `json:"width_mm" gorm:"column:width_mm"`
	ThicknessMM int    `json:"thickness_mm" gorm:"column:thickness_mm"`
	// Grain: along the part's length, its width, or none.
	Grain string `json:"grain" enums:"length,width,none" example:"length"`
	// Edges are the edge bands of its sides.
	Edges Edges `json:"edges" gorm:"embedded;embeddedPrefix:edge_"`
	// Edging describes the banding as text.
	Edging string `json:"edging"`
	Qty    int    `json:"qty"`
}

// TableName is the catalog's part table.
func (Part) TableName() string { return "catalog_product_parts" }

// Edges are what bands a part's sides: l1 and l2 along its length, w1 and
// w2 along its width. Each is empty (none), an edge band's code, "match"
// (the first matching band of the part's board) or "match:T" (its matching
// band T mm thick, e.g. match:2, match:0.4).
type Edges struct {
	L1 string `json:"l1" gorm:"column:l1" example:"match:2"`
	L2 string `json:"l2" gorm:"column:l2" example:""`
	W1 string `json:"w1" gorm:"column:w1" example:"match:0.4"`
	W2 string `json:"w2" gorm:"column:w2" example:""`
}

// Sides are the edges with their names, in order.
func (e Edges) Sides() [4]struct{ Side, Band string } {
	return [4]struct{ Side, Band string }{{"l1", e.L1}, {"l2", e.L2}, {"w1", e.W1}, {"w2", e.W2}}
}

// Slot is a decor slot of a product.
type Slot struct {
	ProductID int64  `json:"-" gorm:"primaryKey"`
	Seq       int    `json:"-" gorm:"primaryKey"`
	Name      string `json:"name" example:"корпус"`
	// Boards are the codes of the boards an item may choose.
	Boards StringList `json:"boards" example:"LDSP16-WHITE,LDSP16-SONOMA"`
	// Default is the board of an item that chooses none.
	Default string `json:"default" gorm:"column:default_board" example:"LDSP16-WHITE"`
}

// TableName is the catalog's decor-slot table.
func (Slot) TableName() string { return "catalog_product_slots" }

// ProductFitting is a fitting one unit of a product needs.
type ProductFitting struct {
	ProductID int64  `json:"-" gorm:"primaryKey"`
	Seq       int    `json:"-" gorm:"primaryKey"`
	Code      string `json:"code" example:"HINGE-110"`
	Qty       int    `json:"qty" example:"4"`
}

// TableName is the catalog's product-fitting table.
func (ProductFitting) TableName() string { return "catalog_product_fittings" }

// PartsPerUnit is the number of physical parts in one unit of the product.
func (p Product) PartsPerUnit() int {
	n := 0
	for _, part := range p.Parts {
		n += part.Qty
	}
	return n
}

// Service reads and changes the catalog.
type Service struct{ db *gorm.DB }

// NewService returns the catalog service over db.
func NewService(db *gorm.DB) *Service { return &Service{db: db} }

// Products returns a page of products in id order.
func (s *Service) Products(ctx context.Context, pr page.Request) ([]Product, string, error) {
	var ps []Product
	err := s.db.WithContext(ctx).Scopes(withSpec).
		Where("id > ?", pr.After).Order("id").Limit(pr.Limit + 1).Find(&ps).Error
	if err != nil {
		return nil, "", err
	}
	ps, next := page.Next(ps, pr.Limit, func(p Product) int64 { return p.ID })
	return ps, next, nil
}

// Product returns the product with the id, or ENOTFOUND.
func (s *Service) Product(ctx context.Context, id int64) (Product, error) {
	var p Product
	err := s.db.WithContext(ctx).Scopes(withSpec).First(&p, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return p, apperr.NotFound("product %d does not exist", id)
	}
	return p, err
}

// ProductsBySKU returns the products with the SKUs, keyed by SKU; unknown
// SKUs are simply absent. It reads through db, which may be the caller's
// transaction.
func ProductsBySKU(ctx context.Context, db *gorm.DB, skus []string) (map[string]Product, error) {
	var ps []Product
	if len(skus) == 0 {
		return map[string]Product{}, nil
	}
	if err := db.WithContext(ctx).Where("sku IN ?", skus).Find(&ps).Error; err != nil {
		return nil, err
	}
	out := make(map[string]Product, len(ps))
	for _, p := range ps {
		out[p.SKU] = p
	}
	return out, nil
}

// RouteNames returns the names of the routes with the ids, keyed by id,
// read through db; unknown ids are absent.
func RouteNames(ctx context.Context, db *gorm.DB, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	var rs []Route
	if err := db.WithContext(ctx).Select("id", "name").Where("id IN ?", ids).Find(&rs).Error; err != nil {
		return nil, err
	}
	for _, r := range rs {
		out[r.ID] = r.Name
	}
	return out, nil
}

// SKUsOnRoute returns the SKUs of the products whose default route is the
// route, read through db.
func SKUsOnRoute(ctx context.Context, db *gorm.DB, routeID int64) ([]string, error) {
	var skus []string
	err := db.WithContext(ctx).Model(&Product{}).Where("route_id = ?", routeID).Order("sku").Pluck("sku", &skus).Error
	return skus, err
}

// withSpec preloads a product's parts, slots and fittings, in order.
func withSpec(db *gorm.DB) *gorm.DB {
	bySeq := func(db *gorm.DB) *gorm.DB { return db.Order("seq") }
	return db.Preload("Parts", bySeq).Preload("Slots", bySeq).Preload("Fittings", bySeq)
}
