package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// listBacklog godoc
//
//	@Summary		Sales-order items waiting for production
//	@ID			listBacklog
//	@Description	The plan module's own view, fed by order events; oldest first.
//	@Tags			plan
//	@Produce		json
//	@Security		BearerAuth
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
	rows, next, err := s.Plan.Backlog(c.Request().Context(), pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list(rows, next))
}
