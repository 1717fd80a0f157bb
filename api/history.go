package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/page"
	"github.com/tsekh/tsekh/internal/sales"
)

// getOrderHistory godoc
//
//	@Summary		An order's whole history, oldest first; JSON or CSV
//	@ID			getOrderHistory
//	@Description	Every event about the sales order (received, changed, cancelled, its state and ETA, its shipments) and about every production order
//	@Description	launched for its items (launched, started, progress, rescheduled, completed, cancelled, closed, the items it released), in the order
//	@Description	they happened, each with its deliveries: the shop callbacks among them. A production order the order shares with other customers
//	@Description	is shown whole. With `Accept: text/csv`, the whole history (limit and cursor do not apply) with the journal screen's columns.
//	@Tags			sales
//	@Produce		json
//	@Produce		text/csv
//	@Security		BearerAuth
//	@Param			id		path		int		true	"order id"	minimum(1)	example(1)
//	@Param			limit	query		int		false	"page size (1-500, default 50)"	minimum(1)	maximum(500)	example(50)
//	@Param			cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9vcmRlcnMvMS9oaXN0b3J5IiwiaWQiOjF9)
//	@Success		200		{object}	EventList	"JSON; with Accept: text/csv, CSV with one row per event"
//	@Failure		401		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		422		{object}	Problem
//	@Router			/api/v1/orders/{id}/history [get]
func (s *server) getOrderHistory(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.Sales.Order(ctx, id); err != nil {
		return err
	}
	prodOrders, err := s.Plan.ProdOrdersOfOrder(ctx, id)
	if err != nil {
		return err
	}
	objs := []events.Objects{
		{AggregateType: sales.Order{}.TableName(), IDs: []int64{id}},
		{AggregateType: plan.AggregateType, IDs: prodOrders},
	}
	fetch := func(pr page.Request) ([]events.Entry, string, error) {
		entries, next, err := s.Journal.History(ctx, objs, pr)
		for i := range entries {
			entries[i].Payload = events.InDeclaredOrder(entries[i].Type, entries[i].Payload)
		}
		return entries, next, err
	}
	if prefersCSV(c) {
		return s.streamJournalCSV(c, "order-history.csv", fetch)
	}
	entries, next, err := fetch(pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, entries, next))
}
