package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/catalog"
)

// listProducts godoc
//
//	@Summary	Products with their parts specification
//	@ID		listProducts
//	@Description	Products in id order, each with its default route and parts specification.
//	@Tags		catalog
//	@Produce	json
//	@Security	BearerAuth
//	@Param		limit	query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param		cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9wcm9kdWN0cyIsImlkIjoxfQ)
//	@Success	200		{object}	ProductList
//	@Failure	401		{object}	Problem
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/products [get]
func (s *server) listProducts(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	ps, next, err := s.Catalog.Products(c.Request().Context(), pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, ps, next))
}

// getProduct godoc
//
//	@Summary	One product
//	@ID		getProduct
//	@Description	A product with its parts specification.
//	@Tags		catalog
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"product id"	minimum(1) example(1)
//	@Success	200	{object}	catalog.Product
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/products/{id} [get]
func (s *server) getProduct(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	p, err := s.Catalog.Product(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

// CalendarRequest says on which days a work centre works.
type CalendarRequest struct {
	// ISO weekdays, 1 = Monday … 7 = Sunday; Monday to Friday when absent.
	Weekdays []int `json:"weekdays" validate:"optional,max=7" example:"1,2,3,4,5"`
	// Days off, YYYY-MM-DD from 2000-01-01 to 2100-12-31.
	Holidays []string `json:"holidays" validate:"optional,max=1000" format:"date" example:"2026-12-31"`
}

// WorkCenterRequest is the body of POST /api/v1/work-centers and PUT /api/v1/work-centers/{id}.
type WorkCenterRequest struct {
	Code              string `json:"code" maxLength:"32" example:"CUT"`
	Name              string `json:"name" maxLength:"200" example:"Раскрой (форматно-раскроечный станок)"`
	CapacityMinPerDay int    `json:"capacity_min_per_day" minimum:"1" maximum:"1440" example:"960"`
	// When the day's capacity starts, HH:MM in the factory's time zone (FACTORY_TIMEZONE); 08:00 when absent.
	ShiftStart string          `json:"shift_start" validate:"optional" maxLength:"5" example:"08:00"`
	Calendar   CalendarRequest `json:"calendar" validate:"optional"`
}

func (r WorkCenterRequest) input() catalog.WorkCenterInput {
	return catalog.WorkCenterInput{Code: r.Code, Name: r.Name, CapacityMinPerDay: r.CapacityMinPerDay, ShiftStart: r.ShiftStart,
		Calendar: catalog.Calendar{Weekdays: r.Calendar.Weekdays, Holidays: r.Calendar.Holidays}}
}

// listWorkCenters godoc
//
//	@Summary	Work centres with their daily capacity and calendar
//	@ID			listWorkCenters
//	@Description	Work centres in id order, each with its capacity in minutes per working day and its calendar (working ISO weekdays, holidays).
//	@Tags		catalog
//	@Produce	json
//	@Security	BearerAuth
//	@Param		limit	query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param		cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS93b3JrLWNlbnRlcnMiLCJpZCI6MX0)
//	@Success	200		{object}	WorkCenterList
//	@Failure	401		{object}	Problem
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/work-centers [get]
func (s *server) listWorkCenters(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	wcs, next, err := s.Catalog.WorkCenters(c.Request().Context(), pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, wcs, next))
}

// getWorkCenter godoc
//
//	@Summary	One work centre
//	@ID			getWorkCenter
//	@Description	A work centre with its capacity and calendar.
//	@Tags		catalog
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"work centre id"	minimum(1) example(1)
//	@Success	200	{object}	catalog.WorkCenter
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/work-centers/{id} [get]
func (s *server) getWorkCenter(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	wc, err := s.Catalog.WorkCenter(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wc)
}

// createWorkCenter godoc
//
//	@Summary		Create a work centre (admin, planner)
//	@ID			createWorkCenter
//	@Description	Writes work_center.created. The code is unique.
//	@Tags			catalog
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		WorkCenterRequest	true	"the work centre"
//	@Success		201		{object}	catalog.WorkCenter
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		409		{object}	Problem	"the code is taken"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/work-centers [post]
func (s *server) createWorkCenter(c echo.Context) error {
	var req WorkCenterRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	wc, err := s.Catalog.CreateWorkCenter(c.Request().Context(), req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, wc)
}

// updateWorkCenter godoc
//
//	@Summary		Replace a work centre (admin, planner)
//	@ID			updateWorkCenter
//	@Description	Writes work_center.updated. Production orders launched already keep their planned slots; later launches plan with the new capacity and calendar.
//	@Tags			catalog
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int					true	"work centre id"	minimum(1) example(1)
//	@Param			body	body		WorkCenterRequest	true	"the work centre"
//	@Success		200		{object}	catalog.WorkCenter
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"the code is another work centre's"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/work-centers/{id} [put]
func (s *server) updateWorkCenter(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req WorkCenterRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	wc, err := s.Catalog.UpdateWorkCenter(c.Request().Context(), id, req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wc)
}

// RouteOperationRequest is one operation of a RouteRequest.
type RouteOperationRequest struct {
	Name         string  `json:"name" maxLength:"200" example:"Раскрой ЛДСП"`
	WorkCenterID int64   `json:"work_center_id" minimum:"1" example:"1"`
	Scope        string  `json:"scope" enums:"part,item" example:"part"`
	Minutes      float64 `json:"minutes" minimum:"0" maximum:"10000" example:"4"`
}

// RouteRequest is the body of POST /api/v1/routes and PUT /api/v1/routes/{id}.
type RouteRequest struct {
	Name string `json:"name" maxLength:"200" example:"Корпус ЛДСП (типовой)"`
	Kind string `json:"kind" enums:"case,upholstered" example:"case"`
	// In order: an operation's seq is its position, from 1.
	Operations []RouteOperationRequest `json:"operations" validate:"required,min=1,max=50"`
}

func (r RouteRequest) input() catalog.RouteInput {
	in := catalog.RouteInput{Name: r.Name, Kind: r.Kind, Operations: make([]catalog.OperationInput, len(r.Operations))}
	for i, op := range r.Operations {
		in.Operations[i] = catalog.OperationInput{Name: op.Name, WorkCenterID: op.WorkCenterID, Scope: op.Scope, Minutes: op.Minutes}
	}
	return in
}

// listRoutes godoc
//
//	@Summary	Route templates with their operations
//	@ID			listRoutes
//	@Description	Route templates in id order, each with its operations in order (seq, name, work centre, scope, minutes).
//	@Tags		catalog
//	@Produce	json
//	@Security	BearerAuth
//	@Param		limit	query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param		cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9yb3V0ZXMiLCJpZCI6MX0)
//	@Success	200		{object}	RouteList
//	@Failure	401		{object}	Problem
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/routes [get]
func (s *server) listRoutes(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	rs, next, err := s.Catalog.Routes(c.Request().Context(), pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, rs, next))
}

// getRoute godoc
//
//	@Summary	One route template
//	@ID			getRoute
//	@Description	A route template with its operations in order.
//	@Tags		catalog
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"route id"	minimum(1) example(1)
//	@Success	200	{object}	catalog.Route
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/routes/{id} [get]
func (s *server) getRoute(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	r, err := s.Catalog.Route(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

// createRoute godoc
//
//	@Summary		Create a route template (admin, planner)
//	@ID			createRoute
//	@Description	Writes route.created. An operation's scope is part (done once for every physical part) or item (once per ordered unit).
//	@Tags			catalog
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		RouteRequest	true	"the route"
//	@Success		201		{object}	catalog.Route
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		409		{object}	Problem	"the name is taken"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/routes [post]
func (s *server) createRoute(c echo.Context) error {
	var req RouteRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	r, err := s.Catalog.CreateRoute(c.Request().Context(), req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, r)
}

// updateRoute godoc
//
//	@Summary		Replace a route template (admin, planner)
//	@ID			updateRoute
//	@Description	Writes route.updated. Production orders launched already keep the operations they were exploded into.
//	@Tags			catalog
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int				true	"route id"	minimum(1) example(1)
//	@Param			body	body		RouteRequest	true	"the route"
//	@Success		200		{object}	catalog.Route
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"the name is another route's"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/routes/{id} [put]
func (s *server) updateRoute(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req RouteRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	r, err := s.Catalog.UpdateRoute(c.Request().Context(), id, req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

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
	p, err := s.Catalog.UpdateProduct(c.Request().Context(), id, req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

// Named list types of the catalog, so that the OpenAPI document has one schema per list.
type (
	// WorkCenterList is a page of work centres.
	WorkCenterList = List[catalog.WorkCenter]
	// RouteList is a page of route templates.
	RouteList = List[catalog.Route]
)
