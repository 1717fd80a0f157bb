package events_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// widgetMade is a contract of the tests' own, declared as modules declare
// theirs (internal/contracts).
var widgetMade = events.Declare[widgetPayload]("test_widget.made", "test", "widgets", "A widget was made.")

type widgetPayload struct {
	WidgetID int64         `json:"widget_id"`
	Name     string        `json:"name"`
	Day      string        `json:"day" jsonschema:"format=date"`
	Note     string        `json:"note,omitempty"`
	Parts    []widgetPart  `json:"parts"`
	At       time.Time     `json:"at"`
	Owner    *widgetPerson `json:"owner,omitempty"`
}

type widgetPart struct {
	Zeta  string `json:"zeta"`
	Alpha int    `json:"alpha"`
}

type widgetPerson struct {
	Name string `json:"name"`
	ID   int64  `json:"id"`
}

func TestContract_SchemaFromTheType(t *testing.T) {
	t.Parallel()
	ty := widgetMade.Describe()
	require.Equal(t, "test_widget.made", ty.Type)
	require.Equal(t, "test", ty.Owner)
	require.Equal(t, "widgets", ty.AggregateType)
	s := ty.Schema
	require.Equal(t, "object", s["type"])
	require.Equal(t, []any{"widget_id", "name", "day", "parts", "at"}, s["required"], "omitempty fields are optional")
	props := s["properties"].(map[string]any)
	require.Equal(t, "integer", props["widget_id"].(map[string]any)["type"], "ids are integers")
	require.Equal(t, "date", props["day"].(map[string]any)["format"])
	require.Equal(t, "date-time", props["at"].(map[string]any)["format"])
	require.Equal(t, "array", props["parts"].(map[string]any)["type"])
	require.NotContains(t, s, "additionalProperties", "readers of older versions accept new optional fields")
	require.Equal(t, `{"widget_id", "name", "day", "note"?, "parts": [{"zeta", "alpha"}], "at", "owner"?: {"name", "id"}}`, ty.Shape())

	got, ok := events.DeclaredType("test_widget.made")
	require.True(t, ok, "Declare records the type in the binary's catalogue")
	require.Equal(t, ty.Schema, got.Schema)
}

func TestContract_DeclareRefusesMistakes(t *testing.T) {
	t.Parallel()
	for name, declare := range map[string]func(){
		"declared twice":   func() { events.Declare[widgetPayload]("test_widget.made", "other", "widgets", "Again.") },
		"malformed name":   func() { events.Declare[widgetPayload]("Widget Made", "test", "widgets", "A widget.") },
		"one word":         func() { events.Declare[widgetPayload]("widget", "test", "widgets", "A widget.") },
		"wildcard":         func() { events.Declare[widgetPayload]("widget.*", "test", "widgets", "A widget.") },
		"no owner":         func() { events.Declare[widgetPayload]("test_widget.lost", "", "widgets", "A widget.") },
		"no table":         func() { events.Declare[widgetPayload]("test_widget.lost", "test", "", "A widget.") },
		"no description":   func() { events.Declare[widgetPayload]("test_widget.lost", "test", "widgets", "") },
		"not a struct":     func() { events.Declare[map[string]any]("test_widget.lost", "test", "widgets", "A widget.") },
		"pointer, not one": func() { events.Declare[*widgetPayload]("test_widget.lost", "test", "widgets", "A widget.") },
	} {
		require.Panics(t, declare, name)
	}
	_, ok := events.DeclaredType("test_widget.lost")
	require.False(t, ok)
}

func TestContract_WriteAndRead(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 13, 17, 20, 4, 0, time.UTC)
		in := widgetPayload{WidgetID: 7, Name: "Шкаф", Day: "2026-11-13", Parts: []widgetPart{{Zeta: "z", Alpha: 1}}, At: at}
		require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
			return events.Add(ctx, tx, widgetMade.New(7, in))
		}))
		var ev events.Event
		var payload string
		require.NoError(t, db.Raw("SELECT id, type, aggregate_type, aggregate_id, payload FROM events").Row().
			Scan(&ev.ID, &ev.Type, &ev.AggregateType, &ev.AggregateID, &payload))
		ev.Payload = json.RawMessage(payload)
		require.Equal(t, "widgets", ev.AggregateType, "the contract names the object's table")
		out, err := widgetMade.Decode(ev)
		require.NoError(t, err)
		require.Equal(t, in, out)

		// PostgreSQL's jsonb keeps keys in an order of its own; the journal
		// and the relay put them back in the declared order.
		require.Equal(t, `{"widget_id":7,"name":"Шкаф","day":"2026-11-13","parts":[{"zeta":"z","alpha":1}],"at":"2026-11-13T17:20:04Z"}`,
			string(events.InDeclaredOrder(ev.Type, ev.Payload)))

		ev.Type = "test_widget.other"
		_, err = widgetMade.Decode(ev)
		require.Error(t, err, "an event of another type is not decoded as this one")
	})
}

func TestInDeclaredOrder(t *testing.T) {
	t.Parallel()
	payload := json.RawMessage(`{"at": "x", "day": "d", "name": "n", "zzz": 1, "aaa": 2, "owner": {"id": 1, "name": "o"}, "parts": [{"alpha": 1, "zeta": "z"}, 3], "widget_id": 7}`)
	require.Equal(t, `{"widget_id":7,"name":"n","day":"d","parts":[{"zeta":"z","alpha":1},3],"at":"x","owner":{"name":"o","id":1},"aaa":2,"zzz":1}`,
		string(events.InDeclaredOrder("test_widget.made", payload)), "declared keys first, unknown ones after, sorted")
	require.Equal(t, `[1]`, string(events.InDeclaredOrder("test_widget.made", json.RawMessage(`[1]`))), "not an object: as it is")
	require.Equal(t, `{"b": 1, "a": 2}`, string(events.InDeclaredOrder("thing.undeclared", json.RawMessage(`{"b": 1, "a": 2}`))))
}
