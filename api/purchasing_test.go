package api_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/render/scantest"
)

type poLine struct {
	ID           int64
	N            int
	Code         string
	Qty          float64
	Received     float64
	Price        float64
	ExpectedOn   string `json:"expected_on"`
	SupplierCode string `json:"supplier_code"`
}

type purchaseOrder struct {
	ID           int64
	SupplierID   int64 `json:"supplier_id"`
	Status       string
	CancelReason string `json:"cancel_reason"`
	Supplier     string
	Total        float64
	Lines        []poLine
}

// supplierOf creates a supplier of LDSP16-SONOMA (packs of 5, at least 10,
// 5 working days) and PVC2-SONOMA (rolls of 100 m), as the buyer would.
func supplierOf(t *testing.T, env *apptest.Env, token string) int64 {
	t.Helper()
	r := env.Do(http.MethodPost, "/api/v1/suppliers", map[string]any{"name": "ООО «Плита»", "contact": "Сергей", "phone": "+7 900 555-12-12",
		"email": "zakaz@plita.example", "materials": []map[string]any{
			{"code": "ldsp16-sonoma", "supplier_code": "EG-H1145", "price": 3150, "lead_days": 5, "min_qty": 10, "pack_qty": 5},
			{"code": "PVC2-SONOMA", "price": 42.5, "lead_days": 3, "pack_qty": 100},
		}}, token)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var s struct{ ID int64 }
	r.JSON(t, &s)
	return s.ID
}

func purchaseOrderOf(t *testing.T, r apptest.Response, status int) purchaseOrder {
	t.Helper()
	require.Equal(t, status, r.Status, "%s", r.Body)
	var o purchaseOrder
	r.JSON(t, &o)
	return o
}

// Suppliers keep their terms per material; bad terms name their field and
// write nothing.
func TestSuppliers_Terms(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		t.Run("ErrInvalid", func(t *testing.T) {
			events := env.Count("events")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/suppliers", map[string]any{"name": " ", "materials": []map[string]any{
				{"code": "NO-SUCH"}, {"code": "LDSP16-WHITE", "min_qty": 2.5, "lead_days": -1}, {"code": "ldsp16-white", "price": -1},
				{"code": "PVC2-WHITE", "pack_qty": 0.001},
			}}), http.StatusUnprocessableEntity, "name", "materials[0].code", "materials[1].min_qty", "materials[1].lead_days",
				"materials[2].code", "materials[2].price", "materials[3].pack_qty")
			require.Equal(t, events, env.Count("events"), "nothing written")
			require.Zero(t, env.Count("purchasing_suppliers"))
		})
		id := supplierOf(t, env, apptest.AdminToken)
		var s struct {
			Name      string
			Materials []struct {
				Code     string
				LeadDays int     `json:"lead_days"`
				PackQty  float64 `json:"pack_qty"`
			}
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/suppliers/%d", id), nil).JSON(t, &s)
		require.Len(t, s.Materials, 2)
		require.Equal(t, "LDSP16-SONOMA", s.Materials[0].Code, "the catalogue's spelling")
		require.Equal(t, 5.0, s.Materials[0].PackQty)
		r := env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/suppliers/%d", id), map[string]any{"name": "ООО «Плита-2»",
			"materials": []map[string]any{{"code": "HINGE-110", "price": 80, "lead_days": 2}}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &s)
		require.Equal(t, "ООО «Плита-2»", s.Name)
		require.Len(t, s.Materials, 1)
		var l struct{ Items []struct{ ID int64 } }
		env.Admin(http.MethodGet, "/api/v1/suppliers?material=hinge-110", nil).JSON(t, &l)
		require.Len(t, l.Items, 1)
		env.Admin(http.MethodGet, "/api/v1/suppliers?material=LDSP16-SONOMA", nil).JSON(t, &l)
		require.Empty(t, l.Items)
		require.Len(t, catalogEventsOf(t, env, "supplier.created"), 1)
		require.Len(t, catalogEventsOf(t, env, "supplier.updated"), 1)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/suppliers/999", nil), http.StatusNotFound)
	})
}

// A purchase order from draft to received: bad lines refused naming their
// field, the draft changed, ordered, received in part, over-received only
// with a reason; received and cancelled orders change no more; each step
// journalled.
func TestPurchaseOrders_Lifecycle(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		sup := supplierOf(t, env, apptest.AdminToken)
		t.Run("ErrInvalid", func(t *testing.T) {
			events := env.Count("events")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/purchase-orders", map[string]any{"supplier_id": 999, "lines": []map[string]any{
				{"code": "NO-SUCH", "qty": 1, "expected_on": "2026-12-10"}, {"code": "LDSP16-SONOMA", "qty": 0, "expected_on": "2026-12-10"},
				{"code": "PVC2-SONOMA", "qty": -3, "expected_on": "2026-12-10"}, {"code": "HINGE-110", "qty": 2.5},
			}}), http.StatusUnprocessableEntity, "supplier_id", "lines[0].code", "lines[1].qty", "lines[2].qty", "lines[3].qty", "lines[3].expected_on")
			require.Equal(t, events, env.Count("events"), "nothing written")
			require.Zero(t, env.Count("purchasing_orders"))
		})
		o := purchaseOrderOf(t, env.Admin(http.MethodPost, "/api/v1/purchase-orders", map[string]any{"supplier_id": sup, "expected_on": "2026-12-10",
			"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 10}, {"code": "PVC2-SONOMA", "qty": 100, "price": 40, "expected_on": "2026-12-08"}}}),
			http.StatusCreated)
		require.Equal(t, "draft", o.Status)
		require.Equal(t, 3150.0, o.Lines[0].Price, "the supplier's price")
		require.Equal(t, "EG-H1145", o.Lines[0].SupplierCode)
		require.Equal(t, "2026-12-10", o.Lines[0].ExpectedOn)
		require.Equal(t, "2026-12-08", o.Lines[1].ExpectedOn)
		require.Equal(t, 10*3150.0+100*40, o.Total)
		path := fmt.Sprintf("/api/v1/purchase-orders/%d", o.ID)
		receipt := func(lines ...map[string]any) apptest.Response {
			return env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"purchase_order_id": o.ID, "note": "накладная 7", "lines": lines})
		}
		requireProblem(t, receipt(map[string]any{"code": "LDSP16-SONOMA", "qty": 1}), http.StatusConflict, "status")

		o = purchaseOrderOf(t, env.Admin(http.MethodPut, path, map[string]any{"supplier_id": sup, "expected_on": "2026-12-11",
			"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 10}, {"code": "PVC2-SONOMA", "qty": 100}}}), http.StatusOK)
		require.Equal(t, "2026-12-11", o.Lines[1].ExpectedOn)
		o = purchaseOrderOf(t, env.Admin(http.MethodPost, path+"/order", nil), http.StatusOK)
		require.Equal(t, "ordered", o.Status)
		requireProblem(t, env.Admin(http.MethodPost, path+"/order", nil), http.StatusConflict, "status")
		requireProblem(t, env.Admin(http.MethodPut, path, map[string]any{"supplier_id": sup, "expected_on": "2026-12-11",
			"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 20}}}), http.StatusConflict, "status")

		t.Run("ErrReceipt", func(t *testing.T) {
			events, before := env.Count("events"), stockOf(t, env)["LDSP16-SONOMA"].OnHand
			requireProblem(t, receipt(map[string]any{"code": "LDSP16-SONOMA", "qty": 11}, map[string]any{"code": "HINGE-110", "qty": 1}),
				http.StatusUnprocessableEntity, "lines[0].qty", "lines[1].code")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"purchase_order_id": 999,
				"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 1}}}), http.StatusUnprocessableEntity, "purchase_order_id")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{
				"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 1, "over_reason": "x"}}}), http.StatusUnprocessableEntity, "lines[0].over_reason")
			require.Equal(t, events, env.Count("events"), "nothing written")
			require.Equal(t, before, stockOf(t, env)["LDSP16-SONOMA"].OnHand)
		})

		r := receipt(map[string]any{"code": "ldsp16-sonoma", "qty": 4})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		o = purchaseOrderOf(t, env.Admin(http.MethodGet, path, nil), http.StatusOK)
		require.Equal(t, "partially_received", o.Status)
		require.Equal(t, 4.0, o.Lines[0].Received)
		require.Equal(t, 4.0, stockOf(t, env)["LDSP16-SONOMA"].OnHand)
		// The rest of the boards, two more than ordered (a full pack), and the band.
		r = receipt(map[string]any{"code": "LDSP16-SONOMA", "qty": 8, "over_reason": "полная пачка"}, map[string]any{"code": "PVC2-SONOMA", "qty": 100})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		o = purchaseOrderOf(t, env.Admin(http.MethodGet, path, nil), http.StatusOK)
		require.Equal(t, "received", o.Status)
		require.Equal(t, 12.0, o.Lines[0].Received)
		require.Equal(t, 12.0, stockOf(t, env)["LDSP16-SONOMA"].OnHand)
		got := catalogEventsOf(t, env, "purchase_order.received")
		require.Len(t, got, 2)
		require.Equal(t, "received", got[0].Payload["status"], "newest first")
		rec := got[0].Payload["received"].([]any)[0].(map[string]any)
		require.Equal(t, "полная пачка", rec["over_reason"])
		st := catalogEventsOf(t, env, "stock.received")
		require.EqualValues(t, o.ID, st[0].Payload["purchase_order_id"])

		requireProblem(t, receipt(map[string]any{"code": "LDSP16-SONOMA", "qty": 1, "over_reason": "ещё"}), http.StatusConflict, "status")
		requireProblem(t, env.Admin(http.MethodPost, path+"/cancel", map[string]any{"reason": "поздно"}), http.StatusConflict, "status")

		// A second order, cancelled, changes no more.
		o2 := purchaseOrderOf(t, env.Admin(http.MethodPost, "/api/v1/purchase-orders", map[string]any{"supplier_id": sup, "expected_on": "2026-12-10",
			"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 5}}}), http.StatusCreated)
		p2 := fmt.Sprintf("/api/v1/purchase-orders/%d", o2.ID)
		requireProblem(t, env.Admin(http.MethodPost, p2+"/cancel", map[string]any{"reason": " "}), http.StatusUnprocessableEntity, "reason")
		o2 = purchaseOrderOf(t, env.Admin(http.MethodPost, p2+"/cancel", map[string]any{"reason": "нашли дешевле"}), http.StatusOK)
		require.Equal(t, "cancelled", o2.Status)
		require.Equal(t, "нашли дешевле", o2.CancelReason)
		events := env.Count("events")
		requireProblem(t, env.Admin(http.MethodPut, p2, map[string]any{"supplier_id": sup, "expected_on": "2026-12-11",
			"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 20}}}), http.StatusConflict, "status")
		requireProblem(t, env.Admin(http.MethodPost, p2+"/order", nil), http.StatusConflict, "status")
		requireProblem(t, env.Admin(http.MethodPost, p2+"/cancel", map[string]any{"reason": "ещё раз"}), http.StatusConflict, "status")
		require.Equal(t, events, env.Count("events"), "nothing written")
		for _, typ := range []string{"purchase_order.created", "purchase_order.changed", "purchase_order.ordered", "purchase_order.cancelled"} {
			require.NotEmpty(t, catalogEventsOf(t, env, typ), typ)
		}
		var l struct{ Items []purchaseOrder }
		env.Admin(http.MethodGet, "/api/v1/purchase-orders?status=cancelled", nil).JSON(t, &l)
		require.Len(t, l.Items, 1)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/purchase-orders?status=lost", nil), http.StatusUnprocessableEntity, "status")
	})
}

// The order as the supplier gets it: a CSV row per line and an A4 PDF with
// the supplier, the lines and the total.
func TestPurchaseOrders_Documents(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, database.SQLite, nil)
	sup := supplierOf(t, env, apptest.AdminToken)
	o := purchaseOrderOf(t, env.Admin(http.MethodPost, "/api/v1/purchase-orders", map[string]any{"supplier_id": sup, "expected_on": "2026-12-10",
		"note": "доставка до 12:00", "lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 10}, {"code": "PVC2-SONOMA", "qty": 150.5}}}), http.StatusCreated)
	path := fmt.Sprintf("/api/v1/purchase-orders/%d", o.ID)
	r := env.Do(http.MethodGet, path, nil, apptest.AdminToken, "Accept", "text/csv")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	rows := strings.Split(strings.TrimSpace(strings.TrimPrefix(string(r.Body), "\ufeff")), "\n")
	require.Len(t, rows, 3)
	require.Equal(t, "1;EG-H1145;LDSP16-SONOMA;ЛДСП 16 мм Дуб сонома;sheet;10;3150;31500;10.12.2026;0", strings.TrimSpace(rows[1]), "the office's layout")
	require.True(t, strings.HasPrefix(strings.TrimSpace(rows[2]), "2;;PVC2-SONOMA;"), rows[2])
	require.Contains(t, rows[2], ";150,5;42,5;6396,25;")

	r = env.Do(http.MethodGet, path, nil, apptest.AdminToken, "Accept", "application/pdf")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "application/pdf", r.Header.Get("Content-Type"))
	if dir := os.Getenv("PURCHASE_PDF_DIR"); dir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "purchase-order.pdf"), r.Body, 0o600))
	}
	text := scantest.Text(t, r.Body)
	require.Len(t, text, 1)
	for _, want := range []string{fmt.Sprintf("Заказ поставщику №%d", o.ID), "ООО «Плита»", "EG-H1145", "LDSP16-SONOMA", "31500,00", "150,5", "10.12.2026",
		"Итого: 37896,25", "доставка до 12:00"} {
		require.Contains(t, text[0], want)
	}
}

// Twenty deliveries race on one line of 10 sheets, each of one sheet: ten
// are taken, ten refused naming lines[0].qty (the order stays open for its
// band); what was received, what is on hand and the journal agree.
func TestPurchaseOrders_ReceiptsRace(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, database.Postgres, nil)
	sup := supplierOf(t, env, apptest.AdminToken)
	o := purchaseOrderOf(t, env.Admin(http.MethodPost, "/api/v1/purchase-orders", map[string]any{"supplier_id": sup, "expected_on": "2026-12-10",
		"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 10}, {"code": "PVC2-SONOMA", "qty": 100}}}), http.StatusCreated)
	purchaseOrderOf(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/purchase-orders/%d/order", o.ID), nil), http.StatusOK)
	const n = 20
	statuses := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"purchase_order_id": o.ID,
				"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 1}}})
			statuses[i] = r.Status
			if r.Status != http.StatusCreated {
				requireProblem(t, r, http.StatusUnprocessableEntity, "lines[0].qty")
			}
		}()
	}
	close(start)
	wg.Wait()
	created := 0
	for _, s := range statuses {
		if s == http.StatusCreated {
			created++
		}
	}
	require.Equal(t, 10, created, "%v", statuses)
	o = purchaseOrderOf(t, env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/purchase-orders/%d", o.ID), nil), http.StatusOK)
	require.Equal(t, 10.0, o.Lines[0].Received)
	require.Equal(t, "partially_received", o.Status)
	require.Equal(t, 10.0, stockOf(t, env)["LDSP16-SONOMA"].OnHand)
	require.Len(t, catalogEventsOf(t, env, "purchase_order.received"), 10)
	require.EqualValues(t, 10, env.Count("purchasing_receipts"))
}

// The buyer reads what a planner reads and writes suppliers, purchase
// orders, receipts and counts; it launches nothing and changes no
// catalogue; the shop floor's master keeps no suppliers.
func TestPurchasing_BuyerRole(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		buyer := env.UserToken("Ирина Закупова", "buyer")
		master := env.UserToken("Мастер смены", "master")
		_, items := receive(t, env, line{"TMB-PRIK-450", 1})
		for _, path := range []string{"/api/v1/plan/backlog", "/api/v1/stock", "/api/v1/materials/shortages", "/api/v1/production-orders",
			"/api/v1/suppliers", "/api/v1/purchase-orders", "/api/v1/materials/requirements?from=2026-12-01&to=2026-12-31"} {
			require.Equal(t, http.StatusOK, env.Do(http.MethodGet, path, nil, buyer).Status, path)
		}
		sup := supplierOf(t, env, buyer)
		o := purchaseOrderOf(t, env.Do(http.MethodPost, "/api/v1/purchase-orders", map[string]any{"supplier_id": sup, "expected_on": "2026-12-10",
			"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 10}}}, buyer), http.StatusCreated)
		purchaseOrderOf(t, env.Do(http.MethodPost, fmt.Sprintf("/api/v1/purchase-orders/%d/order", o.ID), nil, buyer), http.StatusOK)
		r := env.Do(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"purchase_order_id": o.ID,
			"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 10}}}, buyer)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		r = env.Do(http.MethodPost, "/api/v1/stock/counts", map[string]any{"reason": "инвентаризация",
			"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 9}}}, buyer)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)

		events := env.Count("events")
		requireProblem(t, env.Do(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": items}, buyer), http.StatusForbidden)
		requireProblem(t, env.Do(http.MethodPost, "/api/v1/materials", map[string]any{"kind": "fitting", "code": "X-1", "name": "x"}, buyer), http.StatusForbidden)
		requireProblem(t, env.Do(http.MethodPost, "/api/v1/suppliers", map[string]any{"name": "x"}, master), http.StatusForbidden)
		requireProblem(t, env.Do(http.MethodPost, "/api/v1/purchase-orders", map[string]any{"supplier_id": sup,
			"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 1, "expected_on": "2026-12-10"}}}, master), http.StatusForbidden)
		require.Equal(t, events, env.Count("events"), "nothing written")
	})
}
