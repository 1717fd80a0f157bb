package sales

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// ShopActorName is the user the shop webhook's orders are recorded under, so
// that the journal names the shop as their actor.
const ShopActorName = "Интернет-магазин"

// SyncIDPrefix starts the sync_id of every shop order: "shop-" + the shop's id.
const SyncIDPrefix = "shop-"

// MaxShopOrderID is the longest shop order id accepted.
const MaxShopOrderID = 64

// shopOrder is the body the shop posts to the webhook.
type shopOrder struct {
	ID       json.RawMessage `json:"id"`
	Customer Customer        `json:"customer"`
	Items    []shopItem      `json:"items"`
	DueDate  string          `json:"due_date"`
}

type shopItem struct {
	SKU  string `json:"sku"`
	Qty  int    `json:"qty"`
	Note string `json:"note"`
}

// VerifyShopWebhook authenticates a webhook delivery and reads the order in
// it: the signature and timestamp first (EUNAUTHORIZED), then the body
// (EBADREQUEST when it is not a JSON object, EINVALID naming the fields at
// fault). The unknown SKUs are found later, against the catalog.
func VerifyShopWebhook(secret, timestamp, signature string, body []byte, now time.Time) (NewOrder, error) {
	if err := VerifySignature(secret, timestamp, signature, body, now); err != nil {
		return NewOrder{}, err
	}
	return ParseShopOrder(body)
}

// ParseShopOrder reads the shop's order {"id", "customer", "items",
// "due_date"?} into a NewOrder with source shop and sync_id "shop-" + id.
func ParseShopOrder(body []byte) (NewOrder, error) {
	var so shopOrder
	if err := input.DecodeObject(body, &so); err != nil {
		return NewOrder{}, err
	}
	var fields []apperr.FieldError
	id, err := shopOrderID(so.ID)
	if err != nil {
		fields = append(fields, apperr.Field("id", "%s", err.Error()))
	}
	in := NewOrder{Customer: so.Customer, Source: SourceShop}
	for _, it := range so.Items {
		in.Items = append(in.Items, NewItem(it))
	}
	if id != "" {
		sync := SyncIDPrefix + id
		in.SyncID = &sync
	}
	due, dueErrs := ParseDueDate(so.DueDate)
	in.DueDate = due
	fields = append(fields, dueErrs...)
	if err := in.Validate(); err != nil {
		fields = append(fields, apperr.As(err).Fields...)
	}
	if len(fields) > 0 {
		return NewOrder{}, apperr.Invalid("the shop order is not valid", fields...)
	}
	return in, nil
}

// shopOrderID reads the shop's order id, a string or a whole number.
func shopOrderID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New("is required")
	}
	var id string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &id); err != nil {
			return "", errors.New("must be a string or a whole number")
		}
	} else {
		var n json.Number
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&n); err != nil || strings.ContainsAny(n.String(), ".eE-+") {
			return "", errors.New("must be a string or a whole number")
		}
		id = n.String()
	}
	id = strings.TrimSpace(id)
	switch {
	case id == "":
		return "", errors.New("is required")
	case utf8.RuneCountInString(id) > MaxShopOrderID:
		return "", fmt.Errorf("must be at most %d characters", MaxShopOrderID)
	}
	for _, r := range id {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return "", errors.New("must not contain spaces or control characters")
		}
	}
	return id, nil
}

// ReceiveShopOrder stores an order from the shop webhook once per sync_id:
// the first delivery creates the order and its order.received event (created
// true); every later one, even at the same instant, returns the same order
// and writes nothing. It returns EINVALID for unknown SKUs.
func (s *Service) ReceiveShopOrder(ctx context.Context, in NewOrder) (o Order, created bool, err error) {
	if in.SyncID == nil || !strings.HasPrefix(*in.SyncID, SyncIDPrefix) {
		return Order{}, false, apperr.Invalid("the shop order is not valid", apperr.Field("id", "is required"))
	}
	in.Source = SourceShop
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		o, created, err = createOrderOnce(ctx, tx, in, "sync_id")
		return err
	})
	return o, created, err
}
