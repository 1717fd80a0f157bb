package api_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/telemetry"
	"github.com/tsekh/tsekh/internal/sales"
)

// spans is the in-memory exporter of the package's tests: tracing is on for
// every test of the package once a test has asked for it (the provider is
// global), and each test reads the spans of its own trace.
var spans = sync.OnceValue(func() *tracetest.InMemoryExporter {
	exp := tracetest.NewInMemoryExporter()
	telemetry.Use(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	return exp
})

// spansOf returns the ended spans of the trace.
func spansOf(traceID string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans().GetSpans() {
		if s.SpanContext.TraceID().String() == traceID {
			out = append(out, s)
		}
	}
	return out
}

// tracedCallback is the shop's end of SHOP_CALLBACK_URL, keeping each
// callback's body and W3C trace headers.
type tracedCallback struct {
	Body        sales.ShopCallbackBody
	Traceparent string
	Tracestate  string
}

func newTracedShop(t *testing.T) (string, func(shopID string) []tracedCallback) {
	t.Helper()
	var (
		mu    sync.Mutex
		heard []tracedCallback
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if err := sales.VerifySignature(shopSecret, r.Header.Get(sales.HeaderShopTimestamp), r.Header.Get(sales.HeaderShopSignature), raw, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var c tracedCallback
		if err := jsonUnmarshal(raw, &c.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.Traceparent, c.Tracestate = r.Header.Get("traceparent"), r.Header.Get("tracestate")
		mu.Lock()
		heard = append(heard, c)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func(shopID string) []tracedCallback {
		mu.Lock()
		defer mu.Unlock()
		var out []tracedCallback
		for _, c := range heard {
			if c.Body.ShopOrderID == shopID {
				out = append(out, c)
			}
		}
		return out
	}
}

type causedEvent struct {
	ID            int64
	Type          string
	CausedBy      *int64  `json:"caused_by"`
	CorrelationID *string `json:"correlation_id"`
	TraceID       *string `json:"trace_id"`
	Traceparent   *string `json:"traceparent"`
	Tracestate    *string `json:"tracestate"`
}

func causedJournalOf(t *testing.T, env *apptest.Env, query string) []causedEvent {
	t.Helper()
	r := env.Admin(http.MethodGet, "/api/v1/events?"+query, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var l struct{ Items []causedEvent }
	r.JSON(t, &l)
	return l.Items
}

// Causation across two hops, with the trace: a request launches a
// production order (prod_order.launched, caused by no event, correlated with
// the request's id, in the request's trace); sales.production, handling the
// launch, moves the shop's order (order.status_changed, caused by the launch,
// same correlation); the shop's callback carries the event, its cause, the
// correlation and a traceparent of the same trace as the request's span,
// which continues the client's.
func TestCauses_RequestLaunchStatusCallback(t *testing.T) {
	t.Parallel()
	spans() // tracing on
	url, heardOf := newTracedShop(t)
	eachWith(t, func(c *config.Config) { c.ShopWebhookSecret, c.ShopCallbackURL = shopSecret, url }, func(t *testing.T, env *apptest.Env) {
		shopID := "trace-" + string(env.Dialect)
		r := deliver(env, shopBody(shopID), time.Now())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		orderID := orderIDOf(t, r)
		env.Dispatch()
		var o struct{ Items []struct{ ID int64 } }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/orders/%d", orderID), nil).JSON(t, &o)

		// The client's own trace and request id.
		clientTrace := "4bf92f3577b34da6a3ce929d0e0e4736"
		if env.Dialect == database.SQLite {
			clientTrace = "5ce03a4688c45eb7b4df03ae1f1f5847"
		}
		const clientSpan = "00f067aa0ba902b7"
		reqID := "launch-" + string(env.Dialect)
		r = env.Do(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": []int64{o.Items[0].ID}}, apptest.AdminToken,
			"X-Request-Id", reqID, "traceparent", "00-"+clientTrace+"-"+clientSpan+"-01", "tracestate", "shop=1")
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		require.Equal(t, reqID, r.Header.Get("X-Request-Id"))
		var po struct{ ID int64 }
		r.JSON(t, &po)
		env.Dispatch()

		launched := causedJournalOf(t, env, fmt.Sprintf("type=prod_order.launched&aggregate_type=plan_prod_orders&aggregate_id=%d", po.ID))
		require.Len(t, launched, 1)
		l := launched[0]
		require.Nil(t, l.CausedBy, "a request's event follows from no event")
		require.NotNil(t, l.CorrelationID)
		require.Equal(t, reqID, *l.CorrelationID)
		require.NotNil(t, l.TraceID)
		require.Equal(t, clientTrace, *l.TraceID, "the request's span continues the client's trace")
		require.Regexp(t, "^00-"+clientTrace+"-[0-9a-f]{16}-01$", *l.Traceparent)
		require.NotContains(t, *l.Traceparent, clientSpan, "the event's span is tsekh's, not the client's")

		// The hop: sales.production's order.status_changed follows from the launch.
		changed := causedJournalOf(t, env, fmt.Sprintf("type=order.status_changed&aggregate_type=sales_orders&aggregate_id=%d", orderID))
		require.NotEmpty(t, changed)
		c := changed[0] // newest
		require.NotNil(t, c.CausedBy, "%+v", c)
		require.Equal(t, l.ID, *c.CausedBy)
		require.Equal(t, reqID, *c.CorrelationID, "a subscriber's event inherits its cause's correlation")
		require.Equal(t, clientTrace, *c.TraceID)
		one := env.Admin(http.MethodGet, "/api/v1/events/"+strconv.FormatInt(c.ID, 10), nil)
		require.Equal(t, http.StatusOK, one.Status)
		var got causedEvent
		one.JSON(t, &got)
		require.Equal(t, c, got, "GET /events/{id} says the same as the list")

		// The journal's filters find them.
		ids := func(evs []causedEvent) []int64 {
			out := []int64{}
			for _, e := range evs {
				out = append(out, e.ID)
			}
			return out
		}
		byCorr := causedJournalOf(t, env, "correlation_id="+reqID)
		require.Contains(t, ids(byCorr), l.ID)
		require.Contains(t, ids(byCorr), c.ID)
		for _, e := range byCorr {
			require.Equal(t, reqID, *e.CorrelationID)
		}
		byCause := causedJournalOf(t, env, fmt.Sprintf("caused_by=%d", l.ID))
		require.Contains(t, ids(byCause), c.ID)
		for _, e := range byCause {
			require.Equal(t, l.ID, *e.CausedBy)
		}
		require.Empty(t, causedJournalOf(t, env, fmt.Sprintf("caused_by=%d", c.ID)), "the status change caused nothing")
		require.Empty(t, causedJournalOf(t, env, "correlation_id=nobody-sent-this"))

		// The shop hears of it with the event, its cause and its correlation,
		// in the request's trace.
		var cb *tracedCallback
		for _, h := range heardOf(shopID) {
			if h.Body.EventID == c.ID {
				cb = &h
			}
		}
		require.NotNil(t, cb, "the shop heard of event %d: %+v", c.ID, heardOf(shopID))
		require.NotNil(t, cb.Body.CausedBy)
		require.Equal(t, l.ID, *cb.Body.CausedBy)
		require.NotNil(t, cb.Body.CorrelationID)
		require.Equal(t, reqID, *cb.Body.CorrelationID)
		require.Regexp(t, "^00-"+clientTrace+"-[0-9a-f]{16}-01$", cb.Traceparent, "the callback is in the request's trace")
		require.Equal(t, "shop=1", cb.Tracestate)

		// The spans: the request's server span, the child of the client's;
		// the launch's create span; sales.production's process span, linked
		// to the launch's stored context; the callback's process span.
		var server, create, process, callback *tracetest.SpanStub
		all := spansOf(clientTrace)
		for i, s := range all {
			switch {
			case s.SpanKind == trace.SpanKindServer:
				server = &all[i]
			case s.Name == "create prod_order.launched":
				create = &all[i]
			case s.Name == "process prod_order.launched" && attr(s, "messaging.consumer.group.name") == sales.SubscriberProduction:
				process = &all[i]
			case s.Name == "process order.status_changed" && attr(s, "messaging.consumer.group.name") == sales.SubscriberShopCallback &&
				attr(s, "messaging.message.id") == strconv.FormatInt(c.ID, 10):
				callback = &all[i]
			}
		}
		require.NotNil(t, server, "the request's server span")
		require.Equal(t, clientSpan, server.Parent.SpanID().String())
		require.Equal(t, "POST /api/v1/production-orders", server.Name)
		require.NotNil(t, create)
		require.Equal(t, trace.SpanKindProducer, create.SpanKind)
		require.Equal(t, "create", attr(*create, "messaging.operation.type"))
		require.Equal(t, "prod_order.launched", attr(*create, "messaging.destination.name"))
		require.Equal(t, "00-"+clientTrace+"-"+create.SpanContext.SpanID().String()+"-01", *l.Traceparent, "the event stores its create span's context")
		require.NotNil(t, process)
		require.Equal(t, trace.SpanKindConsumer, process.SpanKind)
		require.Equal(t, "process", attr(*process, "messaging.operation.type"))
		require.Equal(t, strconv.FormatInt(l.ID, 10), attr(*process, "messaging.message.id"))
		require.Len(t, process.Links, 1)
		require.Equal(t, create.SpanContext.SpanID(), process.Links[0].SpanContext.SpanID(), "linked to the event's stored context")
		require.NotNil(t, callback)
		require.Contains(t, cb.Traceparent, callback.SpanContext.SpanID().String(), "the callback sends its process span's context")
	})
}

func attr(s tracetest.SpanStub, key string) string {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

// The journal's cause and correlation filters refuse what cannot be one.
func TestCauses_FilterProblems(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		for _, c := range []struct{ query, field string }{
			{"caused_by=0", "caused_by"},
			{"caused_by=-3", "caused_by"},
			{"caused_by=abc", "caused_by"},
			{"caused_by=999999", "caused_by"}, // no such event
			{"correlation_id=has%20space", "correlation_id"},
			{"correlation_id=%D0%B7%D0%B0%D0%BF%D1%80%D0%BE%D1%81", "correlation_id"},
			{"correlation_id=" + string(make129()), "correlation_id"},
		} {
			requireProblem(t, env.Admin(http.MethodGet, "/api/v1/events?"+c.query, nil), http.StatusUnprocessableEntity, c.field)
		}
		// An order written by a request: its event carries the request's id.
		r := env.Do(http.MethodPost, "/api/v1/orders", validOrder, apptest.AdminToken, "X-Request-Id", "order-req.1_a")
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		evs := causedJournalOf(t, env, "correlation_id=order-req.1_a")
		require.Len(t, evs, 1)
		require.Equal(t, "order.received", evs[0].Type)
		require.Nil(t, evs[0].CausedBy)
		require.Empty(t, causedJournalOf(t, env, fmt.Sprintf("caused_by=%d", evs[0].ID)))
	})
}

func make129() []byte {
	b := make([]byte, 129)
	for i := range b {
		b[i] = 'a'
	}
	return b
}
