package app

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/tsekh/tsekh/internal/asyncapi"
	"github.com/tsekh/tsekh/internal/auth"
	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/relay"
	"github.com/tsekh/tsekh/internal/sales"
)

// AsyncAPIPath is where the service serves its AsyncAPI document; the
// CloudEvents' dataschema points into it.
const AsyncAPIPath = "/asyncapi.json"

// DataSchemaURL returns, for the service reached at publicURL, the URL of an
// event type's payload schema: a JSON pointer into the AsyncAPI document.
func DataSchemaURL(publicURL string) func(eventType string) string {
	base := strings.TrimRight(publicURL, "/") + AsyncAPIPath
	return func(eventType string) string { return base + asyncapi.SchemaPointer(eventType) }
}

// EventTypes returns every event type the service's modules declare, wired
// as New wires them but over no database: for the documents generated from
// them (tsekh asyncapi).
func EventTypes() ([]events.Type, error) {
	a := &App{Auth: auth.NewService(nil), Catalog: catalog.NewService(nil), Sales: sales.NewService(nil), Plan: plan.NewService(nil, nil)}
	reg := events.NewRegistry()
	if err := reg.Register(a.eventModules(config.Config{})...); err != nil {
		return nil, fmt.Errorf("wiring the events: %w", err)
	}
	return reg.Types(), nil
}

// AsyncAPI returns the AsyncAPI document of the service's events, as served
// at /asyncapi.json and committed as docs/asyncapi.json.
func AsyncAPI() ([]byte, error) {
	types, err := EventTypes()
	if err != nil {
		return nil, err
	}
	return asyncAPIDocument(types)
}

// asyncAPIDocs holds the AsyncAPI documents built in this process, by the
// names of the event types they describe: a type's declaration is fixed in
// the binary, and every App of a process (the tests start hundreds) declares
// the same types, while marshalling the document takes milliseconds.
var asyncAPIDocs sync.Map // string → []byte

// asyncAPIDocument returns the AsyncAPI document of the event types.
func asyncAPIDocument(types []events.Type) ([]byte, error) {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Type
	}
	key := strings.Join(names, " ")
	if doc, ok := asyncAPIDocs.Load(key); ok {
		return doc.([]byte), nil
	}
	doc, err := buildAsyncAPI(types)
	if err != nil {
		return nil, err
	}
	asyncAPIDocs.Store(key, doc)
	return doc, nil
}

func buildAsyncAPI(types []events.Type) ([]byte, error) {
	envelope, err := events.SchemaOf(reflect.TypeFor[relay.Envelope]())
	if err != nil {
		return nil, err
	}
	body, err := events.SchemaOf(reflect.TypeFor[sales.ShopCallbackBody]())
	if err != nil {
		return nil, err
	}
	headers, err := events.SchemaOf(reflect.TypeFor[sales.ShopCallbackHeaders]())
	if err != nil {
		return nil, err
	}
	return asyncapi.Build(asyncapi.Options{
		Title:   "tsekh events",
		Version: "1.0.0",
		Description: "The events of tsekh, the order-to-production service of a furniture factory. " +
			"Every event is written to the journal in the transaction of the data it is about (GET /api/v1/events) and, " +
			"with NATS_URL set, relayed to NATS JetStream as a CloudEvents 1.0 JSON document on tsekh.events.<type>, " +
			"at least once and de-duplicated by the journal's event id (the message's Nats-Msg-Id). " +
			"The shop is told of its orders' state by a signed HTTP callback (SHOP_CALLBACK_URL). " +
			"Within a type, payloads change only by new optional fields: ignore fields you do not know. " +
			"A breaking change is a new type name. " +
			"Every event says where it came from: the event whose handling wrote it (causedby), the request or command " +
			"that set it going (correlationid) and the W3C trace context of its writing (traceparent, tracestate: " +
			"the CloudEvents distributed-tracing extension).",
		Types: types,
		NATS: asyncapi.NATS{
			Host:          "localhost:4222",
			Description:   "The NATS server at NATS_URL, with JetStream: the relay publishes to the stream TSEKH_EVENTS on " + relay.DefaultSubjectPrefix + ".> (created when missing, de-duplicating within an hour).",
			SubjectPrefix: relay.DefaultSubjectPrefix,
			Envelope:      envelope,
			ContentType:   "application/cloudevents+json",
			Headers: map[string]any{
				"type":     "object",
				"required": []any{"Nats-Msg-Id", "Content-Type"},
				"properties": map[string]any{
					"Nats-Msg-Id":  map[string]any{"type": "string", "pattern": "^[0-9]+$", "description": "the journal's event id: JetStream drops a repeat within the stream's duplicate window"},
					"Content-Type": map[string]any{"type": "string", "enum": []any{"application/cloudevents+json"}},
					"traceparent":  map[string]any{"type": "string", "pattern": "^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$", "description": "W3C traceparent of the publish, in the trace of the request that wrote the event; absent when the event has none"},
					"tracestate":   map[string]any{"type": "string", "description": "W3C tracestate beside traceparent"},
				},
			},
		},
		Callbacks: []asyncapi.Callback{{
			ID:    "shopCallback",
			Title: "Tell the shop of its order's state and ETA",
			Description: "With SHOP_CALLBACK_URL set, the subscriber " + sales.SubscriberShopCallback + " POSTs every " +
				"order.status_changed of a shop order to that URL, signed like the shop's webhook with SHOP_WEBHOOK_SECRET " +
				"and re-signed on every attempt. An answer other than 2xx is retried with back-off; delivery is at least " +
				"once, so drop repeats by X-Tsekh-Event-Id. The body names the event, its cause and correlation id; " +
				"traceparent and tracestate carry the trace of the request that wrote the event.",
			Host:     "shop.example.com",
			HostInfo: "The shop's server: the host of SHOP_CALLBACK_URL, whose path is the channel's address.",
			Protocol: "https",
			Method:   "POST",
			Headers:  headers,
			Payload:  body,
		}},
	})
}

// Markers around the generated table of event types in docs/journal.md.
const (
	EventsTableBegin = "<!-- event types: generated by `make docs` from internal/contracts, do not edit -->"
	EventsTableEnd   = "<!-- end of event types -->"
)

// EventsTable returns the Markdown table of the event types: each with its
// owner, its object (the owner's table) and its payload.
func EventsTable(types []events.Type) string {
	var b strings.Builder
	b.WriteString("| type | owner | object | payload | meaning |\n|---|---|---|---|---|\n")
	for _, t := range types {
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | `%s` | %s |\n", t.Type, t.Owner, t.AggregateType, t.Shape(), t.Description)
	}
	return b.String()
}

// ReplaceEventsTable returns the document with the text between the event
// types' markers replaced by table.
func ReplaceEventsTable(doc, table string) (string, error) {
	begin := strings.Index(doc, EventsTableBegin)
	end := strings.Index(doc, EventsTableEnd)
	if begin < 0 || end < begin {
		return "", errors.New("the markers of the event types' table are missing")
	}
	return doc[:begin+len(EventsTableBegin)] + "\n" + table + doc[end:], nil
}
