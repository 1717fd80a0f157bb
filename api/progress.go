package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/floor"
)

// ProgressRequest is the body of POST /api/v1/production-orders/{id}/progress.
type ProgressRequest struct {
	// The route step (seq of the route's operation).
	Seq int `json:"seq" validate:"required" minimum:"1" example:"20"`
	// Parts (or units, at an item-scope step) done.
	Qty int `json:"qty" validate:"optional" minimum:"0" maximum:"20000" example:"120"`
	// Parts spoilt at the step, named in scrap_parts (its length when absent). Part-scope steps only.
	Scrap int `json:"scrap" validate:"optional" minimum:"0" maximum:"20000" example:"1"`
	// The parts spoilt at the step, each with its reason: each is scrapped as POST /api/v1/floor/scrap does, and a re-cut takes its place.
	ScrapParts []ScrapPartRequest `json:"scrap_parts" validate:"optional,max=500"`
	// The minutes spent, when known.
	Minutes *float64 `json:"minutes" validate:"optional" minimum:"0" maximum:"44640" example:"95"`
	// Only this unit (n of its item's quantity): the master names the unit finished instead of tsekh choosing.
	Unit int `json:"unit" validate:"optional" minimum:"1" example:"3"`
	// The item whose unit it is, needed when several items of the order have a unit of that number.
	ItemID int64 `json:"item_id" validate:"optional" minimum:"1" example:"53"`
}

// ScrapPartRequest is a part a quantity report scraps.
type ScrapPartRequest struct {
	// The code on the part's label.
	Code string `json:"code" maxLength:"40" example:"P12-5"`
	// One of the factory's scrap reasons (GET /api/v1/floor/scrap-reasons).
	Reason string `json:"reason" maxLength:"100" example:"chipped"`
	// Free text.
	Note string `json:"note" validate:"optional" maxLength:"1000" example:"скол по кромке"`
}

// reportProgress godoc
//
//	@Summary		Report a quantity of one route step done (admin, planner, master)
//	@ID			reportProgress
//	@Description	Completes qty parts of a part-scope step (or units of an item-scope step) of the production order, and scraps the parts scrap_parts names at the step (each kept, scrapped with its reason, and a re-cut in its place, as POST /api/v1/floor/scrap does). Route order is kept: only parts through the step before (for an item-scope step, units with every part through the part-scope steps) can be reported; those in progress go first. It completes operations the way a scan or start/complete does (operation.completed for each, stock.consumed for what they used).
//	@Description	Writes prod_order.progress_reported {"prod_order_id", "items", "seq", "operation", "scope", "qty", "scrap", "minutes"?, "done", "total"}; the first report moves the order to in_progress (prod_order.started), the one that leaves nothing to do to done (prod_order.completed).
//	@Description	422 for a step the route does not have, scrap at an item-scope step, scrap that names no parts (scrap_parts) or parts not at the step, or more than the step has left (field qty); 409 when the report gets ahead of the step before (the detail says how many are ready), or the order is cancelled, done or closed.
//	@Tags			plan
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int				true	"production order id"	minimum(1) example(1)
//	@Param			body	body		ProgressRequest	true	"the report"
//	@Success		200		{object}	floor.ProgressReport
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"ahead of the step before, or the order is cancelled, done or closed"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/production-orders/{id}/progress [post]
func (s *server) reportProgress(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req ProgressRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	in := floor.Report{Seq: req.Seq, Qty: req.Qty, Scrap: req.Scrap, Minutes: req.Minutes, Unit: req.Unit, ItemID: req.ItemID}
	for _, p := range req.ScrapParts {
		in.ScrapParts = append(in.ScrapParts, floor.ScrapLine{Code: p.Code, Reason: p.Reason, Note: p.Note})
	}
	r, err := s.Floor.ReportProgress(c.Request().Context(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}
