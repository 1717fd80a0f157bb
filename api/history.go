package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/page"
	"github.com/tsekh/tsekh/internal/sales"
)

// History kinds: what an order's history may be filtered to (?kind=).
const (
	historyOrder      = "order"      // the order's own events
	historyProduction = "production" // its production orders' own events, as they concern its items
	historyFloor      = "floor"      // its items' operations, parts and units
	historyInbox      = "inbox"      // the intake inbox's rejections about it
)

var historyKinds = []string{historyOrder, historyProduction, historyFloor, historyInbox}

// historyKind is the kind of an event of an order's history.
func historyKind(e events.Entry) string {
	switch {
	case e.AggregateType == sales.RejectionsTable:
		return historyInbox
	case e.AggregateType != plan.AggregateType:
		return historyOrder
	case strings.HasPrefix(e.Type, "prod_order."):
		return historyProduction
	}
	return historyFloor
}

// concernsItems tells whether an event of a production order concerns the
// order's items: one that names an item (item_id) or items (items) does
// when one of them is the order's; one that names none is about the whole
// production order, and does.
func concernsItems(payload []byte, items map[int64]bool) bool {
	var p struct {
		ItemID *int64  `json:"item_id"`
		Items  []int64 `json:"items"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return true
	}
	if p.ItemID != nil {
		return items[*p.ItemID]
	}
	if len(p.Items) == 0 {
		return true
	}
	for _, id := range p.Items {
		if items[id] {
			return true
		}
	}
	return false
}

// getOrderHistory godoc
//
//	@Summary		An order's own history, oldest first; JSON or CSV
//	@ID			getOrderHistory
//	@Description	The order's own story: every event about the sales order (received, changed, cancelled, its state and ETA, its shipments), each
//	@Description	with its deliveries (the shop callbacks among them); the events of every production order launched for its items (launched,
//	@Description	started, progress, rescheduled, completed, cancelled, closed, the items it released) and of its items' operations, parts and
//	@Description	units, but not of other customers' items that share a production order; and the intake inbox's entries about it (refused
//	@Description	deliveries of its shop id or CRM id, their corrections, retries, dismissals). kind filters: order, production, floor, inbox
//	@Description	(several separated by commas; 422 for another). With `Accept: text/csv`, the whole history (limit and cursor do not apply)
//	@Description	with the journal screen's columns, in the layout ?layout= names (office by default; see docs/operating.md, CSV exports).
//	@Tags			sales
//	@Produce		json
//	@Produce		text/csv
//	@Security		BearerAuth
//	@Param			id		path		int		true	"order id"	minimum(1)	example(1)
//	@Param			kind	query		string	false	"only events of these kinds: order, production, floor, inbox (comma-separated)"	maxlength(100) example(order,inbox)
//	@Param			limit	query		int		false	"page size (1-500, default 50)"	minimum(1)	maximum(500)	example(50)
//	@Param			cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9vcmRlcnMvMS9oaXN0b3J5IiwiaWQiOjF9)
//	@Param		layout	query	string	false	"CSV only: office (\";\", decimal commas, FACTORY_TIMEZONE, Russian headers) or machine (\",\", RFC 3339 UTC, decimal points, English headers); see docs/operating.md, CSV exports"	Enums(office, machine) default(office) example(machine)
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
	kinds := map[string]bool{}
	if v := c.QueryParam("kind"); v != "" {
		for _, k := range strings.Split(v, ",") {
			k = strings.TrimSpace(k)
			if !slices.Contains(historyKinds, k) {
				return apperr.Invalid("invalid query", apperr.Field("kind", "must be one of %s (several separated by commas), not %q", strings.Join(historyKinds, ", "), k))
			}
			kinds[k] = true
		}
	}
	ctx := c.Request().Context()
	o, err := s.Sales.Order(ctx, id)
	if err != nil {
		return err
	}
	prodOrders, launched, err := s.Plan.ProductionOfOrder(ctx, id)
	if err != nil {
		return err
	}
	rejections, err := s.Sales.RejectionsOfOrder(ctx, o)
	if err != nil {
		return err
	}
	items := map[int64]bool{}
	for _, it := range o.Items {
		items[it.ID] = true
	}
	for _, it := range launched {
		items[it] = true
	}
	objs := []events.Objects{
		{AggregateType: sales.Order{}.TableName(), IDs: []int64{id}},
		{AggregateType: plan.AggregateType, IDs: prodOrders},
		{AggregateType: sales.RejectionsTable, IDs: rejections},
	}
	keep := func(e events.Entry) bool {
		if len(kinds) > 0 && !kinds[historyKind(e)] {
			return false
		}
		return e.AggregateType != plan.AggregateType || concernsItems(e.Payload, items)
	}
	fetch := func(pr page.Request) ([]events.Entry, string, error) {
		entries, next, err := s.Journal.HistoryOf(ctx, objs, keep, pr)
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
