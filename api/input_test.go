package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/sales"
)

// orderBody is a manual order whose customer's name, phone, email and first
// item's SKU and note are the JSON texts given (quotes included), and whose
// due date is due ("" for none).
func orderBody(name, phone, email, sku, note, due string) []byte {
	b := fmt.Sprintf(`{"customer": {"name": %s, "phone": %s, "email": %s}, "items": [{"sku": %s, "qty": 1, "note": %s}]`,
		name, phone, email, sku, note)
	if due != "" {
		b += fmt.Sprintf(`, "due_date": %q`, due)
	}
	return []byte(b + "}")
}

// okOrder is orderBody with one field replaced; field is one of name, phone,
// email, sku, note.
func okOrder(field, value string) []byte {
	f := map[string]string{"name": `"Иван Петров"`, "phone": `"+7 900 000-00-00"`, "email": `"ivan@example.com"`, "sku": `"SHK-KUPE-1600"`, "note": `""`}
	f[field] = value
	return orderBody(f["name"], f["phone"], f["email"], f["sku"], f["note"], "")
}

// shopDelivery is a signed webhook delivery of body.
func shopDelivery(body []byte) *http.Request {
	now := time.Now().Unix()
	return newRequest(http.MethodPost, webhookPath, body, "Content-Type", "application/json",
		sales.HeaderShopTimestamp, strconv.FormatInt(now, 10), sales.HeaderShopSignature, sales.Sign(shopSecret, now, body))
}

// refusal is a request the API must refuse as a problem of the type, naming
// the fields, and having written nothing.
type refusal struct {
	name   string
	req    func() *http.Request
	status int
	typ    string
	fields []string
}

func post(path string, body []byte) func() *http.Request {
	return func() *http.Request { return newRequest(http.MethodPost, path, body, jsonAdmin...) }
}

func get(path string) func() *http.Request {
	return func() *http.Request { return newRequest(http.MethodGet, path, nil, asAdmin...) }
}

func signed(body []byte) func() *http.Request {
	return func() *http.Request { return shopDelivery(body) }
}

func runRefusals(t *testing.T, env *apptest.Env, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := rowCounts(t, env)
			r := send(env, tc.req())
			requireProblemType(t, r, tc.status, tc.typ, tc.fields...)
			requireRefusedCleanly(t, r, before, rowCounts(t, env))
		})
	}
}

// Item 3 of the hardening: NUL, other control characters and invalid UTF-8
// are refused as 422 naming the field, alike on both databases (PostgreSQL
// cannot store them and answered 500).
func TestInput_ControlCharactersAndInvalidUTF8(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		// The shop's user is made on its first delivery: make it now, so
		// that the refusals below can be seen to write nothing.
		require.Equal(t, http.StatusCreated, send(env, shopDelivery([]byte(shopBody("warm-up")))).Status)
		shop := func(field, value string) []byte {
			b := strings.Replace(shopBody("s1"), `"Анна Смирнова"`, `"Анна"`, 1)
			return []byte(strings.Replace(b, `"`+field+`": "`, `"`+field+`": "`+value, 1))
		}
		runRefusals(t, env, []refusal{
			{"OrderNameNUL", post("/api/v1/orders", okOrder("name", `"Иван\u0000"`)), 422, "invalid", []string{"customer.name"}},
			{"OrderNameNewline", post("/api/v1/orders", okOrder("name", `"Иван\nПетров"`)), 422, "invalid", []string{"customer.name"}},
			{"OrderPhoneTab", post("/api/v1/orders", okOrder("phone", `"+7\t900"`)), 422, "invalid", []string{"customer.phone"}},
			{"OrderPhoneInvalidUTF8", post("/api/v1/orders", okOrder("phone", "\"+7 \xff\"")), 422, "invalid", []string{"customer.phone"}},
			{"OrderEmailEscape", post("/api/v1/orders", okOrder("email", `"a\u001b@b.c"`)), 422, "invalid", []string{"customer.email"}},
			{"OrderSKUOverlongUTF8", post("/api/v1/orders", okOrder("sku", "\"SHK\xc0\xaf\"")), 422, "invalid", []string{"items[0].sku"}},
			{"OrderNoteNUL", post("/api/v1/orders", okOrder("note", `"дуб\u0000"`)), 422, "invalid", []string{"items[0].note"}},
			{"OrderNoteDEL", post("/api/v1/orders", okOrder("note", `"дуб\u007f"`)), 422, "invalid", []string{"items[0].note"}},
			{"OrderNoteC1", post("/api/v1/orders", okOrder("note", `"дуб\u0085"`)), 422, "invalid", []string{"items[0].note"}},
			{"OrderKeyNUL", post("/api/v1/orders", []byte(`{"customer\u0000": {}}`)), 422, "invalid", []string{`customer\x00`}},
			{"WebhookIDNUL", signed([]byte(`{"id": "a\u0000", "customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1}]}`)), 422, "invalid", []string{"id"}},
			{"WebhookNameNUL", signed(shop("name", `\u0000`)), 422, "invalid", []string{"customer.name"}},
			{"WebhookEmailInvalidUTF8", signed(shop("email", "\xfe")), 422, "invalid", []string{"customer.email"}},
			{"WebhookSKUNUL", signed(shop("sku", `\u0000`)), 422, "invalid", []string{"items[0].sku"}},
			{"UserNameNUL", post("/api/v1/users", []byte(`{"name": "Ольга\u0000", "role": "viewer"}`)), 422, "invalid", []string{"name"}},
			{"UserEmailInvalidUTF8", post("/api/v1/users", []byte("{\"name\": \"Ольга\", \"role\": \"viewer\", \"email\": \"o\xff@x.y\"}")), 422, "invalid", []string{"email"}},
			{"TokenNameNUL", post("/api/v1/users/1/tokens", []byte(`{"name": "\u0000"}`)), 422, "invalid", []string{"name"}},
			{"WorkCenterNameNUL", post("/api/v1/work-centers", []byte(`{"code": "CNC", "name": "ЧПУ\u0000", "capacity_min_per_day": 900}`)), 422, "invalid", []string{"name"}},
			{"WorkCenterCodeNewline", post("/api/v1/work-centers", []byte(`{"code": "C\nC", "name": "ЧПУ", "capacity_min_per_day": 900}`)), 422, "invalid", []string{"code"}},
			{"WorkCenterHolidayNUL", post("/api/v1/work-centers", []byte(`{"code": "CNC", "name": "ЧПУ", "capacity_min_per_day": 900, "calendar": {"holidays": ["2026-12-31\u0000"]}}`)), 422, "invalid", []string{"calendar.holidays[0]"}},
			{"RouteOperationNameNUL", post("/api/v1/routes", []byte(`{"name": "Новый", "kind": "case", "operations": [{"name": "Раскрой\u0000", "work_center_id": 1, "scope": "part", "minutes": 1}]}`)), 422, "invalid", []string{"operations[0].name"}},
			{"ProductMaterialInvalidUTF8", post("/api/v1/products", []byte("{\"sku\": \"NEW-1\", \"name\": \"Новый\", \"kind\": \"case\", \"route_id\": 1, \"parts\": [{\"name\": \"Бок\", \"material\": \"\xd0\", \"length_mm\": 1, \"width_mm\": 1, \"thickness_mm\": 1, \"qty\": 1}]}")), 422, "invalid", []string{"parts[0].material"}},
			{"ProductEdgingNewline", post("/api/v1/products", []byte(`{"sku": "NEW-1", "name": "Новый", "kind": "case", "route_id": 1, "parts": [{"name": "Бок", "material": "ЛДСП", "edging": "ПВХ\n2", "length_mm": 1, "width_mm": 1, "thickness_mm": 1, "qty": 1}]}`)), 422, "invalid", []string{"parts[0].edging"}},
			{"LaunchETANUL", post("/api/v1/production-orders", []byte(`{"items": [1], "eta": "2030-01-01\u0000"}`)), 422, "invalid", []string{"eta"}},
			// Query parameters: %00, %FF and the overlong %C0%AF, in the journal's filters and every list's.
			{"JournalTypeNUL", get("/api/v1/events?type=order.received%00"), 422, "invalid", []string{"type"}},
			{"JournalTypeFF", get("/api/v1/events?type=%FF"), 422, "invalid", []string{"type"}},
			{"JournalAggregateTypeOverlong", get("/api/v1/events?aggregate_type=%C0%AF"), 422, "invalid", []string{"aggregate_type"}},
			{"JournalStatusNUL", get("/api/v1/events?status=%00"), 422, "invalid", []string{"status"}},
			{"JournalSinceFF", get("/api/v1/events?since=%FF"), 422, "invalid", []string{"since"}},
			{"JournalAggregateIDNUL", get("/api/v1/events?aggregate_id=1%00"), 422, "invalid", []string{"aggregate_id"}},
			{"JournalParamNameNUL", get("/api/v1/events?ty%00pe=x"), 422, "invalid", []string{`ty\x00pe`}},
			{"JournalTwoBad", get("/api/v1/events?type=%00&aggregate_type=%FF"), 422, "invalid", []string{"type", "aggregate_type"}},
			{"OrdersStatusFF", get("/api/v1/orders?status=%FF"), 422, "invalid", []string{"status"}},
			{"OrdersSourceOverlong", get("/api/v1/orders?source=%C0%AF"), 422, "invalid", []string{"source"}},
			{"OrdersCursorNUL", get("/api/v1/orders?cursor=%00"), 422, "invalid", []string{"cursor"}},
			{"ProdOrdersStatusNUL", get("/api/v1/production-orders?status=%00"), 422, "invalid", []string{"status"}},
			{"BacklogLimitFF", get("/api/v1/plan/backlog?limit=%FF"), 422, "invalid", []string{"limit"}},
			{"ScheduleFromNUL", get("/api/v1/plan/schedule?from=2026-01-01%00"), 422, "invalid", []string{"from"}},
			{"ProductsCursorOverlong", get("/api/v1/products?cursor=%C0%AF"), 422, "invalid", []string{"cursor"}},
			{"WorkCentersLimitNUL", get("/api/v1/work-centers?limit=%00"), 422, "invalid", []string{"limit"}},
			{"RoutesCursorFF", get("/api/v1/routes?cursor=%FF"), 422, "invalid", []string{"cursor"}},
			{"JournalTypeTooLong", get("/api/v1/events?type=" + strings.Repeat("x", 101)), 422, "invalid", []string{"type"}},
			// Path parameters: a subscriber's name goes to the database as it is.
			{"SubscriberNameNUL", post("/api/v1/subscribers/plan.backlog%00/replay", []byte(`{"from_event_id": 1}`)), 422, "invalid", []string{"name"}},
			{"SubscriberNameFF", post("/api/v1/subscribers/%FF/replay", []byte(`{"from_event_id": 1}`)), 422, "invalid", []string{"name"}},
			{"SubscriberNameOverlong", func() *http.Request {
				return newRequest(http.MethodDelete, "/api/v1/subscribers/%C0%AF", nil, asAdmin...)
			}, 422, "invalid", []string{"name"}},
			{"OrderIDNUL", get("/api/v1/orders/1%00"), 422, "invalid", []string{"id"}},
		})
		t.Run("OKNoteKeepsTabsAndLineBreaks", func(t *testing.T) {
			r := send(env, post("/api/v1/orders", okOrder("note", `"цвет:\tдуб\r\nручки: хром"`))())
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			var o struct{ Items []struct{ Note string } }
			r.JSON(t, &o)
			require.Equal(t, "цвет:\tдуб\r\nручки: хром", o.Items[0].Note)
		})
		t.Run("OKJournalFilterOfPlainText", func(t *testing.T) {
			require.Equal(t, http.StatusOK, send(env, get("/api/v1/events?type=order.received&aggregate_type=sales_orders")()).Status)
			// Plain text passes the text check; a type no event has is then refused by name.
			r := send(env, get("/api/v1/events?type=нет.такого&aggregate_type=x%20y")())
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
			require.Contains(t, string(r.Body), "нет.такого")
		})
	})
}

// Item 3 for the CRM import: whatever goes wrong with a row is reported on
// that row, and the rows after it are imported.
func TestInput_CRMRowsFailAlone(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		row := func(id int, name, due string) string {
			return fmt.Sprintf(`{"crm_order_id": %d, "customer": {"name": "%s"}, "items": [{"sku": "TMB-PRIK-450", "qty": 1}], "due_date": %q}`, id, name, due)
		}
		// Orders of the customer "Сбой" fail in the database, as an unexpected error would.
		env.FailInserts("sales_orders", "customer_name", "Сбой")
		batch := `{"orders": [` + strings.Join([]string{
			row(1, "Первый", "2026-12-20"),
			row(2, `Второй\u0000`, "2026-12-20"),
			row(3, "Третий\xff", "2026-12-20"),
			row(4, "Сбой", "2026-12-20"),
			row(5, "Пятый", "0000-01-01"),
			`{"crm_order_id": "6", "customer": {"name": "Шестой"}, "items": [{"sku": "TMB-PRIK-450", "qty": "1"}]}`,
			row(7, "Седьмой", "2100-12-31"),
		}, ", ") + `]}`
		r := send(env, post("/api/v1/imports/crm/orders", []byte(batch))())
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var rep sales.ImportReport
		r.JSON(t, &rep)
		require.Equal(t, 2, rep.Created)
		require.Equal(t, 4, rep.Refused)
		require.Equal(t, 1, rep.Failed)
		var results []string
		for _, row := range rep.Rows {
			results = append(results, row.Result)
		}
		require.Equal(t, []string{"created", "refused", "refused", "failed", "refused", "refused", "created"}, results)
		fields := func(i int) []string {
			var out []string
			for _, f := range rep.Rows[i].Errors {
				out = append(out, f.Field)
			}
			return out
		}
		require.Equal(t, []string{"customer.name"}, fields(1))
		require.Equal(t, []string{"customer.name"}, fields(2))
		require.Equal(t, "2", *rep.Rows[1].CRMOrderID, "a refused row is named by its id")
		require.Equal(t, "3", *rep.Rows[2].CRMOrderID)
		require.Empty(t, fields(3))
		require.NotContains(t, rep.Rows[3].Detail, "injected", "the error itself is logged, not shown")
		require.Equal(t, "4", *rep.Rows[3].CRMOrderID)
		require.Nil(t, rep.Rows[3].OrderID)
		require.Equal(t, []string{"due_date"}, fields(4))
		require.Equal(t, []string{"items[0].qty"}, fields(5), "the field of the wrong type; a crm_order_id is text")
		require.Equal(t, "6", *rep.Rows[5].CRMOrderID)
		var n int64
		require.NoError(t, database.Scan(env.App.DB.Raw("SELECT count(*) FROM sales_orders WHERE crm_order_id IN ('1', '7')"), &n))
		require.EqualValues(t, 2, n)
		require.EqualValues(t, 2, env.Count("sales_orders"))
	})
}

// Item 4: every date lies from 2000-01-01 to 2100-12-31.
func TestInput_DatesInRange(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		require.Equal(t, http.StatusCreated, send(env, shopDelivery([]byte(shopBody("warm-up")))).Status)
		due := func(d string) []byte {
			return orderBody(`"Иван"`, `""`, `""`, `"SHK-KUPE-1600"`, `""`, d)
		}
		shop := func(d string) []byte { return []byte(strings.Replace(shopBody("d1"), "2026-12-24", d, 1)) }
		wc := func(d string) []byte {
			return []byte(`{"code": "CNC", "name": "ЧПУ", "capacity_min_per_day": 900, "calendar": {"holidays": ["2026-12-31", "` + d + `"]}}`)
		}
		runRefusals(t, env, []refusal{
			{"OrderYear0", post("/api/v1/orders", due("0000-01-01")), 422, "invalid", []string{"due_date"}},
			{"OrderYear9999", post("/api/v1/orders", due("9999-12-31")), 422, "invalid", []string{"due_date"}},
			{"Order1999", post("/api/v1/orders", due("1999-12-31")), 422, "invalid", []string{"due_date"}},
			{"Order2101", post("/api/v1/orders", due("2101-01-01")), 422, "invalid", []string{"due_date"}},
			{"WebhookYear0", signed(shop("0000-01-01")), 422, "invalid", []string{"due_date"}},
			{"LaunchETA9999", post("/api/v1/production-orders", []byte(`{"items": [1], "eta": "9999-12-31"}`)), 422, "invalid", []string{"eta"}},
			{"LaunchETAYear0", post("/api/v1/production-orders", []byte(`{"items": [1], "eta": "0000-01-01"}`)), 422, "invalid", []string{"eta"}},
			{"HolidayYear0", post("/api/v1/work-centers", wc("0000-01-01")), 422, "invalid", []string{"calendar.holidays[1]"}},
			{"Holiday2101", post("/api/v1/work-centers", wc("2101-01-01")), 422, "invalid", []string{"calendar.holidays[1]"}},
			{"ScheduleFromYear0", get("/api/v1/plan/schedule?from=0000-01-01"), 422, "invalid", []string{"from"}},
			{"ScheduleToYear10000", get("/api/v1/plan/schedule?from=2026-01-01&to=10000-01-01"), 422, "invalid", []string{"to"}},
			{"ScheduleFrom9999", get("/api/v1/plan/schedule?from=9999-12-31"), 422, "invalid", []string{"from"}},
			{"JournalSinceYear0", get("/api/v1/events?since=0000-01-01T00:00:00Z"), 422, "invalid", []string{"since"}},
			{"JournalUntil2101", get("/api/v1/events?until=2101-01-01T00:00:00Z"), 422, "invalid", []string{"until"}},
		})
		t.Run("OKAtTheBounds", func(t *testing.T) {
			r := send(env, post("/api/v1/orders", due("2100-12-31"))())
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			require.Equal(t, "2100-12-31", r.Map(t)["due_date"])
			r = send(env, post("/api/v1/orders", due("2000-01-01"))())
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			require.Equal(t, http.StatusOK, send(env, get("/api/v1/plan/schedule?from=2100-12-01&to=2100-12-31")()).Status)
			require.Equal(t, http.StatusOK, send(env, get("/api/v1/events?since=2000-01-01T00:00:00Z&until=2100-12-31T23:59:59Z")()).Status)
		})
	})
}

// Item 6: text is bounded in characters, not bytes.
func TestInput_TextLengthsInCharacters(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		cyr := func(n int) string { return `"` + strings.Repeat("Ж", n) + `"` }
		wc := func(code, name string) []byte {
			return []byte(`{"code": ` + code + `, "name": ` + name + `, "capacity_min_per_day": 900}`)
		}
		runRefusals(t, env, []refusal{
			{"OrderName201", post("/api/v1/orders", okOrder("name", cyr(201))), 422, "invalid", []string{"customer.name"}},
			{"OrderPhone51", post("/api/v1/orders", okOrder("phone", `"`+strings.Repeat("9", 51)+`"`)), 422, "invalid", []string{"customer.phone"}},
			{"OrderPhone500KB", post("/api/v1/orders", okOrder("phone", `"`+strings.Repeat("9", 500_000)+`"`)), 422, "invalid", []string{"customer.phone"}},
			{"OrderEmail255", post("/api/v1/orders", okOrder("email", `"`+strings.Repeat("я", 253)+`@b"`)), 422, "invalid", []string{"customer.email"}},
			{"OrderSKU65", post("/api/v1/orders", okOrder("sku", `"`+strings.Repeat("S", 65)+`"`)), 422, "invalid", []string{"items[0].sku"}},
			{"OrderNote2001", post("/api/v1/orders", okOrder("note", cyr(2001))), 422, "invalid", []string{"items[0].note"}},
			{"OrderNote500KB", post("/api/v1/orders", okOrder("note", `"`+strings.Repeat("x", 500_000)+`"`)), 422, "invalid", []string{"items[0].note"}},
			{"UserName201", post("/api/v1/users", []byte(`{"name": `+cyr(201)+`, "role": "viewer"}`)), 422, "invalid", []string{"name"}},
			{"UserEmail255", post("/api/v1/users", []byte(`{"name": "Ольга", "role": "viewer", "email": "`+strings.Repeat("o", 255)+`"}`)), 422, "invalid", []string{"email"}},
			{"TokenName201", post("/api/v1/users/1/tokens", []byte(`{"name": `+cyr(201)+`}`)), 422, "invalid", []string{"name"}},
			{"WorkCenterName201", post("/api/v1/work-centers", wc(`"CNC"`, cyr(201))), 422, "invalid", []string{"name"}},
			{"WorkCenterCode33", post("/api/v1/work-centers", wc(cyr(33), `"ЧПУ"`)), 422, "invalid", []string{"code"}},
			{"RouteName201", post("/api/v1/routes", []byte(`{"name": `+cyr(201)+`, "kind": "case", "operations": [{"name": "Раскрой", "work_center_id": 1, "scope": "part", "minutes": 1}]}`)), 422, "invalid", []string{"name"}},
			{"ProductSKU65", post("/api/v1/products", []byte(`{"sku": `+cyr(65)+`, "name": "Новый", "kind": "case", "route_id": 1, "parts": [{"name": "Бок", "material": "ЛДСП", "length_mm": 1, "width_mm": 1, "thickness_mm": 1, "qty": 1}]}`)), 422, "invalid", []string{"sku"}},
		})
		t.Run("OKAtTheBounds", func(t *testing.T) {
			// 200 Cyrillic letters are 400 bytes: they fit "200 characters".
			r := send(env, post("/api/v1/orders", orderBody(cyr(200), `"`+strings.Repeat("9", 50)+`"`, `"`+strings.Repeat("я", 252)+`@b"`,
				`"SHK-KUPE-1600"`, cyr(2000), ""))())
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			r = send(env, post("/api/v1/work-centers", wc(cyr(32), cyr(200)))())
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			r = send(env, post("/api/v1/users", []byte(`{"name": `+cyr(200)+`, "role": "viewer"}`))())
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		})
	})
}

// Item 11: field paths keep their indices, truncated JSON says so.
func TestInput_FieldPathsAndTruncatedJSON(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		require.Equal(t, http.StatusCreated, send(env, shopDelivery([]byte(shopBody("warm-up")))).Status)
		runRefusals(t, env, []refusal{
			{"OrderQtyString", post("/api/v1/orders", []byte(`{"customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1}, {"sku": "TMB-PRIK-450", "qty": "2"}]}`)), 422, "invalid", []string{"items[1].qty"}},
			{"OrderNoteNumber", post("/api/v1/orders", []byte(`{"customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1, "note": 5}]}`)), 422, "invalid", []string{"items[0].note"}},
			{"WebhookQtyString", signed([]byte(shopBody("p1", `{"sku": "SHK-KUPE-1600", "qty": 1}`, `{"sku": "SHK-KUPE-1600", "qty": "1"}`))), 422, "invalid", []string{"items[1].qty"}},
			{"RouteMinutesString", post("/api/v1/routes", []byte(`{"name": "Новый", "kind": "case", "operations": [{"name": "a", "work_center_id": 1, "scope": "part", "minutes": 1}, {"name": "b", "work_center_id": 1, "scope": "part", "minutes": "1"}]}`)), 422, "invalid", []string{"operations[1].minutes"}},
			{"WorkCenterWeekdayString", post("/api/v1/work-centers", []byte(`{"code": "CNC", "name": "ЧПУ", "capacity_min_per_day": 900, "calendar": {"weekdays": [1, "2"]}}`)), 422, "invalid", []string{"calendar.weekdays[1]"}},
			{"ProductPartQtyFloat", post("/api/v1/products", []byte(`{"sku": "N", "name": "N", "kind": "case", "route_id": 1, "parts": [{"name": "a", "material": "b", "length_mm": 1, "width_mm": 1, "thickness_mm": 1, "qty": 1.5}]}`)), 422, "invalid", []string{"parts[0].qty"}},
			{"OrderTruncated", post("/api/v1/orders", []byte(`{"customer": {"name": "x"}, "items": [{"sku": "SHK-KUPE-1600"`)), 400, "bad_request", nil},
			{"WebhookTruncated", signed([]byte(`{"id": "a"`)), 400, "bad_request", nil},
			{"ImportTruncated", post("/api/v1/imports/crm/orders", []byte(`{"orders": [{"crm_order_id": 1`)), 400, "bad_request", nil},
			{"WorkCenterTruncatedString", post("/api/v1/work-centers", []byte(`{"code": "CN`)), 400, "bad_request", nil},
		})
		t.Run("TruncatedSaysSo", func(t *testing.T) {
			for _, req := range []func() *http.Request{
				post("/api/v1/orders", []byte(`{"customer": {"name": "x"`)),
				signed([]byte(`{"id": "a", "customer": {"name": "x"}, "items": [`)),
				post("/api/v1/imports/crm/orders", []byte(`{"orders": [`)),
			} {
				p := requireProblemType(t, send(env, req()), http.StatusBadRequest, "bad_request")
				require.Contains(t, p.Detail, "truncated")
				require.NotContains(t, p.Detail, "must be a JSON object")
			}
		})
	})
}

// Item 6 in the OpenAPI document: every text a request body takes declares
// its bound (maxLength), or is an enum or a date; every list its maxItems.
func TestSpec_RequestTextIsBounded(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/swagger.json")
	require.NoError(t, err)
	type schema struct {
		Type      string
		Format    string
		Enum      []any
		MaxLength *int   `json:"maxLength"`
		MaxItems  *int   `json:"maxItems"`
		Ref       string `json:"$ref"`
		Items     *struct {
			Type      string
			Format    string
			MaxLength *int   `json:"maxLength"`
			Ref       string `json:"$ref"`
		}
	}
	var spec struct {
		Definitions map[string]struct{ Properties map[string]schema }
	}
	require.NoError(t, json.Unmarshal(raw, &spec))
	var problems []string
	checked := 0
	for name, def := range spec.Definitions {
		if !strings.HasPrefix(name, "api.") || !strings.HasSuffix(name, "Request") {
			continue
		}
		for prop, s := range def.Properties {
			where := name + "." + prop
			switch {
			case s.Type == "string" && s.MaxLength == nil && len(s.Enum) == 0 && s.Format != "date":
				problems = append(problems, where+": a string without maxLength")
			case s.Type == "array" && s.MaxItems == nil:
				problems = append(problems, where+": an array without maxItems")
			case s.Type == "array" && s.Items != nil && s.Items.Type == "string" && s.Items.Format != "date" && s.Items.MaxLength == nil:
				problems = append(problems, where+": strings without a bound")
			}
			checked++
		}
	}
	require.Greater(t, checked, 30)
	require.Empty(t, problems)
}
