package api

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/cutplan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/render"
)

// MIMETextHTML is the media type of a cutting plan's printable document.
const MIMETextHTML = "text/html"

// CuttingPlanRequest is the body of POST /api/v1/cutting-plans.
type CuttingPlanRequest struct {
	// The production orders whose uncut parts to lay out.
	ProdOrders []int64 `json:"prod_orders" validate:"required,min=1,max=200" example:"12,13"`
}

// CuttingPlanList is a page of cutting plans.
type CuttingPlanList = List[cutplan.Plan]

// createCuttingPlan godoc
//
//	@Summary		Lay out production orders' parts on sheets, in the background (admin, planner)
//	@ID			createCuttingPlan
//	@Description	Queues a job (202, Location: /api/v1/jobs/{id}; job.queued) that lays out every part of the production orders whose cutting step is not done, board by board (code, decor, thickness), by the guillotine optimiser on the board's offcuts in stock (first; the plan reserves them) and its sheet formats, with the saw's kerf (CUTTING_KERF_MM), stages (CUTTING_STAGES) and the board's trims; grain kept; offcuts of at least CUTTING_MIN_OFFCUT_MM on both sides kept. The optimiser's time budget, CUTTING_TIME_BUDGET, is the job's, shared among its boards. Follow the job (GET /api/v1/jobs/{id}, or job.* events in the journal and its stream): its progress per board, and once done its result plan_id and the plan itself; the plan is stored with cutting_plan.created in the transaction that finishes the job. Deterministic unless the budget cuts the search short: the same parts and stock give the same plan.
//	@Description	422 at once, nothing queued: prod_orders empty or repeated; prod_orders[i] unknown, cancelled, done, closed or with nothing left to cut; a board unknown or without formats. What only the layout finds fails the job (status failed, error with code invalid and the fields): prod_orders[i].parts[part id] a part that fits on no format of its board (turned too when its grain allows); CUTTING_KERF_MM or boards[code].trim that leave no usable sheet; and conflict when an offcut was taken by another plan meanwhile.
//	@Tags			cutting
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		CuttingPlanRequest	true	"the production orders"
//	@Success		202		{object}	JobView	"queued; Location names the job"
//	@Header			202		{string}	Location	"/api/v1/jobs/{id}"
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/cutting-plans [post]
func (s *server) createCuttingPlan(c echo.Context) error {
	var req CuttingPlanRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := s.CutPlans.Check(ctx, req.ProdOrders); err != nil {
		return err
	}
	return s.queueJob(c, cutplan.JobKind, cutplan.JobInput{ProdOrders: req.ProdOrders})
}

// rebuildCuttingPlan godoc
//
//	@Summary		Rebuild a cutting plan, in the background (admin, planner)
//	@ID			rebuildCuttingPlan
//	@Description	Queues a job (202, Location: /api/v1/jobs/{id}) that lays the plan's production orders out again as they now are (a stale plan's: parts cut otherwise, released, to be cut again) and stores the new plan with cutting_plan.created naming the plan it replaces; the offcuts the old plan reserved are free for the new one, and none of the old plan's sheets can be reported cut any more. 404 for an unknown plan; 409 when it is replaced already; 422 at once or in the failed job as for createCuttingPlan (nothing stored).
//	@Tags			cutting
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id	path		int	true	"cutting plan id"	minimum(1) example(1)
//	@Success		202	{object}	JobView	"queued; Location names the job"
//	@Header			202	{string}	Location	"/api/v1/jobs/{id}"
//	@Failure		401	{object}	Problem
//	@Failure		403	{object}	Problem
//	@Failure		404	{object}	Problem
//	@Failure		409	{object}	Problem
//	@Failure		422	{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/cutting-plans/{id}/rebuild [post]
func (s *server) rebuildCuttingPlan(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	in, err := s.CutPlans.CheckRebuild(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return s.queueJob(c, cutplan.JobKind, in)
}

// listCuttingPlans godoc
//
//	@Summary	Cutting plans
//	@ID			listCuttingPlans
//	@Description	The plans in the order they were made, each with its totals per board (sheets, offcuts used, parts, yield = parts' area ÷ sheets' area, waste m²), how many sheets are cut, and stale (with why) when its production orders changed since: build a new plan for them then.
//	@Tags		cutting
//	@Produce	json
//	@Security	BearerAuth
//	@Param		limit	query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param		cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9jdXR0aW5nLXBsYW5zIiwiaWQiOjF9)
//	@Success	200		{object}	CuttingPlanList
//	@Failure	400		{object}	Problem
//	@Failure	401		{object}	Problem
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/cutting-plans [get]
func (s *server) listCuttingPlans(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	ps, next, err := s.CutPlans.Plans(c.Request().Context(), pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, ps, next))
}

// getCuttingPlan godoc
//
//	@Summary	A cutting plan with its sheets
//	@ID			getCuttingPlan
//	@Description	The plan, its totals per board, and sheet_list: per sheet its board, format or offcut, the parts (part id and code, production order, size, position, turned, the order the saw frees them in), the cuts in saw order (stage, direction, position, the piece crossed), yield, waste and the offcuts it leaves; cut_at once reported cut.
//	@Description	With `Accept: application/pdf` the plan on paper for the saw (A4 landscape): board by board in the order of cutting, a summary page of the board (its totals, a row per sheet with the codes and sizes of the offcuts it leaves), then a page per sheet, drawn as getCuttingSheet's SVG with each cut's fence setting. With `Accept: text/html` the whole plan as one printable page: the totals, then every sheet drawn to scale on a page of its own. With `Accept: text/csv` the placements, one row per part, in the layout ?layout= names (office by default; see docs/operating.md, CSV exports).
//	@Tags		cutting
//	@Produce	json
//	@Produce	application/pdf
//	@Produce	text/html
//	@Produce	text/csv
//	@Security	BearerAuth
//	@Param		id	path		int	true	"cutting plan id"	minimum(1) example(1)
//	@Param		layout	query	string	false	"CSV only: office (\";\", decimal commas, FACTORY_TIMEZONE, Russian headers) or machine (\",\", RFC 3339 UTC, decimal points, English headers); see docs/operating.md, CSV exports"	Enums(office, machine) default(office) example(machine)
//	@Success	200	{object}	cutplan.Plan
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	406	{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/cutting-plans/{id} [get]
func (s *server) getCuttingPlan(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	p, err := s.CutPlans.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	switch preferredOf(c, echo.MIMEApplicationJSON, MIMEApplicationPDF, MIMETextHTML, MIMETextCSV) {
	case MIMEApplicationPDF:
		var b bytes.Buffer
		if err := render.PlanPDF(&b, p); err != nil {
			return err
		}
		c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`inline; filename="cutting-plan-%d.pdf"`, p.ID))
		return c.Blob(http.StatusOK, MIMEApplicationPDF, b.Bytes())
	case MIMETextHTML:
		var b bytes.Buffer
		if err := render.Plan(&b, p); err != nil {
			return err
		}
		return c.Blob(http.StatusOK, MIMETextHTML+"; charset=utf-8", b.Bytes())
	case MIMETextCSV:
		l, err := s.csvLayoutOf(c)
		if err != nil {
			return err
		}
		var rows [][]string
		for _, sh := range p.SheetList {
			rows = append(rows, placementRows(l, sh)...)
		}
		return writeCSVRows(c, l, fmt.Sprintf("cutting-plan-%d.csv", p.ID), placementCols, rows)
	}
	return c.JSON(http.StatusOK, p)
}

// placementCols and placementRows are a cutting plan's placements as CSV:
// one row per part.
var placementCols = []csvCol{{"Лист", "sheet"}, {"Плита", "board"}, {"Формат", "format"}, {"Очерёдность", "cut_order"},
	{"№ детали", "part_id"}, {"Код", "code"}, {"Деталь", "name"}, {"Заказ на производство", "prod_order_id"},
	{"Длина, мм", "length_mm"}, {"Ширина, мм", "width_mm"}, {"X, мм", "x_mm"}, {"Y, мм", "y_mm"}, {"Повёрнута", "turned"}}

func placementRows(l csvLayout, sh cutplan.Sheet) [][]string {
	f := func(v float64) string { return l.Num(v, 1) }
	var rows [][]string
	for _, p := range sh.Parts {
		rows = append(rows, []string{strconv.Itoa(sh.N), sh.Board, sh.Format, strconv.Itoa(p.CutOrder), strconv.FormatInt(p.PartID, 10), p.Code, p.Name,
			strconv.FormatInt(p.ProdOrderID, 10), strconv.Itoa(p.LengthMM), strconv.Itoa(p.WidthMM), f(p.X), f(p.Y), l.Bool(p.Turned)})
	}
	return rows
}

// preferredOf is the media type the request prefers among offers (the
// first when it says nothing).
func preferredOf(c echo.Context, offers ...string) string {
	if m, ok := c.Get(mediaKey).(string); ok {
		return m
	}
	m, _ := preferred(c.Request().Header.Values(echo.HeaderAccept), offers)
	return m
}

func sheetNumber(c echo.Context) (int, error) {
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil || n <= 0 || n > 1_000_000 {
		return 0, apperr.Invalid("invalid path", apperr.Field("n", "must be a sheet number from 1"))
	}
	return n, nil
}

// getCuttingSheet godoc
//
//	@Summary	One sheet of a cutting plan (JSON, SVG, CSV)
//	@ID			getCuttingSheet
//	@Description	The sheet as in getCuttingPlan's sheet_list. With `Accept: image/svg+xml` its drawing for the saw operator, to scale: trims hatched, each part with its name, size (↻ when turned), production order and code, the order it comes off the saw in a circle; offcuts kept in green; the cuts in red, numbered in saw order, each with the fence's setting drawn as a dimension from the edge that lies against the fence (a rip: the strip's width; a cross-cut: the length) and listed in cut order under the drawing; the grain direction. The SVG is well-formed XML whatever the names hold: characters XML does not allow (control characters, U+FFFE, U+FFFF) are written as U+FFFD. With `Accept: text/csv` its placements in the layout ?layout= names (office by default; see docs/operating.md, CSV exports).
//	@Tags		cutting
//	@Produce	json
//	@Produce	image/svg+xml
//	@Produce	text/csv
//	@Security	BearerAuth
//	@Param		id	path		int	true	"cutting plan id"	minimum(1) example(1)
//	@Param		n	path		int	true	"sheet number"	minimum(1) maximum(1000000) example(1)
//	@Param		layout	query	string	false	"CSV only: office (\";\", decimal commas, FACTORY_TIMEZONE, Russian headers) or machine (\",\", RFC 3339 UTC, decimal points, English headers); see docs/operating.md, CSV exports"	Enums(office, machine) default(office) example(machine)
//	@Success	200	{object}	cutplan.Sheet
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	406	{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/cutting-plans/{id}/sheets/{n} [get]
func (s *server) getCuttingSheet(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	n, err := sheetNumber(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	sh, err := s.CutPlans.Sheet(ctx, id, n)
	if err != nil {
		return err
	}
	switch preferredOf(c, echo.MIMEApplicationJSON, MIMEImageSVG, MIMETextCSV) {
	case MIMEImageSVG:
		p, err := s.CutPlans.Get(ctx, id)
		if err != nil {
			return err
		}
		p.SheetList = nil
		var b bytes.Buffer
		if err := render.Sheet(&b, p, sh); err != nil {
			return err
		}
		return c.Blob(http.StatusOK, MIMEImageSVG+"; charset=utf-8", b.Bytes())
	case MIMETextCSV:
		l, err := s.csvLayoutOf(c)
		if err != nil {
			return err
		}
		return writeCSVRows(c, l, fmt.Sprintf("cutting-plan-%d-sheet-%d.csv", id, n), placementCols, placementRows(l, sh))
	}
	return c.JSON(http.StatusOK, sh)
}

// getCuttingPlanLabels godoc
//
//	@Summary	Labels of a cutting plan's parts and offcuts, in the saw's order (PDF, ZPL)
//	@ID			getCuttingPlanLabels
//	@Description	The labels of the plan's sheets (all, or the one sheet names), sheet by sheet in the order of cutting: each sheet's parts in the order they come off the saw (cut_order), each label as getLabels draws it with a line naming the plan, the sheet and the order off the saw; then a label for each offcut the sheet leaves: its code O<plan>-<sheet>-<k> as the barcode (k from 1 in the order of the sheet's offcuts, the code the offcut keeps in stock), "Деловой остаток", its size (length × width mm), board, decor and thickness, the plan and sheet. A part scrapped since the plan was made gets no label (its re-cut is in the next plan).
//	@Description	Formats and layouts as getLabels: PDF by default, ZPL with `Accept: application/zpl` or format=zpl. 422 naming sheet for a sheet the plan has not, or layout, format or dpi as getLabels.
//	@Description	With Prefer: respond-async the labels are drawn as a background job, as getLabels's are (202, Location: /api/v1/jobs/{id}; the document at result_url once done).
//	@Tags		cutting
//	@Produce	application/pdf
//	@Produce	application/zpl
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id		path		int		true	"cutting plan id"	minimum(1) example(1)
//	@Param		sheet	query		int		false	"only this sheet's labels"	minimum(1) example(1)
//	@Param		layout	query		string	false	"PDF: label (one per page; default) or a4 (A4 sheets of them); ZPL: label only"	Enums(label, a4)	example(label)
//	@Param		format	query		string	false	"pdf or zpl, instead of the Accept header"	Enums(pdf, zpl)	example(zpl)
//	@Param		dpi		query		int		false	"ZPL only: the printer's resolution (default 203)"	Enums(203, 300)	example(203)
//	@Param		Prefer	header		string	false	"respond-async: draw them as a background job (202)"	example(respond-async)
//	@Success	200		{string}	string	"the labels, a PDF or a ZPL document"
//	@Success	202		{object}	JobView	"queued (Prefer: respond-async); Location names the job"
//	@Header		202		{string}	Location			"/api/v1/jobs/{id}"
//	@Header		202		{string}	Preference-Applied	"respond-async"
//	@Failure	400		{object}	Problem
//	@Failure	401		{object}	Problem
//	@Failure	404		{object}	Problem
//	@Failure	406		{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/cutting-plans/{id}/labels [get]
func (s *server) getCuttingPlanLabels(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var fields []apperr.FieldError
	n := positiveQuery(c, "sheet", &fields)
	if len(fields) > 0 {
		return apperr.Invalid("invalid query", fields...)
	}
	req, err := labelRequest(c)
	if err != nil {
		return err
	}
	req.CuttingPlanID, req.Sheet = id, n
	return s.makeLabels(c, req)
}

// cutCuttingSheet godoc
//
//	@Summary		Report a sheet cut (admin, master, planner)
//	@ID			cutCuttingSheet
//	@Description	In one transaction: the sheet's parts complete the route's cutting step (prod_order.progress_reported per production order, which starts it, and from which stock uses up the board), the offcut it was, if any, is used up, the offcuts it leaves are kept in stock of its board for the next plans, and cutting_plan.sheet_cut is written. 409 when it is cut already or a part of it no longer waits for the saw (the plan is stale: build a new one).
//	@Tags			cutting
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id	path		int	true	"cutting plan id"	minimum(1) example(1)
//	@Param			n	path		int	true	"sheet number"	minimum(1) maximum(1000000) example(1)
//	@Success		200	{object}	cutplan.Sheet
//	@Failure		401	{object}	Problem
//	@Failure		403	{object}	Problem
//	@Failure		404	{object}	Problem
//	@Failure		409	{object}	Problem
//	@Failure		422	{object}	Problem
//	@Router			/api/v1/cutting-plans/{id}/sheets/{n}/cut [post]
func (s *server) cutCuttingSheet(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	n, err := sheetNumber(c)
	if err != nil {
		return err
	}
	sh, err := s.CutPlans.CutSheet(c.Request().Context(), id, n)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, sh)
}
