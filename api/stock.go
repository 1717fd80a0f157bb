package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/purchasing"
	"github.com/tsekh/tsekh/internal/render"
	"github.com/tsekh/tsekh/internal/stock"
)

// StockLineRequest is a quantity of one material, in its unit: whole sheets for boards, metres to the centimetre (0.01) for edge bands, whole pieces for fittings.
type StockLineRequest struct {
	// The material's code (or an offcut's), read as every code is: in NFKC, regardless of case.
	Code string  `json:"code" maxLength:"32" example:"LDSP16-SONOMA"`
	Qty  float64 `json:"qty" minimum:"0" maximum:"1000000" example:"20"`
}

// StockReceiptLineRequest is a quantity of one material received, in its unit: whole sheets for boards, metres to the centimetre (0.01) for edge bands, whole pieces for fittings.
type StockReceiptLineRequest struct {
	// The material's code, read as every code is: in NFKC, regardless of case. With purchase_order_id, it names the order's line of that material.
	Code string  `json:"code" maxLength:"32" example:"LDSP16-SONOMA"`
	Qty  float64 `json:"qty" minimum:"0" maximum:"1000000" example:"20"`
	// With purchase_order_id: why more than is still due of the line is taken (required then).
	OverReason string `json:"over_reason" validate:"optional" maxLength:"200" example:"поставщик привёз полную пачку"`
}

// StockReceiptRequest is the body of POST /api/v1/stock/receipts.
type StockReceiptRequest struct {
	Lines []StockReceiptLineRequest `json:"lines" validate:"required,min=1,max=200"`
	// Free text: the supplier, the delivery note.
	Note string `json:"note" validate:"optional" maxLength:"2000" example:"накладная 1542 от ООО «Плита»"`
	// The purchase order the delivery was sent against: each line is booked on the order's line of its material.
	PurchaseOrderID *int64 `json:"purchase_order_id" validate:"optional" minimum:"1" example:"1"`
}

// StockCountRequest is the body of POST /api/v1/stock/counts.
type StockCountRequest struct {
	// What was counted of each material: on hand becomes it.
	Lines  []StockLineRequest `json:"lines" validate:"required,min=1,max=200"`
	Reason string             `json:"reason" maxLength:"200" example:"инвентаризация на конец месяца"`
}

func stockLines(ls []StockLineRequest) []stock.Line {
	out := make([]stock.Line, len(ls))
	for i, l := range ls {
		out[i] = stock.Line{Code: l.Code, Qty: l.Qty}
	}
	return out
}

// StockList is a page of stock levels.
type StockList = List[stock.Level]

// listStock godoc
//
//	@Summary	Stock per material: on hand, reserved, available
//	@ID			listStock
//	@Description	Every material of the catalogue in id order with what is on hand (receipts + counts − consumption), reserved (what live production orders still need of it) and available (on hand − reserved; negative when they need more than is there), and its reorder point.
//	@Tags		stock
//	@Produce	json
//	@Security	BearerAuth
//	@Param		kind	query		string	false	"only materials of this kind"	Enums(board, band, fitting) example(board)
//	@Param		limit	query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param		cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9zdG9jayIsImlkIjoxfQ)
//	@Success	200		{object}	StockList
//	@Failure	400		{object}	Problem
//	@Failure	401		{object}	Problem
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/stock [get]
func (s *server) listStock(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	ls, next, err := s.Stock.Levels(c.Request().Context(), c.QueryParam("kind"), pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, ls, next))
}

// receiveStock godoc
//
//	@Summary		Receive materials into stock (admin, planner, buyer)
//	@ID			receiveStock
//	@Description	Adds the quantities to what is on hand and writes stock.received. 422 naming lines[i].code for a material the catalogue does not have, lines[i].qty for a quantity not positive or off its unit's step (whole sheets and pieces, metres to the centimetre); nothing is written then.
//	@Description	With purchase_order_id, the delivery is received against that purchase order (ordered or partially received): each line is booked on the order's line of its material (a part of it, or the rest), stock.received names the order, the order becomes partially_received or, once every line has come, received, and purchase_order.received says what came. Deliveries racing on one line are taken one after the other, never beyond what is due without a reason. 422 naming purchase_order_id for no such order, lines[i].code for a material not on it, lines[i].qty for more than its line still has due without lines[i].over_reason; 409 naming status for an order that is a draft, received or cancelled; nothing is written then.
//	@Tags			stock
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		StockReceiptRequest	true	"what was received"
//	@Success		201		{object}	stock.Receipt
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		409		{object}	Problem	"the purchase order takes no delivery in its state"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/stock/receipts [post]
func (s *server) receiveStock(c echo.Context) error {
	var req StockReceiptRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	var r stock.Receipt
	var err error
	if req.PurchaseOrderID != nil {
		lines := make([]purchasing.ReceiptLine, len(req.Lines))
		for i, l := range req.Lines {
			lines[i] = purchasing.ReceiptLine{Code: l.Code, Qty: l.Qty, OverReason: l.OverReason}
		}
		r, err = s.Purchasing.Receive(c.Request().Context(), *req.PurchaseOrderID, lines, req.Note)
	} else {
		var fields []apperr.FieldError
		lines := make([]stock.Line, len(req.Lines))
		for i, l := range req.Lines {
			lines[i] = stock.Line{Code: l.Code, Qty: l.Qty}
			if l.OverReason != "" {
				fields = append(fields, apperr.Field(fmt.Sprintf("lines[%d].over_reason", i), "is for a receipt against a purchase order (purchase_order_id)"))
			}
		}
		if len(fields) > 0 {
			return apperr.Invalid("the receipt is not valid", fields...)
		}
		r, err = s.Stock.Receive(c.Request().Context(), lines, req.Note)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, r)
}

// countStock godoc
//
//	@Summary		Record a stock count (admin, planner, buyer)
//	@ID			countStock
//	@Description	Sets each material's on hand to what was counted (the difference is the count's movement) and writes stock.counted with the reason. 422 as for receipts (a count may be 0), and naming reason when it is missing.
//	@Tags			stock
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		StockCountRequest	true	"what was counted"
//	@Success		201		{object}	stock.Receipt
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/stock/counts [post]
func (s *server) countStock(c echo.Context) error {
	var req StockCountRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	r, err := s.Stock.Count(c.Request().Context(), stockLines(req.Lines), req.Reason)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, r)
}

// getRequirements godoc
//
//	@Summary	What production orders or a period need of each material
//	@ID			getRequirements
//	@Description	With prod_orders: what those production orders still need (what stock reserves for them) and have used up. With from and to: the work due then — the live production orders with an item due then, and the backlog's items due then (as a launch would explode them, by the boards their options choose). With both: the production orders named and the backlog's items due in the period. qty = launched + backlog. Boards in sheets, fractions included, pooled: a part's board is its share of the cutting-plan sheet it lies on, or of what the cutting optimiser lays its launch's (or backlog item's) parts out on; sheets is qty rounded up once, for buying. Edge bands in metres (each banded side plus EDGE_OVERHANG_MM), fittings in pieces.
//	@Description	With Accept: text/csv, one row per material, in the layout ?layout= names (office by default; see docs/operating.md, CSV exports).
//	@Tags		stock
//	@Produce	json
//	@Produce	text/csv
//	@Security	BearerAuth
//	@Param		prod_orders	query		string	false	"production order ids separated by commas"	maxlength(2000) extensions(x-pattern=ids) example(1,2)
//	@Param		from		query		string	false	"the first due date of the period"	format(date) example(2026-12-07)
//	@Param		to			query		string	false	"the last due date of the period (at most a year after from)"	format(date) example(2026-12-13)
//	@Param		layout	query	string	false	"CSV only: office (\";\", decimal commas, FACTORY_TIMEZONE, Russian headers) or machine (\",\", RFC 3339 UTC, decimal points, English headers); see docs/operating.md, CSV exports"	Enums(office, machine) default(office) example(machine)
//	@Success	200			{object}	stock.Requirements
//	@Failure	400			{object}	Problem
//	@Failure	401			{object}	Problem
//	@Failure	406			{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Failure	422			{object}	Problem
//	@Router		/api/v1/materials/requirements [get]
func (s *server) getRequirements(c echo.Context) error {
	ctx := c.Request().Context()
	var ids []int64
	if v := c.QueryParam("prod_orders"); v != "" {
		for _, p := range strings.Split(v, ",") {
			id, perr := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
			if perr != nil || id <= 0 {
				return apperr.Invalid("invalid query", apperr.Field("prod_orders", "must be production order ids separated by commas, e.g. 1,2,3"))
			}
			ids = append(ids, id)
		}
		if len(ids) > floor.MaxCuttingListOrders {
			return apperr.Invalid("invalid query", apperr.Field("prod_orders", "may name at most %d production orders", floor.MaxCuttingListOrders))
		}
	}
	from, f1 := input.Date("from", c.QueryParam("from"))
	to, f2 := input.Date("to", c.QueryParam("to"))
	if f := slices.Concat(f1, f2); len(f) > 0 {
		return apperr.Invalid("invalid query", f...)
	}
	orders, backlog, err := s.Plan.RequirementsScope(ctx, ids, from, to)
	if err != nil {
		return err
	}
	area, err := s.Plan.UncutArea(ctx, orders)
	if err != nil {
		return err
	}
	r, err := s.Stock.Requirements(ctx, orders, backlog, area)
	if err != nil {
		return err
	}
	if !from.IsZero() {
		r.From, r.To = from.String(), to.String()
	}
	if wantsCSV(c) {
		l, err := s.csvLayoutOf(c)
		if err != nil {
			return err
		}
		rows := make([][]string, len(r.Materials))
		for i, m := range r.Materials {
			sheets := ""
			if m.Sheets != nil {
				sheets = strconv.Itoa(*m.Sheets)
			}
			q := func(v float64) string { return l.Qty(v, m.Unit) }
			rows[i] = []string{m.Code, m.Name, m.Decor, m.Unit, q(m.Launched), q(m.Backlog), q(m.Qty), sheets, q(m.Consumed), l.Num(m.AreaM2, 2)}
		}
		return writeCSVRows(c, l, "requirements.csv", requirementCols, rows)
	}
	return c.JSON(http.StatusOK, r)
}

// requirementCols are the requirements' columns as CSV.
var requirementCols = []csvCol{{"Код", "code"}, {"Материал", "name"}, {"Декор", "decor"}, {"Ед.", "unit"}, {"Запущено", "launched"},
	{"Портфель", "backlog"}, {"Всего", "qty"}, {"Листов", "sheets"}, {"Израсходовано", "consumed"}, {"Площадь, м²", "area_m2"}}

// shortageCols are the shortages' columns as CSV.
var shortageCols = []csvCol{{"Код", "code"}, {"Материал", "name"}, {"Декор", "decor"}, {"Ед.", "unit"}, {"На складе", "on_hand"},
	{"В резерве", "reserved"}, {"Доступно", "available"}, {"Портфель", "backlog"}, {"Точка заказа", "reorder_point"}, {"Купить", "to_buy"},
	{"Ниже нуля из-за", "taken_by"}}

// ShortageList is what to buy.
type ShortageList struct {
	Items []stock.ShortageLine `json:"items"`
}

// getShortages godoc
//
//	@Summary	What to buy: materials short of what the backlog needs and their reorder point
//	@ID			getShortages
//	@Description	Per material: on hand, reserved (what live production orders still need, pooled: fractions of a sheet included), available, what the backlog's items need (estimated as a launch would), the reorder point, and to_buy = backlog + reorder point − available, rounded up once (whole sheets and pieces, metres to the centimetre); only materials with something to buy. negative flags a material whose on hand is below nothing (the floor used more than was booked in: its consumption is booked all the same, and stock.consumed says so in overdrawn), and taken_by lists the production orders whose consumption took it below nothing since it last was at nothing or more, with how much each took beyond what was there.
//	@Description	With Accept: text/csv, one row per material, in the layout ?layout= names (office by default; see docs/operating.md, CSV exports).
//	@Tags		stock
//	@Produce	json
//	@Produce	text/csv
//	@Security	BearerAuth
//	@Param		layout	query	string	false	"CSV only: office (\";\", decimal commas, FACTORY_TIMEZONE, Russian headers) or machine (\",\", RFC 3339 UTC, decimal points, English headers); see docs/operating.md, CSV exports"	Enums(office, machine) default(office) example(machine)
//	@Success	200	{object}	ShortageList
//	@Failure	401	{object}	Problem
//	@Failure	406	{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Router		/api/v1/materials/shortages [get]
func (s *server) getShortages(c echo.Context) error {
	ctx := c.Request().Context()
	short, err := s.Stock.Shortages(ctx, s.Plan.BacklogItems())
	if err != nil {
		return err
	}
	if wantsCSV(c) {
		l, err := s.csvLayoutOf(c)
		if err != nil {
			return err
		}
		rows := make([][]string, len(short))
		for i, m := range short {
			q := func(v float64) string { return l.Qty(v, m.Unit) }
			var taken []string
			for _, tb := range m.TakenBy {
				taken = append(taken, fmt.Sprintf("№%d: %s", tb.ProdOrderID, q(tb.Qty)))
			}
			rows[i] = []string{m.Code, m.Name, m.Decor, m.Unit, q(m.OnHand), q(m.Reserved), q(m.Available), q(m.Backlog), q(m.ReorderPoint), q(m.ToBuy),
				strings.Join(taken, "; ")}
		}
		return writeCSVRows(c, l, "shortages.csv", shortageCols, rows)
	}
	return c.JSON(http.StatusOK, ShortageList{Items: short})
}

// StockWriteOffRequest is the body of POST /api/v1/stock/write-offs.
type StockWriteOffRequest struct {
	// What leaves the shelf: materials in their unit, or offcuts by code (qty 1).
	Lines  []StockLineRequest `json:"lines" validate:"required,min=1,max=200"`
	Reason string             `json:"reason" maxLength:"200" example:"лист повреждён при разгрузке"`
}

// writeOffStock godoc
//
//	@Summary		Write materials or offcuts off (admin, planner)
//	@ID			writeOffStock
//	@Description	Takes what the lines name off the shelf for the reason (damaged, lost) and writes stock.written_off: a material's on hand comes down by the quantity (it may go below nothing, as the shelf says), an offcut (by its code, qty 1) is written off and leaves the cutting plan that reserved it stale. 422 naming lines[i].code for a code that is no material and no offcut in stock, lines[i].qty for a quantity not positive (or not whole, for sheets and pieces; not 1 for an offcut), reason when it is missing; nothing is written then.
//	@Tags			stock
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		StockWriteOffRequest	true	"what leaves the shelf, and why"
//	@Success		201		{object}	stock.Receipt
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/stock/write-offs [post]
func (s *server) writeOffStock(c echo.Context) error {
	var req StockWriteOffRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	r, err := s.Stock.WriteOff(c.Request().Context(), stockLines(req.Lines), req.Reason)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, r)
}

// OffcutList is a page of offcuts.
type OffcutList = List[stock.Offcut]

// listOffcuts godoc
//
//	@Summary	Offcuts in stock
//	@ID			listOffcuts
//	@Description	The offcuts (деловой остаток) cut sheets left, in id order: each with its code (O<cutting plan>-<sheet>-<k>, on its label), board, size and state. Without status, those in stock: available, and reserved by a cutting plan that cuts parts from them. The next cutting plans of a board cut its available offcuts first.
//	@Tags		stock
//	@Produce	json
//	@Security	BearerAuth
//	@Param		board			query		string	false	"only offcuts of this board (its code, regardless of case)"	maxlength(32) example(LDSP16-WHITE)
//	@Param		min_length_mm	query		number	false	"only pieces at least this long (either way round)"	minimum(0) maximum(100000) example(600)
//	@Param		min_width_mm	query		number	false	"only pieces at least this wide (either way round)"	minimum(0) maximum(100000) example(300)
//	@Param		status			query		string	false	"only offcuts in this state"	Enums(available, reserved, used, written_off) example(available)
//	@Param		limit			query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param		cursor			query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9zdG9jay9vZmZjdXRzIiwiaWQiOjF9)
//	@Success	200				{object}	OffcutList
//	@Failure	400				{object}	Problem
//	@Failure	401				{object}	Problem
//	@Failure	422				{object}	Problem
//	@Router		/api/v1/stock/offcuts [get]
func (s *server) listOffcuts(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	f := stock.OffcutFilter{Board: c.QueryParam("board"), Status: c.QueryParam("status")}
	for _, q := range []struct {
		name string
		to   *float64
	}{{"min_length_mm", &f.MinLengthMM}, {"min_width_mm", &f.MinWidthMM}} {
		v := c.QueryParam(q.name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n < 0 || n > 100000 || n != n {
			return apperr.Invalid("invalid query", apperr.Field(q.name, "must be a size in millimetres from 0 to 100000"))
		}
		*q.to = n
	}
	offcuts, next, err := s.Stock.Offcuts(c.Request().Context(), f, pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, offcuts, next))
}

// getOffcut godoc
//
//	@Summary	One offcut
//	@ID			getOffcut
//	@Description	The offcut with the code (regardless of case): its board, size, the sheet that left it and its state.
//	@Tags		stock
//	@Produce	json
//	@Security	BearerAuth
//	@Param		code	path		string	true	"the offcut's code"	maxlength(40) example(O1-1-1)
//	@Success	200		{object}	stock.Offcut
//	@Failure	401		{object}	Problem
//	@Failure	404		{object}	Problem
//	@Router		/api/v1/stock/offcuts/{code} [get]
func (s *server) getOffcut(c echo.Context) error {
	o, err := s.Stock.OffcutByCode(c.Request().Context(), c.Param("code"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, o)
}

// getOffcutLabel godoc
//
//	@Summary	An offcut's label (PDF, ZPL)
//	@ID			getOffcutLabel
//	@Description	The label of the offcut with the code (regardless of case), as getCuttingPlanLabels prints it after its sheet's parts: its code as the barcode, "Деловой остаток", its size (length × width mm), board, decor and thickness, the plan and sheet that left it. For a label lost or worn off the piece. Formats and layouts as getLabels: PDF by default, ZPL with `Accept: application/zpl` or format=zpl; 422 naming layout, format or dpi for a value they do not take.
//	@Tags		stock
//	@Produce	application/pdf
//	@Produce	application/zpl
//	@Security	BearerAuth
//	@Param		code	path		string	true	"the offcut's code"	maxlength(40) example(O1-1-1)
//	@Param		layout	query		string	false	"PDF: label (one per page; default) or a4 (an A4 sheet); ZPL: label only"	Enums(label, a4)	example(label)
//	@Param		format	query		string	false	"pdf or zpl, instead of the Accept header"	Enums(pdf, zpl)	example(zpl)
//	@Param		dpi		query		int		false	"ZPL only: the printer's resolution (default 203)"	Enums(203, 300)	example(203)
//	@Success	200		{string}	string	"the label, a PDF or a ZPL document"
//	@Failure	400		{object}	Problem
//	@Failure	401		{object}	Problem
//	@Failure	404		{object}	Problem
//	@Failure	406		{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/stock/offcuts/{code}/label [get]
func (s *server) getOffcutLabel(c echo.Context) error {
	ctx := c.Request().Context()
	o, err := s.Stock.OffcutByCode(ctx, c.Param("code"))
	if err != nil {
		return err
	}
	l := render.OffcutLabel{Code: o.Code, Board: o.Board, LengthMM: o.LengthMM, WidthMM: o.WidthMM, PlanID: o.PlanID, Sheet: o.Sheet}
	if m, ok, err := s.Catalog.MaterialByCode(ctx, o.Board); err != nil {
		return err
	} else if ok {
		l.Decor, l.ThicknessMM = m.Decor, m.ThicknessMM
	}
	return s.sendLabels(c, []render.Label{l.Label()}, "offcut-"+o.Code)
}
