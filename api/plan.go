package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// listBacklog godoc
//
//	@Summary		Sales-order items waiting for production
//	@ID			listBacklog
//	@Description	The plan module's own view, fed by order events: each item with its sales order, customer, SKU, product name, quantity, note, due date and the route a launch follows (its product's default route, from the catalog).
//	@Description	Sorted by sort (default received: oldest first); a cursor continues the sort it was given with. Filters: sku, route_id, due_before (due before that day, not on it; items without a due date never match).
//	@Description	With Accept: text/csv, every row the filters select (limit and cursor do not apply), UTF-8 with a byte order mark, in the layout ?layout= names (office by default; see docs/operating.md, CSV exports).
//	@Description	late is true on a row whose due date has passed (before today in the factory's time zone, FACTORY_TIMEZONE): no launch can make it in time. A launched order's lateness is on the production order, against its ETA.
//	@Description	available_to_promise is the day the item could be ready if launched now ({"ready_on", "held_by"}): planned alone, as a launch would plan it, after every live production order on the work centres' free capacity, its steps that use materials up (cutting, edge banding, assembly) waiting for them after the live orders' needs (on hand, then open purchase orders by their dates, else a supplier's lead time), held_by naming what it would wait for; null when no launch could plan it.
//	@Tags			plan
//	@Produce		json
//	@Produce		text/csv
//	@Security		BearerAuth
//	@Param			sku			query		string	false	"only items of this SKU"	maxlength(64)	example(SHK-KUPE-1600)
//	@Param			route_id	query		int		false	"only items whose product's default route this is (422 for an unknown route)"	minimum(1) example(1)
//	@Param			due_before	query		string	false	"only items due before this day (YYYY-MM-DD)"	format(date)	example(2026-12-31)
//	@Param			sort		query		string	false	"order: received (default), -received, due_date (soonest first, no due date last), -due_date"	Enums(received, -received, due_date, -due_date)	example(received)
//	@Param			late	query		bool	false	"true: only rows whose due date has passed; false: only the others"	example(true)
//	@Param			limit	query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param			cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9wbGFuL2JhY2tsb2ciLCJpZCI6MX0)
//	@Param		layout	query	string	false	"CSV only: office (\";\", decimal commas, FACTORY_TIMEZONE, Russian headers) or machine (\",\", RFC 3339 UTC, decimal points, English headers); see docs/operating.md, CSV exports"	Enums(office, machine) default(office) example(machine)
//	@Success		200		{object}	BacklogList
//	@Failure		401		{object}	Problem
//	@Failure		422		{object}	Problem
//	@Failure		406		{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Router			/api/v1/plan/backlog [get]
func (s *server) listBacklog(c echo.Context) error {
	pr, err := sortedPageOf(c)
	if err != nil {
		return err
	}
	late, err := boolQuery(c, "late")
	if err != nil {
		return err
	}
	q, fields := planListQueryOf(c)
	if len(fields) > 0 {
		return apperr.Invalid("invalid query", fields...)
	}
	f := plan.BacklogFilter{SKU: q.SKU, RouteID: q.RouteID, DueBefore: q.DueBefore, Sort: q.Sort, Late: late}
	fetch := func(pr page.Request) ([]plan.BacklogItem, string, error) {
		return s.Plan.Backlog(c.Request().Context(), pr, f)
	}
	if wantsCSV(c) {
		l, err := s.csvLayoutOf(c)
		if err != nil {
			return err
		}
		return writeCSV(c, l, "backlog.csv", backlogCSVCols, backlogCSVRow, fetch)
	}
	rows, next, err := fetch(pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, rows, next))
}

// boolQuery reads an optional true/false query parameter; nil when absent.
func boolQuery(c echo.Context, name string) (*bool, error) {
	switch v := c.QueryParam(name); v {
	case "":
		return nil, nil
	case "true", "false":
		b := v == "true"
		return &b, nil
	default:
		return nil, apperr.Invalid("invalid query", apperr.Field(name, "must be true or false"))
	}
}

// replan godoc
//
//	@Summary		Re-plan every unfinished production order from now (admin, planner)
//	@ID			replan
//	@Description	Places the operations not done of every launched or in-progress production order again, from now in the factory's time zone (FACTORY_TIMEZONE) and each work centre's shift, on the capacity and calendars the work centres have now: in priority order (higher first), then launch order. Run it after a capacity or calendar change, after progress (or delays) on the shop floor, or to bring overdue plans up to date.
//	@Description	An order's planned_eta becomes the end of its last operation; its eta follows unless a planner gave it at launch (eta_given), which a re-plan keeps. Each order whose eta moved gets prod_order.rescheduled {"prod_order_id", "items", "eta", "previous_eta", "planned_eta", "priority"}; sales follow it (the items' and the order's ETA, order.status_changed) and the shop hears of it through its callback.
//	@Description	The re-plan itself is journalled once as plan.replanned about plan_replans #id, naming the caller as its actor and listing what moved, also when nothing did.
//	@Description	The answer has the re-plan's id, counts the orders re-planned and lists those whose ETA or planned ETA moved, before and after. 422, changing nothing, when a work centre the orders need has no working day within three years (the detail names it).
//	@Description	With Prefer: respond-async (RFC 7240) the re-plan runs in the background instead: 202 at once with Location: /api/v1/jobs/{id} and Preference-Applied: respond-async; the job (kind replan) is done with result {"replan_id", "replanned", "moved"} in the re-plan's own transaction, or failed with the 422's problem.
//	@Tags			plan
//	@Produce		json
//	@Security		BearerAuth
//	@Param			Prefer	header		string	false	"respond-async: run it as a background job (202)"	example(respond-async)
//	@Success		200		{object}	plan.ReplanSummary
//	@Success		202		{object}	JobView	"queued (Prefer: respond-async); Location names the job"
//	@Header			202		{string}	Location			"/api/v1/jobs/{id}"
//	@Header			202		{string}	Preference-Applied	"respond-async"
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		422		{object}	Problem	"a work centre has no working day within the horizon"
//	@Router			/api/v1/plan/replan [post]
func (s *server) replan(c echo.Context) error {
	if prefersAsync(c.Request().Header) {
		c.Response().Header().Set("Preference-Applied", "respond-async")
		return s.queueJob(c, plan.ReplanJobKind, struct{}{})
	}
	sum, err := s.Plan.Replan(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, sum)
}

// QuoteRequest is the body of POST /api/v1/plan/quote.
type QuoteRequest struct {
	SKU string `json:"sku" maxLength:"64" example:"TMB-PRIK-450"`
	Qty int    `json:"qty" minimum:"1" maximum:"1000" example:"2"`
	// The decor chosen per slot of the product, by the board's decor or code.
	Options map[string]string `json:"options" validate:"optional" example:"корпус:Дуб сонома"`
}

// quote godoc
//
//	@Summary		When could this be ready? (available to promise)
//	@ID			quotePlan
//	@Description	The day qty units of the SKU, with the decor options chosen, could be ready if they were ordered and launched now: planned as listBacklog's available_to_promise plans a waiting item (alone, after every live production order, its steps that use materials up waiting for them), and held_by, the materials it would wait for. Nothing is written. 422 naming sku for no such product (or one its route cannot make), qty out of 1..1000, options.<slot> for a choice the product does not allow.
//	@Tags			plan
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		QuoteRequest	true	"what the customer asks for"
//	@Success		200		{object}	plan.Promise
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/plan/quote [post]
func (s *server) quote(c echo.Context) error {
	var req QuoteRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	p, err := s.Plan.Quote(c.Request().Context(), req.SKU, req.Qty, req.Options)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

// prefersAsync tells whether the request's Prefer headers (RFC 7240) ask
// for respond-async.
func prefersAsync(h http.Header) bool {
	for _, v := range h.Values("Prefer") {
		for pref := range strings.SplitSeq(v, ",") {
			name, _, _ := strings.Cut(pref, ";")
			if strings.EqualFold(strings.TrimSpace(name), "respond-async") {
				return true
			}
		}
	}
	return false
}
