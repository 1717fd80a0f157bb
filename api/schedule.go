package api

import (
	"bytes"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/render"
)

// MIMEImageSVG is the media type of the schedule's Gantt chart.
const MIMEImageSVG = "image/svg+xml"

// getSchedule godoc
//
//	@Summary		Work centres' planned operations and daily load
//	@ID			getSchedule
//	@Description	Every work centre's days (capacity, planned load, overload) and the production orders planned on it, for the days from..to (at most 92).
//	@Description	The load is the work left: the operations not done of launched and in-progress orders, counted at the minutes they are planned for; done, closed and cancelled orders load nothing. Done operations are drawn when they were done (started to completed), the others where they are planned.
//	@Description	Each production order's bar carries its sales orders, SKUs, earliest due date of its items, ETA and `late` (ETA after that due date); `today` is the day planning starts from.
//	@Description	With `Accept: image/svg+xml` the same as a Gantt chart in Russian, to open in a browser: one lane per work centre, a bar per production order coloured by its state and labelled (production order №, SKU) on it or beside it, with a tooltip; late orders outlined; due dates marked at the end of their day; a today line; days off shaded; overloaded days (more planned than the capacity) the only thing in red; a legend of exactly the marks drawn.
//	@Tags			plan
//	@Produce		json
//	@Produce		image/svg+xml
//	@Security		BearerAuth
//	@Param			from	query		string	false	"first day, YYYY-MM-DD from 2000-01-01 to 2100-12-31 (default today)"	Format(date)	example(2026-12-01)
//	@Param			to		query		string	false	"last day, YYYY-MM-DD from 2000-01-01 to 2100-12-31 (default from + 13 days)"	Format(date)	example(2026-12-14)
//	@Success		200		{object}	plan.ScheduleView
//	@Failure		401		{object}	Problem
//	@Failure		422		{object}	Problem
//	@Failure		406		{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Router			/api/v1/plan/schedule [get]
func (s *server) getSchedule(c echo.Context) error {
	from, fields := input.Date("from", c.QueryParam("from"))
	to, toFields := input.Date("to", c.QueryParam("to"))
	if fields = append(fields, toFields...); len(fields) > 0 {
		return apperr.Invalid("invalid query", fields...)
	}
	v, err := s.Plan.Schedule(c.Request().Context(), from, to)
	if err != nil {
		return err
	}
	if mediaOf(c) == MIMEImageSVG {
		var b bytes.Buffer
		if err := render.Gantt(&b, v); err != nil {
			return err
		}
		return c.Blob(http.StatusOK, MIMEImageSVG+"; charset=utf-8", b.Bytes())
	}
	return c.JSON(http.StatusOK, v)
}
