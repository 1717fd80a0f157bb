package api

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/sales"
)

// CRMImportRequest is the body of POST /api/v1/imports/crm/orders.
type CRMImportRequest struct {
	Orders []CRMOrderRequest `json:"orders" validate:"required"`
}

// CRMOrderRequest is one order as the CRM exports it.
type CRMOrderRequest struct {
	// The CRM's order number; an order is imported once per number.
	CRMOrderID int64              `json:"crm_order_id" validate:"required" minimum:"1" example:"10452"`
	Customer   CustomerRequest    `json:"customer" validate:"required"`
	Items      []OrderItemRequest `json:"items" validate:"required"`
	DueDate    string             `json:"due_date" validate:"optional" format:"date" example:"2026-12-20"`
}

// importCRMOrders godoc
//
//	@Summary		Import a batch of CRM orders (manager)
//	@ID				importCRMOrders
//	@Description	Each row is imported in its own transaction and reported: `created` (with its order_id), `exists`
//	@Description	(an order with that crm_order_id was imported before; its order_id) or `refused` (with the fields at fault,
//	@Description	named within the row, e.g. `items[0].sku`). A bad row spoils no other. The orders' events name the caller
//	@Description	as their actor. At most 1000 rows per request; `tsekh import crm FILE.json` streams files of any size.
//	@Tags			sales
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		CRMImportRequest	true	"the orders"
//	@Success		200		{object}	sales.ImportReport
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		422		{object}	Problem
//	@Router			/api/v1/imports/crm/orders [post]
func (s *server) importCRMOrders(c echo.Context) error {
	var req struct {
		Orders *[]json.RawMessage `json:"orders"`
	}
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	switch {
	case req.Orders == nil:
		return apperr.Invalid("the import is not valid", apperr.Field("orders", "is required"))
	case len(*req.Orders) > sales.MaxCRMImportRows:
		return apperr.Invalid("the import is not valid", apperr.Field("orders", "must list at most %d orders; tsekh import crm streams larger files", sales.MaxCRMImportRows))
	}
	rep, err := s.Sales.ImportCRMOrders(c.Request().Context(), *req.Orders)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}
