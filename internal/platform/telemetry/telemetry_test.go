package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/tsekh/tsekh/internal/platform/telemetry"
)

// Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; on, the spans reach the
// collector over OTLP/HTTP, at the latest when the provider shuts down.
func TestSetup_ExportsOnlyWithAnEndpoint(t *testing.T) {
	var posts atomic.Int64
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" {
			posts.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	ctx := context.Background()

	shutdown, err := telemetry.Setup(ctx, func(string) string { return "" })
	require.NoError(t, err)
	require.False(t, telemetry.Enabled(), "off without an endpoint")
	require.NoError(t, shutdown(ctx))

	vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_SDK_DISABLED": "true"}
	shutdown, err = telemetry.Setup(ctx, func(k string) string { return vars[k] })
	require.NoError(t, err)
	require.False(t, telemetry.Enabled(), "OTEL_SDK_DISABLED=true turns it off")
	require.NoError(t, shutdown(ctx))

	// The SDK reads the process's environment itself.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "tsekh-test")
	shutdown, err = telemetry.Setup(ctx, func(k string) string {
		if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			return collector.URL
		}
		return ""
	})
	require.NoError(t, err)
	require.True(t, telemetry.Enabled())
	_, span := telemetry.Tracer().Start(ctx, "test")
	require.True(t, span.SpanContext().IsValid())
	span.End()
	require.NoError(t, shutdown(ctx))
	require.False(t, telemetry.Enabled())
	require.Positive(t, posts.Load(), "the span was flushed to the collector on shutdown")
}

func TestTraceparent_RoundTrip(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	sc := telemetry.SpanContextOf(tp, "shop=1")
	require.True(t, sc.IsValid())
	require.True(t, sc.IsRemote())
	require.Equal(t, "shop=1", sc.TraceState().String())
	require.Equal(t, tp, telemetry.Traceparent(sc))
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", telemetry.TraceID(tp))
	for _, bad := range []string{"", "00-0000-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "garbage"} {
		require.False(t, telemetry.SpanContextOf(bad, "").IsValid(), bad)
		require.Empty(t, telemetry.TraceID(bad), bad)
	}
	require.Empty(t, telemetry.Traceparent(trace.SpanContext{}))
}
