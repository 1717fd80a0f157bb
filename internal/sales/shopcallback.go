package sales

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/jsontime"
	"github.com/tsekh/tsekh/internal/platform/telemetry"
)

// SubscriberShopCallback is the name of the subscriber that tells the shop
// of its orders' progress.
const SubscriberShopCallback = "sales.shop-callback"

// HeaderEventID carries the journal's event id on a callback, so that the
// shop can drop a repeated delivery.
const HeaderEventID = "X-Tsekh-Event-Id"

// ShopCallbackBody is what the shop receives when one of its orders changes
// state or ETA. Its schema is in the AsyncAPI document (/asyncapi.json).
type ShopCallbackBody struct {
	EventID        int64     `json:"event_id" jsonschema_description:"the journal's event id, also in X-Tsekh-Event-Id: drop repeats by it"`
	CausedBy       *int64    `json:"caused_by,omitempty" jsonschema_description:"the id of the event whose handling wrote this one (e.g. the production order's launch that moved the order); absent when a request wrote it"`
	CorrelationID  *string   `json:"correlation_id,omitempty" jsonschema:"pattern=^[A-Za-z0-9._-]{1,128}$" jsonschema_description:"the request's X-Request-Id (or a command's id) that set the change going, the same for every event that followed from it; absent when none"`
	Type           string    `json:"type" jsonschema:"enum=order.status_changed,enum=order.shipped,enum=order.changed,enum=order.ready,enum=order.items_written_off,enum=order.shop_conflict" jsonschema_description:"the event type"`
	OrderID        int64     `json:"order_id" jsonschema_description:"tsekh's sales order"`
	ShopOrderID    string    `json:"shop_order_id" jsonschema_description:"the shop's order id, as the shop sent it"`
	SyncID         string    `json:"sync_id" jsonschema_description:"\"shop-\" + the shop's order id"`
	Status         string    `json:"status" jsonschema:"enum=received,enum=in_production,enum=ready,enum=partially_shipped,enum=shipped,enum=cancelled" jsonschema_description:"the order's new state"`
	PreviousStatus string    `json:"previous_status" jsonschema:"enum=received,enum=in_production,enum=ready,enum=partially_shipped,enum=shipped,enum=cancelled" jsonschema_description:"its state before"`
	ETA            *string   `json:"eta" jsonschema:"oneof_type=string;null" jsonschema_extras:"format=date" jsonschema_description:"the day production promises the order, or null before any item is launched"`
	OccurredAt     time.Time `json:"occurred_at" jsonschema_description:"when the change was recorded: RFC 3339 UTC with exactly three fraction digits, as every time of the API"`
	// Shipment is what left the factory, on order.shipped only.
	Shipment *contracts.Shipment `json:"shipment,omitempty" jsonschema_description:"order.shipped: what left the factory, with carrier and tracking"`

	// Version is tsekh's version of the order after the change: send it
	// back as tsekh_version with the next delivery of the order.
	Version int64 `json:"version" jsonschema_description:"tsekh's version of the order after this change; send it back as tsekh_version with the order's next delivery (0 for events written before versions were kept)"`
	// Reason says why: a cancellation's (the manager's reason), a write-off's (the planner's).
	Reason string `json:"reason,omitempty" jsonschema_description:"order.status_changed to cancelled: why; order.items_written_off: the planner's reason"`
	// Via and Changes are what changed, before and after, on order.changed.
	Via     string                         `json:"via,omitempty" jsonschema:"enum=patch,enum=shop,enum=crm" jsonschema_description:"order.changed: how the change came (patch: the office)"`
	Changes *contracts.OrderChangedPayload `json:"changes,omitempty" jsonschema_description:"order.changed: the fields and items that changed, before and after"`
	// Items are what is left to ship (order.ready) or what was written off (order.items_written_off).
	Items []contracts.ItemQty `json:"items,omitempty" jsonschema_description:"order.ready: what is left to ship, made; order.items_written_off: the units that will not be made"`
	// Partial is true on order.ready once part of the order has shipped: the rest is ready.
	Partial bool `json:"partial,omitempty" jsonschema_description:"order.ready: part of the order has shipped before; the rest is ready"`
	// Conflicts are the fields of the shop's delivery not applied (order.shop_conflict).
	Conflicts []contracts.RejectionReason `json:"conflicts,omitempty" jsonschema_description:"order.shop_conflict: what the delivery would have changed that the office changed since, kept as the office set it"`
}

// ShopCallbackHeaders are the headers of a shop callback beside
// Content-Type: application/json, described for the AsyncAPI document.
type ShopCallbackHeaders struct {
	Timestamp string `json:"X-Shop-Timestamp" jsonschema:"pattern=^[0-9]+$" jsonschema_description:"Unix seconds when the request was signed"`
	Signature string `json:"X-Shop-Signature" jsonschema:"pattern=^sha256=[0-9a-f]{64}$" jsonschema_description:"sha256=<hex HMAC-SHA256(SHOP_WEBHOOK_SECRET, timestamp + \".\" + raw body)>, as the shop signs its webhook"`
	EventID   string `json:"X-Tsekh-Event-Id" jsonschema:"pattern=^[0-9]+$" jsonschema_description:"the journal's event id: a repeat of a delivery carries the same"`
	// The W3C trace context of the callback's sending, in the trace of the
	// request that wrote the event; absent when the event has none.
	Traceparent string `json:"traceparent,omitempty" jsonschema:"pattern=^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$" jsonschema_description:"W3C traceparent: the trace of the request that wrote the event"`
	Tracestate  string `json:"tracestate,omitempty" jsonschema_description:"W3C tracestate beside traceparent"`
}

// DefaultShopCallbackConcurrency is how many callbacks may be in flight at
// once unless SHOP_CALLBACK_CONCURRENCY says otherwise.
const DefaultShopCallbackConcurrency = 4

// ShopCallback returns the subscriber "sales.shop-callback": for every
// order.status_changed of a shop order it POSTs a ShopCallbackBody as JSON to
// callbackURL, signed like the webhook (X-Shop-Timestamp, X-Shop-Signature
// with the shared secret, re-signed on every attempt). A network error or an
// answer other than 2xx is returned as the delivery's error, so that the
// dispatcher retries it with back-off and the journal shows it; a 4xx answer
// other than 408 and 429 is permanent (failed at once: the shop refused the
// event, and no retry will change that), and a 429 or 503 with Retry-After
// is retried after the delay the shop asked for without spending an attempt
// (up to DISPATCH_RETRY_AFTER_CAP of such delays per callback). A 2xx
// counts only once its body has been read whole: a reset in the middle of
// it is a failure, retried. Delivery is
// at least once; X-Tsekh-Event-Id lets the shop drop repeats. client nil
// means a client with a 10-second timeout.
func ShopCallback(callbackURL, secret string, client *http.Client) events.Subscriber {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	cb := &shopCallback{url: callbackURL, shown: events.RedactURL(callbackURL), secret: secret, client: client, now: time.Now}
	return events.Subscriber{
		Name: SubscriberShopCallback,
		Types: events.Names(contracts.OrderStatusChanged, contracts.OrderShipped, contracts.OrderChanged, contracts.OrderReady,
			contracts.OrderItemsWrittenOff, contracts.OrderShopConflict),
		Description: "POSTs every change of shop orders to SHOP_CALLBACK_URL, signed like the webhook, with tsekh's version of the order: state and ETA (with a cancellation's reason), changes before and after, ready (again after a partial shipment), write-offs with their reason, shipments with carrier and tracking, conflicts with the office.",
		Handle:      cb.send,
		// Calls for different orders go out side by side (those of one order
		// one after the other, in order); SHOP_CALLBACK_CONCURRENCY.
		Concurrency: DefaultShopCallbackConcurrency,
	}
}

type shopCallback struct {
	url, shown, secret string
	client             *http.Client
	now                func() time.Time
}

func (cb *shopCallback) send(ctx context.Context, ev events.Event) error {
	body, err := callbackBody(ev)
	if err != nil {
		return fmt.Errorf("shop callback: %w", err)
	}
	if body.SyncID == "" {
		return nil // not a shop order
	}
	shopID, ok := strings.CutPrefix(body.SyncID, SyncIDPrefix)
	if !ok {
		return nil // not a shop order
	}
	body.ShopOrderID = shopID
	body.CausedBy = ev.CausedBy
	if ev.CorrelationID != "" {
		body.CorrelationID = &ev.CorrelationID
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	// Its times as the API writes them: UTC, three fraction digits.
	raw = jsontime.Fix(raw)
	ts := cb.now().Unix()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cb.url, bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("shop callback: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderShopTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderShopSignature, Sign(cb.secret, ts, raw))
	req.Header.Set(HeaderEventID, strconv.FormatInt(ev.ID, 10))
	setTraceHeaders(ctx, req.Header, ev)
	res, err := cb.client.Do(req)
	if err != nil {
		return fmt.Errorf("shop callback: POST %s: %w", cb.shown, unwrapURLError(err))
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode/100 != 2 {
		snippet, _ := io.ReadAll(io.LimitReader(res.Body, 200))
		err := events.HTTPStatus(res.StatusCode,
			fmt.Errorf("shop callback: POST %s answered %s: %s", cb.shown, res.Status, strings.TrimSpace(string(snippet))))
		switch {
		case res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable:
			if after, ok := retryAfter(res.Header.Get("Retry-After"), cb.now()); ok {
				return events.RetryAfter(after, err)
			}
		case res.StatusCode == http.StatusRequestTimeout:
		case res.StatusCode/100 == 4:
			// The shop refused this event for good: no retry will change
			// its answer. The journal shows it failed; an admin may retry.
			return events.Permanent(err)
		}
		return err
	}
	// Delivered only once the answer has been read whole, within the
	// client's timeout: a 200 status line cut off by a reset is a failure.
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return events.HTTPStatus(res.StatusCode,
			fmt.Errorf("shop callback: POST %s answered %s, then its body broke off: %w", cb.shown, res.Status, unwrapURLError(err)))
	}
	return nil
}

// retryAfter reads an HTTP Retry-After header: a number of seconds or an
// HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// unwrapURLError drops the *url.Error wrapper, which repeats the URL (and
// so anything secret in it: the shop's URL is shown by events.RedactURL,
// without user, password and query string).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// setTraceHeaders sends the W3C trace context of the callback: that of the
// subscriber's process span when tracing is on, else the event's own, so
// that the shop sees the trace of the request that wrote the event.
func setTraceHeaders(ctx context.Context, h http.Header, ev events.Event) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		telemetry.Propagator.Inject(ctx, propagation.HeaderCarrier(h))
		return
	}
	if ev.Traceparent != "" {
		h.Set("traceparent", ev.Traceparent)
		if ev.Tracestate != "" {
			h.Set("tracestate", ev.Tracestate)
		}
	}
}

// callbackBody is what the shop is told of the event: its body without the
// shop's order id and the event's causes; SyncID "" when the event is not
// about a shop order.
func callbackBody(ev events.Event) (ShopCallbackBody, error) {
	b := ShopCallbackBody{EventID: ev.ID, Type: ev.Type, OccurredAt: ev.CreatedAt.UTC()}
	var syncID *string
	var eta string
	switch ev.Type {
	case contracts.OrderShipped.Name():
		p, err := contracts.OrderShipped.Decode(ev)
		if err != nil {
			return b, err
		}
		b.OrderID, b.Status, b.PreviousStatus, b.Version, b.Shipment, syncID = p.OrderID, p.Status, p.PreviousStatus, p.Version, &p.Shipment, p.SyncID
	case contracts.OrderChanged.Name():
		p, err := contracts.OrderChanged.Decode(ev)
		if err != nil {
			return b, err
		}
		b.OrderID, b.Status, b.PreviousStatus, b.Version, b.Via, syncID, eta = p.OrderID, p.Status, p.Status, p.Version, p.Via, p.SyncID, p.ETA
		b.Changes = &p
	case contracts.OrderReady.Name():
		p, err := contracts.OrderReady.Decode(ev)
		if err != nil {
			return b, err
		}
		b.OrderID, b.Status, b.PreviousStatus, b.Version, b.Items, b.Partial, syncID, eta = p.OrderID, p.Status, p.Status, p.Version, p.Items, p.Partial, p.SyncID, p.ETA
	case contracts.OrderItemsWrittenOff.Name():
		p, err := contracts.OrderItemsWrittenOff.Decode(ev)
		if err != nil {
			return b, err
		}
		b.OrderID, b.Status, b.PreviousStatus, b.Version, b.Items, b.Reason, syncID, eta = p.OrderID, p.Status, p.Status, p.Version, p.Items, p.Reason, p.SyncID, p.ETA
	case contracts.OrderShopConflict.Name():
		p, err := contracts.OrderShopConflict.Decode(ev)
		if err != nil {
			return b, err
		}
		b.OrderID, b.Status, b.PreviousStatus, b.Version, b.Conflicts, syncID, eta = p.OrderID, p.Status, p.Status, p.Version, p.Fields, p.SyncID, p.ETA
	default:
		p, err := contracts.OrderStatusChanged.Decode(ev)
		if err != nil {
			return b, err
		}
		b.OrderID, b.Status, b.PreviousStatus, b.Version, b.Reason, syncID, eta = p.OrderID, p.Status, p.PreviousStatus, p.Version, p.Reason, p.SyncID, p.ETA
	}
	if syncID != nil {
		b.SyncID = *syncID
	}
	if eta != "" {
		b.ETA = &eta
	}
	return b, nil
}
