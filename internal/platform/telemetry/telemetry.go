// Package telemetry sets up OpenTelemetry tracing for tsekh: spans of HTTP
// requests, of events written and of their handling by subscribers, exported
// over OTLP/HTTP. It is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; the
// SDK reads the other standard OTEL_* variables itself (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_BSP_*, …).
//
// Off, the code that would make spans asks Enabled first and makes none, so
// that tracing costs an event nothing but the W3C trace context it stores
// when a client sent one.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of tsekh's spans.
const ScopeName = "github.com/tsekh/tsekh"

// DefaultServiceName is service.name unless OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const DefaultServiceName = "tsekh"

// Propagator reads and writes the W3C trace context (traceparent,
// tracestate) of HTTP requests, shop callbacks and stored events.
var Propagator = propagation.TraceContext{}

var enabled atomic.Bool

// Enabled tells whether spans are recorded (a provider is installed).
func Enabled() bool { return enabled.Load() }

// Tracer is tsekh's tracer, from the global provider.
func Tracer() trace.Tracer { return otel.Tracer(ScopeName) }

// Setup installs a tracer provider exporting over OTLP/HTTP when
// OTEL_EXPORTER_OTLP_ENDPOINT is set (and OTEL_SDK_DISABLED is not "true").
// The returned shutdown flushes the spans not yet exported and stops the
// provider; with tracing off it does nothing.
func Setup(ctx context.Context, getenv func(string) string) (shutdown func(context.Context) error, err error) {
	none := func(context.Context) error { return nil }
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" || strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return none, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return none, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", DefaultServiceName)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return none, fmt.Errorf("telemetry: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Use(tp)
	return func(ctx context.Context) error {
		enabled.Store(false)
		return tp.Shutdown(ctx)
	}, nil
}

// Use installs tp as the global tracer provider and turns span recording on
// (tests install one with an in-memory exporter).
func Use(tp trace.TracerProvider) {
	otel.SetTracerProvider(tp)
	enabled.Store(true)
}

// Traceparent is the W3C traceparent of sc ("00-<trace id>-<span id>-<flags>"),
// or "" when sc is not valid.
func Traceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
}

// SpanContextOf reads a stored W3C trace context; the result is not valid
// when traceparent is not one.
func SpanContextOf(traceparent, tracestate string) trace.SpanContext {
	if traceparent == "" {
		return trace.SpanContext{}
	}
	c := propagation.MapCarrier{"traceparent": traceparent}
	if tracestate != "" {
		c["tracestate"] = tracestate
	}
	return trace.SpanContextFromContext(Propagator.Extract(context.Background(), c))
}

// TraceID is the trace id of a W3C traceparent, or "" when it is not one.
func TraceID(traceparent string) string {
	sc := SpanContextOf(traceparent, "")
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}
