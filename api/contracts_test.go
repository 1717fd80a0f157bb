package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// The journal shows a payload's keys in the order its contract declares
// them, the old system's order, on PostgreSQL (whose jsonb keeps keys in an
// order of its own) as on SQLite.
func TestEvents_PayloadKeysInDeclaredOrder(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		r := env.Admin(http.MethodPost, "/api/v1/orders", validOrder)
		require.Equal(t, http.StatusCreated, r.Status)
		id := int64(r.Map(t)["id"].(float64))
		list := env.Admin(http.MethodGet, "/api/v1/events?type=order.received", nil)
		require.Equal(t, http.StatusOK, list.Status)
		want := fmt.Sprintf(`"payload":{"order_id":%d,"lines":2,"source":"manual","due_date":"2026-12-20","customer":"Иван Петров","items":[{"item_id":`, id)
		require.Contains(t, string(list.Body), want)
		var evs struct{ Items []struct{ ID int64 } }
		list.JSON(t, &evs)
		require.NotEmpty(t, evs.Items)
		one := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events/%d", evs.Items[0].ID), nil)
		require.Equal(t, http.StatusOK, one.Status)
		require.Contains(t, string(one.Body), want)
		require.True(t, strings.Contains(string(one.Body), `,"sku":"SHK-KUPE-1600","qty":1}`), "%s", one.Body)
		require.True(t, strings.Contains(string(one.Body), `,"sku":"TMB-PRIK-450","qty":2,"note":"дуб"}`), "%s", one.Body)
	})
}

// GET /api/v1/event-types serves the schemas generated from the contracts:
// required fields, integer ids, formats.
func TestEvents_TypesCarryGeneratedSchemas(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, "sqlite", nil)
	var types struct {
		Items []struct {
			Type, Owner, Description string
			AggregateType            string `json:"aggregate_type"`
			Schema                   map[string]any
		}
	}
	env.Admin(http.MethodGet, "/api/v1/event-types", nil).JSON(t, &types)
	byType := map[string]map[string]any{}
	for _, ty := range types.Items {
		require.NotEmpty(t, ty.Owner, ty.Type)
		require.NotEmpty(t, ty.AggregateType, ty.Type)
		require.NotEmpty(t, ty.Description, ty.Type)
		byType[ty.Type] = ty.Schema
	}
	launched := byType["prod_order.launched"]
	require.NotNil(t, launched)
	require.Equal(t, "https://json-schema.org/draft/2020-12/schema", launched["$schema"])
	require.ElementsMatch(t, []any{"prod_order_id", "items", "route", "parts_count", "ops_count", "eta"}, launched["required"])
	props := launched["properties"].(map[string]any)
	require.Equal(t, "integer", props["prod_order_id"].(map[string]any)["type"])
	require.Equal(t, map[string]any{"type": "integer"}, props["items"].(map[string]any)["items"])
	require.Equal(t, "date", props["eta"].(map[string]any)["format"])
	received := byType["order.received"]
	require.ElementsMatch(t, []any{"order_id", "lines", "source", "items"}, received["required"], "sync_id and crm_order_id are optional")
}
