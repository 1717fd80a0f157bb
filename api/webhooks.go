package api

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/auth"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/sales"
)

// ShopOrderRequest is the body the online shop posts to its webhook.
type ShopOrderRequest struct {
	// The shop's order id (a string or a whole number); the order's sync_id is "shop-" + id.
	ID       string          `json:"id" validate:"required" maxLength:"64" example:"7826d8468b3d"`
	Customer CustomerRequest `json:"customer" validate:"required"`
	// The day the customer wants the order, from 2000-01-01 to 2100-12-31.
	DueDate string `json:"due_date" validate:"optional" format:"date" example:"2026-12-20"`

	// Where the customer wants it delivered, kept and shown as given (tabs and line breaks allowed).
	DeliveryAddress string `json:"delivery_address" validate:"optional" maxLength:"500" example:"Москва, ул. Лесная, д. 5, кв. 12"`
	// The day the customer asked for delivery, from 2000-01-01 to 2100-12-31.
	DeliveryDate string `json:"delivery_date" validate:"optional" format:"date" example:"2026-12-26"`
	// The prices' currency: three capital letters (ISO 4217).
	Currency string `json:"currency" validate:"optional" minLength:"3" maxLength:"3" example:"RUB"`
	// The order's total as the shop computed it: a non-negative decimal (a JSON number, or a string holding one), kept as sent.
	Total string `json:"total" validate:"optional" swaggertype:"number" example:"25980.00"`

	// The shop's version of the order: a later delivery with a greater version changes the order. Takes precedence over updated_at.
	Version int64 `json:"version" validate:"optional" minimum:"1" example:"2"`
	// When the shop last changed the order (RFC 3339, up to nanoseconds, kept and compared as sent): a later delivery with a later updated_at changes the order.
	UpdatedAt string `json:"updated_at" validate:"optional" format:"date-time" maxLength:"40" example:"2026-12-02T10:15:00.1239Z"`
	// The order's tsekh version the delivery was built on: the last version the shop heard (a callback's version, or this webhook's answer).
	// A delivery that changes what the office changed after it is refused (409) or merged (SHOP_CONFLICTS=shop). Without it, every change
	// the office made counts.
	TsekhVersion int64 `json:"tsekh_version" validate:"optional" minimum:"0" example:"3"`

	Items []ShopItemRequest `json:"items" validate:"required,min=1,max=200"`
}

// ShopItemRequest is one line of the shop's order.
type ShopItemRequest struct {
	OrderItemRequest
	// The price of one unit, as the shop computed it (a non-negative decimal, kept as sent).
	UnitPrice string `json:"unit_price" validate:"optional" swaggertype:"number" example:"12990.00"`
	// The line's total, as the shop computed it.
	LineTotal string `json:"line_total" validate:"optional" swaggertype:"number" example:"25980.00"`
}

// ShopWebhookResponse names the order a delivery created, found or changed.
type ShopWebhookResponse struct {
	OrderID int64 `json:"order_id" validate:"required" example:"22"`
	// true: the delivery was newer and differed; the order changed (order.changed).
	Changed bool `json:"changed,omitempty" validate:"optional" example:"true"`
	// true: the delivery differed but was not newer than the last one applied; it was ignored.
	Stale bool `json:"stale,omitempty" validate:"optional" example:"false"`
	// The order's tsekh version now: send it as tsekh_version with the order's next delivery.
	Version int64 `json:"version" validate:"required" example:"3"`
}

// shopWebhook receives the shop's orders; it remembers the shop's own user
// once it has made sure it exists.
type shopWebhook struct {
	*server
	mu    sync.Mutex
	actor *events.Actor
}

func (s *server) shopWebhook() echo.HandlerFunc {
	w := &shopWebhook{server: s}
	return w.receive
}

// receive godoc
//
//	@Summary		The online shop's webhook: a new order (signed, no bearer token)
//	@ID				receiveShopOrder
//	@Description	Authenticated by its signature: `X-Shop-Timestamp` is the Unix time of sending and
//	@Description	`X-Shop-Signature` is `sha256=` + hex HMAC-SHA256(SHOP_WEBHOOK_SECRET, timestamp + "." + raw body).
//	@Description	A timestamp more than 5 minutes from the server's clock is refused, so a captured request cannot be replayed later;
//	@Description	the shop re-signs each retry. Bodies over 1 MiB are refused.
//	@Description
//	@Description	Idempotent by the shop's order id: the first delivery creates the order (sync_id "shop-" + id),
//	@Description	its items and its order.received event, and answers 201; deliveries of one id take turns, so many at once
//	@Description	make one order and one event, and a repeat spends no order number. The orders are recorded under the user "Интернет-магазин".
//	@Description
//	@Description	A later delivery of the same id is compared with the last one applied and with the order (customer, due date,
//	@Description	delivery_address, delivery_date, currency, total, and the lines matched to the order's items by SKU in order;
//	@Description	amounts as numbers): the same → 200 `{"order_id"}`, nothing written; different and newer (its `version` when it
//	@Description	has one, else its `updated_at`, against the last applied one) → the order changes as PATCH /api/v1/orders/{id} would,
//	@Description	200 `{"order_id", "changed": true}` and order.changed; different and not newer → ignored, 200 `{"order_id", "stale": true}`;
//	@Description	different without version or updated_at → 409 ("send updated_at or version"); newer but changing the quantity or note of
//	@Description	an item in production (prices alone may change), or the order cancelled or shipped → 409 naming the items; an unknown SKU → 422.
//	@Description	`version` and `updated_at` are compared exactly, as sent (updated_at to the nanosecond).
//	@Description
//	@Description	No silent overwrite: every answer carries the order's tsekh `version`, as does every callback. A newer delivery built on an older
//	@Description	tsekh version (its `tsekh_version`; none sent counts as 0) that changes a field or item the office changed since → 409 naming
//	@Description	those fields (read the order and send it again built on its version); with SHOP_CONFLICTS=shop, the fields the office did not
//	@Description	touch are applied, the office's values of the others kept, and the order flagged for a manager (attention, order.shop_conflict).
//	@Description
//	@Description	delivery_address, delivery_date, currency, total and the lines' unit_price and line_total are kept and shown on the
//	@Description	order as given; tsekh computes no prices. A delivery refused for its content (422 or 409: unknown SKUs, invalid fields, items
//	@Description	in production, a conflict) is answered with every reason at once and kept in the intake inbox (GET /api/v1/intake/rejections)
//	@Description	when it names its order and an item; nothing else of it is stored. A delivery that is not authentic, malformed JSON or a body
//	@Description	over 1 MiB is never stored. Answers 503 while SHOP_WEBHOOK_SECRET is not set.
//	@Description
//	@Description	A signed example (secret `demo-shop-secret-at-least-32-bytes`, timestamp 1795000000, the body exactly as sent):
//	@Description	```
//	@Description	X-Shop-Timestamp: 1795000000
//	@Description	X-Shop-Signature: sha256=e84a0b30b0407497df8383fc51e6b1dfae6632bef72f72dfb43524f18da1fb09
//	@Description	{"id":"7826d8468b3d","customer":{"name":"Иван Петров","phone":"+7 900 123-45-67"},"items":[{"sku":"SHK-KUPE-1600","qty":1}]}
//	@Description	```
//	@Description	Signing from a shell:
//	@Description	```
//	@Description	TS=$(date +%s)
//	@Description	SIG=$(printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SHOP_WEBHOOK_SECRET" | sed 's/^.* //')
//	@Description	curl -X POST http://localhost:8080/api/v1/webhooks/shop/orders -H 'Content-Type: application/json' \
//	@Description	  -H "X-Shop-Timestamp: $TS" -H "X-Shop-Signature: sha256=$SIG" --data-binary "$BODY"
//	@Description	```
//	@Tags			sales
//	@Accept			json
//	@Produce		json
//	@Security
//	@Param			X-Shop-Timestamp	header		string				true	"Unix seconds when the shop sent the request"	example(1764547200)
//	@Param			X-Shop-Signature	header		string				true	"sha256=<hex HMAC-SHA256 of timestamp + '.' + body>"	example(sha256=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef)
//	@Param			body				body		ShopOrderRequest	true	"the shop's order"
//	@Success		201					{object}	ShopWebhookResponse	"the order was created"
//	@Success		200					{object}	ShopWebhookResponse	"the order existed already: a replay, a change (changed), or an older delivery ignored (stale)"
//	@Failure		400					{object}	Problem
//	@Failure		401					{object}	Problem
//	@Failure		409					{object}	Problem	"a different delivery without version or updated_at, or one the order cannot take (items in production, named)"
//	@Failure		413					{object}	Problem
//	@Failure		415					{object}	Problem
//	@Failure		422					{object}	Problem
//	@Failure		503					{object}	Problem
//	@Router			/api/v1/webhooks/shop/orders [post]
func (w *shopWebhook) receive(c echo.Context) error {
	if w.ShopWebhookSecret == "" {
		return apperr.Errorf(apperr.EUNAVAILABLE, "the shop webhook is not configured: SHOP_WEBHOOK_SECRET is not set")
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	h := c.Request().Header
	if err := sales.VerifySignature(w.ShopWebhookSecret, h.Get(sales.HeaderShopTimestamp), h.Get(sales.HeaderShopSignature), body, time.Now()); err != nil {
		w.Sales.CountUnauthentic() // never stored
		return err
	}
	var actor events.Actor
	o, out, err := w.Sales.ReceiveShopDelivery(c.Request().Context(), body, func(ctx context.Context, tx *gorm.DB) (events.Actor, error) {
		var err error
		actor, err = w.shopActor(ctx, tx)
		return actor, err
	})
	if err != nil {
		return err
	}
	w.remember(actor)
	res, status := ShopWebhookResponse{OrderID: o.ID, Version: o.Version}, http.StatusOK
	switch out {
	case sales.OutcomeCreated:
		status = http.StatusCreated
	case sales.OutcomeChanged:
		res.Changed = true
	case sales.OutcomeStale:
		res.Stale = true
	}
	return c.JSON(status, res)
}

// shopActor returns the shop's user, "Интернет-магазин" (role manager),
// creating it, in the delivery's transaction tx, on the first delivery: a
// delivery refused for its content rolls it back with the rest.
func (w *shopWebhook) shopActor(ctx context.Context, tx *gorm.DB) (events.Actor, error) {
	w.mu.Lock()
	a := w.actor
	w.mu.Unlock()
	if a != nil {
		return *a, nil
	}
	u, err := auth.EnsureUserIn(ctx, tx, sales.ShopActorName, auth.RoleManager)
	return u.Actor(), err
}

// remember keeps the shop's user once a delivery that named it committed.
func (w *shopWebhook) remember(a events.Actor) {
	if a.ID == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.actor = &a
}
