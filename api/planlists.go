package api

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// planListQuery is what the backlog and the production-order list both
// filter and sort by.
type planListQuery struct {
	SKU       string
	RouteID   int64
	DueBefore database.Date
	Sort      string
}

// planListQueryOf reads ?sku=, ?route_id=, ?due_before= and ?sort=; the
// fields it cannot read are returned, named.
func planListQueryOf(c echo.Context) (planListQuery, []apperr.FieldError) {
	var q planListQuery
	var fields, more []apperr.FieldError
	q.SKU, more = queryText(c, "sku", input.MaxSKU)
	fields = append(fields, more...)
	id, err := queryInt(c, "route_id")
	if err != nil {
		fields = append(fields, apperr.As(err).Fields...)
	}
	q.RouteID = id
	q.DueBefore, more = input.Date("due_before", c.QueryParam("due_before"))
	fields = append(fields, more...)
	q.Sort = c.QueryParam("sort")
	return q, fields
}

// csvDate is a date cell: "" for none.
func csvDate(d database.Date) string { return d.String() }

// backlogCSVHeader and backlogCSVRow are the backlog as CSV.
var backlogCSVHeader = []string{"item_id", "order_id", "customer", "sku", "product_name", "qty", "route_id", "route", "due_date", "note", "received_at"}

func backlogCSVRow(b plan.BacklogItem) []string {
	return []string{fmt.Sprint(b.ItemID), fmt.Sprint(b.OrderID), b.Customer, b.SKU, b.ProductName, strconv.Itoa(b.Qty),
		fmt.Sprint(b.Route.ID), b.Route.Name, csvDate(b.DueDate), b.Note, b.ReceivedAt.UTC().Format("2006-01-02T15:04:05Z")}
}

// prodOrderCSVHeader and prodOrderCSVRow are the production-order list as CSV.
var prodOrderCSVHeader = []string{"id", "status", "route_id", "route", "items", "customers", "parts_count", "ops_count",
	"due_date", "eta", "planned_eta", "progress_percent", "needs_attention", "created_at"}

func prodOrderCSVRow(o plan.ProdOrder) []string {
	var items, customers []string
	for _, it := range o.Items {
		items = append(items, fmt.Sprintf("%s × %d", it.SKU, it.Qty))
		if it.Customer != "" && !slices.Contains(customers, it.Customer) {
			customers = append(customers, it.Customer)
		}
	}
	return []string{fmt.Sprint(o.ID), o.Status, fmt.Sprint(o.Route.ID), o.Route.Name, strings.Join(items, "; "), strings.Join(customers, "; "),
		strconv.Itoa(o.PartsCount), strconv.Itoa(o.OpsCount), csvDate(o.DueDate), csvDate(o.ETA), csvDate(o.PlannedETA),
		strconv.FormatFloat(o.Progress.Percent, 'f', -1, 64), strconv.FormatBool(o.NeedsAttention), o.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")}
}

// idsOf reads ?ids=, production-order ids separated by commas.
func idsOf(c echo.Context) ([]int64, error) {
	v := c.QueryParam("ids")
	if v == "" {
		return nil, apperr.Invalid("invalid query", apperr.Field("ids", "is required: production order ids separated by commas"))
	}
	parts := strings.Split(v, ",")
	if len(parts) > floor.MaxCuttingListOrders {
		return nil, apperr.Invalid("invalid query", apperr.Field("ids", "may name at most %d production orders", floor.MaxCuttingListOrders))
	}
	ids := make([]int64, 0, len(parts))
	for _, p := range parts {
		id, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || id <= 0 {
			return nil, apperr.Invalid("invalid query", apperr.Field("ids", "must be production order ids separated by commas, e.g. 1,2,3"))
		}
		ids = append(ids, id)
	}
	return ids, nil
}
