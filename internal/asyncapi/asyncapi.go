// Package asyncapi writes the AsyncAPI 3.0 document of tsekh's events: every
// declared event type as a NATS channel carrying CloudEvents, and outgoing
// HTTP callbacks such as the shop's, each with its payload schema. It is
// generated from the event registry, as the OpenAPI document is from the
// handlers, and served at /asyncapi.json.
package asyncapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"

	"github.com/tsekh/tsekh/internal/events"
)

// Version is the AsyncAPI version of the document.
const Version = "3.0.0"

// Options are what the document describes.
type Options struct {
	Title       string
	Version     string // the document's version
	Description string
	Types       []events.Type // the declared event types
	NATS        NATS
	Callbacks   []Callback
}

// NATS describes the relay's channels.
type NATS struct {
	Host          string         // the server's host:port, for the document
	Description   string         // how the server is configured
	SubjectPrefix string         // subjects are <prefix>.<event type>
	Envelope      map[string]any // the JSON Schema of the CloudEvents envelope
	Headers       map[string]any // the JSON Schema of the message headers
	ContentType   string         // of the messages
}

// Callback is an outgoing HTTP request sent for events.
type Callback struct {
	ID          string // channel, operation and message id
	Title       string
	Description string
	Host        string // the receiving server's host, a placeholder
	HostInfo    string // how the receiving server is configured
	Protocol    string // http or https
	Method      string
	Headers     map[string]any // the JSON Schema of the headers
	Payload     map[string]any // the JSON Schema of the body
}

// EnvelopeSchema is the name of the CloudEvents envelope's schema among the
// document's component schemas; each event type's payload schema is named
// after the type.
const EnvelopeSchema = "CloudEvent"

// SchemaPointer returns the JSON pointer, within the document, of the event
// type's payload schema: the CloudEvents' dataschema points at it.
func SchemaPointer(eventType string) string { return "#/components/schemas/" + eventType }

// Build returns the document as indented JSON.
func Build(o Options) ([]byte, error) {
	types := append([]events.Type(nil), o.Types...)
	sort.Slice(types, func(i, j int) bool { return types[i].Type < types[j].Type })
	schemas := map[string]any{EnvelopeSchema: embedded(o.NATS.Envelope)}
	messages := map[string]any{}
	channels := map[string]any{}
	operations := map[string]any{}
	tags := map[string]bool{}
	for _, t := range types {
		if _, taken := schemas[t.Type]; taken {
			return nil, fmt.Errorf("asyncapi: event type %s clashes with a schema of the same name", t.Type)
		}
		if t.Schema == nil {
			return nil, fmt.Errorf("asyncapi: event type %s has no payload schema", t.Type)
		}
		tags[t.Owner] = true
		schemas[t.Type] = embedded(t.Schema)
		messages[t.Type] = map[string]any{
			"name":        t.Type,
			"title":       t.Type,
			"summary":     t.Description,
			"description": fmt.Sprintf("Written by the %s module about a row of %s (the CloudEvent's subject is %s/<id>). The CloudEvent's data is the payload; its dataschema points at %s in this document.", t.Owner, t.AggregateType, t.AggregateType, SchemaPointer(t.Type)),
			"contentType": o.NATS.ContentType,
			"tags":        []any{map[string]any{"name": t.Owner}},
			"headers":     o.NATS.Headers,
			"payload": map[string]any{"allOf": []any{
				ref("#/components/schemas/" + EnvelopeSchema),
				map[string]any{
					"type":     "object",
					"required": []any{"type", "data"},
					"properties": map[string]any{
						"type":    map[string]any{"enum": []any{t.Type}},
						"subject": map[string]any{"type": "string", "pattern": "^" + t.AggregateType + "/[0-9]+$"},
						"data":    ref("#/components/schemas/" + t.Type),
					},
				},
			}},
		}
		channels[t.Type] = map[string]any{
			"address":     o.NATS.SubjectPrefix + "." + t.Type,
			"title":       t.Type,
			"description": t.Description,
			"servers":     []any{ref("#/servers/nats")},
			"messages":    map[string]any{t.Type: ref("#/components/messages/" + t.Type)},
		}
		operations["relay."+t.Type] = map[string]any{
			"action":   "send",
			"title":    "Relay " + t.Type,
			"summary":  "The relay (NATS_URL) publishes every " + t.Type + " event to JetStream, once per event id.",
			"channel":  ref("#/channels/" + t.Type),
			"messages": []any{ref("#/channels/" + t.Type + "/messages/" + t.Type)},
		}
	}
	servers := map[string]any{
		"nats": map[string]any{"host": o.NATS.Host, "protocol": "nats", "description": o.NATS.Description},
	}
	for _, cb := range o.Callbacks {
		if _, taken := schemas[cb.ID]; taken {
			return nil, fmt.Errorf("asyncapi: callback %s clashes with a schema of the same name", cb.ID)
		}
		schemas[cb.ID] = embedded(cb.Payload)
		servers[cb.ID] = map[string]any{"host": cb.Host, "protocol": cb.Protocol, "description": cb.HostInfo}
		messages[cb.ID] = map[string]any{
			"name":        cb.ID,
			"title":       cb.Title,
			"summary":     cb.Title,
			"description": cb.Description,
			"contentType": "application/json",
			"headers":     embedded(cb.Headers),
			"payload":     ref("#/components/schemas/" + cb.ID),
			"bindings":    map[string]any{"http": map[string]any{"bindingVersion": "0.3.0"}},
		}
		channels[cb.ID] = map[string]any{
			"address":     nil, // the path of the configured URL
			"title":       cb.Title,
			"description": cb.Description,
			"servers":     []any{ref("#/servers/" + cb.ID)},
			"messages":    map[string]any{cb.ID: ref("#/components/messages/" + cb.ID)},
		}
		operations[cb.ID] = map[string]any{
			"action":   "send",
			"title":    cb.Title,
			"summary":  cb.Title,
			"channel":  ref("#/channels/" + cb.ID),
			"messages": []any{ref("#/channels/" + cb.ID + "/messages/" + cb.ID)},
			"bindings": map[string]any{"http": map[string]any{"method": cb.Method, "bindingVersion": "0.3.0"}},
		}
	}
	tagList := []any{}
	for _, name := range sortedKeys(tags) {
		tagList = append(tagList, map[string]any{"name": name, "description": "Events the " + name + " module writes."})
	}
	doc := map[string]any{
		"asyncapi": Version,
		"info": map[string]any{
			"title":       o.Title,
			"version":     o.Version,
			"description": o.Description,
			"tags":        tagList,
		},
		"defaultContentType": "application/json",
		"servers":            servers,
		"channels":           channels,
		"operations":         operations,
		"components":         map[string]any{"schemas": schemas, "messages": messages},
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// embedded returns a copy of a generated JSON Schema fit to be embedded in
// the document: without its $schema and $id, which belong to a standalone
// document (AsyncAPI's schemas are its own dialect of JSON Schema).
func embedded(s map[string]any) map[string]any {
	out := maps.Clone(s)
	delete(out, "$schema")
	delete(out, "$id")
	return out
}

func ref(to string) map[string]any { return map[string]any{"$ref": to} }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
