package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/config"
)

type keptBody struct {
	ID        int64
	Body      json.RawMessage
	BodyBytes int    `json:"body_bytes"`
	BodyCut   bool   `json:"body_cut"`
	BodyHead  string `json:"body_head"`
}

// A refused delivery's body larger than INTAKE_BODY_LIMIT keeps its
// beginning only (body_head), cut where a character begins, and says so:
// body_cut, body_bytes as received, body null; it cannot be retried. A body within the limit is
// kept whole and unmarked.
func TestIntakeBody_CutAndSaid(t *testing.T) {
	t.Parallel()
	eachWith(t, func(c *config.Config) { c.ShopWebhookSecret, c.IntakeBodyLimit = shopSecret, 2048 }, func(t *testing.T, env *apptest.Env) {
		note := strings.Repeat("Очень длинное примечание покупателя. ", 300)
		big := shopOrderBody("big-note", fmt.Sprintf(`{"sku": "NEW-SOFA", "qty": 1, "note": %q}`, note), "")
		small := shopOrderBody("small-note", `{"sku": "NEW-SOFA", "qty": 1, "note": "к подъезду"}`, "")
		requireProblem(t, deliver(env, big, time.Now()), http.StatusUnprocessableEntity, "items[0].note", "items[0].sku")
		requireProblem(t, deliver(env, small, time.Now()), http.StatusUnprocessableEntity, "items[0].sku")
		r := env.Admin(http.MethodGet, "/api/v1/intake/rejections?open=true", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var list struct{ Items []keptBody }
		r.JSON(t, &list)
		require.Len(t, list.Items, 2)
		gotSmall, gotBig := list.Items[0], list.Items[1]

		require.False(t, gotSmall.BodyCut)
		require.Equal(t, len(small), gotSmall.BodyBytes)
		require.JSONEq(t, small, string(gotSmall.Body), "within the limit: whole, as received")

		require.True(t, gotBig.BodyCut, "the body was cut: said so")
		require.Equal(t, len(big), gotBig.BodyBytes, "its size as received")
		require.JSONEq(t, "null", string(gotBig.Body), "no body to read as an order")
		kept := gotBig.BodyHead
		require.LessOrEqual(t, len(kept), 2048)
		require.Greater(t, len(kept), 2048-4, "cut at the limit, less at most a character's bytes")
		require.True(t, strings.HasPrefix(big, kept), "its beginning, as received")

		p := requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/intake/rejections/%d/retry", gotBig.ID), nil), http.StatusConflict)
		require.Contains(t, p.Detail, "INTAKE_BODY_LIMIT")
		// Nor edited: the manager has only its beginning to correct.
		var fixed map[string]any
		require.NoError(t, json.Unmarshal([]byte(shopOrderBody("big-note", `{"sku": "NEW-SOFA", "qty": 1}`, "")), &fixed))
		p = requireProblem(t, env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/intake/rejections/%d/body", gotBig.ID), fixed), http.StatusConflict)
		require.Contains(t, p.Detail, "INTAKE_BODY_LIMIT")
		// An edit of a body kept whole stays within the limit too.
		var grown map[string]any
		require.NoError(t, json.Unmarshal([]byte(small), &grown))
		grown["comment"] = note
		requireProblem(t, env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/intake/rejections/%d/body", gotSmall.ID), grown), http.StatusUnprocessableEntity, "body")
		one := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/intake/rejections/%d", gotBig.ID), nil)
		require.Equal(t, http.StatusOK, one.Status)
		require.Equal(t, true, one.Map(t)["body_cut"])
	})
}

// A page of the inbox ends before the rejection whose body would take it
// past 4 MiB; following next_cursor gives every rejection once, its body
// whole, as one page without the bound would.
func TestIntakeBody_PageBoundedByBytes(t *testing.T) {
	t.Parallel()
	eachWith(t, func(c *config.Config) { c.ShopWebhookSecret, c.IntakeBodyLimit = shopSecret, 1<<20 }, func(t *testing.T, env *apptest.Env) {
		const n = 5
		sent := map[string]string{}
		for i := range n {
			id := fmt.Sprintf("bulky-%d", i)
			note := strings.Repeat(string(rune('a'+i)), 900_000)
			body := shopOrderBody(id, fmt.Sprintf(`{"sku": "NEW-SOFA", "qty": 1, "note": %q}`, note), "")
			requireProblem(t, deliver(env, body, time.Now()), http.StatusUnprocessableEntity, "items[0].note", "items[0].sku")
			sent["shop-"+id] = body
		}
		var pages []int
		cursor := ""
		got := map[string]string{}
		for {
			r := env.Admin(http.MethodGet, "/api/v1/intake/rejections?limit=500&cursor="+cursor, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var page struct {
				Items []struct {
					SyncID  string `json:"sync_id"`
					Body    json.RawMessage
					BodyCut bool `json:"body_cut"`
				}
				NextCursor string `json:"next_cursor"`
			}
			r.JSON(t, &page)
			pages = append(pages, len(page.Items))
			for _, it := range page.Items {
				require.False(t, it.BodyCut)
				require.NotContains(t, got, it.SyncID, "each once")
				got[it.SyncID] = string(it.Body)
			}
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		require.Equal(t, []int{4, 1}, pages, "four bodies of 0.9 MB fit in 4 MiB, the fifth goes on the next page")
		require.Len(t, got, n)
		for id, body := range sent {
			require.JSONEq(t, body, got[id], id)
		}
	})
}
