package api

import (
	"strconv"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/telemetry"
)

// traceRequests gives every request its correlation id (its X-Request-Id,
// which requestID has set) and its W3C trace context: a server span, the
// child of the client's traceparent when it sent one, when tracing is on;
// the client's trace context alone when it is off. The events the request
// writes carry both (see events.Add).
func traceRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ctx := events.WithCorrelation(req.Context(), c.Response().Header().Get(echo.HeaderXRequestID))
		if req.Header.Get("traceparent") != "" {
			ctx = telemetry.Propagator.Extract(ctx, propagation.HeaderCarrier(req.Header))
		}
		if !telemetry.Enabled() {
			c.SetRequest(req.WithContext(ctx))
			return next(c)
		}
		// The span is named after the route, not the path, so that its
		// names stay few; a request no route matched is named by its method.
		route, name := c.Path(), methodOf(c)
		if route != "" {
			name += " " + route
		}
		ctx, span := telemetry.Tracer().Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", methodOf(c)), attribute.String("http.route", route),
				attribute.String("url.path", req.URL.Path), attribute.String("http.request.id", c.Response().Header().Get(echo.HeaderXRequestID))))
		defer span.End()
		c.SetRequest(req.WithContext(ctx))
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		status := c.Response().Status
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, strconv.Itoa(status))
		}
		return nil
	}
}
