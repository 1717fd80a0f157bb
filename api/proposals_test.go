package api_test

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

type proposalLine struct {
	Code       string
	Short      float64
	OnOrder    float64 `json:"on_order"`
	Qty        float64
	Price      float64
	NeededOn   *string `json:"needed_on"`
	OrderBy    string  `json:"order_by"`
	ExpectedOn string  `json:"expected_on"`
	Late       bool
}

type proposal struct {
	SupplierID *int64 `json:"supplier_id"`
	Lines      []proposalLine
	Total      float64
}

func proposalsOf(t *testing.T, env *apptest.Env) (map[int64]proposal, map[string]proposalLine) {
	t.Helper()
	var l struct{ Items []proposal }
	r := env.Admin(http.MethodGet, "/api/v1/purchase-proposals", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &l)
	bySup, byCode := map[int64]proposal{}, map[string]proposalLine{}
	for _, p := range l.Items {
		id := int64(0)
		if p.SupplierID != nil {
			id = *p.SupplierID
		}
		bySup[id] = p
		for _, pl := range p.Lines {
			byCode[pl.Code] = pl
		}
	}
	return bySup, byCode
}

// The proposal's arithmetic by hand. A bedside table in sonoma is launched
// so that its cutting starts on Monday 21 December; the proposals are read
// on Monday 7 December. Boards come from the supplier with the shortest
// lead time (5 working days, at least 10 sheets, packs of 5): needed on the
// 21st, ordered by Monday the 14th, expected on the 21st. Bands in rolls
// of 100 m. Handles take 20 working days: too late for the order, they are
// expected 20 working days from today, the ASM centre's holidays (31
// December, 1 January) skipped: 6 January 2027. A draft already on order
// lowers what is proposed to the supplier's minimum; one call drafts the
// rest.
func TestPurchaseProposals_PacksAndDates(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		launchAt := time.Date(2026, 12, 21, 5, 0, 0, 0, time.UTC) // 08:00 in Moscow, a Monday
		env.App.Plan.SetNow(func() time.Time { return launchAt })
		_, items := receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Анна"},
			"items": []map[string]any{{"sku": "TMB-PRIK-450", "qty": 1, "options": map[string]any{"корпус": "Дуб сонома", "фасад": "Дуб сонома"}}}})
		launch(t, env, map[string]any{"items": items})
		today := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
		env.App.Plan.SetNow(func() time.Time { return today })

		mk := func(body map[string]any) int64 {
			r := env.Admin(http.MethodPost, "/api/v1/suppliers", body)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			var s struct{ ID int64 }
			r.JSON(t, &s)
			return s.ID
		}
		slow := mk(map[string]any{"name": "Медленный", "materials": []map[string]any{{"code": "LDSP16-SONOMA", "price": 3000, "lead_days": 8}}})
		fast := mk(map[string]any{"name": "Быстрый", "materials": []map[string]any{
			{"code": "LDSP16-SONOMA", "price": 3150, "lead_days": 5, "min_qty": 10, "pack_qty": 5},
			{"code": "PVC2-SONOMA", "price": 40, "lead_days": 3, "pack_qty": 100},
			{"code": "HANDLE-128", "price": 150, "lead_days": 20, "min_qty": 50},
		}})
		short := shortagesOf(t, env)
		sonoma, band, handle := short["LDSP16-SONOMA"].ToBuy, short["PVC2-SONOMA"].ToBuy, short["HANDLE-128"].ToBuy
		require.Positive(t, sonoma)

		bySup, lines := proposalsOf(t, env)
		require.NotContains(t, bySup, slow, "the shortest lead time wins")
		p := lines["LDSP16-SONOMA"]
		require.Equal(t, sonoma, p.Short)
		require.Equal(t, math.Ceil(math.Max(sonoma, 10)/5)*5, p.Qty, "at least 10, in packs of 5")
		require.Equal(t, "2026-12-21", *p.NeededOn, "the cutting starts")
		require.Equal(t, "2026-12-14", p.OrderBy, "5 working days before: 18, 17, 16, 15, 14")
		require.Equal(t, "2026-12-21", p.ExpectedOn)
		require.False(t, p.Late)

		b := lines["PVC2-SONOMA"]
		require.Equal(t, math.Ceil(band/100)*100, b.Qty, "whole rolls of 100 m")
		require.NotNil(t, b.NeededOn, "banding is planned")
		needed, err := time.Parse(time.DateOnly, *b.NeededOn)
		require.NoError(t, err)
		want := map[string]string{"2026-12-21": "2026-12-16", "2026-12-22": "2026-12-17", "2026-12-23": "2026-12-18"}[needed.Format(time.DateOnly)]
		require.Equal(t, want, b.OrderBy, "3 working days before %s", *b.NeededOn)

		h := lines["HANDLE-128"]
		require.Equal(t, math.Max(math.Ceil(handle), 50), h.Qty)
		require.True(t, h.Late, "20 working days before the assembly is before today")
		require.Equal(t, "2027-01-06", h.ExpectedOn, "Dec 8–11, 14–18, 21–25, 28–30, (31, 1 holidays), Jan 4, 5, 6")
		require.InDelta(t, p.Qty*3150+b.Qty*40+h.Qty*150, bySup[fast].Total, 1e-6)

		// A draft of 9 sheets already on order: what is left is brought up to the minimum.
		r := env.Admin(http.MethodPost, "/api/v1/purchase-orders", map[string]any{"supplier_id": slow, "expected_on": "2026-12-18",
			"lines": []map[string]any{{"code": "LDSP16-SONOMA", "qty": 9}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		_, lines = proposalsOf(t, env)
		p = lines["LDSP16-SONOMA"]
		if sonoma > 9 {
			require.Equal(t, 9.0, p.OnOrder)
			require.Equal(t, sonoma-9, p.Short)
			require.Equal(t, math.Ceil(math.Max(sonoma-9, 10)/5)*5, p.Qty)
		}

		requireProblem(t, env.Admin(http.MethodPost, "/api/v1/purchase-proposals/orders", map[string]any{"supplier_id": slow}),
			http.StatusUnprocessableEntity, "supplier_id")
		r = env.Admin(http.MethodPost, "/api/v1/purchase-proposals/orders", map[string]any{"supplier_id": fast})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var drafted struct{ Items []purchaseOrder }
		r.JSON(t, &drafted)
		require.Len(t, drafted.Items, 1)
		o := drafted.Items[0]
		require.Equal(t, "draft", o.Status)
		got := map[string]poLine{}
		for _, l := range o.Lines {
			got[l.Code] = l
		}
		require.Equal(t, h.Qty, got["HANDLE-128"].Qty)
		require.Equal(t, "2027-01-06", got["HANDLE-128"].ExpectedOn)
		require.Equal(t, "2026-12-21", got["LDSP16-SONOMA"].ExpectedOn)
		_, lines = proposalsOf(t, env)
		require.NotContains(t, lines, "HANDLE-128", "on order now")
	})
}
