package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/plan"
)

// getCuttingList godoc
//
//	@Summary		The cutting list of a production order
//	@ID			getCuttingList
//	@Description	Its physical parts by material and thickness, for a panel-saw optimiser: identical parts (same name, length, width and edging) summed, longest first, each with its origins (production order, sales order, item, SKU, unit and how many that unit needs); per material the number of parts and their area in m².
//	@Description	With Accept: text/csv, one row per summed part: material, thickness_mm, name, length_mm, width_mm, qty, edging, origins.
//	@Tags			plan
//	@Produce		json
//	@Produce		text/csv
//	@Security		BearerAuth
//	@Param			id	path		int	true	"production order id"	minimum(1) example(1)
//	@Success		200	{object}	plan.CuttingList
//	@Failure		401	{object}	Problem
//	@Failure		404	{object}	Problem
//	@Failure		422	{object}	Problem
//	@Failure		406	{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Router			/api/v1/production-orders/{id}/cutting-list [get]
func (s *server) getCuttingList(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	l, err := s.Plan.CuttingList(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return cuttingListAnswer(c, l, fmt.Sprintf("cutting-list-%d.csv", id))
}

// getCuttingLists godoc
//
//	@Summary		The cutting list of several production orders, summed
//	@ID			getCuttingLists
//	@Description	As GET /api/v1/production-orders/{id}/cutting-list, for the production orders ids names (at most 100), summed per material and thickness: identical parts of different orders and items are one line with all their origins.
//	@Description	422 naming ids when it is missing, malformed or names production orders that do not exist.
//	@Tags			plan
//	@Produce		json
//	@Produce		text/csv
//	@Security		BearerAuth
//	@Param			ids	query		string	true	"production order ids separated by commas, e.g. 1,2,3"	minlength(1) maxlength(2000) extensions(x-pattern=ids) example(1,2)
//	@Success		200	{object}	plan.CuttingList
//	@Failure		400	{object}	Problem
//	@Failure		401	{object}	Problem
//	@Failure		422	{object}	Problem
//	@Failure		406	{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Router			/api/v1/production-orders/cutting-list [get]
func (s *server) getCuttingLists(c echo.Context) error {
	ids, err := idsOf(c)
	if err != nil {
		return err
	}
	l, err := s.Plan.CuttingListOf(c.Request().Context(), ids)
	if err != nil {
		return err
	}
	return cuttingListAnswer(c, l, "cutting-list.csv")
}

func cuttingListAnswer(c echo.Context, l plan.CuttingList, filename string) error {
	if wantsCSV(c) {
		return writeCSVRows(c, filename, cuttingListCSVHeader, cuttingListCSVRows(l))
	}
	return c.JSON(http.StatusOK, l)
}
