package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/platform/jsontime"
	"github.com/tsekh/tsekh/internal/platform/page"
	"github.com/tsekh/tsekh/internal/sales"
)

// CreateOrderRequest is the body of POST /api/v1/orders.
type CreateOrderRequest struct {
	Customer CustomerRequest    `json:"customer" validate:"required"`
	Items    []OrderItemRequest `json:"items" validate:"required,min=1,max=200"`
	// The day the customer wants the order, from 2000-01-01 to 2100-12-31.
	DueDate string `json:"due_date" validate:"optional" format:"date" example:"2026-12-20"`
	// Free text about the whole order: tabs and line breaks are allowed, other control characters are not.
	Note string `json:"note" validate:"optional" maxLength:"2000" example:"доставка после 18:00"`
}

// CustomerRequest is who orders.
// Text is counted in characters, one line each, without control characters.
type CustomerRequest struct {
	Name  string `json:"name" validate:"required" maxLength:"200" example:"Иван Петров"`
	Phone string `json:"phone" validate:"optional" maxLength:"50" example:"+7 900 123-45-67"`
	Email string `json:"email" validate:"optional" maxLength:"254" example:"ivan@example.com"`
}

// OrderItemRequest is one line of a new order.
type OrderItemRequest struct {
	SKU string `json:"sku" validate:"required" maxLength:"64" example:"SHK-KUPE-1600"`
	Qty int    `json:"qty" validate:"required" minimum:"1" maximum:"10000" example:"1"`
	// Free text: tabs and line breaks are allowed, other control characters are not.
	Note string `json:"note" validate:"optional" maxLength:"2000" example:"цвет: дуб сонома"`
	// A board per decor slot of the product, by decor or board code, e.g. {"корпус": "Дуб сонома"}; each slot's default otherwise.
	Options map[string]string `json:"options" validate:"optional,max=20" example:"корпус:Дуб сонома"`
}

func (r CreateOrderRequest) toNewOrder() (sales.NewOrder, error) {
	in := sales.NewOrder{Customer: sales.Customer(r.Customer), Note: r.Note}
	due, fields := sales.ParseDueDate(r.DueDate)
	if len(fields) > 0 {
		return in, apperr.Invalid("the order is not valid", fields...)
	}
	in.DueDate = due
	for _, it := range r.Items {
		in.Items = append(in.Items, sales.NewItem{SKU: it.SKU, Qty: it.Qty, Note: it.Note, Options: it.Options})
	}
	return in, nil
}

// createOrder godoc
//
//	@Summary		Create a manual order (manager)
//	@ID				createOrder
//	@Description	Stores the order, its items and its order.received event in one transaction.
//	@Description
//	@Description	With an `Idempotency-Key` header (one; 1 to 255 visible ASCII characters, scoped to the caller) a retried request
//	@Description	cannot create a second order: a repeat with the same body (compared as JSON: spacing and key order do not matter)
//	@Description	gets the stored response again, the same status and body, with `Idempotent-Replayed: true`; the same key with
//	@Description	another body is refused (422); a repeat sent while the first request with the key is still in flight waits for
//	@Description	it and gets its response (or, when the first failed, goes ahead itself). A request that fails, whatever the cause
//	@Description	(a 422, its connection to the database cut), does not keep its key. Two Idempotency-Key headers are refused (400).
//	@Description
//	@Description	Text is valid UTF-8 without control characters (an item's note may hold tabs and line breaks) and within its
//	@Description	maxLength in characters; due_date is from 2000-01-01 to 2100-12-31 (422 naming the field otherwise).
//	@Tags			sales
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			Idempotency-Key	header		string				false	"a key the client makes up for this request, e.g. a UUID"	minlength(1) maxlength(255) example(3f1c2a9e-5b7d-4e2a-9c1f-8a6b0d4e7f21)
//	@Param			body			body		CreateOrderRequest	true	"the order"
//	@Success		201				{object}	sales.Order
//	@Header			201				{string}	Idempotent-Replayed	"true when this is the stored response of an earlier request with the key"
//	@Failure		400				{object}	Problem
//	@Failure		401				{object}	Problem
//	@Failure		403				{object}	Problem
//	@Failure		409				{object}	Problem	"the Idempotency-Key expired while the request was in progress, or is held by a request of an older version"
//	@Failure		413				{object}	Problem
//	@Failure		415				{object}	Problem	"the body is not application/json"
//	@Failure		422				{object}	Problem	"invalid order, or the Idempotency-Key was used with another body"
//	@Router			/api/v1/orders [post]
func (s *server) createOrder(c echo.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	var req CreateOrderRequest
	if err := input.DecodeObject(body, &req); err != nil {
		return err
	}
	in, err := req.toNewOrder()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if keys := c.Request().Header.Values(headerIdempotencyKey); len(keys) > 0 {
		if len(keys) > 1 {
			return apperr.Errorf(apperr.EBADREQUEST, "send one Idempotency-Key header, not %d", len(keys))
		}
		k := sales.IdempotencyKey{UserID: currentUser(c).ID, Key: keys[0], RequestHash: sales.RequestHash(body)}
		if err := checkIdempotencyKey(k.Key); err != nil {
			return err
		}
		res, err := s.Sales.CreateOrderOnce(ctx, k, in)
		if err != nil {
			return err
		}
		if res.Replayed {
			c.Response().Header().Set("Idempotent-Replayed", "true")
		}
		return c.JSONBlob(res.Status, jsontime.Fix(res.Body))
	}
	o, err := s.Sales.CreateOrder(ctx, in)
	if err != nil {
		return err
	}
	if err := s.Sales.WithBoards(ctx, &o); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, o)
}

const headerIdempotencyKey = "Idempotency-Key"

// checkIdempotencyKey refuses keys that are empty, too long or not visible ASCII.
func checkIdempotencyKey(k string) error {
	if k == "" || len(k) > 255 {
		return apperr.Errorf(apperr.EBADREQUEST, "the Idempotency-Key header must be 1 to 255 characters long")
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return apperr.Errorf(apperr.EBADREQUEST, "the Idempotency-Key header must be visible ASCII characters without spaces")
		}
	}
	return nil
}

// listOrders godoc
//
//	@Summary		Sales orders, newest first; JSON or CSV
//	@ID				listOrders
//	@Description	Orders with their items and states, newest first; the ETA once production is planned, and late: the ETA is after the due date
//	@Description	(an order without a due date or an ETA is not late, nor is a cancelled one).
//	@Description
//	@Description	Filters combine (AND). customer finds a substring of the customer's name or phone whatever its case, Cyrillic included
//	@Description	(ё and е alike): "иван" finds "Иван Петров"; a phone number is found by its digits, however it is written ("9000000000" and
//	@Description	"900 000-00-00" both find "+7 900 000-00-00"). sku selects the orders with an item of that SKU. due_after and due_before
//	@Description	select orders due on or after / on or before the day (orders without a due date are left out by either).
//	@Description	A filter value that cannot match anything (an unknown status or source, a date that is not YYYY-MM-DD, late other than true or false,
//	@Description	due_before before due_after) is a 422 naming the parameter; a parameter the endpoint does not take is a 400.
//	@Description
//	@Description	With `Accept: text/csv` the answer is every order the filters select (limit and cursor do not apply) as CSV for a spreadsheet:
//	@Description	UTF-8 with a byte order mark, a header row, one row per order with its items summarised ("SKU × qty; …") and their total units, in the layout ?layout= names (office by default; see docs/operating.md, CSV exports).
//	@Tags			sales
//	@Produce		json
//	@Produce		text/csv
//	@Security		BearerAuth
//	@Param			status		query		string	false	"order state"	Enums(received, in_production, ready, partially_shipped, shipped, cancelled)	example(received)
//	@Param			source		query		string	false	"order source"	Enums(shop, crm, manual)	example(shop)
//	@Param			customer	query		string	false	"part of the customer's name or phone, any case"	maxlength(200)	example(Петров)
//	@Param			sku			query		string	false	"orders with an item of this SKU"	maxlength(64)	example(SHK-KUPE-1600)
//	@Param			due_after	query		string	false	"due on or after this day (YYYY-MM-DD)"		format(date)	example(2026-12-01)
//	@Param			due_before	query		string	false	"due on or before this day (YYYY-MM-DD)"	format(date)	example(2026-12-31)
//	@Param			late		query		bool	false	"true: only late orders (ETA after the due date); false: only the others"	example(true)
//	@Param			limit		query		int		false	"page size (1-500, default 50; JSON only)"	minimum(1) maximum(500) default(50) example(50)
//	@Param			cursor		query		string	false	"next_cursor of the previous page (JSON only)"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9vcmRlcnMiLCJpZCI6MX0)
//	@Param		layout	query	string	false	"CSV only: office (\";\", decimal commas, FACTORY_TIMEZONE, Russian headers) or machine (\",\", RFC 3339 UTC, decimal points, English headers); see docs/operating.md, CSV exports"	Enums(office, machine) default(office) example(machine)
//	@Success		200			{object}	OrderList	"JSON; with Accept: text/csv, CSV with one row per order"
//	@Failure		400			{object}	Problem
//	@Failure		401			{object}	Problem
//	@Failure		422			{object}	Problem	"a filter value that cannot match, named in errors"
//	@Failure		406			{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Router			/api/v1/orders [get]
func (s *server) listOrders(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	f, err := orderFilterOf(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if wantsCSV(c) {
		l, err := s.csvLayoutOf(c)
		if err != nil {
			return err
		}
		return writeCSV(c, l, "orders.csv", orderCSVCols, orderCSVRow, func(pr page.Request) ([]sales.Order, string, error) {
			return s.Sales.Orders(ctx, f, pr)
		})
	}
	os, next, err := s.Sales.Orders(ctx, f, pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, os, next))
}

// orderFilterOf reads the orders list's filters from the query, naming
// every parameter at fault in one 422.
func orderFilterOf(c echo.Context) (sales.OrderFilter, error) {
	f := sales.OrderFilter{
		Status:   c.QueryParam("status"),
		Source:   c.QueryParam("source"),
		Customer: c.QueryParam("customer"),
		SKU:      strings.TrimSpace(c.QueryParam("sku")),
	}
	var fields, more []apperr.FieldError
	f.DueAfter, more = input.Date("due_after", c.QueryParam("due_after"))
	fields = append(fields, more...)
	f.DueBefore, more = input.Date("due_before", c.QueryParam("due_before"))
	fields = append(fields, more...)
	switch v := c.QueryParam("late"); v {
	case "":
	case "true", "false":
		late := v == "true"
		f.Late = &late
	default:
		fields = append(fields, apperr.Field("late", "must be true or false"))
	}
	if err := f.Validate(); err != nil {
		fields = append(fields, apperr.As(err).Fields...)
	}
	if len(fields) > 0 {
		return f, apperr.Invalid("invalid query", fields...)
	}
	return f, nil
}

// orderCSVCols and orderCSVRow are the orders list as CSV: one row per order.
var orderCSVCols = []csvCol{{"№", "id"}, {"Создан", "created_at"}, {"Статус", "status"}, {"Источник", "source"},
	{"Покупатель", "customer_name"}, {"Телефон", "customer_phone"}, {"Эл. почта", "customer_email"},
	{"Срок", "due_date"}, {"Готовность", "eta"}, {"Опаздывает", "late"}, {"Изделия", "items"}, {"Штук", "units"},
	{"Ключ синхронизации", "sync_id"}, {"Заказ в CRM", "crm_order_id"}}

func orderCSVRow(l csvLayout, o sales.Order) []string {
	items := make([]string, len(o.Items))
	units := 0
	for i, it := range o.Items {
		items[i] = it.SKU + " × " + strconv.Itoa(it.Qty)
		units += it.Qty
	}
	syncID, crmID := "", ""
	if o.SyncID != nil {
		syncID = *o.SyncID
	}
	if o.CRMOrderID != nil {
		crmID = *o.CRMOrderID
	}
	return []string{strconv.FormatInt(o.ID, 10), l.Time(o.CreatedAt), o.Status, o.Source,
		o.Customer.Name, o.Customer.Phone, o.Customer.Email, l.Date(o.DueDate), l.Date(o.ETA), l.Bool(o.Late),
		strings.Join(items, "; "), strconv.Itoa(units), syncID, crmID}
}

// getOrder godoc
//
//	@Summary	One sales order with its items and their states
//	@ID		getOrder
//	@Description	The order with its items and their states, and its ETA once production is planned; its shipments; the shop's
//	@Description	delivery_address, delivery_date, currency, total and the items' unit_price and line_total as the shop sent them
//	@Description	(tsekh computes no prices); source_version and source_updated_at of the shop's delivery or CRM row last applied.
//	@Tags		sales
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"order id"	minimum(1) example(1)
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

// cancelOrder godoc
//
//	@Summary		Cancel a received order, with a reason (manager)
//	@ID				cancelOrder
//	@Description	Only a received order can be cancelled: 409 once production has taken it up (naming the items the plan's events said were launched), or when it is cancelled already.
//	@Description	The reason is required (free text, up to 1,000 characters; 422 without it): it is shown on the order as cancel_reason, journalled in
//	@Description	order.cancelled and order.status_changed, and told to the shop with the cancellation of its orders.
//	@Description	Writes order.cancelled and order.status_changed. The plan reacts to order.cancelled: the items leave its backlog and every production order on which no work has started
//	@Description	(prod_order.items_released, or prod_order.cancelled for one left empty); a production order on which work has started (launched and started before sales heard of it) is flagged
//	@Description	needs_attention for the planner (prod_order.needs_attention). The order's items follow those events back to new.
//	@Tags			sales
//	@Produce		json
//	@Security		BearerAuth
//	@Accept			json
//	@Param			id		path		int				true	"order id"	minimum(1) example(1)
//	@Param			body	body		CancelRequest	true	"why"
//	@Success		200		{object}	sales.Order
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"no reason, or too long a one"
//	@Router			/api/v1/orders/{id}/cancel [post]
func (s *server) cancelOrder(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req CancelRequest
	if err := bindOptionalJSON(c, &req); err != nil {
		return err
	}
	o, err := s.Sales.CancelOrder(c.Request().Context(), id, req.Reason)
	if err != nil {
		return err
	}
	if err := s.Sales.WithBoards(c.Request().Context(), &o); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, o)
}

// ShipmentRequest is the body of POST /api/v1/orders/{id}/shipments.
// Text is counted in characters, one line each, without control characters.
type ShipmentRequest struct {
	Items    []ShipmentLineRequest `json:"items" validate:"required,min=1,max=200"`
	Carrier  string                `json:"carrier" validate:"optional" maxLength:"100" example:"Деловые Линии"`
	Tracking string                `json:"tracking" validate:"optional" maxLength:"100" example:"DL-2611-0042"`
	// When it left; by default now. RFC 3339, on a day from 2000-01-01 to 2100-12-31.
	ShippedAt string `json:"shipped_at" validate:"optional" format:"date-time" maxLength:"40" example:"2026-12-18T09:30:00Z"`
}

// ShipmentLineRequest is a quantity of one item to ship.
type ShipmentLineRequest struct {
	ItemID int64 `json:"item_id" validate:"required" example:"53"`
	Qty    int   `json:"qty" validate:"required" minimum:"1" example:"1"`
}

// shipOrder godoc
//
//	@Summary		Ship made items of an order (manager)
//	@ID				shipOrder
//	@Description	Records a shipment: quantities of the order's items that production has made (item status done), partially or whole, with carrier and tracking.
//	@Description	The items ship whole → item status shipped; the order becomes shipped once every item has shipped whole, partially_shipped before.
//	@Description	Writes order.shipped (with the shipment) and, when the order's state changes, order.status_changed; the shop's callback tells the shop, with carrier and tracking.
//	@Description	422 naming items[i].item_id for an item not of the order or not made yet, items[i].qty for more than is left of it to ship (ordered − shipped); 409 when the order is not in production, ready or partially shipped.
//	@Tags			sales
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int				true	"order id"	minimum(1) example(1)
//	@Param			body	body		ShipmentRequest	true	"what ships"
//	@Success		201		{object}	sales.Order		"the order with its shipments"
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"the order cannot ship"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/orders/{id}/shipments [post]
func (s *server) shipOrder(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req ShipmentRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	at, fields := input.Time("shipped_at", req.ShippedAt)
	if len(fields) > 0 {
		return apperr.Invalid("the shipment is not valid", fields...)
	}
	in := sales.NewShipment{Carrier: strings.TrimSpace(req.Carrier), Tracking: strings.TrimSpace(req.Tracking), ShippedAt: at}
	for _, l := range req.Items {
		in.Items = append(in.Items, sales.ShipLine{ItemID: l.ItemID, Qty: l.Qty})
	}
	o, err := s.Sales.Ship(c.Request().Context(), id, in)
	if err != nil {
		return err
	}
	if err := s.Sales.WithBoards(c.Request().Context(), &o); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, o)
}
