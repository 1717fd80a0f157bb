package api

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/purchasing"
	"github.com/tsekh/tsekh/internal/render"
)

// SupplierTermsRequest is what a supplier sells a material on.
type SupplierTermsRequest struct {
	// The material's code in the catalogue, read as every code is: in NFKC, regardless of case.
	Code string `json:"code" maxLength:"32" example:"LDSP16-SONOMA"`
	// The supplier's own article for it.
	SupplierCode string `json:"supplier_code" validate:"optional" maxLength:"64" example:"EG-H1145-16"`
	// Per unit of the material (a sheet, a metre, a piece).
	Price float64 `json:"price" validate:"optional" minimum:"0" maximum:"100000000" example:"3150"`
	// Working days from the order to the delivery.
	LeadDays int `json:"lead_days" validate:"optional" minimum:"0" maximum:"365" example:"5"`
	// The least it takes an order for, in the material's unit.
	MinQty float64 `json:"min_qty" validate:"optional" minimum:"0" maximum:"1000000" example:"10"`
	// What it sells in: sheets in a pack, metres in a roll; 0: any quantity on the unit's step.
	PackQty float64 `json:"pack_qty" validate:"optional" minimum:"0" maximum:"1000000" example:"5"`
}

// SupplierRequest is the body of POST /api/v1/suppliers and PUT /api/v1/suppliers/{id}.
type SupplierRequest struct {
	Name    string `json:"name" maxLength:"200" example:"ООО «Плита»"`
	Contact string `json:"contact" validate:"optional" maxLength:"200" example:"Сергей Иванов"`
	Phone   string `json:"phone" validate:"optional" maxLength:"50" example:"+7 900 555-12-12"`
	Email   string `json:"email" validate:"optional" maxLength:"254" example:"zakaz@plita.example"`
	Note    string `json:"note" validate:"optional" maxLength:"2000" example:"доставка по вторникам"`
	// Its terms per material (replaced whole by PUT).
	Materials []SupplierTermsRequest `json:"materials" validate:"optional,max=500"`
}

func (r SupplierRequest) input() purchasing.SupplierInput {
	in := purchasing.SupplierInput{Name: r.Name, Contact: r.Contact, Phone: r.Phone, Email: r.Email, Note: r.Note}
	for _, t := range r.Materials {
		in.Materials = append(in.Materials, purchasing.Terms{Code: t.Code, SupplierCode: t.SupplierCode, Price: t.Price, LeadDays: t.LeadDays,
			MinQty: t.MinQty, PackQty: t.PackQty})
	}
	return in
}

// SupplierList is a page of suppliers.
type SupplierList = List[purchasing.Supplier]

// listSuppliers godoc
//
//	@Summary	Suppliers with their terms per material
//	@ID			listSuppliers
//	@Description	Suppliers in id order, each with its terms per material: the supplier's article, price, lead time in working days, minimum order and pack.
//	@Tags		purchasing
//	@Produce	json
//	@Security	BearerAuth
//	@Param		material	query		string	false	"only suppliers selling this material (its code, regardless of case)"	maxlength(32) example(LDSP16-SONOMA)
//	@Param		limit		query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param		cursor		query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9zdXBwbGllcnMiLCJpZCI6MX0)
//	@Success	200			{object}	SupplierList
//	@Failure	400			{object}	Problem
//	@Failure	401			{object}	Problem
//	@Failure	422			{object}	Problem
//	@Router		/api/v1/suppliers [get]
func (s *server) listSuppliers(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	ls, next, err := s.Purchasing.Suppliers(c.Request().Context(), c.QueryParam("material"), pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, ls, next))
}

// getSupplier godoc
//
//	@Summary	One supplier
//	@ID			getSupplier
//	@Description	The supplier with its contacts and terms per material.
//	@Tags		purchasing
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"supplier id"	minimum(1) example(1)
//	@Success	200	{object}	purchasing.Supplier
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/suppliers/{id} [get]
func (s *server) getSupplier(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	sp, err := s.Purchasing.Supplier(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, sp)
}

// createSupplier godoc
//
//	@Summary		Add a supplier (admin, planner, buyer)
//	@ID			createSupplier
//	@Description	Writes supplier.created. 422 naming name when it is missing, materials[i].code for a material the catalogue does not have or one named twice, materials[i].price, lead_days, min_qty or pack_qty out of bounds (min_qty and pack_qty on the material's step: whole sheets and pieces, metres to the centimetre); nothing is written then.
//	@Tags			purchasing
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		SupplierRequest	true	"the supplier"
//	@Success		201		{object}	purchasing.Supplier
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/suppliers [post]
func (s *server) createSupplier(c echo.Context) error {
	var req SupplierRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	sp, err := s.Purchasing.CreateSupplier(c.Request().Context(), req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, sp)
}

// updateSupplier godoc
//
//	@Summary		Replace a supplier and its terms (admin, planner, buyer)
//	@ID			updateSupplier
//	@Description	Writes supplier.updated; 422 as createSupplier. Purchase orders already written keep their prices.
//	@Tags			purchasing
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int				true	"supplier id"	minimum(1) example(1)
//	@Param			body	body		SupplierRequest	true	"the supplier"
//	@Success		200		{object}	purchasing.Supplier
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/suppliers/{id} [put]
func (s *server) updateSupplier(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req SupplierRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	sp, err := s.Purchasing.UpdateSupplier(c.Request().Context(), id, req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, sp)
}

// PurchaseOrderLineRequest is a material ordered.
type PurchaseOrderLineRequest struct {
	// The material's code in the catalogue (once per order).
	Code string `json:"code" maxLength:"32" example:"LDSP16-SONOMA"`
	// In the material's unit: whole sheets and pieces, metres to the centimetre.
	Qty float64 `json:"qty" minimum:"0" maximum:"1000000" example:"10"`
	// Per unit; absent: the supplier's price for the material (0 without terms).
	Price *float64 `json:"price" validate:"optional" minimum:"0" maximum:"100000000" example:"3150"`
	// When it is expected; absent: the order's expected_on.
	ExpectedOn string `json:"expected_on" validate:"optional" format:"date" example:"2026-12-10"`
}

// PurchaseOrderRequest is the body of POST /api/v1/purchase-orders and PUT /api/v1/purchase-orders/{id}.
type PurchaseOrderRequest struct {
	SupplierID int64  `json:"supplier_id" minimum:"1" example:"1"`
	Note       string `json:"note" validate:"optional" maxLength:"2000" example:"к заказу 1542"`
	// The lines' expected date unless they give their own.
	ExpectedOn string                     `json:"expected_on" validate:"optional" format:"date" example:"2026-12-10"`
	Lines      []PurchaseOrderLineRequest `json:"lines" validate:"required,min=1,max=200"`
}

func (r PurchaseOrderRequest) input() purchasing.OrderInput {
	in := purchasing.OrderInput{SupplierID: r.SupplierID, Note: r.Note, ExpectedOn: r.ExpectedOn}
	for _, l := range r.Lines {
		in.Lines = append(in.Lines, purchasing.LineInput{Code: l.Code, Qty: l.Qty, Price: l.Price, ExpectedOn: l.ExpectedOn})
	}
	return in
}

// PurchaseOrderList is a page of purchase orders.
type PurchaseOrderList = List[purchasing.Order]

// listPurchaseOrders godoc
//
//	@Summary	Purchase orders
//	@ID			listPurchaseOrders
//	@Description	Purchase orders in id order with their lines (ordered, received so far, price, expected date) and total. 422 naming status for a state there is not.
//	@Tags		purchasing
//	@Produce	json
//	@Security	BearerAuth
//	@Param		status		query		string	false	"only orders in this state"	Enums(draft, ordered, partially_received, received, cancelled) example(ordered)
//	@Param		supplier_id	query		int		false	"only this supplier's orders"	minimum(1) example(1)
//	@Param		limit		query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param		cursor		query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9wdXJjaGFzZS1vcmRlcnMiLCJpZCI6MX0)
//	@Success	200			{object}	PurchaseOrderList
//	@Failure	400			{object}	Problem
//	@Failure	401			{object}	Problem
//	@Failure	422			{object}	Problem
//	@Router		/api/v1/purchase-orders [get]
func (s *server) listPurchaseOrders(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	sup, err := queryInt(c, "supplier_id")
	if err != nil {
		return err
	}
	os, next, err := s.Purchasing.Orders(c.Request().Context(), purchasing.OrderFilter{Status: c.QueryParam("status"), SupplierID: sup}, pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, os, next))
}

// getPurchaseOrder godoc
//
//	@Summary	One purchase order (JSON, PDF, CSV)
//	@ID			getPurchaseOrder
//	@Description	The order with its lines. With `Accept: application/pdf` the letter to send to the supplier (A4): the order's number and date, the supplier, a row per line with the supplier's article, the material, unit, quantity, price, sum and expected date, and the total. With `Accept: text/csv` a row per line, in the layout ?layout= names (office by default; see docs/operating.md, CSV exports).
//	@Tags		purchasing
//	@Produce	json
//	@Produce	application/pdf
//	@Produce	text/csv
//	@Security	BearerAuth
//	@Param		id	path		int	true	"purchase order id"	minimum(1) example(1)
//	@Param		layout	query	string	false	"CSV only: office (\";\", decimal commas, FACTORY_TIMEZONE, Russian headers) or machine (\",\", RFC 3339 UTC, decimal points, English headers); see docs/operating.md, CSV exports"	Enums(office, machine) default(office) example(machine)
//	@Success	200	{object}	purchasing.Order
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	406	{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/purchase-orders/{id} [get]
func (s *server) getPurchaseOrder(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	o, err := s.Purchasing.Order(c.Request().Context(), id)
	if err != nil {
		return err
	}
	switch preferredOf(c, echo.MIMEApplicationJSON, MIMEApplicationPDF, MIMETextCSV) {
	case MIMEApplicationPDF:
		var b bytes.Buffer
		if err := render.PurchaseOrderPDF(&b, o); err != nil {
			return err
		}
		c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`inline; filename="purchase-order-%d.pdf"`, o.ID))
		return c.Blob(http.StatusOK, MIMEApplicationPDF, b.Bytes())
	case MIMETextCSV:
		cl, err := s.csvLayoutOf(c)
		if err != nil {
			return err
		}
		rows := make([][]string, len(o.Lines))
		for i, l := range o.Lines {
			rows[i] = []string{strconv.Itoa(l.N), l.SupplierCode, l.Code, l.Name, l.Unit, cl.Qty(l.Qty, l.Unit), cl.Num(l.Price, 2), cl.Num(l.Qty*l.Price, 2),
				cl.Date(l.ExpectedOn), cl.Qty(l.Received, l.Unit)}
		}
		return writeCSVRows(c, cl, fmt.Sprintf("purchase-order-%d.csv", o.ID), purchaseLineCols, rows)
	}
	return c.JSON(http.StatusOK, o)
}

// purchaseLineCols are a purchase order's lines as CSV.
var purchaseLineCols = []csvCol{{"№", "n"}, {"Артикул поставщика", "supplier_code"}, {"Код", "code"}, {"Материал", "name"},
	{"Ед.", "unit"}, {"Кол-во", "qty"}, {"Цена", "price"}, {"Сумма", "sum"}, {"Ожидается", "expected_on"}, {"Получено", "received"}}

// createPurchaseOrder godoc
//
//	@Summary		Draft a purchase order (admin, planner, buyer)
//	@ID			createPurchaseOrder
//	@Description	Writes purchase_order.created; the order is a draft until it is ordered. A line's price defaults to the supplier's for the material. 422 naming supplier_id for no such supplier, lines[i].code for a material the catalogue does not have or one named twice, lines[i].qty for a quantity not positive or off its unit's step, lines[i].expected_on for a line without a date (its own or the order's); nothing is written then.
//	@Tags			purchasing
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		PurchaseOrderRequest	true	"the purchase order"
//	@Success		201		{object}	purchasing.Order
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/purchase-orders [post]
func (s *server) createPurchaseOrder(c echo.Context) error {
	var req PurchaseOrderRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	o, err := s.Purchasing.CreateOrder(c.Request().Context(), req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, o)
}

// updatePurchaseOrder godoc
//
//	@Summary		Replace a draft purchase order (admin, planner, buyer)
//	@ID			updatePurchaseOrder
//	@Description	Writes purchase_order.changed. 409 naming status once the order is no draft (ordered, received or cancelled); 422 as createPurchaseOrder; nothing is written then.
//	@Tags			purchasing
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int						true	"purchase order id"	minimum(1) example(1)
//	@Param			body	body		PurchaseOrderRequest	true	"the purchase order"
//	@Success		200		{object}	purchasing.Order
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"the order is no draft"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/purchase-orders/{id} [put]
func (s *server) updatePurchaseOrder(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req PurchaseOrderRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	o, err := s.Purchasing.UpdateOrder(c.Request().Context(), id, req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, o)
}

// placePurchaseOrder godoc
//
//	@Summary		Send a draft to its supplier (admin, planner, buyer)
//	@ID			placePurchaseOrder
//	@Description	The draft becomes ordered and writes purchase_order.ordered: its lines are expected on their dates, and the plan counts on them. 409 naming status when it is no draft.
//	@Tags			purchasing
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id	path		int	true	"purchase order id"	minimum(1) example(1)
//	@Success		200	{object}	purchasing.Order
//	@Failure		401	{object}	Problem
//	@Failure		403	{object}	Problem
//	@Failure		404	{object}	Problem
//	@Failure		409	{object}	Problem	"the order is no draft"
//	@Failure		422	{object}	Problem
//	@Router			/api/v1/purchase-orders/{id}/order [post]
func (s *server) placePurchaseOrder(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	o, err := s.Purchasing.PlaceOrder(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, o)
}

// CancelPurchaseOrderRequest is the body of POST /api/v1/purchase-orders/{id}/cancel.
type CancelPurchaseOrderRequest struct {
	Reason string `json:"reason" maxLength:"200" example:"поставщик не подтвердил сроки"`
}

// cancelPurchaseOrder godoc
//
//	@Summary		Cancel a purchase order (admin, planner, buyer)
//	@ID			cancelPurchaseOrder
//	@Description	Cancels a draft or an order not received in full, with a reason, and writes purchase_order.cancelled: what is still due of it is expected no more (what was received stays in stock). 422 naming reason when it is missing, 409 naming status for an order received or cancelled already; nothing is written then.
//	@Tags			purchasing
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int							true	"purchase order id"	minimum(1) example(1)
//	@Param			body	body		CancelPurchaseOrderRequest	true	"why"
//	@Success		200		{object}	purchasing.Order
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"the order is received or cancelled"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/purchase-orders/{id}/cancel [post]
func (s *server) cancelPurchaseOrder(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req CancelPurchaseOrderRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	o, err := s.Purchasing.CancelOrder(c.Request().Context(), id, req.Reason)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, o)
}
