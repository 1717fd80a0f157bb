package relay_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/platform/telemetry"
	"github.com/tsekh/tsekh/internal/relay"
)

// An event written under a request's correlation id and trace context, and
// the event a local subscriber writes when it handles it, reach NATS with
// their cause, correlation id and trace context as CloudEvents extension
// attributes, and the trace context in the message's headers. (Tracing is
// off in this package: the trace context is the client's, stored with the
// first event and inherited by the second.)
func TestRelay_CloudEventsCarryCauseAndTrace(t *testing.T) {
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const tracestate = "shop=1"
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		r, js, stream := testStream(t)
		reg := events.NewRegistry()
		follow := events.Subscriber{Name: "test.follow", Types: events.Names(contracts.OrderReceived),
			HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
				return events.Add(ctx, tx, contracts.ProdOrderLaunched.New(5, contracts.ProdOrderLaunchedPayload{ProdOrderID: 5,
					Items: []int64{1}, Route: "Корпус ЛДСП (типовой)", PartsCount: 1, OpsCount: 1, ETA: "2026-11-20"}))
			}}
		require.NoError(t, reg.Register(
			events.ModuleFunc(func(reg *events.Registrar) { reg.Subscribe(r.Subscriber(), follow) }),
			events.ModuleFunc(func(reg *events.Registrar) { reg.Declare(contracts.OrderReceived, contracts.ProdOrderLaunched) }),
		))
		disp := events.NewDispatcher(db, reg, events.DispatcherOptions{Timeout: 10 * time.Second})

		// As the HTTP API's middleware sets them for a request.
		rctx := events.WithCorrelation(ctx, "req-"+string(database.DialectOf(db)))
		rctx = telemetry.Propagator.Extract(rctx, propagation.MapCarrier{"traceparent": traceparent, "tracestate": tracestate})
		var first int64
		require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
			if err := events.Add(rctx, tx, contracts.OrderReceived.New(22, contracts.OrderReceivedPayload{OrderID: 22, Lines: 1, Source: "manual",
				Items: []contracts.OrderReceivedItem{{ItemID: 1, SKU: "SHK-KUPE-1600", Qty: 1}}})); err != nil {
				return err
			}
			var err error
			first, err = dbtest.LastEventID(tx)
			return err
		}))
		deadline := time.Now().Add(20 * time.Second)
		for {
			st, err := disp.RunOnce(ctx)
			require.NoError(t, err)
			if st.Events == 0 && !st.Lagging {
				break
			}
			require.True(t, time.Now().Before(deadline), "the dispatcher did not settle")
		}

		s, err := js.Stream(ctx, stream)
		require.NoError(t, err)
		byType := map[string]*jetstream.RawStreamMsg{}
		for seq := uint64(1); seq <= 2; seq++ {
			m, err := s.GetMsg(ctx, seq)
			require.NoError(t, err, "both events are published")
			byType[m.Subject] = m
		}
		ce := func(m *jetstream.RawStreamMsg) map[string]any {
			t.Helper()
			require.NotNil(t, m)
			var out map[string]any
			require.NoError(t, json.Unmarshal(m.Data, &out))
			return out
		}
		received, launched := byType[r.Subject("order.received")], byType[r.Subject("prod_order.launched")]
		a, b := ce(received), ce(launched)
		require.NotContains(t, a, "causedby", "a request's event has no cause")
		require.Equal(t, strconv.FormatInt(first, 10), b["causedby"], "the subscriber's event names the event it followed from")
		for _, x := range []map[string]any{a, b} {
			require.Equal(t, "req-"+string(database.DialectOf(db)), x["correlationid"])
			require.Equal(t, traceparent, x["traceparent"])
			require.Equal(t, tracestate, x["tracestate"])
		}
		for _, m := range []*jetstream.RawStreamMsg{received, launched} {
			require.Equal(t, traceparent, m.Header.Get("traceparent"))
			require.Equal(t, tracestate, m.Header.Get("tracestate"))
		}
	})
}

func TestCloudEvent_CauseAndTraceAttributes(t *testing.T) {
	t.Parallel()
	cause := int64(131)
	b, err := relay.CloudEvent(events.Event{ID: 132, Type: "order.status_changed", AggregateType: "sales_orders", AggregateID: 22,
		Payload: json.RawMessage(`{"order_id":22}`), CreatedAt: time.Date(2026, 11, 13, 17, 20, 4, 0, time.UTC), CausedBy: &cause,
		CorrelationID: "NZ3QWRKPM5ZJ7DO7", Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Tracestate: "shop=1"}, "tsekh", "")
	require.NoError(t, err)
	require.JSONEq(t, `{"specversion":"1.0","id":"132","source":"tsekh","type":"order.status_changed","subject":"sales_orders/22",
"time":"2026-11-13T17:20:04Z","datacontenttype":"application/json","data":{"order_id":22},"causedby":"131","correlationid":"NZ3QWRKPM5ZJ7DO7",
"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"shop=1"}`, string(b))
}
