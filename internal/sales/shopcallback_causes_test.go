package sales_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/sales"
)

// With tracing off the callback sends the trace context stored with the
// event, and its body names the event's cause and correlation id.
func TestShopCallback_CarriesCauseAndTrace(t *testing.T) {
	t.Parallel()
	type heard struct {
		body                    map[string]any
		traceparent, tracestate string
	}
	got := make(chan heard, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var h heard
		_ = json.Unmarshal(raw, &h.body)
		h.traceparent, h.tracestate = r.Header.Get("traceparent"), r.Header.Get("tracestate")
		got <- h
	}))
	defer srv.Close()
	sub := sales.ShopCallback(srv.URL, "cb-secret", nil)
	syncID := sales.SyncIDPrefix + "A-1"
	payload, err := json.Marshal(contracts.OrderStatusChangedPayload{OrderID: 7, Status: "in_production", PreviousStatus: "received", SyncID: &syncID})
	require.NoError(t, err)
	cause := int64(41)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ev := events.Event{ID: 42, Type: contracts.OrderStatusChanged.Name(), AggregateType: "sales_orders", AggregateID: 7, Payload: payload,
		CreatedAt: time.Now(), CausedBy: &cause, CorrelationID: "req-1", Traceparent: tp, Tracestate: "shop=1"}
	require.NoError(t, sub.Handle(context.Background(), ev))
	h := <-got
	require.Equal(t, 42.0, h.body["event_id"])
	require.Equal(t, 41.0, h.body["caused_by"])
	require.Equal(t, "req-1", h.body["correlation_id"])
	require.Equal(t, tp, h.traceparent)
	require.Equal(t, "shop=1", h.tracestate)

	// A request's event: no cause, and no trace context when it had none.
	ev.ID, ev.CausedBy, ev.CorrelationID, ev.Traceparent, ev.Tracestate = 43, nil, "", "", ""
	require.NoError(t, sub.Handle(context.Background(), ev))
	h = <-got
	require.NotContains(t, h.body, "caused_by")
	require.NotContains(t, h.body, "correlation_id")
	require.Empty(t, h.traceparent)
}
