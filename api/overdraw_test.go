package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

type shortageTaken struct {
	Code     string
	OnHand   float64 `json:"on_hand"`
	Negative bool
	TakenBy  []struct {
		ProdOrderID int64 `json:"prod_order_id"`
		Qty         float64
	} `json:"taken_by"`
}

func takenOf(t *testing.T, env *apptest.Env) map[string]shortageTaken {
	t.Helper()
	var l struct{ Items []shortageTaken }
	r := env.Admin(http.MethodGet, "/api/v1/materials/shortages", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &l)
	out := map[string]shortageTaken{}
	for _, it := range l.Items {
		out[it.Code] = it
	}
	return out
}

// The saw cuts a part whose board is not on the shelf: the consumption is
// booked all the same, stock goes below nothing, stock.consumed flags it,
// the shortages list the board as negative with the production order that
// took it, and the metrics count it; a receipt that brings the board back
// to nothing or more settles it.
func TestStock_NegativeFlagged(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		_, items := receive(t, env, line{"TMB-PRIK-450", 1})
		o := launch(t, env, map[string]any{"items": items})
		parts := partsOf(t, env, o.ID, "")
		p := parts[0]
		scanOK(t, env, apptest.AdminToken, p.Code, 1)
		board := stockOf(t, env)[p.Board]
		require.Less(t, board.OnHand, 0.0, "booked beyond what was on hand")

		ev := catalogEventsOf(t, env, "stock.consumed")[0]
		over := ev.Payload["overdrawn"].([]any)[0].(map[string]any)
		require.Equal(t, p.Board, over["code"])
		require.InDelta(t, -board.OnHand, over["missing"].(float64), 1e-3)

		short := takenOf(t, env)[p.Board]
		require.True(t, short.Negative)
		require.Len(t, short.TakenBy, 1)
		require.Equal(t, o.ID, short.TakenBy[0].ProdOrderID)
		require.InDelta(t, -board.OnHand, short.TakenBy[0].Qty, 1e-3)

		m := env.Admin(http.MethodGet, "/metrics", nil)
		require.Contains(t, string(m.Body), "tsekh_stock_overdraws_total 1\n")
		require.Contains(t, string(m.Body), "tsekh_stock_negative_materials 1\n")

		r := env.Admin(http.MethodPost, "/api/v1/stock/receipts", map[string]any{"lines": []map[string]any{{"code": p.Board, "qty": 5}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		if s, ok := takenOf(t, env)[p.Board]; ok {
			require.False(t, s.Negative, fmt.Sprint(s))
			require.Empty(t, s.TakenBy)
		}
		m = env.Admin(http.MethodGet, "/metrics", nil)
		require.Contains(t, string(m.Body), "tsekh_stock_negative_materials 0\n")
		require.Contains(t, string(m.Body), "tsekh_stock_overdraws_total 1\n", "a counter")
		// Below nothing again by a write-off: no production order took it.
		r = env.Admin(http.MethodPost, "/api/v1/stock/write-offs", map[string]any{"reason": "намокли", "lines": []map[string]any{{"code": p.Board, "qty": 10}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		short = takenOf(t, env)[p.Board]
		require.True(t, short.Negative)
		require.Empty(t, short.TakenBy, "the first overdraw was settled by the receipt")
	})
}
