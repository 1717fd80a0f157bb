package api_test

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// noteLine is a line of a sales order with its note.
type noteLine struct {
	SKU  string `json:"sku"`
	Qty  int    `json:"qty"`
	Note string `json:"note,omitempty"`
}

// receiveFor creates a sales order of the customer, due on due ("" none),
// lets the plan receive it and returns its item ids.
func receiveFor(t *testing.T, env *apptest.Env, customer, due string, lines ...noteLine) []int64 {
	t.Helper()
	body := map[string]any{"customer": map[string]any{"name": customer}, "items": lines}
	if due != "" {
		body["due_date"] = due
	}
	_, ids := receiveOrder(t, env, body)
	return ids
}

type backlogListRow struct {
	ItemID      int64  `json:"item_id"`
	OrderID     int64  `json:"order_id"`
	SKU         string `json:"sku"`
	Qty         int    `json:"qty"`
	Customer    string `json:"customer"`
	Note        string `json:"note"`
	ProductName string `json:"product_name"`
	Route       struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"route"`
	DueDate *string `json:"due_date"`
}

type catalogProduct struct {
	ID      int64  `json:"id"`
	SKU     string `json:"sku"`
	Name    string `json:"name"`
	RouteID int64  `json:"route_id"`
	Parts   []struct {
		Name        string `json:"name"`
		Material    string `json:"material"`
		LengthMM    int    `json:"length_mm"`
		WidthMM     int    `json:"width_mm"`
		ThicknessMM int    `json:"thickness_mm"`
		Edging      string `json:"edging"`
		Qty         int    `json:"qty"`
	} `json:"parts"`
}

// catalogOf reads the products by SKU and the route names by id through the API.
func catalogOf(t *testing.T, env *apptest.Env) (map[string]catalogProduct, map[int64]string) {
	t.Helper()
	var ps struct{ Items []catalogProduct }
	env.Admin(http.MethodGet, "/api/v1/products?limit=500", nil).JSON(t, &ps)
	products := map[string]catalogProduct{}
	for _, p := range ps.Items {
		products[p.SKU] = p
	}
	var rs struct {
		Items []struct {
			ID   int64
			Name string
		}
	}
	env.Admin(http.MethodGet, "/api/v1/routes?limit=500", nil).JSON(t, &rs)
	routes := map[int64]string{}
	for _, r := range rs.Items {
		routes[r.ID] = r.Name
	}
	require.NotEmpty(t, products)
	require.Len(t, routes, 2)
	return products, routes
}

// pageThrough reads every page of the list at path (which has a query
// already) limit rows at a time, failing on a page that repeats a cursor.
func pageThrough[T any](t *testing.T, env *apptest.Env, path string, limit int) []T {
	t.Helper()
	var all []T
	cursor := ""
	seen := map[string]bool{}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100, "paging does not end")
		p := path + "&limit=" + strconv.Itoa(limit)
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		r := env.Admin(http.MethodGet, p, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", p, r.Body)
		var l struct {
			Items      []T    `json:"items"`
			NextCursor string `json:"next_cursor"`
		}
		r.JSON(t, &l)
		require.LessOrEqual(t, len(l.Items), limit)
		all = append(all, l.Items...)
		if l.NextCursor == "" {
			return all
		}
		require.False(t, seen[l.NextCursor], "cursor repeated")
		seen[l.NextCursor] = true
		cursor = l.NextCursor
	}
}

// readCSV asks for path as CSV in the machine layout (English headers, ","
// separated) and returns its rows, the header first, after checking the
// media type and the byte order mark.
func readCSV(t *testing.T, env *apptest.Env, path string, token string) [][]string {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return readCSVSep(t, env, path+sep+"layout=machine", token, ',')
}

// readCSVSep is readCSV of a list separated by comma.
func readCSVSep(t *testing.T, env *apptest.Env, path string, token string, comma rune) [][]string {
	t.Helper()
	r := env.Do(http.MethodGet, path, nil, token, "Accept", "text/csv")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv"), r.Header.Get("Content-Type"))
	body, ok := bytes.CutPrefix(r.Body, []byte("\uFEFF"))
	require.True(t, ok, "no byte order mark")
	reader := csv.NewReader(bytes.NewReader(body))
	reader.Comma = comma
	rows, err := reader.ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	return rows
}

// column returns the index of the header's column.
func column(t *testing.T, header []string, name string) int {
	t.Helper()
	i := slices.Index(header, name)
	require.GreaterOrEqual(t, i, 0, "no column %s in %v", name, header)
	return i
}

func backlogRowsOf(t *testing.T, env *apptest.Env, query string) []backlogListRow {
	t.Helper()
	return pageThrough[backlogListRow](t, env, "/api/v1/plan/backlog?"+query, 500)
}

func backlogItemIDs(rows []backlogListRow) []int64 {
	ids := []int64{}
	for _, r := range rows {
		ids = append(ids, r.ItemID)
	}
	return ids
}

func TestBacklog_RowsForPeople(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		products, routes := catalogOf(t, env)
		a := receiveFor(t, env, "Анна Смирнова", "2026-12-10",
			noteLine{SKU: "TMB-PRIK-450", Qty: 2, Note: "белый глянец"}, noteLine{SKU: "DIV-CHESTER-3", Qty: 1})
		b := receiveFor(t, env, "ООО «Ромашка»", "", noteLine{SKU: "SHK-KUPE-1600", Qty: 1, Note: "зеркало на левой двери"})
		c := receiveFor(t, env, "Пётр Иванов", "2026-12-01", noteLine{SKU: "TMB-PRIK-450", Qty: 1})

		rows := backlogRowsOf(t, env, "")
		require.Equal(t, []int64{a[0], a[1], b[0], c[0]}, backlogItemIDs(rows))
		want := map[int64]struct{ customer, note, sku, due string }{
			a[0]: {"Анна Смирнова", "белый глянец", "TMB-PRIK-450", "2026-12-10"},
			a[1]: {"Анна Смирнова", "", "DIV-CHESTER-3", "2026-12-10"},
			b[0]: {"ООО «Ромашка»", "зеркало на левой двери", "SHK-KUPE-1600", ""},
			c[0]: {"Пётр Иванов", "", "TMB-PRIK-450", "2026-12-01"},
		}
		for _, r := range rows {
			w := want[r.ItemID]
			require.Equal(t, w.customer, r.Customer, "item %d", r.ItemID)
			require.Equal(t, w.note, r.Note, "item %d", r.ItemID)
			require.Equal(t, w.sku, r.SKU)
			p := products[r.SKU]
			require.Equal(t, p.Name, r.ProductName, "item %d", r.ItemID)
			require.NotEmpty(t, r.ProductName)
			require.Equal(t, p.RouteID, r.Route.ID, "item %d", r.ItemID)
			require.Equal(t, routes[p.RouteID], r.Route.Name, "item %d", r.ItemID)
			if w.due == "" {
				require.Nil(t, r.DueDate, "item %d", r.ItemID)
			} else {
				require.NotNil(t, r.DueDate, "item %d", r.ItemID)
				require.Equal(t, w.due, *r.DueDate)
			}
		}

		// A production order's items carry them too, and take them back
		// to the backlog when it is cancelled.
		o := launch(t, env, map[string]any{"items": []int64{a[0]}})
		r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", o.ID), nil)
		var detail struct {
			DueDate string `json:"due_date"`
			Items   []struct {
				Customer string `json:"customer"`
				Note     string `json:"note"`
			} `json:"items"`
		}
		r.JSON(t, &detail)
		require.Equal(t, "2026-12-10", detail.DueDate)
		require.Len(t, detail.Items, 1)
		require.Equal(t, "Анна Смирнова", detail.Items[0].Customer)
		require.Equal(t, "белый глянец", detail.Items[0].Note)
		require.NotContains(t, backlogItemIDs(backlogRowsOf(t, env, "")), a[0])
		require.Equal(t, http.StatusOK, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", o.ID), nil).Status)
		back := backlogRowsOf(t, env, "sku=TMB-PRIK-450")
		require.Equal(t, []int64{a[0], c[0]}, backlogItemIDs(back))
		require.Equal(t, "Анна Смирнова", back[0].Customer)
		require.Equal(t, "белый глянец", back[0].Note)
	})
}

func TestBacklog_Filters(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		products, _ := catalogOf(t, env)
		a := receiveFor(t, env, "А", "2026-12-10", noteLine{SKU: "TMB-PRIK-450", Qty: 2}, noteLine{SKU: "DIV-CHESTER-3", Qty: 1})
		b := receiveFor(t, env, "Б", "", noteLine{SKU: "SHK-KUPE-1600", Qty: 1})
		c := receiveFor(t, env, "В", "2026-12-01", noteLine{SKU: "TMB-PRIK-450", Qty: 1})
		caseRoute, sofaRoute := products["TMB-PRIK-450"].RouteID, products["DIV-CHESTER-3"].RouteID
		require.NotEqual(t, caseRoute, sofaRoute)
		r := env.Admin(http.MethodPost, "/api/v1/routes", map[string]any{"name": "Корпус ЛДСП (без изделий)", "kind": "case", "operations": []map[string]any{
			{"name": "Раскрой", "work_center_id": 1, "scope": "part", "minutes": 4.5},
		}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var unused struct{ ID int64 }
		r.JSON(t, &unused)

		for _, tc := range []struct {
			query string
			want  []int64
		}{
			{"sku=TMB-PRIK-450", []int64{a[0], c[0]}},
			{"sku=NO-SUCH-SKU", []int64{}},
			{fmt.Sprintf("route_id=%d", sofaRoute), []int64{a[1]}},
			{fmt.Sprintf("route_id=%d", caseRoute), []int64{a[0], b[0], c[0]}},
			{fmt.Sprintf("route_id=%d", unused.ID), []int64{}}, // no product follows it
			{"due_before=2026-12-05", []int64{c[0]}},
			{"due_before=2026-12-10", []int64{c[0]}}, // before, not on
			{"due_before=2026-12-11", []int64{a[0], a[1], c[0]}},
			{fmt.Sprintf("sku=TMB-PRIK-450&route_id=%d&due_before=2026-12-11", caseRoute), []int64{a[0], c[0]}},
			{fmt.Sprintf("sku=TMB-PRIK-450&route_id=%d", sofaRoute), []int64{}},
		} {
			require.Equal(t, tc.want, backlogItemIDs(backlogRowsOf(t, env, tc.query)), tc.query)
		}

		for _, tc := range []struct{ query, field string }{
			{"route_id=999999", "route_id"},
			{"route_id=x", "route_id"},
			{"due_before=2026-13-01", "due_before"},
			{"sort=priority", "sort"},
			{"cursor=bm90LWEtY3Vyc29y", "cursor"},
			{"sort=due_date&cursor=" + base64.RawURLEncoding.EncodeToString([]byte(`{"s":"due_date","k":"2026-13-45","id":1}`)), "cursor"},
		} {
			requireProblem(t, env.Admin(http.MethodGet, "/api/v1/plan/backlog?"+tc.query, nil), http.StatusUnprocessableEntity, tc.field)
		}
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/plan/backlog?route=1", nil), http.StatusBadRequest, "route")
	})
}

func TestProdOrders_Filters(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		products, _ := catalogOf(t, env)
		a := receiveFor(t, env, "А", "2026-12-10", noteLine{SKU: "TMB-PRIK-450", Qty: 1}, noteLine{SKU: "DIV-CHESTER-3", Qty: 1})
		b := receiveFor(t, env, "Б", "", noteLine{SKU: "SHK-KUPE-1600", Qty: 1})
		c := receiveFor(t, env, "В", "2026-12-01", noteLine{SKU: "TMB-PRIK-450", Qty: 1}, noteLine{SKU: "SHK-KUPE-1600", Qty: 1})
		pa := launch(t, env, map[string]any{"items": []int64{a[0]}}).ID
		ps := launch(t, env, map[string]any{"items": []int64{a[1]}}).ID
		pb := launch(t, env, map[string]any{"items": []int64{b[0]}}).ID
		pc := launch(t, env, map[string]any{"items": []int64{c[0], c[1]}}).ID
		sofaRoute := products["DIV-CHESTER-3"].RouteID

		ids := func(query string) []int64 {
			out := []int64{}
			for _, o := range pageThrough[prodOrder](t, env, "/api/v1/production-orders?"+query, 500) {
				out = append(out, o.ID)
			}
			return out
		}
		for _, tc := range []struct {
			query string
			want  []int64
		}{
			{"sku=SHK-KUPE-1600", []int64{pc, pb}},
			{"sku=DIV-CHESTER-3", []int64{ps}},
			{fmt.Sprintf("route_id=%d", sofaRoute), []int64{ps}},
			{fmt.Sprintf("route_id=%d", products["TMB-PRIK-450"].RouteID), []int64{pc, pb, pa}},
			{"due_before=2026-12-05", []int64{pc}},
			{"due_before=2026-12-10", []int64{pc}},
			{"due_before=2026-12-11", []int64{pc, ps, pa}},
			{"sku=TMB-PRIK-450&due_before=2026-12-05", []int64{pc}},
		} {
			require.Equal(t, tc.want, ids(tc.query), tc.query)
		}
		for _, tc := range []struct{ query, field string }{
			{"route_id=999999", "route_id"},
			{"due_before=yesterday", "due_before"},
			{"sort=due", "sort"},
		} {
			requireProblem(t, env.Admin(http.MethodGet, "/api/v1/production-orders?"+tc.query, nil), http.StatusUnprocessableEntity, tc.field)
		}
	})
}

// dueOrder compares two optional dates as the lists sort them: soonest
// first, none last.
func dueOrder(a, b *string, desc bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	if desc {
		return strings.Compare(*b, *a)
	}
	return strings.Compare(*a, *b)
}

func TestBacklog_SortedPaging(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		// Due dates with ties and gaps, so that every page boundary falls
		// between rows of one key somewhere.
		for i, due := range []string{"2026-12-10", "", "2026-12-01", "2026-12-10", "", "2026-12-05", "2026-12-10", "2026-12-01"} {
			receiveFor(t, env, fmt.Sprintf("Клиент %d", i), due, noteLine{SKU: "TMB-PRIK-450", Qty: 1}, noteLine{SKU: "DIV-CHESTER-3", Qty: 1})
		}
		all := backlogRowsOf(t, env, "")
		require.Len(t, all, 16)
		for _, tc := range []struct {
			sort string
			cmp  func(a, b backlogListRow) int
		}{
			{"received", func(a, b backlogListRow) int { return cmp.Compare(a.ItemID, b.ItemID) }},
			{"-received", func(a, b backlogListRow) int { return cmp.Compare(b.ItemID, a.ItemID) }},
			{"due_date", func(a, b backlogListRow) int {
				return cmp.Or(dueOrder(a.DueDate, b.DueDate, false), cmp.Compare(a.ItemID, b.ItemID))
			}},
			{"-due_date", func(a, b backlogListRow) int {
				return cmp.Or(dueOrder(a.DueDate, b.DueDate, true), cmp.Compare(b.ItemID, a.ItemID))
			}},
		} {
			want := slices.Clone(all)
			slices.SortFunc(want, tc.cmp)
			for _, limit := range []int{1, 3, 5} {
				got := pageThrough[backlogListRow](t, env, "/api/v1/plan/backlog?sort="+tc.sort, limit)
				require.Equal(t, backlogItemIDs(want), backlogItemIDs(got), "sort=%s limit=%d", tc.sort, limit)
			}
			// Filtered and sorted at once.
			var sofas []backlogListRow
			for _, r := range want {
				if r.SKU == "DIV-CHESTER-3" {
					sofas = append(sofas, r)
				}
			}
			got := pageThrough[backlogListRow](t, env, "/api/v1/plan/backlog?sku=DIV-CHESTER-3&sort="+tc.sort, 2)
			require.Equal(t, backlogItemIDs(sofas), backlogItemIDs(got), "sku and sort=%s", tc.sort)
		}

		// A cursor continues only the order it was given in.
		var first struct {
			NextCursor string `json:"next_cursor"`
		}
		env.Admin(http.MethodGet, "/api/v1/plan/backlog?sort=due_date&limit=2", nil).JSON(t, &first)
		require.NotEmpty(t, first.NextCursor)
		for _, other := range []string{"", "&sort=-due_date", "&sort=-received"} {
			r := env.Admin(http.MethodGet, "/api/v1/plan/backlog?cursor="+first.NextCursor+other, nil)
			requireProblem(t, r, http.StatusUnprocessableEntity, "cursor")
		}
	})
}

func TestProdOrders_SortedPaging(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		for i, tc := range []struct{ due, eta string }{
			{"2027-01-10", "2027-02-01"},
			{"", "2027-01-20"},
			{"2027-01-05", "2027-02-01"},
			{"2027-01-10", ""},
			{"", "2027-01-20"},
			{"2027-01-01", "2027-02-01"},
			{"2027-01-10", "2027-01-15"},
		} {
			items := receiveFor(t, env, fmt.Sprintf("Клиент %d", i), tc.due, noteLine{SKU: "TMB-PRIK-450", Qty: 1})
			body := map[string]any{"items": items}
			if tc.eta != "" {
				body["eta"] = tc.eta
			}
			launch(t, env, body)
		}
		type row struct {
			ID      int64   `json:"id"`
			ETA     string  `json:"eta"`
			DueDate *string `json:"due_date"`
		}
		all := pageThrough[row](t, env, "/api/v1/production-orders?sort=-created", 500)
		require.Len(t, all, 7)
		idsOf := func(rs []row) []int64 {
			out := []int64{}
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		for _, tc := range []struct {
			sort string
			cmp  func(a, b row) int
		}{
			{"-created", func(a, b row) int { return cmp.Compare(b.ID, a.ID) }},
			{"created", func(a, b row) int { return cmp.Compare(a.ID, b.ID) }},
			{"eta", func(a, b row) int { return cmp.Or(strings.Compare(a.ETA, b.ETA), cmp.Compare(a.ID, b.ID)) }},
			{"-eta", func(a, b row) int { return cmp.Or(strings.Compare(b.ETA, a.ETA), cmp.Compare(b.ID, a.ID)) }},
			{"due_date", func(a, b row) int { return cmp.Or(dueOrder(a.DueDate, b.DueDate, false), cmp.Compare(a.ID, b.ID)) }},
			{"-due_date", func(a, b row) int { return cmp.Or(dueOrder(a.DueDate, b.DueDate, true), cmp.Compare(b.ID, a.ID)) }},
		} {
			want := slices.Clone(all)
			slices.SortFunc(want, tc.cmp)
			for _, limit := range []int{1, 2, 4} {
				got := pageThrough[row](t, env, "/api/v1/production-orders?sort="+tc.sort, limit)
				require.Equal(t, idsOf(want), idsOf(got), "sort=%s limit=%d", tc.sort, limit)
			}
		}
	})
}

func TestPlanLists_CSV(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		receiveFor(t, env, "Анна Смирнова", "2026-12-10", noteLine{SKU: "TMB-PRIK-450", Qty: 2, Note: "=HYPERLINK(\"x\")"}, noteLine{SKU: "DIV-CHESTER-3", Qty: 1})
		receiveFor(t, env, "ООО «Ромашка», склад", "", noteLine{SKU: "SHK-KUPE-1600", Qty: 1, Note: "в две строки\nвторая"})
		c := receiveFor(t, env, "Пётр", "2026-12-01", noteLine{SKU: "TMB-PRIK-450", Qty: 1})
		launch(t, env, map[string]any{"items": []int64{c[0]}})

		// The backlog: the same rows as JSON, in the same order, whatever
		// the page size would be.
		for _, query := range []string{"", "sort=-due_date", "sku=TMB-PRIK-450"} {
			rows := readCSV(t, env, "/api/v1/plan/backlog?limit=1&"+query, apptest.AdminToken)
			header, rows := rows[0], rows[1:]
			want := backlogRowsOf(t, env, query)
			require.Len(t, rows, len(want), query)
			for i, w := range want {
				r := rows[i]
				require.Equal(t, strconv.FormatInt(w.ItemID, 10), r[column(t, header, "item_id")])
				require.Equal(t, w.Customer, r[column(t, header, "customer")])
				require.Equal(t, w.ProductName, r[column(t, header, "product_name")])
				require.Equal(t, w.Route.Name, r[column(t, header, "route")])
				require.Equal(t, strconv.Itoa(w.Qty), r[column(t, header, "qty")])
				due := ""
				if w.DueDate != nil {
					due = *w.DueDate
				}
				require.Equal(t, due, r[column(t, header, "due_date")])
				note := w.Note
				if strings.HasPrefix(note, "=") {
					note = "'" + note // a spreadsheet must not run it
				}
				require.Equal(t, note, r[column(t, header, "note")])
			}
		}

		// Production orders: the same ids, in the same order, as JSON.
		rows := readCSV(t, env, "/api/v1/production-orders?sort=eta", apptest.AdminToken)
		header, rows := rows[0], rows[1:]
		want := pageThrough[prodOrder](t, env, "/api/v1/production-orders?sort=eta", 500)
		require.Len(t, rows, len(want))
		for i, w := range want {
			require.Equal(t, strconv.FormatInt(w.ID, 10), rows[i][column(t, header, "id")])
			require.Equal(t, w.ETA, rows[i][column(t, header, "eta")])
			require.Equal(t, "2026-12-01", rows[i][column(t, header, "due_date")])
			require.Equal(t, "Пётр", rows[i][column(t, header, "customers")])
			require.Equal(t, "TMB-PRIK-450 × 1", rows[i][column(t, header, "items")])
		}
		// A filter that selects nothing still answers the header.
		rows = readCSV(t, env, "/api/v1/production-orders?sku=DIV-CHESTER-3", apptest.AdminToken)
		require.Len(t, rows, 1)
	})
}

// cutLine is a line of a cutting list as the test compares them.
type cutLine struct {
	Material      string
	Thickness     int
	Name          string
	Length, Width int
	Edging        string
}

type cuttingList struct {
	ProdOrders []int64 `json:"prod_orders"`
	Materials  []struct {
		Board       string  `json:"board"`
		Material    string  `json:"material"`
		ThicknessMM int     `json:"thickness_mm"`
		Qty         int     `json:"qty"`
		AreaM2      float64 `json:"area_m2"`
		Parts       []struct {
			Name     string `json:"name"`
			LengthMM int    `json:"length_mm"`
			WidthMM  int    `json:"width_mm"`
			Edging   string `json:"edging"`
			Qty      int    `json:"qty"`
			Where    string `json:"where"`
			Origins  []struct {
				ProdOrderID int64  `json:"prod_order_id"`
				OrderID     int64  `json:"order_id"`
				ItemID      int64  `json:"item_id"`
				SKU         string `json:"sku"`
				Qty         int    `json:"qty"`
			} `json:"origins"`
		} `json:"parts"`
	} `json:"materials"`
}

// launchedItem is an item of a production order as the test launched it.
type launchedItem struct {
	prodOrder, item int64
	sku             string
	qty             int
}

// expectedCuts computes from the catalog what a cutting list of the items
// must hold: every part line's quantity times the item's, summed over
// identical parts.
func expectedCuts(products map[string]catalogProduct, items []launchedItem) map[cutLine]int {
	want := map[cutLine]int{}
	for _, it := range items {
		for _, p := range products[it.sku].Parts {
			want[cutLine{p.Material, p.ThicknessMM, p.Name, p.LengthMM, p.WidthMM, p.Edging}] += p.Qty * it.qty
		}
	}
	return want
}

// checkCuttingList checks a cutting list against the catalog: its sums,
// its grouping and every origin (each item needs its product's quantity
// of the part times its units).
func checkCuttingList(t *testing.T, l cuttingList, products map[string]catalogProduct, items []launchedItem) {
	t.Helper()
	want := expectedCuts(products, items)
	got := map[cutLine]int{}
	type unitKey struct {
		line        cutLine
		order, item int64
	}
	units := map[unitKey]int{}
	for i, m := range l.Materials {
		if i > 0 {
			prev := l.Materials[i-1]
			require.True(t, prev.Board < m.Board, "boards in order, one group each")
		}
		n := 0
		area := 0.0
		for _, p := range m.Parts {
			line := cutLine{m.Material, m.ThicknessMM, p.Name, p.LengthMM, p.WidthMM, p.Edging}
			_, dup := got[line]
			require.False(t, dup, "identical parts are one line: %+v", line)
			got[line] = p.Qty
			n += p.Qty
			area += float64(p.Qty*p.LengthMM*p.WidthMM) / 1e6
			sum := 0
			byOrder := map[int64]int{}
			for _, o := range p.Origins {
				sum += o.Qty
				byOrder[o.OrderID] += o.Qty
				units[unitKey{line, o.ProdOrderID, o.ItemID}] += o.Qty
			}
			require.Equal(t, p.Qty, sum, "origins of %+v", line)
			for order, n := range byOrder {
				require.Contains(t, p.Where, fmt.Sprintf("№%d ×%d", order, n))
			}
		}
		require.Equal(t, n, m.Qty, m.Material)
		require.InDelta(t, area, m.AreaM2, 0.001, m.Material)
	}
	require.Equal(t, want, got)
	wantUnits := map[unitKey]int{}
	for _, it := range items {
		for _, p := range products[it.sku].Parts {
			wantUnits[unitKey{cutLine{p.Material, p.ThicknessMM, p.Name, p.LengthMM, p.WidthMM, p.Edging}, it.prodOrder, it.item}] += p.Qty * it.qty
		}
	}
	require.Equal(t, wantUnits, units)
}

func TestCuttingList(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		// One material in two thicknesses: two groups.
		demo, _ := catalogOf(t, env)
		for _, b := range []map[string]any{
			{"kind": "board", "code": "LDSP22-OAK", "name": "ЛДСП Дуб", "decor": "Дуб", "thickness_mm": 22},
			{"kind": "board", "code": "LDSP16-OAK", "name": "ЛДСП Дуб", "decor": "Дуб", "thickness_mm": 16},
		} {
			r := env.Admin(http.MethodPost, "/api/v1/materials", b)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		}
		r := env.Admin(http.MethodPost, "/api/v1/products", map[string]any{"sku": "STOL-DUB-1200", "name": "Стол письменный 1200", "kind": "case",
			"route_id": demo["TMB-PRIK-450"].RouteID, "parts": []map[string]any{
				{"name": "Столешница", "material": "ЛДСП Дуб", "length_mm": 1200, "width_mm": 600, "thickness_mm": 22, "edging": "ПВХ 2 мм, по периметру", "qty": 1},
				{"name": "Опора", "material": "ЛДСП Дуб", "length_mm": 730, "width_mm": 560, "thickness_mm": 16, "edging": "ПВХ 0,4 мм, 1 сторона", "qty": 2},
			}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		products, _ := catalogOf(t, env)
		a := receiveFor(t, env, "А", "", noteLine{SKU: "TMB-PRIK-450", Qty: 2}, noteLine{SKU: "SHK-KUPE-1600", Qty: 1}, noteLine{SKU: "STOL-DUB-1200", Qty: 2})
		b := receiveFor(t, env, "Б", "", noteLine{SKU: "TMB-PRIK-450", Qty: 3}, noteLine{SKU: "SHK-RASP-1200", Qty: 1})
		c := receiveFor(t, env, "В", "", noteLine{SKU: "DIV-CHESTER-3", Qty: 1})
		p1 := launch(t, env, map[string]any{"items": []int64{a[0], a[1], a[2]}}).ID
		p2 := launch(t, env, map[string]any{"items": []int64{b[0], b[1]}}).ID
		p3 := launch(t, env, map[string]any{"items": []int64{c[0]}}).ID
		items1 := []launchedItem{{p1, a[0], "TMB-PRIK-450", 2}, {p1, a[1], "SHK-KUPE-1600", 1}, {p1, a[2], "STOL-DUB-1200", 2}}
		items2 := []launchedItem{{p2, b[0], "TMB-PRIK-450", 3}, {p2, b[1], "SHK-RASP-1200", 1}}
		items3 := []launchedItem{{p3, c[0], "DIV-CHESTER-3", 1}}

		one := func(id int64) cuttingList {
			r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d/cutting-list", id), nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var l cuttingList
			r.JSON(t, &l)
			require.Equal(t, []int64{id}, l.ProdOrders)
			return l
		}
		checkCuttingList(t, one(p1), products, items1)
		checkCuttingList(t, one(p2), products, items2)
		checkCuttingList(t, one(p3), products, items3)

		// Several at once: summed per material, identical parts of both
		// orders' nightstands one line with the origins of both.
		r = env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/cutting-list?ids=%d,%d,%d", p2, p1, p3), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var many cuttingList
		r.JSON(t, &many)
		require.Equal(t, []int64{p1, p2, p3}, many.ProdOrders)
		all := append(append(slices.Clone(items1), items2...), items3...)
		checkCuttingList(t, many, products, all)
		side := cutLine{"ЛДСП 16 мм Белый", 16, "Боковина", 500, 400, "ПВХ 2 мм, 1 сторона"}
		require.Equal(t, 2*(2+3), expectedCuts(products, all)[side], "the demo nightstand has two sides")
		found := false
		for _, m := range many.Materials {
			for _, p := range m.Parts {
				if p.Name == side.Name && p.LengthMM == side.Length && p.WidthMM == side.Width {
					found = true
					require.Equal(t, 10, p.Qty)
					orders := map[int64]bool{}
					for _, o := range p.Origins {
						orders[o.ProdOrderID] = true
					}
					require.Equal(t, map[int64]bool{p1: true, p2: true}, orders)
				}
			}
		}
		require.True(t, found, "the nightstand's side is listed")

		// Its CSV: one row per line, the same lines and sums.
		for _, who := range []string{apptest.AdminToken, env.UserToken("Мастер", "master"), env.UserToken("Гость", "viewer")} {
			rows := readCSVSep(t, env, fmt.Sprintf("/api/v1/production-orders/cutting-list?ids=%d,%d,%d", p1, p2, p3), who, ';')
			header, rows := rows[0], rows[1:]
			got := map[cutLine]int{}
			for _, row := range rows {
				num := func(name string) int {
					n, err := strconv.Atoi(row[column(t, header, name)])
					require.NoError(t, err)
					return n
				}
				got[cutLine{row[column(t, header, "Материал")], num("Толщина, мм"), row[column(t, header, "Деталь")],
					num("Длина, мм"), num("Ширина, мм"), row[column(t, header, "Кромка")]}] = num("Кол-во")
				require.Contains(t, row[column(t, header, "Куда")], "№")
			}
			require.Equal(t, expectedCuts(products, all), got)
		}
		rows := readCSVSep(t, env, fmt.Sprintf("/api/v1/production-orders/%d/cutting-list", p3), apptest.AdminToken, ';')
		require.Len(t, rows, 1+len(products["DIV-CHESTER-3"].Parts))

		// Unknown and malformed ids are named.
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/production-orders/999999/cutting-list", nil), http.StatusNotFound)
		p := requireProblem(t, env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/cutting-list?ids=%d,999998,999999", p1), nil), http.StatusUnprocessableEntity, "ids")
		require.Contains(t, p.Errors[0].Message, "999998, 999999")
		for _, q := range []string{"", "?ids=", "?ids=1,x", "?ids=0", "?ids=" + strings.Repeat("1,", 200) + "1"} {
			requireProblem(t, env.Admin(http.MethodGet, "/api/v1/production-orders/cutting-list"+q, nil), http.StatusUnprocessableEntity, "ids")
		}
		require.Equal(t, http.StatusUnauthorized, env.Do(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d/cutting-list", p1), nil, "").Status)
		// The order itself is still where it was.
		require.Equal(t, http.StatusOK, env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", p1), nil).Status)
	})
}
