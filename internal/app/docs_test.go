package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app"
	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/asyncapi"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/relay"
	"github.com/tsekh/tsekh/internal/sales"
)

const committedAsyncAPI = "../../docs/asyncapi.json"

// The committed AsyncAPI document is the one the contracts generate, so that
// every change of an event's contract is a visible diff in review; the
// failure says whether the change is additive or breaking.
func TestContracts_CommittedSchemasAreCurrent(t *testing.T) {
	t.Parallel()
	committed, err := os.ReadFile(committedAsyncAPI)
	require.NoError(t, err)
	generated, err := app.AsyncAPI()
	require.NoError(t, err)
	if bytes.Equal(committed, generated) {
		return
	}
	c, err := asyncapi.Diff(committed, generated)
	require.NoError(t, err)
	msg := "docs/asyncapi.json is not what the event contracts generate: run make docs and commit it."
	if len(c.Breaking) > 0 {
		msg += "\nBREAKING changes (within a type only new optional fields are allowed; make a new type name instead, docs/journal.md, \"Events\"):\n  " +
			strings.Join(c.Breaking, "\n  ")
	}
	if len(c.Additive) > 0 {
		msg += "\nadditive changes:\n  " + strings.Join(c.Additive, "\n  ")
	}
	t.Fatal(msg)
}

// The table of event types in docs/journal.md is generated from the same contracts.
func TestDocs_EventsTableIsCurrent(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../docs/journal.md")
	require.NoError(t, err)
	types, err := app.EventTypes()
	require.NoError(t, err)
	want, err := app.ReplaceEventsTable(string(readme), app.EventsTable(types))
	require.NoError(t, err)
	require.Equal(t, want, string(readme), "docs/journal.md's table of event types is stale: run make docs")
	require.Contains(t, string(readme), "/asyncapi.json")
}

// The service serves the document without a token, and each type's
// dataschema URL resolves in it to the schema the type declares.
func TestAsyncAPI_ServedWithResolvableDataSchemas(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, database.SQLite, nil)
	r := env.Do(http.MethodGet, app.AsyncAPIPath, nil, "")
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	committed, err := os.ReadFile(committedAsyncAPI)
	require.NoError(t, err)
	require.Equal(t, string(committed), string(r.Body), "the service serves the committed document")

	var doc any
	require.NoError(t, json.Unmarshal(r.Body, &doc))
	schemaURL := app.DataSchemaURL("https://tsekh.example.com/")
	types := env.App.Registry.Types()
	require.NotEmpty(t, types)
	for _, ty := range types {
		u, err := url.Parse(schemaURL(ty.Type))
		require.NoError(t, err)
		require.Equal(t, "/asyncapi.json", u.Path)
		got := resolve(t, doc, u.Fragment)
		want := map[string]any{}
		for k, v := range ty.Schema {
			if k != "$schema" {
				want[k] = v
			}
		}
		require.Equal(t, want, got, ty.Type)
	}
}

// resolve follows a JSON pointer ("/components/schemas/order.received").
func resolve(t *testing.T, doc any, pointer string) any {
	t.Helper()
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := doc.(map[string]any)
		require.True(t, ok, "pointer %s: %s is not in an object", pointer, tok)
		doc, ok = m[tok]
		require.True(t, ok, "pointer %s: no %s", pointer, tok)
	}
	return doc
}

// compile returns the schema at the JSON pointer within the AsyncAPI document.
func compile(t *testing.T, pointer string) *jsonschema.Schema {
	t.Helper()
	raw, err := app.AsyncAPI()
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const loc = "https://tsekh.example.com/asyncapi.json"
	require.NoError(t, c.AddResource(loc, doc))
	sch, err := c.Compile(loc + "#" + pointer)
	require.NoError(t, err)
	return sch
}

func validate(t *testing.T, sch *jsonschema.Schema, raw []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	return sch.Validate(v)
}

// The document describes what the relay publishes: its CloudEvents pass the
// message's schema, and one whose data drifts from the type does not.
func TestAsyncAPI_DescribesTheRelaysCloudEvents(t *testing.T) {
	t.Parallel()
	payload := contracts.ProdOrderLaunchedPayload{ProdOrderID: 5, Items: []int64{1, 2}, Route: "Мягкая мебель (типовой)", PartsCount: 5, OpsCount: 8, ETA: "2026-11-20"}
	data, err := json.Marshal(payload)
	require.NoError(t, err)
	ev := events.Event{ID: 132, Type: contracts.ProdOrderLaunched.Name(), AggregateType: "plan_prod_orders", AggregateID: 5, Payload: data,
		Actor: &events.Actor{ID: 1, Name: "Администратор"}, CreatedAt: time.Date(2026, 11, 13, 17, 20, 4, 0, time.UTC)}
	sch := compile(t, "/components/messages/prod_order.launched/payload")
	schemaURL := app.DataSchemaURL("https://tsekh.example.com")(ev.Type)
	ce, err := relay.CloudEvent(ev, relay.DefaultSource, schemaURL)
	require.NoError(t, err)
	require.NoError(t, validate(t, sch, ce), "%s", ce)
	require.NoError(t, validate(t, compile(t, "/components/messages/prod_order.launched/headers"),
		[]byte(`{"Nats-Msg-Id": "132", "Content-Type": "application/cloudevents+json"}`)))

	ev.Payload = json.RawMessage(`{"prod_order_id": 5, "items": [1, 2], "route": "Мягкая мебель (типовой)", "parts_count": 5, "ops_count": 8, "eta": "20.11.2026"}`)
	ce, err = relay.CloudEvent(ev, relay.DefaultSource, schemaURL)
	require.NoError(t, err)
	require.Error(t, validate(t, sch, ce), "an ETA that is not a date")
	ev.Type = contracts.OrderReceived.Name()
	ce, err = relay.CloudEvent(ev, relay.DefaultSource, schemaURL)
	require.NoError(t, err)
	require.Error(t, validate(t, sch, ce), "another type on this channel")
}

// The document describes the shop's callback as the subscriber sends it:
// body and signature headers.
func TestAsyncAPI_DescribesTheShopCallback(t *testing.T) {
	t.Parallel()
	var body []byte
	var header http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		header = r.Header.Clone()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	sub := sales.ShopCallback(srv.URL, "demo-shop-secret", srv.Client())
	syncID := "shop-7826d8468b3d"
	for _, eta := range []string{"", "2026-12-18"} {
		data, err := json.Marshal(contracts.OrderStatusChangedPayload{OrderID: 22, Status: sales.StatusInProduction, PreviousStatus: sales.StatusReceived, ETA: eta, SyncID: &syncID})
		require.NoError(t, err)
		require.NoError(t, sub.Handle(context.Background(), events.Event{ID: 140, Type: contracts.OrderStatusChanged.Name(),
			AggregateType: "sales_orders", AggregateID: 22, Payload: data, CreatedAt: time.Now()}))
		require.NoError(t, validate(t, compile(t, "/components/messages/shopCallback/payload"), body), "%s", body)
		headers := map[string]string{}
		for _, name := range []string{sales.HeaderShopTimestamp, sales.HeaderShopSignature, sales.HeaderEventID} {
			headers[name] = header.Get(name)
		}
		raw, err := json.Marshal(headers)
		require.NoError(t, err)
		require.NoError(t, validate(t, compile(t, "/components/messages/shopCallback/headers"), raw), "%s", raw)
	}
	require.Error(t, validate(t, compile(t, "/components/messages/shopCallback/headers"),
		[]byte(`{"X-Shop-Timestamp": "1795000000", "X-Shop-Signature": "md5=abc", "X-Tsekh-Event-Id": "1"}`)))
}
