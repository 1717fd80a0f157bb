package api

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/sales"
)

// CRMImportRequest is the body of POST /api/v1/imports/crm/orders.
type CRMImportRequest struct {
	Orders []CRMOrderRequest `json:"orders" validate:"required,max=1000"`
}

// CRMOrderRequest is one order as the CRM exports it.
type CRMOrderRequest struct {
	// The CRM's order id: text of 1 to 64 characters on one line (a whole number, as older exports send it, is read as its decimal text); an order is imported once per id.
	CRMOrderID string             `json:"crm_order_id" validate:"required" minLength:"1" maxLength:"64" example:"CRM-10452"`
	Customer   CustomerRequest    `json:"customer" validate:"required"`
	Items      []OrderItemRequest `json:"items" validate:"required,min=1,max=200"`
	// The day the customer wants the order, from 2000-01-01 to 2100-12-31.
	DueDate string `json:"due_date" validate:"optional" format:"date" example:"2026-12-20"`
	// The CRM's version of the order: a later row with a greater version changes the order. Takes precedence over updated_at.
	Version int64 `json:"version" validate:"optional" minimum:"1" example:"3"`
	// When the order was last changed in the CRM (RFC 3339): a later row with a later updated_at changes the order.
	UpdatedAt string `json:"updated_at" validate:"optional" format:"date-time" maxLength:"40" example:"2026-12-02T10:15:00Z"`
}

// importCRMOrders godoc
//
//	@Summary		Import a batch of CRM orders (manager)
//	@ID				importCRMOrders
//	@Description	Each row is imported in its own transaction and reported: `created` (with its order_id), `exists`
//	@Description	(an order with that crm_order_id was imported before and the row says the same as the order, or as the row last
//	@Description	applied), `changed` (imported before; the row differs and is newer, by its `version` when it has one, else by its
//	@Description	`updated_at`, than the row last applied: the order changed as a PATCH would change it, order.changed written),
//	@Description	`conflict` (imported before; the row differs but was not applied, with the reason in detail: it is not newer, it has
//	@Description	neither version nor updated_at, an item it changes is in production, or the order is cancelled or shipped),
//	@Description	`refused` (with the fields at fault,
//	@Description	named within the row, e.g. `items[0].sku`: a wrong type, text with control characters or invalid UTF-8, a
//	@Description	date out of range, too long a text) or `failed` (an unexpected error, logged with the request id). Whatever
//	@Description	goes wrong with a row is reported on that row and the rows after it are imported; nothing of a refused or
//	@Description	failed row is stored. The orders' events name the caller as their actor. At most 1000 rows per request;
//	@Description	`tsekh import crm FILE.json` streams files of any size.
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
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem
//	@Router			/api/v1/imports/crm/orders [post]
func (s *server) importCRMOrders(c echo.Context) error {
	var req struct {
		Orders *[]json.RawMessage `json:"orders"`
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	// Each row's strings are checked with the row, which is refused alone.
	if err := input.DecodeEnvelope(body, &req); err != nil {
		return err
	}
	switch {
	case req.Orders == nil:
		return apperr.Invalid("the import is not valid", apperr.Field("orders", "is required"))
	case len(*req.Orders) > sales.MaxCRMImportRows:
		return apperr.Invalid("the import is not valid", apperr.Field("orders", "must list at most %d orders; tsekh import crm streams larger files", sales.MaxCRMImportRows))
	}
	ctx := c.Request().Context()
	rep, err := s.Sales.ImportCRMOrders(ctx, *req.Orders)
	if err != nil {
		return err
	}
	for _, row := range rep.Rows {
		if row.Err != nil {
			s.Logger.ErrorContext(ctx, "CRM import: a row failed", "row", row.Row, "err", row.Err,
				"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
		}
	}
	return c.JSON(http.StatusOK, rep)
}
