package sales

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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

	DeliveryAddress string `json:"delivery_address"`
	DeliveryDate    string `json:"delivery_date"`
	Currency        string `json:"currency"`
	Total           Amount `json:"total"`

	Version   *int64 `json:"version"`
	UpdatedAt string `json:"updated_at"`
	// TsekhVersion is the order's tsekh version the shop last saw (from a
	// callback or the webhook's answer): what the delivery was built on.
	TsekhVersion *int64 `json:"tsekh_version"`
}

type shopItem struct {
	SKU       string `json:"sku"`
	Qty       int    `json:"qty"`
	Note      string `json:"note"`
	UnitPrice Amount `json:"unit_price"`
	LineTotal Amount `json:"line_total"`
	// Options choose a board per decor slot, by decor or board code.
	Options map[string]string `json:"options"`
}

// parseMarks reads the version and updated_at that tell a later delivery of
// an order (or CRM row) from an earlier one: a positive whole number, and an
// RFC 3339 time, kept to the nanosecond as sent (compared exactly).
func parseMarks(in *NewOrder, version *int64, updatedAt string) []apperr.FieldError {
	var fields []apperr.FieldError
	if version != nil && *version < 1 {
		fields = append(fields, apperr.Field("version", "must be a positive whole number"))
	}
	in.Version = version
	at, f := input.Time("updated_at", updatedAt)
	fields = append(fields, f...)
	if !at.IsZero() {
		at = at.UTC()
		in.UpdatedAt = &at
	}
	return fields
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
// When the order is not valid (EINVALID) the NewOrder still holds what
// could be read of it, so that its unknown SKUs can be named too.
func ParseShopOrder(body []byte) (NewOrder, error) {
	var so shopOrder
	if err := input.DecodeTolerant(body, &so); err != nil {
		return NewOrder{}, err
	}
	var fields []apperr.FieldError
	id, err := shopOrderID(so.ID)
	if err != nil {
		fields = append(fields, apperr.Field("id", "%s", err.Error()))
	}
	in := NewOrder{Customer: so.Customer, Source: SourceShop, DeliveryAddress: strings.TrimSpace(so.DeliveryAddress),
		Currency: strings.TrimSpace(so.Currency), Total: so.Total}
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
	delivery, deliveryErrs := input.Date("delivery_date", so.DeliveryDate)
	in.DeliveryDate = delivery
	fields = append(fields, deliveryErrs...)
	fields = append(fields, parseMarks(&in, so.Version, so.UpdatedAt)...)
	if so.TsekhVersion != nil && *so.TsekhVersion < 0 {
		fields = append(fields, apperr.Field("tsekh_version", "must be a whole number from 0"))
	}
	in.TsekhVersion = so.TsekhVersion
	if err := in.Validate(); err != nil {
		fields = append(fields, apperr.As(err).Fields...)
	}
	if len(fields) > 0 {
		return in, apperr.Invalid("the shop order is not valid", fields...)
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
