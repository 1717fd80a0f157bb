package api_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// listedOrder is an order as the list shows it.
type listedOrder struct {
	ID       int64  `json:"id"`
	Status   string `json:"status"`
	Late     bool   `json:"late"`
	Customer struct {
		Name  string `json:"name"`
		Phone string `json:"phone"`
	} `json:"customer"`
}

// orderList is every page of GET /api/v1/orders?query, following the cursor
// with pages of limit.
func orderList(t *testing.T, env *apptest.Env, query string, limit int) []listedOrder {
	t.Helper()
	var all []listedOrder
	cursor := ""
	for range 100 {
		q := query + "&limit=" + strconv.Itoa(limit)
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := env.Admin(http.MethodGet, "/api/v1/orders?"+q, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", query, r.Body)
		var page struct {
			Items      []listedOrder `json:"items"`
			NextCursor string        `json:"next_cursor"`
		}
		r.JSON(t, &page)
		require.LessOrEqual(t, len(page.Items), limit)
		all = append(all, page.Items...)
		if cursor = page.NextCursor; cursor == "" {
			return all
		}
	}
	t.Fatalf("%s: no end of pages", query)
	return nil
}

func idsOf(os []listedOrder) []int64 {
	ids := make([]int64, len(os))
	for i, o := range os {
		ids[i] = o.ID
	}
	return ids
}

// listSeed is one order of every kind the filters tell apart.
type listSeed struct {
	ivan    int64 // manual, "Иван Петров", +7 900 000-00-00, SHK-KUPE-1600, due 12-10, ETA 12-18: late
	alyona  int64 // manual, "ИВАНОВА Алёна", 8 (912) 345-67-89, TMB-PRIK-450, due 12-20, ETA 12-20: on time
	anna    int64 // shop, "Анна Смирнова", SHK-KUPE-1600, due 12-24, not planned
	pyotr   int64 // CRM, "Пётр Сидоров", +7 (900) 111-22-33, TMB-PRIK-450, no due date, ETA 2027-01-10: not late
	fedor   int64 // manual, "Fedor Smith", SHK-KUPE-1600 and TMB-PRIK-450, due 12-01, cancelled
	nowhere int64 // an id no order has
}

func seedOrderList(t *testing.T, env *apptest.Env) listSeed {
	t.Helper()
	manual := func(name, phone, due string, skus ...string) (int64, []int64) {
		items := []map[string]any{}
		for _, s := range skus {
			items = append(items, map[string]any{"sku": s, "qty": 2})
		}
		body := map[string]any{"customer": map[string]any{"name": name, "phone": phone}, "items": items}
		if due != "" {
			body["due_date"] = due
		}
		r := env.Admin(http.MethodPost, "/api/v1/orders", body)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var o struct {
			ID    int64
			Items []struct{ ID int64 }
		}
		r.JSON(t, &o)
		ids := make([]int64, len(o.Items))
		for i, it := range o.Items {
			ids[i] = it.ID
		}
		return o.ID, ids
	}
	// launched writes what the plan writes when it launches the items.
	launched := func(prodOrderID int64, eta string, items ...int64) {
		require.NoError(t, env.App.DB.Transaction(func(tx *gorm.DB) error {
			return events.Add(context.Background(), tx, contracts.ProdOrderLaunched.New(prodOrderID, contracts.ProdOrderLaunchedPayload{
				ProdOrderID: prodOrderID, Items: items, Route: "Корпус ЛДСП (типовой)", PartsCount: 1, OpsCount: 1, ETA: eta}))
		}))
	}
	var s listSeed
	var items []int64
	s.ivan, items = manual("Иван Петров", "+7 900 000-00-00", "2026-12-10", "SHK-KUPE-1600")
	env.Dispatch()
	launched(901, "2026-12-18", items...)
	s.alyona, items = manual("ИВАНОВА Алёна", "8 (912) 345-67-89", "2026-12-20", "TMB-PRIK-450")
	env.Dispatch()
	launched(902, "2026-12-20", items...) // on the due date: not late
	s.anna = orderIDOf(t, deliver(env, shopBody("list-1"), time.Now()))
	r := env.Admin(http.MethodPost, "/api/v1/imports/crm/orders", `{"orders": [{"crm_order_id": 501,
		"customer": {"name": "Пётр Сидоров", "phone": "+7 (900) 111-22-33"}, "items": [{"sku": "TMB-PRIK-450", "qty": 2}]}]}`)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var rep struct {
		Rows []struct {
			OrderID int64 `json:"order_id"`
		}
	}
	r.JSON(t, &rep)
	s.pyotr = rep.Rows[0].OrderID
	require.NotZero(t, s.pyotr)
	env.Dispatch()
	var pyotrItem struct{ Items []struct{ ID int64 } }
	env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", s.pyotr), nil).JSON(t, &pyotrItem)
	launched(903, "2027-01-10", pyotrItem.Items[0].ID)
	s.fedor, _ = manual("Fedor Smith", "", "2026-12-01", "SHK-KUPE-1600", "TMB-PRIK-450")
	require.Equal(t, http.StatusOK, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", s.fedor), cancelBody).Status)
	env.Dispatch()
	s.nowhere = s.fedor + 1000
	return s
}

// Each filter of the orders list returns exactly the orders it selects,
// newest first, on every page.
func TestOrders_ListFilters(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		s := seedOrderList(t, env)
		all := []int64{s.fedor, s.pyotr, s.anna, s.alyona, s.ivan}
		cases := []struct {
			query string
			want  []int64
		}{
			{"", all},
			{"status=in_production", []int64{s.pyotr, s.alyona, s.ivan}},
			{"status=cancelled", []int64{s.fedor}},
			{"source=shop", []int64{s.anna}},
			{"source=crm", []int64{s.pyotr}},
			{"source=manual", []int64{s.fedor, s.alyona, s.ivan}},
			// Customer: any case, Cyrillic included, ё as е, on both databases.
			{"customer=иван", []int64{s.alyona, s.ivan}},
			{"customer=ИВАН", []int64{s.alyona, s.ivan}},
			{"customer=иВаН%20пЕтРоВ", []int64{s.ivan}},
			{"customer=петров", []int64{s.ivan}},
			{"customer=алена", []int64{s.alyona}},
			{"customer=АЛЁНА", []int64{s.alyona}},
			{"customer=пётр", []int64{s.pyotr, s.ivan}}, // "Петров" too: ё is е
			{"customer=ПЁТР%20%20сидоров", []int64{s.pyotr}},
			{"customer=анна", []int64{s.anna}},
			{"customer=FEDOR", []int64{s.fedor}},
			{"customer=%25", nil}, // a LIKE wildcard is only a character
			{"customer=_", nil},
			// Phone: by its digits, however either side writes it.
			{"customer=9000000000", []int64{s.ivan}},
			{"customer=900%20000-00-00", []int64{s.ivan}},
			{"customer=%2B7%20900", []int64{s.pyotr, s.ivan}},
			{"customer=(912)%20345", []int64{s.alyona}},
			{"customer=1112233", []int64{s.pyotr}},
			{"customer=9001", []int64{s.pyotr}},
			{"sku=TMB-PRIK-450", []int64{s.fedor, s.pyotr, s.alyona}},
			{"sku=SHK-KUPE-1600", []int64{s.fedor, s.anna, s.ivan}},
			{"sku=NO-SUCH", nil},
			{"due_after=2026-12-20", []int64{s.anna, s.alyona}},
			{"due_before=2026-12-10", []int64{s.fedor, s.ivan}},
			{"due_after=2026-12-05&due_before=2026-12-20", []int64{s.alyona, s.ivan}},
			{"due_after=2026-12-20&due_before=2026-12-20", []int64{s.alyona}},
			{"late=true", []int64{s.ivan}},
			{"late=false", []int64{s.fedor, s.pyotr, s.anna, s.alyona}},
			{"customer=иван&late=false", []int64{s.alyona}},
			{"status=in_production&sku=TMB-PRIK-450&due_after=2026-12-01", []int64{s.alyona}},
		}
		for _, c := range cases {
			for _, limit := range []int{1, 2, 50} {
				got := idsOf(orderList(t, env, c.query, limit))
				require.Equal(t, fmt.Sprint(c.want), fmt.Sprint(got), "%s, pages of %d", c.query, limit)
			}
		}
	})
}

// Every order carries late, in the list and alone: its ETA is after its due
// date; not without a due date or an ETA.
func TestOrders_LateFlag(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		s := seedOrderList(t, env)
		// A cancelled order is not late, whatever ETA it kept.
		require.NoError(t, dbtest.Fixture(env.App.DB, func(tx *gorm.DB) error {
			return tx.Exec("UPDATE sales_orders SET eta = ? WHERE id = ?", "2026-12-18", s.fedor).Error
		}))
		require.Equal(t, "2026-12-18", env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", s.fedor), nil).Map(t)["eta"])
		require.Equal(t, []int64{s.ivan}, idsOf(orderList(t, env, "late=true", 50)))
		require.Equal(t, []int64{s.fedor, s.pyotr, s.anna, s.alyona}, idsOf(orderList(t, env, "late=false", 50)))
		late := map[int64]bool{}
		for _, o := range orderList(t, env, "", 50) {
			late[o.ID] = o.Late
		}
		require.Equal(t, map[int64]bool{s.ivan: true, s.alyona: false, s.anna: false, s.pyotr: false, s.fedor: false}, late)
		for id, want := range late {
			got := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil).Map(t)
			require.Equal(t, want, got["late"], "order %d", id)
		}
	})
}

// Accept: text/csv gives the list the filters select as CSV: a byte order
// mark, a header, one row per order, the same orders as the JSON list (in
// the machine layout, read by its English headers).
func TestOrders_ListAsCSV(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		s := seedOrderList(t, env)
		for _, query := range []string{"", "customer=иван", "late=true", "sku=TMB-PRIK-450&status=in_production", "sku=NO-SUCH"} {
			r := env.Do(http.MethodGet, "/api/v1/orders?"+query+"&limit=1&layout=machine", nil, apptest.AdminToken, "Accept", "text/csv")
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			require.Equal(t, "text/csv; charset=utf-8", r.Header.Get("Content-Type"))
			require.True(t, bytes.HasPrefix(r.Body, []byte("\uFEFF")), "a byte order mark")
			rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(r.Body, []byte("\uFEFF")))).ReadAll()
			require.NoError(t, err)
			require.Equal(t, []string{"id", "created_at", "status", "source", "customer_name", "customer_phone", "customer_email",
				"due_date", "eta", "late", "items", "units", "sync_id", "crm_order_id"}, rows[0])
			var ids []int64
			for _, row := range rows[1:] {
				require.Len(t, row, len(rows[0]))
				id, err := strconv.ParseInt(row[0], 10, 64)
				require.NoError(t, err)
				ids = append(ids, id)
			}
			require.Equal(t, fmt.Sprint(idsOf(orderList(t, env, query, 50))), fmt.Sprint(ids), "CSV %q: every page, whatever the limit", query)
		}
		r := env.Do(http.MethodGet, "/api/v1/orders?customer=иван&layout=machine", nil, apptest.AdminToken, "Accept", "text/csv")
		rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(r.Body), "\uFEFF"))).ReadAll()
		require.NoError(t, err)
		require.Len(t, rows, 3)
		row := map[string]string{}
		for i, h := range rows[2] {
			row[rows[0][i]] = h
		}
		require.Equal(t, strconv.FormatInt(s.ivan, 10), row["id"])
		require.Equal(t, "Иван Петров", row["customer_name"])
		require.Equal(t, "'+7 900 000-00-00", row["customer_phone"], "formula-safe")
		require.Equal(t, "2026-12-10", row["due_date"])
		require.Equal(t, "2026-12-18", row["eta"])
		require.Equal(t, "true", row["late"])
		require.Equal(t, "SHK-KUPE-1600 × 2", row["items"])
		require.Equal(t, "2", row["units"])
		require.Equal(t, "in_production", row["status"])
		_, err = time.Parse(time.RFC3339, row["created_at"])
		require.NoError(t, err)

		requireProblemType(t, env.Do(http.MethodGet, "/api/v1/orders?late=maybe", nil, apptest.AdminToken, "Accept", "text/csv"),
			http.StatusUnprocessableEntity, "invalid", "late")
	})
}

// A filter value that cannot match anything is a 422 naming it, never a list;
// a parameter the list does not take is a 400.
func TestOrders_ListRefusesFiltersThatCannotMatch(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		require.Equal(t, http.StatusCreated, env.Admin(http.MethodPost, "/api/v1/orders", validOrder).Status)
		refused := func(query string, fields ...string) {
			t.Helper()
			requireProblemType(t, env.Admin(http.MethodGet, "/api/v1/orders?"+query, nil), http.StatusUnprocessableEntity, "invalid", fields...)
		}
		refused("status=lost", "status")
		refused("status=Received", "status")
		refused("source=email", "source")
		refused("due_after=2026-13-01", "due_after")
		refused("due_before=20.12.2026", "due_before")
		refused("due_after=1999-12-31", "due_after")
		refused("late=yes", "late")
		refused("late=1", "late")
		refused("late=TRUE", "late")
		refused("due_after=2026-12-21&due_before=2026-12-20", "due_before")
		refused("customer="+strings.Repeat("я", 201), "customer")
		refused("sku="+strings.Repeat("S", 65), "sku")
		refused("status=lost&source=email&late=no&due_after=x", "status", "source", "late", "due_after")
		requireProblemType(t, env.Admin(http.MethodGet, "/api/v1/orders?customer_name=иван", nil), http.StatusBadRequest, "bad_request", "customer_name")
		requireProblemType(t, env.Admin(http.MethodGet, "/api/v1/orders?due=2026-12-20", nil), http.StatusBadRequest, "bad_request", "due")
		// The limits of what is accepted.
		require.Equal(t, http.StatusOK, env.Admin(http.MethodGet, "/api/v1/orders?customer="+strings.Repeat("я", 200), nil).Status)
		require.Equal(t, http.StatusOK, env.Admin(http.MethodGet, "/api/v1/orders?due_after=2026-12-20&due_before=2026-12-20&late=false", nil).Status)
	})
}

// The journal's type and aggregate_type filters name what exists: a type no
// event can have is a 422 naming it, not an empty list.
func TestEvents_ListRefusesUnknownTypes(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		require.Equal(t, http.StatusCreated, env.Admin(http.MethodPost, "/api/v1/orders", validOrder).Status)
		var list struct{ Items []struct{ Type string } }
		env.Admin(http.MethodGet, "/api/v1/events?type=order.received&aggregate_type=sales_orders", nil).JSON(t, &list)
		require.Len(t, list.Items, 1)
		p := requireProblemType(t, env.Admin(http.MethodGet, "/api/v1/events?type=order.recieved", nil), http.StatusUnprocessableEntity, "invalid", "type")
		require.Contains(t, p.Errors[0].Message, "order.recieved")
		p = requireProblemType(t, env.Admin(http.MethodGet, "/api/v1/events?aggregate_type=orders", nil), http.StatusUnprocessableEntity, "invalid", "aggregate_type")
		require.Contains(t, p.Errors[0].Message, `"orders"`)
		requireProblemType(t, env.Admin(http.MethodGet, "/api/v1/events?type=Order.Received&aggregate_type=sales_order", nil),
			http.StatusUnprocessableEntity, "invalid", "type", "aggregate_type")
		// Every type and aggregate type of the catalogue is a filter.
		var types struct {
			Items []struct {
				Type          string `json:"type"`
				AggregateType string `json:"aggregate_type"`
			}
		}
		env.Admin(http.MethodGet, "/api/v1/event-types", nil).JSON(t, &types)
		require.NotEmpty(t, types.Items)
		for _, typ := range types.Items {
			r := env.Admin(http.MethodGet, "/api/v1/events?type="+url.QueryEscape(typ.Type)+"&aggregate_type="+url.QueryEscape(typ.AggregateType), nil)
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", typ.Type, r.Body)
		}
	})
}
