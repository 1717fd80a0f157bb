package api

import (
	"bytes"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/sales"
)

// CancelRequest is the body of POST /api/v1/orders/{id}/cancel.
type CancelRequest struct {
	// Why the order is cancelled (free text, up to 1,000 characters): shown on the order and told to the shop.
	Reason string `json:"reason" validate:"required" maxLength:"1000" example:"клиент передумал"`
}

// DismissRequest is the body of POST /api/v1/intake/rejections/{id}/dismiss.
type DismissRequest struct {
	// Why the rejection is dismissed (free text, up to 1,000 characters).
	Reason string `json:"reason" validate:"required" maxLength:"1000" example:"дубль заказа, клиент оформил новый"`
}

// bindOptionalJSON is bindJSON for a body that may be left out: none (or
// only white space) leaves v as it is, for the service to name what is
// missing.
func bindOptionalJSON(c echo.Context, v any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return input.DecodeObject(body, v)
}

// listRejections godoc
//
//	@Summary		The intake inbox: refused shop deliveries and CRM rows, kept (manager, admin)
//	@ID				listRejections
//	@Description	Authentic shop deliveries (their signature good) and CRM rows refused for their content are kept here, newest first, with the
//	@Description	body as received, every reason at once (errors: all the unknown SKUs, the bad quantities and dates together) and their kinds
//	@Description	(reasons: unknown_sku, unknown_decor, in_production, conflict, invalid), and when. One rejection per shop order or CRM row stays
//	@Description	open: a later refused delivery of it updates it (deliveries counts them). It is resolved by a retry
//	@Description	(POST /api/v1/intake/rejections/{id}/retry) or by a later delivery that is applied, naming the order; or dismissed with a reason.
//	@Description	Deliveries that are not authentic, malformed JSON, bodies over 1 MiB and deliveries without an order id or items are never kept.
//	@Description	A body larger than INTAKE_BODY_LIMIT (64 KiB by default) keeps its beginning only, as text in body_head (body null): body_cut is true and body_bytes
//	@Description	gives its size as received (such a rejection cannot be retried: 409). A page holds limit rejections, or fewer when their bodies
//	@Description	would take more than 4 MiB; next_cursor goes on from the last one given.
//	@Description	Filters combine (AND); a value that cannot match is a 422 naming it.
//	@Tags			sales
//	@Produce		json
//	@Security		BearerAuth
//	@Param			source	query		string	false	"where it came from"	Enums(shop, crm)	example(shop)
//	@Param			reason	query		string	false	"rejections with a reason of this kind"	Enums(unknown_sku, unknown_decor, in_production, conflict, invalid)	example(unknown_sku)
//	@Param			open	query		bool	false	"true: open only; false: resolved or dismissed only"	example(true)
//	@Param			limit	query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param			cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9pbnRha2UvcmVqZWN0aW9ucyIsImlkIjoxfQ)
//	@Success		200		{object}	RejectionList
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		422		{object}	Problem	"a filter value that cannot match, named in errors"
//	@Router			/api/v1/intake/rejections [get]
func (s *server) listRejections(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	f := sales.RejectionFilter{Source: c.QueryParam("source"), Reason: c.QueryParam("reason")}
	switch v := c.QueryParam("open"); v {
	case "":
	case "true", "false":
		open := v == "true"
		f.Open = &open
	default:
		return apperr.Invalid("invalid query", apperr.Field("open", "must be true or false"))
	}
	rs, next, err := s.Sales.Rejections(c.Request().Context(), f, pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, rs, next))
}

// getRejection godoc
//
//	@Summary		One kept rejection (manager, admin)
//	@ID				getRejection
//	@Description	The refused delivery or row as received, every reason, and what became of it (see GET /api/v1/intake/rejections).
//	@Tags			sales
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id	path		int	true	"rejection id"	minimum(1) example(1)
//	@Success		200	{object}	sales.Rejection
//	@Failure		400	{object}	Problem
//	@Failure		401	{object}	Problem
//	@Failure		403	{object}	Problem
//	@Failure		404	{object}	Problem
//	@Router			/api/v1/intake/rejections/{id} [get]
func (s *server) getRejection(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	r, err := s.Sales.Rejection(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

// retryRejection godoc
//
//	@Summary		Apply a kept rejection again (manager, admin)
//	@ID				retryRejection
//	@Description	Applies the body as received again, as its sender would have (the shop's webhook or the CRM import), under the caller's name:
//	@Description	once the catalogue has the SKU, say. Idempotent by the shop's order id or the CRM number: retried twice, or by many at once, it
//	@Description	makes one order and one order.received. Applied, the rejection is resolved (intake.resolved) and names the order and the outcome
//	@Description	(created, repeated, changed, stale). Refused again, it stays open with the new reasons (intake.rejected, by retry), answered
//	@Description	200 with them. A resolved rejection is answered as it is; a dismissed one is 409.
//	@Tags			sales
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id	path		int	true	"rejection id"	minimum(1) example(1)
//	@Success		200	{object}	sales.Rejection	"resolved (order_id), or still open with the new reasons"
//	@Failure		400	{object}	Problem
//	@Failure		401	{object}	Problem
//	@Failure		403	{object}	Problem
//	@Failure		404	{object}	Problem
//	@Failure		409	{object}	Problem	"the rejection was dismissed, or its body was kept cut (body_cut)"
//	@Router			/api/v1/intake/rejections/{id}/retry [post]
func (s *server) retryRejection(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	r, err := s.Sales.RetryRejection(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

// dismissRejection godoc
//
//	@Summary		Dismiss a kept rejection, with a reason (manager, admin)
//	@ID				dismissRejection
//	@Description	Closes an open rejection for good (intake.dismissed): nothing is applied. The reason is required (422 without it).
//	@Description	409 when it is resolved or dismissed already.
//	@Tags			sales
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int				true	"rejection id"	minimum(1) example(1)
//	@Param			body	body		DismissRequest	true	"why"
//	@Success		200		{object}	sales.Rejection
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"resolved or dismissed already"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"no reason, or too long a one"
//	@Router			/api/v1/intake/rejections/{id}/dismiss [post]
func (s *server) dismissRejection(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req DismissRequest
	if err := bindOptionalJSON(c, &req); err != nil {
		return err
	}
	r, err := s.Sales.DismissRejection(c.Request().Context(), id, req.Reason)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

// editRejection godoc
//
//	@Summary		Correct the body a kept rejection holds (manager, admin)
//	@ID				editRejection
//	@Description	The body is the delivery (or CRM row) as it should have been sent, whole: the manager corrects a SKU, a decor, a quantity,
//	@Description	the customer's contacts, then applies it with POST /api/v1/intake/rejections/{id}/retry, as its sender's would be applied.
//	@Description	Journalled as intake.edited, naming the manager and every value that changed by its path (items[0].sku, customer.phone),
//	@Description	before and after; a body that changes nothing writes nothing. The edit keeps the order it names (the shop's id, the CRM's
//	@Description	crm_order_id): 422 naming body.id or body.crm_order_id otherwise. 409 when the rejection is not open.
//	@Tags			sales
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int		true	"rejection id"	minimum(1) example(1)
//	@Param			body	body		object	true	"the delivery or row, corrected"
//	@Success		200		{object}	sales.Rejection	"open, with the corrected body"
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"resolved or dismissed already, or its body was kept cut (body_cut)"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"not an object, larger than INTAKE_BODY_LIMIT, or it names another order"
//	@Router			/api/v1/intake/rejections/{id}/body [put]
func (s *server) editRejection(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	r, err := s.Sales.EditRejection(c.Request().Context(), id, body)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

// RejectionList is a page of the intake inbox.
type RejectionList = List[sales.Rejection]

// clearAttention godoc
//
//	@Summary		Clear an order's attention note (manager)
//	@ID				clearOrderAttention
//	@Description	An order's attention says, with SHOP_CONFLICTS=shop, that a shop delivery was merged around the office's changes and which
//	@Description	fields kept the office's values. Once a manager has looked at it (and changed the order as needed), this clears the note
//	@Description	(order.attention_cleared, journalled with the note). 409 when the order has none.
//	@Tags			sales
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id	path		int	true	"order id"	minimum(1) example(1)
//	@Success		200	{object}	sales.Order
//	@Failure		400	{object}	Problem
//	@Failure		401	{object}	Problem
//	@Failure		403	{object}	Problem
//	@Failure		404	{object}	Problem
//	@Failure		409	{object}	Problem	"the order has no attention note"
//	@Router			/api/v1/orders/{id}/attention [delete]
func (s *server) clearAttention(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	o, err := s.Sales.ClearAttention(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if err := s.Sales.WithBoards(c.Request().Context(), &o); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, o)
}
