// Package relay publishes tsekh's events to NATS JetStream, for services
// outside this database to consume. It is an outside subscriber of the
// dispatcher ("nats.relay"): every event is published at least once, as a
// CloudEvents 1.0 JSON message on the subject <prefix>.<event type>, with the
// journal's event id as the JetStream message id, so that the stream drops
// the repeats that at-least-once delivery may produce. Its cause, correlation
// id and W3C trace context travel as extension attributes (causedby,
// correlationid, and traceparent and tracestate of the distributed-tracing
// extension), the trace context in the message's headers too.
package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/telemetry"
)

// SubscriberName is the relay's name in the journal.
const SubscriberName = "nats.relay"

// Defaults of Options.
const (
	DefaultStream        = "TSEKH_EVENTS"
	DefaultSubjectPrefix = "tsekh.events"
	DefaultSource        = "tsekh"
	DefaultDuplicates    = time.Hour
)

// Options say where the relay publishes; zero values take the defaults.
type Options struct {
	URL           string        // the NATS server (NATS_URL)
	Stream        string        // the JetStream stream, created when missing (TSEKH_EVENTS)
	SubjectPrefix string        // subjects are <prefix>.<event type> (tsekh.events)
	Source        string        // the CloudEvents source attribute (tsekh)
	Duplicates    time.Duration // the stream's de-duplication window when the relay creates it (1h)
	// DataSchema returns the URL of an event type's payload schema, sent as
	// the CloudEvents dataschema attribute; nil: none is sent.
	DataSchema func(eventType string) string
	Logger     *slog.Logger
}

// Relay publishes events to JetStream. It connects on first use and keeps
// the connection, which reconnects by itself.
type Relay struct {
	opt Options

	mu      sync.Mutex
	nc      *nats.Conn
	js      jetstream.JetStream
	ensured bool
}

// New returns a relay; it does not connect yet.
func New(opt Options) *Relay {
	if opt.Stream == "" {
		opt.Stream = DefaultStream
	}
	if opt.SubjectPrefix == "" {
		opt.SubjectPrefix = DefaultSubjectPrefix
	}
	if opt.Source == "" {
		opt.Source = DefaultSource
	}
	if opt.Duplicates <= 0 {
		opt.Duplicates = DefaultDuplicates
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	return &Relay{opt: opt}
}

// Subscriber returns the relay as an outside subscriber to every event type
// the registry declares (events.AllTypes), wherever it is registered.
func (r *Relay) Subscriber() events.Subscriber {
	return events.Subscriber{
		Name:        SubscriberName,
		Types:       []string{events.AllTypes},
		Description: "Publishes every event to NATS JetStream as a CloudEvent on " + r.opt.SubjectPrefix + ".<type>, de-duplicated by event id.",
		Handle:      func(ctx context.Context, ev events.Event) error { _, err := r.Publish(ctx, ev); return err },
		// Publishes for different objects go out side by side (those of one
		// object one after the other, in order); NATS_RELAY_CONCURRENCY.
		Concurrency: DefaultConcurrency,
	}
}

// DefaultConcurrency is how many publishes may be in flight at once unless
// NATS_RELAY_CONCURRENCY says otherwise.
const DefaultConcurrency = 16

// Subject is the subject an event of the type is published on.
func (r *Relay) Subject(eventType string) string { return r.opt.SubjectPrefix + "." + eventType }

// Publish sends ev to the stream and waits for JetStream's acknowledgement.
// duplicate is true when the stream already had a message with the event's
// id (within its de-duplication window) and dropped this one.
func (r *Relay) Publish(ctx context.Context, ev events.Event) (duplicate bool, err error) {
	js, err := r.jetStream(ctx)
	if err != nil {
		return false, err
	}
	schema := ""
	if r.opt.DataSchema != nil {
		schema = r.opt.DataSchema(ev.Type)
	}
	body, err := CloudEvent(ev, r.opt.Source, schema)
	if err != nil {
		return false, err
	}
	msg := nats.NewMsg(r.Subject(ev.Type))
	msg.Data = body
	msg.Header.Set("Content-Type", "application/cloudevents+json")
	// The publish carries the trace of its handling (the relay's process
	// span), or else the event's own, in the message's headers too.
	tp, ts := ev.Traceparent, ev.Tracestate
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		tp, ts = telemetry.Traceparent(sc), sc.TraceState().String()
	}
	if tp != "" {
		msg.Header.Set("traceparent", tp)
		if ts != "" {
			msg.Header.Set("tracestate", ts)
		}
	}
	ack, err := js.PublishMsg(ctx, msg, jetstream.WithMsgID(strconv.FormatInt(ev.ID, 10)), jetstream.WithExpectStream(r.opt.Stream))
	if err != nil {
		return false, fmt.Errorf("relay: publish event %d: %w", ev.ID, err)
	}
	return ack.Duplicate, nil
}

// jetStream connects and makes sure the stream exists.
func (r *Relay) jetStream(ctx context.Context) (jetstream.JetStream, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nc == nil {
		nc, err := nats.Connect(r.opt.URL, nats.Name("tsekh relay"), nats.MaxReconnects(-1))
		if err != nil {
			return nil, fmt.Errorf("relay: connect to NATS: %w", err)
		}
		js, err := jetstream.New(nc)
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("relay: %w", err)
		}
		r.nc, r.js = nc, js
	}
	if !r.ensured {
		if err := r.ensureStream(ctx); err != nil {
			return nil, err
		}
		r.ensured = true
	}
	return r.js, nil
}

// ensureStream creates the stream when it does not exist; an existing one is
// left as its operator configured it.
func (r *Relay) ensureStream(ctx context.Context) error {
	_, err := r.js.Stream(ctx, r.opt.Stream)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("relay: look up stream %s: %w", r.opt.Stream, err)
	}
	_, err = r.js.CreateStream(ctx, jetstream.StreamConfig{
		Name:        r.opt.Stream,
		Description: "tsekh's events as CloudEvents, one subject per event type",
		Subjects:    []string{r.opt.SubjectPrefix + ".>"},
		Storage:     jetstream.FileStorage,
		Duplicates:  r.opt.Duplicates,
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("relay: create stream %s: %w", r.opt.Stream, err)
	}
	r.opt.Logger.Info("relay: JetStream stream ready", "stream", r.opt.Stream, "subjects", r.opt.SubjectPrefix+".>")
	return nil
}

// Close drops the connection, if any.
func (r *Relay) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nc != nil {
		r.nc.Close()
		r.nc, r.js, r.ensured = nil, nil, false
	}
}

// Envelope is a CloudEvents 1.0 event in the JSON format, as the relay
// publishes it; the AsyncAPI document (/asyncapi.json) describes it with the
// schema generated from this type.
type Envelope struct {
	SpecVersion     string          `json:"specversion" jsonschema:"enum=1.0" jsonschema_description:"the CloudEvents version"`
	ID              string          `json:"id" jsonschema:"pattern=^[0-9]+$" jsonschema_description:"the journal's event id (GET /api/v1/events/{id}), also the Nats-Msg-Id header"`
	Source          string          `json:"source" jsonschema:"format=uri-reference" jsonschema_description:"the producer: tsekh"`
	Type            string          `json:"type" jsonschema_description:"the event type, e.g. order.received"`
	Subject         string          `json:"subject" jsonschema_description:"the object: <aggregate_type>/<aggregate_id>, e.g. sales_orders/22"`
	Time            time.Time       `json:"time" jsonschema_description:"when the event was written (the database clock)"`
	DataContentType string          `json:"datacontenttype" jsonschema:"enum=application/json"`
	DataSchema      string          `json:"dataschema,omitempty" jsonschema:"format=uri" jsonschema_description:"the JSON Schema of data: the type's schema in the AsyncAPI document"`
	Data            json.RawMessage `json:"data" jsonschema_description:"the payload: the type's schema"`
	// The actor (extension attributes), absent for work the system did.
	Actor   string `json:"tsekhactor,omitempty" jsonschema_description:"the user who caused the event; absent for work the system did"`
	ActorID int64  `json:"tsekhactorid,omitempty" jsonschema_description:"that user's id"`
	// Where the event came from (extension attributes), each absent when
	// the event has none.
	CausedBy      string `json:"causedby,omitempty" jsonschema:"pattern=^[0-9]+$" jsonschema_description:"the id of the event whose handling wrote this one; absent for an event a request, a command or the scheduler wrote"`
	CorrelationID string `json:"correlationid,omitempty" jsonschema:"pattern=^[A-Za-z0-9._-]{1,128}$" jsonschema_description:"the request's X-Request-Id (or a command's id) that set the event going, the same for every event that followed from it"`
	// The distributed-tracing extension: the W3C trace context of the span
	// that wrote the event.
	Traceparent string `json:"traceparent,omitempty" jsonschema:"pattern=^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$" jsonschema_description:"W3C traceparent of the span that wrote the event (the distributed-tracing extension)"`
	Tracestate  string `json:"tracestate,omitempty" jsonschema_description:"W3C tracestate beside traceparent"`
}

// CloudEvent encodes ev as a CloudEvents 1.0 JSON document; dataSchema, when
// not empty, is its dataschema attribute.
func CloudEvent(ev events.Event, source, dataSchema string) ([]byte, error) {
	env := Envelope{
		SpecVersion:     "1.0",
		ID:              strconv.FormatInt(ev.ID, 10),
		Source:          source,
		Type:            ev.Type,
		Subject:         ev.AggregateType + "/" + strconv.FormatInt(ev.AggregateID, 10),
		Time:            ev.CreatedAt.UTC(),
		DataContentType: "application/json",
		DataSchema:      dataSchema,
		Data:            events.InDeclaredOrder(ev.Type, ev.Payload),
	}
	if len(env.Data) == 0 {
		env.Data = json.RawMessage("{}")
	}
	if ev.Actor != nil {
		env.Actor, env.ActorID = ev.Actor.Name, ev.Actor.ID
	}
	if ev.CausedBy != nil {
		env.CausedBy = strconv.FormatInt(*ev.CausedBy, 10)
	}
	env.CorrelationID, env.Traceparent, env.Tracestate = ev.CorrelationID, ev.Traceparent, ev.Tracestate
	return json.Marshal(env)
}
