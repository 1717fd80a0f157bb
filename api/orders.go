package api

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/sales"
)

// CreateOrderRequest is the body of POST /api/v1/orders.
type CreateOrderRequest struct {
	Customer CustomerRequest    `json:"customer" validate:"required"`
	Items    []OrderItemRequest `json:"items" validate:"required"`
	DueDate  string             `json:"due_date" validate:"optional" format:"date" example:"2026-12-20"`
}

// CustomerRequest is who orders.
type CustomerRequest struct {
	Name  string `json:"name" validate:"required" example:"Иван Петров"`
	Phone string `json:"phone" validate:"optional" example:"+7 900 123-45-67"`
	Email string `json:"email" validate:"optional" example:"ivan@example.com"`
}

// OrderItemRequest is one line of a new order.
type OrderItemRequest struct {
	SKU  string `json:"sku" validate:"required" example:"SHK-KUPE-1600"`
	Qty  int    `json:"qty" validate:"required" minimum:"1" maximum:"10000" example:"1"`
	Note string `json:"note" validate:"optional" example:"цвет: дуб сонома"`
}

func (r CreateOrderRequest) toNewOrder() (sales.NewOrder, error) {
	in := sales.NewOrder{Customer: sales.Customer(r.Customer)}
	if r.DueDate != "" {
		d, err := database.ParseDate(r.DueDate)
		if err != nil {
			return in, apperr.Invalid("the order is not valid", apperr.Field("due_date", "must be a date of the form YYYY-MM-DD"))
		}
		in.DueDate = d
	}
	for _, it := range r.Items {
		in.Items = append(in.Items, sales.NewItem(it))
	}
	return in, nil
}

// createOrder godoc
//
//	@Summary		Create a manual order (manager)
//	@ID			createOrder
//	@Description	Stores the order, its items and its order.received event in one transaction.
//	@Tags			sales
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		CreateOrderRequest	true	"the order"
//	@Success		201		{object}	sales.Order
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		422		{object}	Problem
//	@Router			/api/v1/orders [post]
func (s *server) createOrder(c echo.Context) error {
	var req CreateOrderRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	in, err := req.toNewOrder()
	if err != nil {
		return err
	}
	o, err := s.Sales.CreateOrder(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, o)
}

var orderStatuses = []string{sales.StatusReceived, sales.StatusInProduction, sales.StatusReady, sales.StatusShipped, sales.StatusCancelled}

// listOrders godoc
//
//	@Summary	Sales orders, newest first
//	@ID		listOrders
//	@Description	Orders with their items and states, newest first; the ETA once production is planned.
//	@Tags		sales
//	@Produce	json
//	@Security	BearerAuth
//	@Param		status	query		string	false	"order state"	Enums(received, in_production, ready, shipped, cancelled)
//	@Param		source	query		string	false	"order source"	Enums(shop, crm, manual)
//	@Param		limit	query		int		false	"page size (1-500, default 50)"
//	@Param		cursor	query		string	false	"next_cursor of the previous page"
//	@Success	200		{object}	OrderList
//	@Failure	401		{object}	Problem
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/orders [get]
func (s *server) listOrders(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	f := sales.OrderFilter{Status: c.QueryParam("status"), Source: c.QueryParam("source")}
	if f.Status != "" && !slices.Contains(orderStatuses, f.Status) {
		return apperr.Invalid("invalid query", apperr.Field("status", "must be one of received, in_production, ready, shipped, cancelled"))
	}
	if f.Source != "" && !slices.Contains([]string{sales.SourceShop, sales.SourceCRM, sales.SourceManual}, f.Source) {
		return apperr.Invalid("invalid query", apperr.Field("source", "must be shop, crm or manual"))
	}
	os, next, err := s.Sales.Orders(c.Request().Context(), f, pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list(os, next))
}

// getOrder godoc
//
//	@Summary	One sales order with its items and their states
//	@ID		getOrder
//	@Description	The order with its items and their states, and its ETA once production is planned.
//	@Tags		sales
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"order id"
//	@Success	200	{object}	sales.Order
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/orders/{id} [get]
func (s *server) getOrder(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	o, err := s.Sales.Order(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, o)
}
