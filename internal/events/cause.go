package events

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/tsekh/tsekh/internal/platform/telemetry"
)

// MessagingSystem is the messaging.system attribute of the outbox's spans.
const MessagingSystem = "tsekh"

type correlationKey struct{}

type causeKey struct{}

// WithCorrelation returns ctx carrying the correlation id of the work it
// serves: the HTTP request's X-Request-Id, or a command's own id. Events
// added under ctx carry it, and so do the events their subscribers write.
func WithCorrelation(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, correlationKey{}, id)
}

// CorrelationFrom returns the correlation id events added under ctx get:
// that of the event being handled (see WithCause), else the one ctx
// carries, else "".
func CorrelationFrom(ctx context.Context) string {
	if ev, ok := CauseFrom(ctx); ok {
		return ev.CorrelationID
	}
	id, _ := ctx.Value(correlationKey{}).(string)
	return id
}

// WithCause returns ctx for the handling of ev: events added under it name
// ev as their cause (caused_by), carry its correlation id, and, when no span
// is recording, its trace context. The dispatcher gives every subscriber
// such a ctx.
func WithCause(ctx context.Context, ev *Event) context.Context {
	return context.WithValue(ctx, causeKey{}, ev)
}

// CauseFrom returns the event whose handling ctx serves, if any.
func CauseFrom(ctx context.Context) (*Event, bool) {
	ev, ok := ctx.Value(causeKey{}).(*Event)
	return ev, ok && ev != nil
}

// origin is what an event added under a ctx records of where it came from.
type origin struct {
	causedBy                *int64
	correlation             *string
	traceparent, tracestate *string
}

// originOf reads ctx's cause, correlation id and trace context. The trace
// context is the current span's (the create span when tracing is on, else
// the one a client sent), or else the cause's own, so that a trace goes on
// through subscribers with tracing off.
func originOf(ctx context.Context) origin {
	var o origin
	corr, _ := ctx.Value(correlationKey{}).(string)
	cause, hasCause := CauseFrom(ctx)
	if hasCause {
		o.causedBy = &cause.ID
		corr = cause.CorrelationID
	}
	if corr != "" {
		o.correlation = &corr
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		tp, ts := telemetry.Traceparent(sc), sc.TraceState().String()
		o.traceparent = &tp
		if ts != "" {
			o.tracestate = &ts
		}
	} else if hasCause && cause.Traceparent != "" {
		o.traceparent = &cause.Traceparent
		if cause.Tracestate != "" {
			o.tracestate = &cause.Tracestate
		}
	}
	return o
}

// startCreate starts the "create" span of an event added under ctx
// (OpenTelemetry's messaging conventions: a producer span per message). The
// event's id is not known yet (on PostgreSQL it is taken at the commit), so
// the span carries no messaging.message.id; the process spans do. Without
// tracing it makes no span and returns ctx and nil.
func startCreate(ctx context.Context, eventType string) (context.Context, trace.Span) {
	if !telemetry.Enabled() {
		return ctx, nil
	}
	return telemetry.Tracer().Start(ctx, "create "+eventType, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("messaging.system", MessagingSystem),
			attribute.String("messaging.operation.type", "create"),
			attribute.String("messaging.operation.name", "create"),
			attribute.String("messaging.destination.name", eventType)))
}

// startProcess starts the "process" span of a subscriber's handling of ev
// (kind consumer), the child of the trace context stored with ev and linked
// to it, so that the request that wrote the event and its handling are one
// trace. Without tracing it makes no span and returns ctx and nil.
func startProcess(ctx context.Context, s *Subscriber, ev *Event) (context.Context, trace.Span) {
	if !telemetry.Enabled() {
		return ctx, nil
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String("messaging.system", MessagingSystem),
			attribute.String("messaging.operation.type", "process"),
			attribute.String("messaging.operation.name", "process"),
			attribute.String("messaging.destination.name", ev.Type),
			attribute.String("messaging.consumer.group.name", s.Name),
			attribute.String("messaging.message.id", strconv.FormatInt(ev.ID, 10)))}
	if sc := telemetry.SpanContextOf(ev.Traceparent, ev.Tracestate); sc.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	return telemetry.Tracer().Start(ctx, "process "+ev.Type, opts...)
}

// endSpan ends span, if any, recording err.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
