package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// LaunchRequest is the body of POST /api/v1/production-orders.
type LaunchRequest struct {
	// Sales-order item ids, waiting in the planning backlog.
	Items []int64 `json:"items" validate:"required,min=1,max=100" example:"53,54"`
	// The route to follow; left out, the items' products' default route, which must then be the same for all. 0 is no route (422), not the default.
	RouteID *int64 `json:"route_id" validate:"optional" minimum:"1" example:"1"`
	// The promised day, instead of the one the schedule computes: from today to 2100-12-31.
	ETA string `json:"eta" validate:"optional" format:"date" example:"2026-11-20"`
	// Its place in the plan: higher first, -100 to 100, 0 by default. It plans after the live orders of equal or higher priority and ahead of those of lower priority, which are re-planned after it.
	Priority int `json:"priority" validate:"optional" minimum:"-100" maximum:"100" example:"0"`
}

// ProdOrderChange is the body of PATCH /api/v1/production-orders/{id}.
type ProdOrderChange struct {
	// The new priority: higher first, -100 to 100.
	Priority *int `json:"priority" validate:"required" minimum:"-100" maximum:"100" example:"10"`
}

// ProdOrderList is a page of production orders.
type ProdOrderList = List[plan.ProdOrder]

// launchProdOrder godoc
//
//	@Summary		Launch a production order (admin, planner)
//	@ID			launchProdOrder
//	@Description	Takes the items out of the planning backlog and, in one transaction, writes the production order, its physical parts (part quantity × item quantity) and operations (a part-scope route operation per physical part, an item-scope one per unit) with their planned slots, and prod_order.launched {"prod_order_id", "items", "route", "parts_count", "ops_count", "eta"}.
//	@Description	The ETA is computed by a forward finite-capacity schedule from now, in the factory's time zone and each work centre's shift (see docs/planning.md), unless eta is given. priority places the order after the live orders of equal or higher priority; the live orders of lower priority are re-planned after it, and those whose ETA moves get prod_order.rescheduled (as POST /api/v1/plan/replan).
//	@Description	422 when an item is not in the backlog (unknown, not yet received by planning, or its sales order was cancelled), the items' routes differ, the route does not fit the products, the launch is too large (over 5,000 physical parts or 20,000 operations, counted from the quantities before anything is built), or a work centre it needs has no working day within three years (the detail names it); 409 when an item is in a live production order already (also to the loser of two launches racing for the same item).
//	@Tags			plan
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		LaunchRequest	true	"the items to launch"
//	@Success		201		{object}	plan.ProdOrderDetail
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		409		{object}	Problem	"an item is launched already"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/production-orders [post]
func (s *server) launchProdOrder(c echo.Context) error {
	var req LaunchRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	eta, fields := input.Date("eta", req.ETA)
	var routeID int64
	if req.RouteID != nil {
		// Sent, it names a route: 0 is none, never the default in disguise.
		if routeID = *req.RouteID; routeID <= 0 {
			fields = append(fields, apperr.Field("route_id", "must be a route id, 1 or more; leave it out for the products' default route"))
		}
	}
	if len(fields) > 0 {
		return apperr.Invalid("the launch is not valid", fields...)
	}
	in := plan.Launch{Items: req.Items, RouteID: routeID, ETA: eta, Priority: req.Priority}
	o, err := s.Plan.LaunchProdOrder(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, o)
}

// listProdOrders godoc
//
//	@Summary	Production orders, newest first, with their items and progress
//	@ID			listProdOrders
//	@Description	Production orders with their route, items (with customer, note and due date), parts and operations counts, due date (their items' earliest), ETA and progress; the parts and operations themselves are in GET /api/v1/production-orders/{id}.
//	@Description	late is true on an order that is launched or in progress with an ETA after the due date of one of its items (each item says whether it is late); a re-plan brings ETAs up to date.
//	@Description	needs_attention is true, with attention_reason, on an order on which work had started when a sales order of its items was cancelled: the planner decides what becomes of it.
//	@Description	Sorted by sort (default -created: newest first); a cursor continues the sort it was given with. Filters: status, needs_attention, sku (an item of it), route_id, due_before (an item due before that day, not on it).
//	@Description	With Accept: text/csv, every row the filters select (limit and cursor do not apply), UTF-8 with a byte order mark, in the layout ?layout= names (office by default; see docs/operating.md, CSV exports).
//	@Tags		plan
//	@Produce	json
//	@Produce	text/csv
//	@Security	BearerAuth
//	@Param		status	query		string	false	"only orders in this state"	Enums(launched, in_progress, done, cancelled, closed)	example(launched)
//	@Param		late	query		bool	false	"true: only late orders (launched or in progress, with an ETA after an item's due date); false: only the others"	example(true)
//	@Param		needs_attention	query		bool	false	"true: only orders flagged for the planner (work had started when a sales order of their items was cancelled); false: only the others"	example(true)
//	@Param		sku			query		string	false	"only orders with an item of this SKU"	maxlength(64)	example(SHK-KUPE-1600)
//	@Param		route_id	query		int		false	"only orders along this route (422 for an unknown route)"	minimum(1) example(1)
//	@Param		due_before	query		string	false	"only orders with an item due before this day (YYYY-MM-DD)"	format(date)	example(2026-12-31)
//	@Param		sort		query		string	false	"order: -created (default, newest first), created, eta, -eta, due_date (soonest first, no due date last), -due_date"	Enums(-created, created, eta, -eta, due_date, -due_date)	example(-created)
//	@Param		limit	query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param		cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9wcm9kdWN0aW9uLW9yZGVycyIsImlkIjoxfQ)
//	@Param		layout	query	string	false	"CSV only: office (\";\", decimal commas, FACTORY_TIMEZONE, Russian headers) or machine (\",\", RFC 3339 UTC, decimal points, English headers); see docs/operating.md, CSV exports"	Enums(office, machine) default(office) example(machine)
//	@Success	200		{object}	ProdOrderList
//	@Failure	401		{object}	Problem
//	@Failure	422		{object}	Problem
//	@Failure	406		{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Router		/api/v1/production-orders [get]
func (s *server) listProdOrders(c echo.Context) error {
	pr, err := sortedPageOf(c)
	if err != nil {
		return err
	}
	f := plan.ProdOrderFilter{Status: c.QueryParam("status")}
	switch v := c.QueryParam("needs_attention"); v {
	case "":
	case "true", "false":
		b := v == "true"
		f.NeedsAttention = &b
	default:
		return apperr.Invalid("invalid query", apperr.Field("needs_attention", "must be true or false"))
	}
	if f.Late, err = boolQuery(c, "late"); err != nil {
		return err
	}
	q, fields := planListQueryOf(c)
	if len(fields) > 0 {
		return apperr.Invalid("invalid query", fields...)
	}
	f.SKU, f.RouteID, f.DueBefore, f.Sort = q.SKU, q.RouteID, q.DueBefore, q.Sort
	fetch := func(pr page.Request) ([]plan.ProdOrder, string, error) {
		return s.Plan.ProdOrders(c.Request().Context(), pr, f)
	}
	if wantsCSV(c) {
		l, err := s.csvLayoutOf(c)
		if err != nil {
			return err
		}
		return writeCSV(c, l, "production-orders.csv", prodOrderCSVCols, prodOrderCSVRow, fetch)
	}
	os, next, err := fetch(pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, os, next))
}

// getProdOrder godoc
//
//	@Summary	One production order with its items, parts, operations and progress
//	@ID			getProdOrder
//	@Description	The order with its items, every physical part, every operation with its planned slot and state, and its progress.
//	@Tags		plan
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"production order id"	minimum(1) example(1)
//	@Success	200	{object}	plan.ProdOrderDetail
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/production-orders/{id} [get]
func (s *server) getProdOrder(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	o, err := s.Plan.ProdOrder(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, o)
}

// startOperation godoc
//
//	@Summary		Start an operation (admin, planner, master)
//	@ID			startOperation
//	@Description	pending → in_progress, journalled as operation.started on the production order (its step, part or unit, and the caller). The first operation started moves the production order from launched to in_progress and writes prod_order.started too.
//	@Tags			plan
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int	true	"production order id"	minimum(1) example(1)
//	@Param			op_id	path		int	true	"operation id"	minimum(1) example(1)
//	@Success		200		{object}	floor.OperationChange
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"the operation is not pending, or the order is cancelled, done or closed"
//	@Failure		422		{object}	Problem
//	@Router			/api/v1/production-orders/{id}/operations/{op_id}/start [post]
func (s *server) startOperation(c echo.Context) error {
	id, opID, err := orderAndOp(c)
	if err != nil {
		return err
	}
	ch, err := s.Floor.StartOperation(c.Request().Context(), id, opID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ch)
}

// completeOperation godoc
//
//	@Summary		Complete an operation (admin, planner, master)
//	@ID			completeOperation
//	@Description	in_progress → done, journalled as operation.completed on the production order (its step, part or unit, and the caller). The last operation done moves the production order to done and writes prod_order.completed too.
//	@Tags			plan
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int	true	"production order id"	minimum(1) example(1)
//	@Param			op_id	path		int	true	"operation id"	minimum(1) example(1)
//	@Success		200		{object}	floor.OperationChange
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"the operation is not in progress, or the order is cancelled, done or closed"
//	@Failure		422		{object}	Problem
//	@Router			/api/v1/production-orders/{id}/operations/{op_id}/complete [post]
func (s *server) completeOperation(c echo.Context) error {
	id, opID, err := orderAndOp(c)
	if err != nil {
		return err
	}
	ch, err := s.Floor.CompleteOperation(c.Request().Context(), id, opID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ch)
}

func orderAndOp(c echo.Context) (id, opID int64, err error) {
	if id, err = pathID(c, "id"); err != nil {
		return 0, 0, err
	}
	opID, err = pathID(c, "op_id")
	return id, opID, err
}

// cancelProdOrder godoc
//
//	@Summary		Cancel a production order before work starts (admin, planner)
//	@ID			cancelProdOrder
//	@Description	launched → cancelled, while no operation has started. Its items go back to the planning backlog (unless their sales order was cancelled meanwhile), its operations no longer load the work centres, and prod_order.cancelled is written.
//	@Tags			plan
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id	path		int	true	"production order id"	minimum(1) example(1)
//	@Success		200	{object}	plan.ProdOrder
//	@Failure		401	{object}	Problem
//	@Failure		403	{object}	Problem
//	@Failure		404	{object}	Problem
//	@Failure		409	{object}	Problem	"work has started, or it is cancelled already"
//	@Failure		422	{object}	Problem
//	@Router			/api/v1/production-orders/{id}/cancel [post]
func (s *server) cancelProdOrder(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	o, err := s.Plan.CancelProdOrder(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, o)
}

// CloseRequest is the body of POST /api/v1/production-orders/{id}/close.
type CloseRequest struct {
	// Why the order is closed short (free text, up to 1,000 characters).
	Reason string `json:"reason" validate:"required" maxLength:"1000" example:"заказчик отказался от остатка партии"`
	// What becomes of the units not made: back to the planning backlog, or written off.
	Rest string `json:"rest" validate:"required" enums:"backlog,write_off" example:"backlog"`
}

// closeProdOrder godoc
//
//	@Summary		Close a started production order short (admin, planner)
//	@ID			closeProdOrder
//	@Description	in_progress → closed, with a reason. A unit of an item is made when every operation of the unit is done: made units stay made, with their parts and operations; the operations not done are dropped, so they no longer load the work centres. Of each item, the units not made go back to the planning backlog (rest "backlog": the item's backlog row has the units left, to be launched again) or are written off (rest "write_off"); an item whose sales order was cancelled is never returned, its units not made are written off. The items are released, needs_attention is cleared, and the order records the reason, the rest, who closed it and when; each item, its made_qty, returned_qty and written_off_qty.
//	@Description	Writes prod_order.closed {"prod_order_id", "items", "reason", "rest", "quantities": [{"item_id", "order_id", "qty", "made", "returned", "written_off"}]}. Sales follows: an item with units returned is new again (made_qty counts what was made), one with none returned is done (what was made ships; written_off_qty counts the rest) or, when none of it was made, written_off; its order becomes ready once its other items are made, and cancelled when every item is written off.
//	@Description	409 when no work has started (cancel it instead: POST /api/v1/production-orders/{id}/cancel), or the order is done, cancelled or closed already; 422 without a reason, or with a rest other than backlog or write_off.
//	@Tags			plan
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int				true	"production order id"	minimum(1) example(1)
//	@Param			body	body		CloseRequest	true	"why, and what becomes of the units not made"
//	@Success		200		{object}	plan.ProdOrder
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"no work has started (cancel it instead), or it is done, cancelled or closed"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/production-orders/{id}/close [post]
func (s *server) closeProdOrder(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req CloseRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	o, err := s.Floor.CloseProdOrder(c.Request().Context(), id, floor.Close{Reason: req.Reason, Rest: req.Rest})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, o)
}

// changeProdOrder godoc
//
//	@Summary		Change a production order's priority (admin, planner)
//	@ID			changeProdOrder
//	@Description	Sets the priority of a launched or in-progress order (higher first, -100 to 100) and re-plans from now what can move: the order and every order behind it in the plan at its old place or its new one, whichever comes first, as POST /api/v1/plan/replan would place them (the orders ahead keep their slots), so that it takes its new place: raising it moves it ahead of lower-priority work. A new priority is journalled as prod_order.priority_changed (before, after, the caller), the re-plan as plan.replanned (reason priority); orders whose ETA moved get prod_order.rescheduled, which reaches sales and the shop.
//	@Description	Answers the order as it is now and the re-plan's summary. 409 for an order done or cancelled; 422 for a priority out of range, or (changing nothing) when a work centre has no working day within three years.
//	@Tags			plan
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int				true	"production order id"	minimum(1) example(1)
//	@Param			body	body		ProdOrderChange	true	"the change"
//	@Success		200		{object}	plan.PriorityChange
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"the order is done or cancelled"
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem
//	@Router			/api/v1/production-orders/{id} [patch]
func (s *server) changeProdOrder(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req ProdOrderChange
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.Priority == nil {
		return apperr.Invalid("the change is not valid", apperr.Field("priority", "is required: the new priority, -100 to 100"))
	}
	ch, err := s.Plan.SetPriority(c.Request().Context(), id, *req.Priority)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ch)
}
