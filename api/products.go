package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/catalog"
)

// PartRequest is one line of a product's parts specification. It names its
// board (board, a code of /api/v1/materials) or a decor slot of the product
// (slot); a part naming neither is matched to a board by material, the
// board's code or name (as parts were given before boards existed).
type PartRequest struct {
	Name string `json:"name" maxLength:"200" example:"Боковина"`
	// A board by its code or name, when neither board nor slot is given; the board's name when absent.
	Material string `json:"material" validate:"optional" maxLength:"200" example:"ЛДСП 16 мм Белый"`
	// The code of the part's board.
	Board string `json:"board" validate:"optional" maxLength:"32" example:"LDSP16-WHITE"`
	// A decor slot of the product (slots[].name), whose board the ordered item chooses.
	Slot     string `json:"slot" validate:"optional" maxLength:"200" example:"корпус"`
	LengthMM int    `json:"length_mm" minimum:"1" maximum:"10000" example:"2200"`
	WidthMM  int    `json:"width_mm" minimum:"1" maximum:"10000" example:"600"`
	// The board's thickness when absent; when given, it must be the board's.
	ThicknessMM int `json:"thickness_mm" validate:"optional" minimum:"0" maximum:"10000" example:"16"`
	// The decor's grain on the part: along its length, its width, or none; length on a board with grain when absent, else none.
	Grain string `json:"grain" validate:"optional" enums:"length,width,none" example:"length"`
	// The band of each side: l1, l2 along the length, w1, w2 along the width; each empty, an edge band's code, match (the board's first matching band) or match:T (its matching band T mm thick).
	Edges  EdgesRequest `json:"edges" validate:"optional"`
	Edging string       `json:"edging" validate:"optional" maxLength:"200" example:"ПВХ 2 мм, 1 сторона"`
	Qty    int          `json:"qty" minimum:"1" maximum:"1000" example:"2"`
}

// EdgesRequest is the band of each side of a part.
type EdgesRequest struct {
	L1 string `json:"l1" validate:"optional" maxLength:"40" example:"match:2"`
	L2 string `json:"l2" validate:"optional" maxLength:"40" example:""`
	W1 string `json:"w1" validate:"optional" maxLength:"40" example:"match:0.4"`
	W2 string `json:"w2" validate:"optional" maxLength:"40" example:""`
}

// SlotRequest is a decor slot of a product.
type SlotRequest struct {
	Name string `json:"name" maxLength:"200" example:"корпус"`
	// The codes of the boards an item may choose.
	Boards []string `json:"boards" validate:"required,min=1,max=50" maxLength:"32" example:"LDSP16-WHITE,LDSP16-SONOMA"`
	// The board of an item that chooses none; the first of boards when absent.
	Default string `json:"default" validate:"optional" maxLength:"32" example:"LDSP16-WHITE"`
}

// FittingRequest is a fitting one unit of a product needs.
type FittingRequest struct {
	Code string `json:"code" maxLength:"32" example:"HINGE-110"`
	Qty  int    `json:"qty" minimum:"1" maximum:"1000" example:"4"`
}

// ProductRequest is the body of POST /api/v1/products and PUT /api/v1/products/{id}.
type ProductRequest struct {
	// Read-only: the product's id, accepted when it is the one at the path (refused on a create).
	ID      *int64        `json:"id" validate:"optional" minimum:"1" example:"1"`
	SKU     string        `json:"sku" maxLength:"64" example:"SHK-KUPE-1600"`
	Name    string        `json:"name" maxLength:"200" example:"Шкаф-купе двухдверный 1600"`
	Kind    string        `json:"kind" enums:"case,upholstered" example:"case"`
	RouteID int64         `json:"route_id" minimum:"1" example:"1"`
	Parts   []PartRequest `json:"parts" validate:"required,min=1,max=200"`
	// The product's decor slots (корпус, фасад, задняя стенка).
	Slots []SlotRequest `json:"slots" validate:"optional,max=20"`
	// The fittings one unit needs.
	Fittings []FittingRequest `json:"fittings" validate:"optional,max=100"`
}

func (r ProductRequest) input() catalog.ProductInput {
	in := catalog.ProductInput{SKU: r.SKU, Name: r.Name, Kind: r.Kind, RouteID: r.RouteID, Parts: make([]catalog.PartInput, len(r.Parts))}
	for i, p := range r.Parts {
		in.Parts[i] = catalog.PartInput{Name: p.Name, Material: p.Material, Board: p.Board, Slot: p.Slot, LengthMM: p.LengthMM, WidthMM: p.WidthMM,
			ThicknessMM: p.ThicknessMM, Grain: p.Grain, Edges: catalog.Edges{L1: p.Edges.L1, L2: p.Edges.L2, W1: p.Edges.W1, W2: p.Edges.W2},
			Edging: p.Edging, Qty: p.Qty}
	}
	for _, sl := range r.Slots {
		in.Slots = append(in.Slots, catalog.SlotInput{Name: sl.Name, Boards: sl.Boards, Default: sl.Default})
	}
	for _, f := range r.Fittings {
		in.Fittings = append(in.Fittings, catalog.FittingInput{Code: f.Code, Qty: f.Qty})
	}
	return in
}

// createProduct godoc
//
//	@Summary		Create a product (admin, planner)
//	@ID			createProduct
//	@Description	Writes product.created. The SKU is unique; the default route must be one for the product's kind.
//	@Tags			catalog
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		ProductRequest	true	"the product"
//	@Success		201		{object}	catalog.Product
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		409		{object}	Problem	"the SKU is taken"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/products [post]
func (s *server) createProduct(c echo.Context) error {
	var req ProductRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := readOnlyRefused(readOnlyID(req.ID, 0)); err != nil {
		return err
	}
	p, err := s.Catalog.CreateProduct(c.Request().Context(), req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, p)
}

// updateProduct godoc
//
//	@Summary		Replace a product (admin, planner)
//	@ID			updateProduct
//	@Description	Writes product.updated. Items launched already keep the parts they were exploded into; items still waiting are launched with the new parts.
//	@Tags			catalog
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int				true	"product id"	minimum(1) example(1)
//	@Param			body	body		ProductRequest	true	"the product"
//	@Success		200		{object}	catalog.Product
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"the SKU is another product's"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/products/{id} [put]
func (s *server) updateProduct(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req ProductRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := readOnlyRefused(readOnlyID(req.ID, id)); err != nil {
		return err
	}
	p, err := s.Catalog.UpdateProduct(c.Request().Context(), id, req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}
