package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// The inbox is a work list: the shop's change refused for a conflict with
// the office stays open whatever older or repeated deliveries come after
// it; a manager corrects its body and applies it, and the journal says who
// changed what; only then is it resolved.
func TestIntake_InboxAsWorkList(t *testing.T) {
	t.Parallel()
	eachWith(t, withShopSecret, func(t *testing.T, env *apptest.Env) {
		manager := env.UserToken("Мария Менеджер", "manager")
		item := `{"sku": "SHK-KUPE-1600", "qty": 1}`
		v1 := shopOrderBody("inbox-1", item, `, "version": 1`)
		id := shopAnswerOf(t, deliver(env, v1, time.Now()), http.StatusCreated).OrderID
		// The office changes the phone (tsekh version 2).
		_, r := patchOrder(t, env, id, map[string]any{"customer": map[string]any{"phone": "+7 900 000-00-02"}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		// The shop's v3, built on tsekh version 1, changes the phone and the quantity: a conflict, kept.
		v2 := strings.Replace(shopOrderBody("inbox-1", `{"sku": "SHK-KUPE-1600", "qty": 2}`, `, "version": 3, "tsekh_version": 1`),
			"+7 900 111-22-33", "+7 900 000-00-09", 1)
		requireProblemType(t, deliver(env, v2, time.Now()), http.StatusConflict, "conflict", "customer.phone")
		open := rejectionsOf(t, env, "?open=true")
		require.Len(t, open, 1)
		rej := open[0]

		// An older delivery comes back, different (stale), and v1 again (a
		// repeat): neither resolves the customer's change.
		older := shopOrderBody("inbox-1", `{"sku": "SHK-KUPE-1600", "qty": 3}`, `, "version": 1`)
		require.True(t, *shopAnswerOf(t, deliver(env, older, time.Now()), http.StatusOK).Stale)
		shopAnswerOf(t, deliver(env, v1, time.Now()), http.StatusOK)
		require.Len(t, rejectionsOf(t, env, "?open=true"), 1, "a stale or repeated delivery resolves nothing")
		// The shop's v2, older than the kept v3, is applied (it changes the
		// due date only): it is not v3's change, which stays open.
		v2b := strings.NewReplacer("+7 900 111-22-33", "+7 900 000-00-02", "2026-12-24", "2026-12-27").Replace(
			shopOrderBody("inbox-1", item, `, "version": 2, "tsekh_version": 2`))
		require.True(t, *shopAnswerOf(t, deliver(env, v2b, time.Now()), http.StatusOK).Changed)
		require.Len(t, rejectionsOf(t, env, "?open=true"), 1, "an older delivery applied does not resolve a newer refused one")
		require.Empty(t, journalOf(t, env, "intake.resolved", ""))

		// The manager keeps the office's phone and applies the quantity.
		corrected := strings.Replace(v2, "+7 900 000-00-09", "+7 900 000-00-02", 1)
		edit := func(body, token string) apptest.Response {
			return env.Do(http.MethodPut, fmt.Sprintf("/api/v1/intake/rejections/%d/body", rej.ID), body, token, "Content-Type", "application/json")
		}
		r = edit(corrected, manager)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var edited rejectionView
		r.JSON(t, &edited)
		require.Equal(t, "open", edited.Status)
		require.Contains(t, string(edited.Body), "+7 900 000-00-02")
		ev := journalOf(t, env, "intake.edited", "")
		require.Len(t, ev, 1)
		require.Equal(t, "Мария Менеджер", actorName(ev[0]), "who changed it")
		require.Equal(t, []any{map[string]any{"field": "customer.phone", "before": "+7 900 000-00-09", "after": "+7 900 000-00-02"}},
			ev[0].Payload["changes"], "what changed")
		// The same body again changes nothing and writes nothing.
		require.Equal(t, http.StatusOK, edit(corrected, manager).Status)
		require.Len(t, journalOf(t, env, "intake.edited", ""), 1)
		// It may not name another order, nor be anything but an object.
		requireProblem(t, edit(strings.Replace(corrected, `"inbox-1"`, `"inbox-2"`, 1), manager), http.StatusUnprocessableEntity, "body.id")
		requireProblem(t, edit(`[1, 2]`, manager), http.StatusUnprocessableEntity, "body")

		applied := rejectionAction(t, env, rej.ID, "retry", nil, http.StatusOK)
		require.Equal(t, "resolved", applied.Status)
		require.Equal(t, id, *applied.OrderID)
		require.Equal(t, "changed", applied.Outcome)
		o := orderView(t, env, id).Order
		require.Equal(t, "+7 900 000-00-02", o.Customer.Phone)
		var full struct{ Items []struct{ Qty int } }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", id), nil).JSON(t, &full)
		require.Equal(t, 2, full.Items[0].Qty, "the corrected change applied")
		requireProblem(t, edit(corrected, manager), http.StatusConflict)

		// The inbox's entries about the order are in its history.
		var h struct {
			Items []struct {
				Type          string
				AggregateType string `json:"aggregate_type"`
				AggregateID   int64  `json:"aggregate_id"`
			}
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d/history?kind=inbox&limit=500", id), nil).JSON(t, &h)
		var types []string
		for _, e := range h.Items {
			require.Equal(t, "sales_intake_rejections", e.AggregateType)
			require.Equal(t, rej.ID, e.AggregateID)
			types = append(types, e.Type)
		}
		require.Equal(t, []string{"intake.rejected", "intake.edited", "intake.resolved"}, types)
	})
}
