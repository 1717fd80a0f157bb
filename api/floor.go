package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/jobs"
	"github.com/tsekh/tsekh/internal/labels"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/render"
)

// positiveQuery reads an optional whole-number query parameter of at least 1 (0 when absent).
func positiveQuery(c echo.Context, name string, fields *[]apperr.FieldError) int {
	v := c.QueryParam(name)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1_000_000 {
		*fields = append(*fields, apperr.Field(name, "must be a whole number from 1"))
		return 0
	}
	return n
}

// listParts godoc
//
//	@Summary		The physical parts of a production order, with their codes and steps
//	@ID			listParts
//	@Description	Every physical part of the production order in id order: its code (printable, unique in the database, on its label: P<order>-<n>, a re-cut P<order>-<n>.<g>), its unit and the unit's code (U<order>-<n>), the sales order, SKU and customer, its board, size and edges, its state over the part-scope steps (pending, in_progress, done, scrapped), the first step it has not done (at_seq), and each step's operation with its state and who completed it when. A scrapped part keeps its scrap (step, reason, note, who, when) and names its re-cut (recut_code); a re-cut names the part it replaces (recut_of).
//	@Description	Filters: step (a part-scope step's seq) with state (parts whose operation at that step is in that state; scrapped: scrapped at that step); state alone (the part's overall state); unit (unit n of its item). 422 naming the filter for a step the route has not at part scope, an unknown state or a unit below 1.
//	@Tags			plan
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int		true	"production order id"	minimum(1) example(1)
//	@Param			step	query		int		false	"a part-scope route step (seq)"	minimum(1) example(3)
//	@Param			state	query		string	false	"with step: the state of the part's operation there; alone: the part's state"	Enums(pending, in_progress, done, scrapped)	example(pending)
//	@Param			unit	query		int		false	"only the parts of unit n of their item"	minimum(1) example(1)
//	@Param			limit	query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param			cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9wcm9kdWN0aW9uLW9yZGVycy8xL3BhcnRzIiwiaWQiOjF9)
//	@Success		200		{object}	FloorPartList
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		422		{object}	Problem
//	@Router			/api/v1/production-orders/{id}/parts [get]
func (s *server) listParts(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	pr, err := sortedPageOf(c)
	if err != nil {
		return err
	}
	var fields []apperr.FieldError
	f := floor.PartFilter{State: c.QueryParam("state")}
	f.Step = positiveQuery(c, "step", &fields)
	f.Unit = positiveQuery(c, "unit", &fields)
	if len(fields) > 0 {
		return apperr.Invalid("invalid query", fields...)
	}
	parts, next, err := s.Floor.Parts(c.Request().Context(), id, pr, f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, parts, next))
}

// FloorPartList is a page of a production order's physical parts.
type FloorPartList = List[floor.Part]

// ScanRequest is the body of POST /api/v1/floor/scans.
type ScanRequest struct {
	// The code on the part's or unit's label, as the scanner reads it (case and blanks around it do not matter).
	Code string `json:"code" validate:"required" minLength:"1" maxLength:"40" example:"P12-5"`
	// The route step (seq) the part or unit went through.
	Step int `json:"step" validate:"required" minimum:"1" example:"3"`
	// The production order the station works on, when it says: a code of another order's part is refused (422, field code).
	ProdOrderID int64 `json:"prod_order_id" validate:"optional" minimum:"1" example:"12"`
}

// scan godoc
//
//	@Summary		Scan a part's or unit's code through a route step (admin, planner, master)
//	@ID			scanCode
//	@Description	Reports the part (its code) or unit (its unit's code) through the route step: its operation there is completed, by the caller, as POST …/operations/{op_id}/complete does, and journalled as operation.completed naming the code; the order's first report starts it (prod_order.started), the unit's last operation makes the unit (unit.made: it counts for its sales-order item at once), the order's last makes it done (prod_order.completed).
//	@Description	Idempotent: the same scan again (also many at the same instant) is one report: 200 with repeated true, nothing changed, no event. A unit-scope step (assembly, packing) is scanned by the unit's code once every part of the unit is through the steps before it.
//	@Description	422 naming code for an unknown code or a code of another production order than prod_order_id; naming step for a step the route has not, a part's code at a unit-scope step or a unit's at a part-scope one. 409 when a step before it is not done (the detail names the step it is at and, for a unit, its parts not through it), when the part was scrapped (scan its re-cut), or when its production order is cancelled, closed or done.
//	@Tags			plan
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		ScanRequest	true	"the scan"
//	@Success		200		{object}	floor.ScanResult
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		409		{object}	Problem	"out of route order, a scrapped part, or the order is cancelled, closed or done"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/floor/scans [post]
func (s *server) scan(c echo.Context) error {
	var req ScanRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	r, err := s.Floor.ScanCode(c.Request().Context(), floor.Scan{Code: req.Code, Step: req.Step, ProdOrderID: req.ProdOrderID})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

// ScrapRequest is the body of POST /api/v1/floor/scrap.
type ScrapRequest struct {
	// The code on the spoilt part's label (or give part_id instead).
	Code string `json:"code" validate:"optional" maxLength:"40" example:"P12-1"`
	// The part's id, from GET /api/v1/production-orders/{id}/parts, instead of its code.
	PartID int64 `json:"part_id" validate:"optional" minimum:"1" example:"41"`
	// The route step (seq) it was spoilt at; by default the step it is at.
	Step int `json:"step" validate:"optional" minimum:"1" example:"3"`
	// Why: one of the factory's reasons (FLOOR_SCRAP_REASONS, listed at GET /api/v1/floor/scrap-reasons).
	Reason string `json:"reason" validate:"required" maxLength:"40" example:"drilling_error"`
	// Free text.
	Note string `json:"note" validate:"optional" maxLength:"1000" example:"присадка не с той стороны"`
}

// scrapPart godoc
//
//	@Summary		Scrap a part by its code, with a reason; a re-cut takes its place (admin, planner, master)
//	@ID			scrapPart
//	@Description	The part (by code, or part_id) is kept, scrapped, with the step it was spoilt at (by default the step it is at), the reason (one of FLOOR_SCRAP_REASONS), the note, who and when; its operations not done are dropped. A re-cut part takes its place: a new code (the old one's with .1, .2, …), recut_of the old part, every part-scope step of the route pending again; it is on GET /api/v1/floor/recuts until cut, and in the production order's cutting list.
//	@Description	Journalled as part.scrapped {"prod_order_id", "part_id", "code", "part", "item_id", "unit", "seq", "operation", "reason", "note", "recut_id", "recut_code"} and part.recut {"prod_order_id", "part_id", "code", "recut_of", "recut_of_code", "part", "material", "thickness_mm", "length_mm", "width_mm", "operations"}, naming the caller.
//	@Description	422 naming the field: no reason or one not on the list, no code (or both code and part_id), an unknown code or a unit's, a step the part has not or one after the step it is at. 409 when the part was scrapped already, its unit is made, or its production order is not launched or in progress. 404 for an unknown part_id.
//	@Tags			plan
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		ScrapRequest	true	"the scrap"
//	@Success		200		{object}	floor.ScrapResult
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"scrapped already, its unit made, or its order not live"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/floor/scrap [post]
func (s *server) scrapPart(c echo.Context) error {
	var req ScrapRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	r, err := s.Floor.ScrapPart(c.Request().Context(), floor.ScrapInput{Code: req.Code, PartID: req.PartID, Step: req.Step, Reason: req.Reason, Note: req.Note})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

// RecutList is what the saw must cut again, by board.
type RecutList struct {
	Boards []floor.RecutBoard `json:"boards"`
}

// listRecuts godoc
//
//	@Summary		What the saw must cut again, by board
//	@ID			listRecuts
//	@Description	The re-cut parts of launched and in-progress production orders not yet through their first step (cutting), grouped by board (material, thickness, decor), oldest first: each with its code, production order, item and unit, size and edges, and the scrapped part it replaces with the reason (at most 5000).
//	@Tags			plan
//	@Produce		json
//	@Security		BearerAuth
//	@Success		200	{object}	RecutList
//	@Failure		401	{object}	Problem
//	@Router			/api/v1/floor/recuts [get]
func (s *server) listRecuts(c echo.Context) error {
	boards, err := s.Floor.Recuts(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, RecutList{Boards: boards})
}

// ScrapReasons is the factory's list of scrap reasons.
type ScrapReasons struct {
	// Each with the code a scrap names and the label the shop floor reads.
	Reasons []floor.ScrapReason `json:"reasons"`
}

// listScrapReasons godoc
//
//	@Summary		The reasons a scrap may name
//	@ID			listScrapReasons
//	@Description	The factory's short list of scrap reasons, as FLOOR_SCRAP_REASONS sets it: each with its code, which a scrap names (reason), and its label for people ({"code": "drilling_error", "label": "Ошибка присадки"}).
//	@Tags			plan
//	@Produce		json
//	@Security		BearerAuth
//	@Success		200	{object}	ScrapReasons
//	@Failure		401	{object}	Problem
//	@Router			/api/v1/floor/scrap-reasons [get]
func (s *server) listScrapReasons(c echo.Context) error {
	return c.JSON(http.StatusOK, ScrapReasons{Reasons: s.Floor.ScrapReasonLabels()})
}

// Labels' media types.
const (
	MIMEApplicationPDF = labels.MIMEApplicationPDF
	// MIMEApplicationZPL is ZPL II, the language of Zebra-compatible
	// thermal label printers.
	MIMEApplicationZPL = labels.MIMEApplicationZPL
)

// getLabels godoc
//
//	@Summary		Printable labels of a production order's parts (PDF, ZPL)
//	@ID			getLabels
//	@Description	One label per live part of the production order, in id order: a Code 128 barcode of the part's code with the code under it, the part's name, size (length × width × thickness), board and decor, edges, the production order, sales order and unit, and the customer. The label's size is LABEL_SIZE_MM (58 × 40 mm by default). The barcode's bars lie on the printer's dot grid (203 dpi for layout label, 300 dpi for a4), its module at least a dot of a 203 dpi printer, with 10 modules of white either side. Characters the font lacks (emoji, other scripts) print as �.
//	@Description	PDF (the default): layout label, one label per page, for a label printer; a4, A4 sheets of as many labels as fit (3 × 7 of 58 × 40 mm), each centred in a cell outlined for cutting. ZPL (`Accept: application/zpl` or format=zpl): one ^XA…^XZ format per label for a thermal printer of dpi 203 (default) or 300: the barcode is the printer's own (^BC), the text a graphic field.
//	@Description	With Prefer: respond-async (RFC 7240) the labels are drawn in the background instead, for an order of thousands of parts: 202 at once with Location: /api/v1/jobs/{id} and Preference-Applied: respond-async; the job (kind labels) is done with result {"labels", "bytes"} and its document at result_url (/api/v1/jobs/{id}/document), kept JOBS_DOCUMENT_RETENTION. What the request would refuse is refused before the job is queued.
//	@Description	422 naming layout, format or dpi for a value they do not take (also a layout other than label with ZPL, or dpi with PDF).
//	@Tags			plan
//	@Produce		application/pdf
//	@Produce		application/zpl
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int		true	"production order id"	minimum(1) example(1)
//	@Param			layout	query		string	false	"PDF: label (one per page; default) or a4 (A4 sheets of them); ZPL: label only"	Enums(label, a4)	example(label)
//	@Param			format	query		string	false	"pdf or zpl, instead of the Accept header"	Enums(pdf, zpl)	example(zpl)
//	@Param			dpi		query		int		false	"ZPL only: the printer's resolution (default 203)"	Enums(203, 300)	example(203)
//	@Param			Prefer	header		string	false	"respond-async: draw them as a background job (202)"	example(respond-async)
//	@Success		200		{string}	string	"the labels, a PDF or a ZPL document"
//	@Success		202		{object}	JobView	"queued (Prefer: respond-async); Location names the job"
//	@Header			202		{string}	Location			"/api/v1/jobs/{id}"
//	@Header			202		{string}	Preference-Applied	"respond-async"
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		406		{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Failure		422		{object}	Problem
//	@Router			/api/v1/production-orders/{id}/labels [get]
func (s *server) getLabels(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	req, err := labelRequest(c)
	if err != nil {
		return err
	}
	req.ProdOrderID = id
	return s.makeLabels(c, req)
}

// makeLabels answers with the labels the request names, or, with Prefer:
// respond-async, queues a job that draws them, once nothing in the
// request is wrong.
func (s *server) makeLabels(c echo.Context, req labels.Request) error {
	ctx := c.Request().Context()
	if prefersAsync(c.Request().Header) {
		if err := s.Labels.Check(ctx, req); err != nil {
			return err
		}
		c.Response().Header().Set("Preference-Applied", "respond-async")
		return s.queueJob(c, labels.JobKind, req)
	}
	doc, _, err := s.Labels.Make(ctx, req)
	if err != nil {
		return err
	}
	return sendDocument(c, doc)
}

// sendLabels answers with the labels given, in the format the request
// asks for; name is the file's name without its extension.
func (s *server) sendLabels(c echo.Context, ls []render.Label, name string) error {
	req, err := labelRequest(c)
	if err != nil {
		return err
	}
	doc, _, err := s.Labels.Render(ls, name, req)
	if err != nil {
		return err
	}
	return sendDocument(c, doc)
}

// sendDocument answers with the document, to be shown (inline) under its
// file name.
func sendDocument(c echo.Context, doc jobs.Document) error {
	c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`inline; filename="%s"`, doc.Filename))
	return c.Blob(http.StatusOK, doc.MediaType, doc.Body)
}

// labelRequest reads how the labels are asked for: format=zpl or an Accept
// that prefers application/zpl gives ZPL, anything else a PDF; layout and
// dpi as the format takes them.
func labelRequest(c echo.Context) (labels.Request, error) {
	var fields []apperr.FieldError
	format := c.QueryParam("format")
	switch format {
	case "":
		format = render.FormatPDF
		if preferredOf(c, MIMEApplicationPDF, MIMEApplicationZPL) == MIMEApplicationZPL {
			format = render.FormatZPL
		}
	case render.FormatPDF, render.FormatZPL:
	default:
		fields = append(fields, apperr.Field("format", "must be %s or %s", render.FormatPDF, render.FormatZPL))
	}
	dpi := positiveQuery(c, "dpi", &fields)
	layout := c.QueryParam("layout")
	if format == render.FormatZPL && layout != "" && layout != render.LayoutLabel {
		fields = append(fields, apperr.Field("layout", "a ZPL document is one label per format: %s or none", render.LayoutLabel))
	}
	if format == render.FormatPDF && dpi != 0 {
		fields = append(fields, apperr.Field("dpi", "is for ZPL (format=zpl) only: a PDF's barcodes print at any resolution"))
	}
	if len(fields) > 0 {
		return labels.Request{}, apperr.Invalid("invalid query", fields...)
	}
	return labels.Request{Format: format, Layout: layout, DPI: dpi}, nil
}
