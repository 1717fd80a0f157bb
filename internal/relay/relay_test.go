package relay_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/relay"
)

// natsURL is the NATS server of the tests (`nats-server -js`, started by .ci/run).
func natsURL() string {
	if u := os.Getenv("TEST_NATS_URL"); u != "" {
		return u
	}
	return "nats://127.0.0.1:4222"
}

// testStream returns a relay on a stream and subjects of its own, removed
// when the test ends, and a JetStream handle to read them.
func testStream(t *testing.T) (*relay.Relay, jetstream.JetStream, string) {
	t.Helper()
	r, js, stream, _ := testStreamWithConn(t)
	return r, js, stream
}

// published counts, per Nats-Msg-Id, every message published on a relay's
// subjects. It listens with a plain NATS subscription, which sees each
// publish whether or not JetStream keeps it, so a message sent twice counts
// twice even when the stream drops the repeat by its id.
type published struct {
	mu   sync.Mutex
	byID map[string]int
}

func listenPublished(t *testing.T, nc *nats.Conn, subjects string) *published {
	t.Helper()
	p := &published{byID: map[string]int{}}
	sub, err := nc.Subscribe(subjects, func(m *nats.Msg) {
		p.mu.Lock()
		p.byID[m.Header.Get("Nats-Msg-Id")]++
		p.mu.Unlock()
	})
	require.NoError(t, err)
	require.NoError(t, nc.Flush(), "the subscription is in place before anything is published")
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return p
}

// counts returns the messages seen so far, once the server has passed on
// everything published before the call.
func (p *published) counts(t *testing.T, nc *nats.Conn) map[string]int {
	t.Helper()
	require.NoError(t, nc.Flush())
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.byID))
	for k, v := range p.byID {
		out[k] = v
	}
	return out
}

// testStreamWithConn is testStream that also returns its NATS connection.
func testStreamWithConn(t *testing.T) (*relay.Relay, jetstream.JetStream, string, *nats.Conn) {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	suffix := hex.EncodeToString(b)
	stream := "TSEKH_EVENTS_T" + strings.ToUpper(suffix)
	r := relay.New(relay.Options{URL: natsURL(), Stream: stream, SubjectPrefix: "tsekh_t" + suffix + ".events", Duplicates: time.Hour,
		DataSchema: func(eventType string) string {
			return "https://tsekh.example.com/asyncapi.json#/components/schemas/" + eventType
		}})
	t.Cleanup(r.Close)
	nc, err := nats.Connect(natsURL())
	require.NoError(t, err, "the NATS server (nats-server -js) must run at %s", natsURL())
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	t.Cleanup(func() { _ = js.DeleteStream(context.Background(), stream) })
	return r, js, stream, nc
}

func TestRelay_PublishesCloudEventsOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		r, js, stream, nc := testStreamWithConn(t)
		seen := listenPublished(t, nc, r.Subject(">"))
		reg := events.NewRegistry()
		// The relay subscribes to every type whoever declares them, and
		// wherever it stands in the wiring.
		require.NoError(t, reg.Register(
			events.ModuleFunc(func(reg *events.Registrar) { reg.Subscribe(r.Subscriber()) }),
			events.ModuleFunc(func(reg *events.Registrar) { reg.Declare(contracts.OrderReceived, contracts.ProdOrderLaunched) }),
		))
		require.Equal(t, []string{"order.received", "prod_order.launched"}, reg.Subscriber(relay.SubscriberName).Types)
		disp := events.NewDispatcher(db, reg, events.DispatcherOptions{Timeout: 10 * time.Second})

		var ids []int64
		syncID := "shop-7826d8468b3d"
		require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
			actx := events.WithActor(ctx, events.Actor{ID: 1, Name: "Администратор"})
			if err := events.Add(actx, tx, contracts.OrderReceived.New(22, contracts.OrderReceivedPayload{OrderID: 22, Lines: 1, Source: "shop",
				SyncID: &syncID, Items: []contracts.OrderReceivedItem{{ItemID: 1, SKU: "SHK-KUPE-1600", Qty: 1}}})); err != nil {
				return err
			}
			id, err := dbtest.LastEventID(tx)
			ids = append(ids, id)
			if err != nil {
				return err
			}
			if err := events.Add(ctx, tx, contracts.ProdOrderLaunched.New(5, contracts.ProdOrderLaunchedPayload{ProdOrderID: 5, Items: []int64{1},
				Route: "Корпус ЛДСП (типовой)", PartsCount: 12, OpsCount: 40, ETA: "2026-11-20"})); err != nil {
				return err
			}
			id, err = dbtest.LastEventID(tx)
			ids = append(ids, id)
			return err
		}))
		// Until every delivery is done: a publish that failed (its ack
		// did not come in time on a busy machine) is tried again when due.
		deadline := time.Now().Add(time.Minute)
		failed := 0
		for {
			st, err := disp.RunOnce(ctx)
			require.NoError(t, err)
			failed += st.Failed
			if st.Events == 0 && !st.Lagging && !st.RetryWaiting {
				break
			}
			require.True(t, time.Now().Before(deadline), "the dispatcher did not settle")
			if st.Events == 0 && st.RetryWaiting {
				time.Sleep(max(st.NextRetry, 10*time.Millisecond))
			}
		}

		s, err := js.Stream(ctx, stream)
		require.NoError(t, err)
		info, err := s.Info(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 2, info.State.Msgs)
		// What was sent, not what the stream kept: each event went out once,
		// unless a publish failed and was tried again (the stream kept it
		// once all the same, by its Nats-Msg-Id).
		counts := seen.counts(t, nc)
		if failed == 0 {
			require.Equal(t, map[string]int{strconv.FormatInt(ids[0], 10): 1, strconv.FormatInt(ids[1], 10): 1}, counts,
				"the dispatcher published each event once")
		} else {
			t.Logf("%d publishes failed and were tried again: %v", failed, counts)
			require.Len(t, counts, 2)
		}

		// Different objects are dispatched in parallel, in no set order.
		byID := map[string]*jetstream.RawStreamMsg{}
		for seq := uint64(1); seq <= 2; seq++ {
			m, err := s.GetMsg(ctx, seq)
			require.NoError(t, err)
			byID[m.Header.Get("Nats-Msg-Id")] = m
		}
		raw := byID[strconv.FormatInt(ids[0], 10)]
		require.NotNil(t, raw, "message id = event id")
		require.Equal(t, r.Subject("order.received"), raw.Subject)
		require.Equal(t, strconv.FormatInt(ids[0], 10), raw.Header.Get("Nats-Msg-Id"))
		var ce map[string]any
		require.NoError(t, json.Unmarshal(raw.Data, &ce))
		require.Equal(t, "1.0", ce["specversion"])
		require.Equal(t, strconv.FormatInt(ids[0], 10), ce["id"])
		require.Equal(t, "tsekh", ce["source"])
		require.Equal(t, "order.received", ce["type"])
		require.Equal(t, "sales_orders/22", ce["subject"])
		require.Equal(t, "application/json", ce["datacontenttype"])
		require.Equal(t, "Администратор", ce["tsekhactor"])
		require.Equal(t, "https://tsekh.example.com/asyncapi.json#/components/schemas/order.received", ce["dataschema"])
		require.Equal(t, map[string]any{"order_id": 22.0, "lines": 1.0, "source": "shop", "sync_id": syncID,
			"items": []any{map[string]any{"item_id": 1.0, "sku": "SHK-KUPE-1600", "qty": 1.0}}}, ce["data"])
		require.True(t, strings.HasPrefix(string(raw.Data), `{"specversion":"1.0"`), "%s", raw.Data)
		require.Contains(t, string(raw.Data), `"data":{"order_id":22,"lines":1,"source":"shop","sync_id":"shop-7826d8468b3d","items":[`,
			"the payload's keys in their declared order")
		created, err := time.Parse(time.RFC3339Nano, ce["time"].(string))
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), created, time.Minute)

		raw = byID[strconv.FormatInt(ids[1], 10)]
		require.NotNil(t, raw)
		require.Equal(t, r.Subject("prod_order.launched"), raw.Subject)
		ce = nil
		require.NoError(t, json.Unmarshal(raw.Data, &ce))
		require.Equal(t, "plan_prod_orders/5", ce["subject"])
		require.NotContains(t, ce, "tsekhactor", "the system has no actor")

		// At least once means the same event may be delivered again (a crash
		// between publishing and recording): JetStream drops the repeat.
		evs := []events.Event{{ID: ids[0], Type: "order.received", AggregateType: "sales_orders", AggregateID: 22,
			Payload: json.RawMessage(`{"order_id":22}`), CreatedAt: created}}
		dup, err := r.Publish(ctx, evs[0])
		require.NoError(t, err)
		require.True(t, dup)
		sub := r.Subscriber()
		require.NoError(t, sub.Handle(ctx, evs[0]))
		info, err = s.Info(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 2, info.State.Msgs, "a redelivered event is not published twice")
		require.Equal(t, 3, seen.counts(t, nc)[strconv.FormatInt(ids[0], 10)],
			"the two redeliveries were sent, and the stream kept neither")
	})
}

func TestRelay_UnreachableServerFailsTheDelivery(t *testing.T) {
	t.Parallel()
	r := relay.New(relay.Options{URL: "nats://127.0.0.1:1"})
	t.Cleanup(r.Close)
	_, err := r.Publish(context.Background(), events.Event{ID: 1, Type: "order.received", AggregateType: "sales_orders", AggregateID: 1})
	require.Error(t, err, "an error makes the dispatcher retry the delivery later")
}

func TestCloudEvent_Envelope(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 13, 17, 20, 4, 0, time.UTC)
	b, err := relay.CloudEvent(events.Event{ID: 132, Type: "order.received", AggregateType: "sales_orders", AggregateID: 22,
		Payload: json.RawMessage(`{"lines":1}`), Actor: &events.Actor{ID: 1, Name: "Администратор"}, CreatedAt: at}, "tsekh", "")
	require.NoError(t, err)
	require.JSONEq(t, `{"specversion":"1.0","id":"132","source":"tsekh","type":"order.received","subject":"sales_orders/22",
"time":"2026-11-13T17:20:04Z","datacontenttype":"application/json","data":{"lines":1},"tsekhactor":"Администратор","tsekhactorid":1}`, string(b))
	b, err = relay.CloudEvent(events.Event{ID: 133, Type: "order.received", AggregateType: "sales_orders", AggregateID: 22,
		Payload: json.RawMessage(`{"lines":1}`), CreatedAt: at}, "tsekh", "https://tsekh.example.com/asyncapi.json#/components/schemas/order.received")
	require.NoError(t, err)
	require.JSONEq(t, `{"specversion":"1.0","id":"133","source":"tsekh","type":"order.received","subject":"sales_orders/22",
"time":"2026-11-13T17:20:04Z","datacontenttype":"application/json","dataschema":"https://tsekh.example.com/asyncapi.json#/components/schemas/order.received",
"data":{"lines":1}}`, string(b))
}
