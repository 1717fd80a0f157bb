package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/stock"
)

// StockLineRequest is a quantity of one material, in its unit: whole sheets for boards, metres for edge bands, whole pieces for fittings.
type StockLineRequest struct {
	Code string  `json:"code" maxLength:"32" example:"LDSP16-SONOMA"`
	Qty  float64 `json:"qty" minimum:"0" maximum:"1000000" example:"20"`
}

// StockReceiptRequest is the body of POST /api/v1/stock/receipts.
type StockReceiptRequest struct {
	Lines []StockLineRequest `json:"lines" validate:"required,min=1,max=200"`
	// Free text: the supplier, the delivery note.
	Note string `json:"note" validate:"optional" maxLength:"2000" example:"накладная 1542 от ООО «Плита»"`
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
//	@Summary		Receive materials into stock (admin, planner)
//	@ID			receiveStock
//	@Description	Adds the quantities to what is on hand and writes stock.received. 422 naming lines[i].code for a material the catalogue does not have, lines[i].qty for a quantity not positive or, for sheets and pieces, not whole; nothing is written then.
//	@Tags			stock
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		StockReceiptRequest	true	"what was received"
//	@Success		201		{object}	stock.Receipt
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/stock/receipts [post]
func (s *server) receiveStock(c echo.Context) error {
	var req StockReceiptRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	r, err := s.Stock.Receive(c.Request().Context(), stockLines(req.Lines), req.Note)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, r)
}

// countStock godoc
//
//	@Summary		Record a stock count (admin, planner)
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
//	@Description	With prod_orders: everything those production orders need. With from and to: the work due then — the parts not yet cut and the fittings of live production orders with an item due then, and the backlog's items due then (as a launch would explode them, by the boards their options choose). With both: the production orders named and the backlog's items due in the period. Boards in whole sheets (the parts' area ÷ the board's largest usable format, rounded up), edge bands in metres (each banded side plus EDGE_OVERHANG_MM), fittings in pieces; launched and backlog apart and in all.
//	@Description	With Accept: text/csv, one row per material, ";" separated, Russian headers.
//	@Tags		stock
//	@Produce	json
//	@Produce	text/csv
//	@Security	BearerAuth
//	@Param		prod_orders	query		string	false	"production order ids separated by commas"	maxlength(2000) extensions(x-pattern=ids) example(1,2)
//	@Param		from		query		string	false	"the first due date of the period"	format(date) example(2026-12-07)
//	@Param		to			query		string	false	"the last due date of the period (at most a year after from)"	format(date) example(2026-12-13)
//	@Success	200			{object}	plan.Requirements
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
		if len(ids) > plan.MaxCuttingListOrders {
			return apperr.Invalid("invalid query", apperr.Field("prod_orders", "may name at most %d production orders", plan.MaxCuttingListOrders))
		}
	}
	from, f1 := input.Date("from", c.QueryParam("from"))
	to, f2 := input.Date("to", c.QueryParam("to"))
	if f := slices.Concat(f1, f2); len(f) > 0 {
		return apperr.Invalid("invalid query", f...)
	}
	r, err := s.Plan.Requirements(ctx, ids, from, to)
	if err != nil {
		return err
	}
	if wantsCSV(c) {
		rows := make([][]string, len(r.Materials))
		for i, m := range r.Materials {
			rows[i] = []string{m.Code, m.Name, m.Decor, m.Unit, num(m.Launched), num(m.Backlog), num(m.Qty), num(m.AreaM2)}
		}
		return writeCSVRowsSep(c, "requirements.csv", []string{"Код", "Материал", "Декор", "Ед.", "Запущено", "Портфель", "Всего", "Площадь, м²"}, rows, ';')
	}
	return c.JSON(http.StatusOK, r)
}

// num writes a quantity for the office's Excel: a decimal comma.
func num(v float64) string {
	return strings.ReplaceAll(strconv.FormatFloat(v, 'f', -1, 64), ".", ",")
}

// ShortageList is what to buy.
type ShortageList struct {
	Items []stock.Shortage `json:"items"`
}

// getShortages godoc
//
//	@Summary	What to buy: materials short of what the backlog needs and their reorder point
//	@ID			getShortages
//	@Description	Per material: on hand, reserved (launched work's needs), available, what the backlog's items need, the reorder point, and to_buy = backlog + reorder point − available (whole sheets and pieces, rounded up); only materials with something to buy.
//	@Description	With Accept: text/csv, one row per material, ";" separated, Russian headers.
//	@Tags		stock
//	@Produce	json
//	@Produce	text/csv
//	@Security	BearerAuth
//	@Success	200	{object}	ShortageList
//	@Failure	401	{object}	Problem
//	@Failure	406	{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Router		/api/v1/materials/shortages [get]
func (s *server) getShortages(c echo.Context) error {
	ctx := c.Request().Context()
	backlog, err := s.Plan.BacklogRequirements(ctx)
	if err != nil {
		return err
	}
	need := map[string]float64{}
	for _, m := range backlog.Materials {
		need[strings.ToLower(m.Code)] = m.Qty
	}
	short, err := s.Stock.Shortages(ctx, need)
	if err != nil {
		return err
	}
	if wantsCSV(c) {
		rows := make([][]string, len(short))
		for i, m := range short {
			rows[i] = []string{m.Code, m.Name, m.Decor, m.Unit, num(m.OnHand), num(m.Reserved), num(m.Available), num(m.Backlog), num(m.ReorderPoint), num(m.ToBuy)}
		}
		return writeCSVRowsSep(c, "shortages.csv", []string{"Код", "Материал", "Декор", "Ед.", "На складе", "В резерве", "Доступно", "Портфель", "Точка заказа", "Купить"}, rows, ';')
	}
	return c.JSON(http.StatusOK, ShortageList{Items: short})
}
