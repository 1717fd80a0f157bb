package asyncapi_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/asyncapi"
)

func doc(t *testing.T, schemas map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"components": map[string]any{"schemas": schemas}})
	require.NoError(t, err)
	return b
}

func obj(required []any, props map[string]any) map[string]any {
	return map[string]any{"type": "object", "required": required, "properties": props}
}

var (
	intS  = map[string]any{"type": "integer"}
	strS  = map[string]any{"type": "string"}
	dateS = map[string]any{"type": "string", "format": "date"}
)

func TestDiff_AdditiveAndBreaking(t *testing.T) {
	t.Parallel()
	base := obj([]any{"order_id", "eta"}, map[string]any{"order_id": intS, "eta": dateS,
		"status": map[string]any{"type": "string", "enum": []any{"received", "ready"}}})
	for _, tc := range []struct {
		name               string
		newer              map[string]any
		additive, breaking []string
	}{
		{"same", base, nil, nil},
		{"new optional field", obj([]any{"order_id", "eta"}, map[string]any{"order_id": intS, "eta": dateS,
			"status": base["properties"].(map[string]any)["status"], "note": strS}),
			[]string{"t.x.note: new optional field"}, nil},
		{"new enum value", obj([]any{"order_id", "eta"}, map[string]any{"order_id": intS, "eta": dateS,
			"status": map[string]any{"type": "string", "enum": []any{"received", "ready", "shipped"}}}),
			[]string{"t.x.status: new value shipped"}, nil},
		{"new required field", obj([]any{"order_id", "eta", "note"}, map[string]any{"order_id": intS, "eta": dateS,
			"status": base["properties"].(map[string]any)["status"], "note": strS}),
			nil, []string{"t.x.note: new and required (older events lack it)"}},
		{"removed field", obj([]any{"order_id"}, map[string]any{"order_id": intS,
			"status": base["properties"].(map[string]any)["status"]}),
			nil, []string{"t.x.eta: removed", "t.x.eta: no longer required"}},
		{"retyped field", obj([]any{"order_id", "eta"}, map[string]any{"order_id": strS, "eta": dateS,
			"status": base["properties"].(map[string]any)["status"]}),
			nil, []string{`t.x.order_id: type changed from "integer" to "string"`}},
		{"format changed", obj([]any{"order_id", "eta"}, map[string]any{"order_id": intS, "eta": map[string]any{"type": "string", "format": "date-time"},
			"status": base["properties"].(map[string]any)["status"]}),
			nil, []string{`t.x.eta: format changed from "date" to "date-time"`}},
		{"optional made required", obj([]any{"order_id", "eta", "status"}, base["properties"].(map[string]any)),
			nil, []string{"t.x.status: now required (older events lack it)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := asyncapi.Diff(doc(t, map[string]any{"t.x": base}), doc(t, map[string]any{"t.x": tc.newer}))
			require.NoError(t, err)
			require.ElementsMatch(t, tc.additive, c.Additive)
			require.ElementsMatch(t, tc.breaking, c.Breaking)
		})
	}
	c, err := asyncapi.Diff(doc(t, map[string]any{"t.x": base}), doc(t, map[string]any{"t.y": base}))
	require.NoError(t, err)
	require.Equal(t, []string{"t.y: new"}, c.Additive)
	require.Equal(t, []string{"t.x: removed"}, c.Breaking)
}
