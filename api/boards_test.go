package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// Every item shows each decor slot of its product with the board it will be
// cut from: the one chosen, or the slot's default, in the order, the order
// list and the backlog alike.
func TestOrders_BoardsResolved(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		var products struct {
			Items []struct {
				ID    int64
				SKU   string
				Slots []struct {
					Name    string
					Boards  []string
					Default string
				}
			}
		}
		env.Admin(http.MethodGet, "/api/v1/products?limit=500", nil).JSON(t, &products)
		want := map[string]string{}
		for _, p := range products.Items {
			if p.SKU != "TMB-PRIK-450" {
				continue
			}
			require.GreaterOrEqual(t, len(p.Slots), 2, "a product of two slots at least")
			for _, s := range p.Slots {
				want[s.Name] = s.Default
				if want[s.Name] == "" {
					want[s.Name] = s.Boards[0]
				}
			}
		}
		require.NotEmpty(t, want)
		// The customer chooses the body's decor only.
		r := env.Admin(http.MethodPost, "/api/v1/orders",
			`{"customer": {"name": "Анна"}, "items": [{"sku": "TMB-PRIK-450", "qty": 2, "options": {"корпус": "Дуб сонома"}}]}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		type item struct {
			ID      int64             `json:"id"`
			ItemID  int64             `json:"item_id"`
			Options map[string]string `json:"options"`
			Boards  map[string]string `json:"boards"`
		}
		var created struct {
			ID    int64
			Items []item
		}
		r.JSON(t, &created)
		chosen := created.Items[0].Options["корпус"]
		require.NotEmpty(t, chosen)
		require.NotEqual(t, want["корпус"], chosen, "the choice is not the default")
		want["корпус"] = chosen
		require.Len(t, created.Items[0].Options, 1, "the options are the choices alone")
		require.Equal(t, want, created.Items[0].Boards, "POST")

		var got struct{ Items []item }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", created.ID), nil).JSON(t, &got)
		require.Equal(t, want, got.Items[0].Boards, "GET")
		var list struct{ Items []struct{ Items []item } }
		env.Admin(http.MethodGet, "/api/v1/orders", nil).JSON(t, &list)
		require.Equal(t, want, list.Items[0].Items[0].Boards, "the list")
		env.Dispatch()
		var backlog struct{ Items []json.RawMessage }
		env.Admin(http.MethodGet, "/api/v1/plan/backlog", nil).JSON(t, &backlog)
		require.Len(t, backlog.Items, 1)
		var row item
		require.NoError(t, json.Unmarshal(backlog.Items[0], &row))
		require.Equal(t, want, row.Boards, "the backlog")
	})
}
