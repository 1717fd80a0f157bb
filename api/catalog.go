package api

import (
	"fmt"
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
	// Read-only: the centre's id, accepted when it is the one at the path (refused on a create).
	ID                *int64 `json:"id" validate:"optional" minimum:"1" example:"1"`
	Code              string `json:"code" maxLength:"32" example:"CUT"`
	Name              string `json:"name" maxLength:"200" example:"Раскрой (форматно-раскроечный станок)"`
	CapacityMinPerDay int    `json:"capacity_min_per_day" minimum:"1" maximum:"1440" example:"960"`
	// When the day's capacity starts, HH:MM in the factory's time zone (FACTORY_TIMEZONE); 08:00 when absent.
	ShiftStart string          `json:"shift_start" validate:"optional" maxLength:"5" example:"08:00"`
	Calendar   CalendarRequest `json:"calendar" validate:"optional"`
	// Read-only: accepted when it says what the centre is now.
	CodeDuplicate *bool `json:"code_duplicate" validate:"optional" example:"false"`
}

// readOnly checks the read-only members sent back against the centre as
// it is (the zero centre on a create).
func (r WorkCenterRequest) readOnly(is catalog.WorkCenter) error {
	return readOnlyRefused(append(readOnlyID(r.ID, is.ID), readOnlyEqual("code_duplicate", r.CodeDuplicate, is.CodeDuplicate)...))
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
	if err := req.readOnly(catalog.WorkCenter{}); err != nil {
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
	is, err := s.Catalog.WorkCenter(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if err := req.readOnly(is); err != nil {
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
	// Read-only: the operation's position in the route, from 1; accepted when it is.
	Seq          *int    `json:"seq" validate:"optional" minimum:"1" maximum:"50" example:"1"`
	Name         string  `json:"name" maxLength:"200" example:"Раскрой ЛДСП"`
	WorkCenterID int64   `json:"work_center_id" minimum:"1" example:"1"`
	Scope        string  `json:"scope" enums:"part,item" example:"part"`
	Minutes      float64 `json:"minutes" minimum:"0" maximum:"10000" example:"4"`
}

// RouteRequest is the body of POST /api/v1/routes and PUT /api/v1/routes/{id}.
type RouteRequest struct {
	// Read-only: the route's id, accepted when it is the one at the path (refused on a create).
	ID   *int64 `json:"id" validate:"optional" minimum:"1" example:"1"`
	Name string `json:"name" maxLength:"200" example:"Корпус ЛДСП (типовой)"`
	Kind string `json:"kind" enums:"case,upholstered" example:"case"`
	// In order: an operation's seq is its position, from 1.
	Operations []RouteOperationRequest `json:"operations" validate:"required,min=1,max=50"`
}

// readOnly checks the read-only members sent back: the route's id (0 on a
// create) and each operation's seq, its position.
func (r RouteRequest) readOnly(id int64) error {
	fields := readOnlyID(r.ID, id)
	for i, op := range r.Operations {
		fields = append(fields, readOnlyEqual(fmt.Sprintf("operations[%d].seq", i), op.Seq, i+1)...)
	}
	return readOnlyRefused(fields)
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
	if err := req.readOnly(0); err != nil {
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
	if err := req.readOnly(id); err != nil {
		return err
	}
	r, err := s.Catalog.UpdateRoute(c.Request().Context(), id, req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

// Named list types of the catalog, so that the OpenAPI document has one schema per list.
type (
	// WorkCenterList is a page of work centres.
	WorkCenterList = List[catalog.WorkCenter]
	// RouteList is a page of route templates.
	RouteList = List[catalog.Route]
)
