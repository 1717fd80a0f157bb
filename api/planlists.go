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

// backlogCSVCols and backlogCSVRow are the backlog as CSV.
var backlogCSVCols = []csvCol{{"Позиция", "item_id"}, {"Заказ", "order_id"}, {"Покупатель", "customer"}, {"Артикул", "sku"},
	{"Изделие", "product_name"}, {"Кол-во", "qty"}, {"№ маршрута", "route_id"}, {"Маршрут", "route"}, {"Срок", "due_date"},
	{"Примечание", "note"}, {"Получен", "received_at"}}

func backlogCSVRow(l csvLayout, b plan.BacklogItem) []string {
	return []string{fmt.Sprint(b.ItemID), fmt.Sprint(b.OrderID), b.Customer, b.SKU, b.ProductName, strconv.Itoa(b.Qty),
		fmt.Sprint(b.Route.ID), b.Route.Name, l.Date(b.DueDate), b.Note, l.Time(b.ReceivedAt)}
}

// prodOrderCSVCols and prodOrderCSVRow are the production-order list as CSV.
var prodOrderCSVCols = []csvCol{{"№", "id"}, {"Статус", "status"}, {"№ маршрута", "route_id"}, {"Маршрут", "route"},
	{"Изделия", "items"}, {"Покупатели", "customers"}, {"Деталей", "parts_count"}, {"Операций", "ops_count"},
	{"Срок", "due_date"}, {"Готовность", "eta"}, {"Готовность по плану", "planned_eta"}, {"Выполнено, %", "progress_percent"},
	{"Требует внимания", "needs_attention"}, {"Создан", "created_at"}}

func prodOrderCSVRow(l csvLayout, o plan.ProdOrder) []string {
	var items, customers []string
	for _, it := range o.Items {
		items = append(items, fmt.Sprintf("%s × %d", it.SKU, it.Qty))
		if it.Customer != "" && !slices.Contains(customers, it.Customer) {
			customers = append(customers, it.Customer)
		}
	}
	return []string{fmt.Sprint(o.ID), o.Status, fmt.Sprint(o.Route.ID), o.Route.Name, strings.Join(items, "; "), strings.Join(customers, "; "),
		strconv.Itoa(o.PartsCount), strconv.Itoa(o.OpsCount), l.Date(o.DueDate), l.Date(o.ETA), l.Date(o.PlannedETA),
		l.Num(o.Progress.Percent, 1), l.Bool(o.NeedsAttention), l.Time(o.CreatedAt)}
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
