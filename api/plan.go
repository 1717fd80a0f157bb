package api

import (
	"net/http"

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
//	@Description	With Accept: text/csv, every row the filters select (limit and cursor do not apply), UTF-8 with a byte order mark.
//	@Tags			plan
//	@Produce		json
//	@Produce		text/csv
//	@Security		BearerAuth
//	@Param			sku			query		string	false	"only items of this SKU"	maxlength(64)
//	@Param			route_id	query		int		false	"only items whose product's default route this is (422 for an unknown route)"
//	@Param			due_before	query		string	false	"only items due before this day (YYYY-MM-DD)"	format(date)
//	@Param			sort		query		string	false	"order: received (default), -received, due_date (soonest first, no due date last), -due_date"	Enums(received, -received, due_date, -due_date)
//	@Param			limit	query		int		false	"page size (1-500, default 50)"
//	@Param			cursor	query		string	false	"next_cursor of the previous page"
//	@Success		200		{object}	BacklogList
//	@Failure		401		{object}	Problem
//	@Failure		422		{object}	Problem
//	@Router			/api/v1/plan/backlog [get]
func (s *server) listBacklog(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	q, fields := planListQueryOf(c)
	if len(fields) > 0 {
		return apperr.Invalid("invalid query", fields...)
	}
	f := plan.BacklogFilter{SKU: q.SKU, RouteID: q.RouteID, DueBefore: q.DueBefore, Sort: q.Sort}
	fetch := func(pr page.Request) ([]plan.BacklogItem, string, error) {
		return s.Plan.Backlog(c.Request().Context(), pr, f)
	}
	if wantsCSV(c) {
		return writeCSV(c, "backlog.csv", backlogCSVHeader, backlogCSVRow, fetch)
	}
	rows, next, err := fetch(pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list(rows, next))
}
