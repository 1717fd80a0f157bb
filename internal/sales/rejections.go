package sales

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// Who applied a delivery, or had it refused: the sender itself or a
// manager's retry of the kept rejection.
const (
	ByDelivery = "delivery"
	ByRetry    = "retry"
)

// States of a kept rejection.
const (
	RejectionOpen      = "open"      // waiting for a retry, a later delivery or a dismissal
	RejectionResolved  = "resolved"  // applied: it names the order
	RejectionDismissed = "dismissed" // a manager dismissed it, with a reason
)

// Kinds of reason a delivery is refused for.
const (
	ReasonUnknownSKU   = "unknown_sku"   // a SKU no product has
	ReasonUnknownDecor = "unknown_decor" // a decor (an item's options) the catalogue does not have
	ReasonInProduction = "in_production" // it changes items production has taken up
	ReasonConflict     = "conflict"      // it conflicts with the order: the office's changes, a cancelled or shipped order, an unmarked change
	ReasonInvalid      = "invalid"       // a field is not valid (a quantity, a date…)
)

// ReasonKinds are the kinds of reason, for the list's filter.
var ReasonKinds = []string{ReasonUnknownSKU, ReasonUnknownDecor, ReasonInProduction, ReasonConflict, ReasonInvalid}

// Errors that tell the kind of a conflict (errors.Is, never by its text).
var (
	errInProduction  = errors.New("items in production")
	errOfficeChanged = errors.New("the office changed it since")
)

// MaxDismissReason is the longest reason for a dismissal, in characters.
const MaxDismissReason = 1000

// Rejection is an authentic shop delivery or a CRM row refused for its
// content, kept as received with every reason.
type Rejection struct {
	ID     int64  `json:"id" example:"7"`
	Source string `json:"source" enums:"shop,crm" example:"shop"`
	// The shop order's sync_id ("shop-" + its id), or the CRM row's number.
	SyncID     *string `json:"sync_id" extensions:"x-nullable" example:"shop-7826d8468b3d"`
	CRMOrderID *string `json:"crm_order_id" extensions:"x-nullable" example:"CRM-10452"`
	// Body is the delivery or row as received (the last refused one); null
	// when it was cut (body_cut).
	Body json.RawMessage `json:"body" swaggertype:"object" extensions:"x-nullable"`
	// BodyBytes is the body's size as received, in bytes; BodyCut says that
	// it was larger than INTAKE_BODY_LIMIT and only its beginning is kept,
	// as text, in BodyHead (such a rejection cannot be retried: its sender
	// delivers it again).
	BodyBytes int    `json:"body_bytes" example:"812"`
	BodyCut   bool   `json:"body_cut" example:"false"`
	BodyHead  string `json:"body_head,omitempty" example:"{\"id\": \"7826d8468b3d\", \"customer\": {\"name\": \"Анна\"}, \"items\": [{\"sku\": \"DIV-NEW\", \"note\": \"очень длин"`
	// Kinds of reason, and every reason at once with the field it names.
	Reasons []string            `json:"reasons" enums:"unknown_sku,unknown_decor,in_production,conflict,invalid" example:"unknown_sku"`
	Errors  []apperr.FieldError `json:"errors"`
	// Detail is the refusal as the sender was told it.
	Detail string `json:"detail" example:"the order names unknown products"`
	Status string `json:"status" enums:"open,resolved,dismissed" example:"open"`
	// Deliveries counts the refused deliveries of it; Retries, the managers' retries.
	Deliveries int `json:"deliveries" example:"1"`
	Retries    int `json:"retries" example:"0"`
	// OrderID is the order it made or found once resolved; Outcome, what became of it.
	OrderID       *int64     `json:"order_id" extensions:"x-nullable"`
	Outcome       string     `json:"outcome" enums:",created,repeated,changed,stale"`
	DismissReason string     `json:"dismiss_reason"`
	CreatedAt     time.Time  `json:"created_at" format:"date-time"`
	UpdatedAt     time.Time  `json:"updated_at" format:"date-time"`
	ClosedAt      *time.Time `json:"closed_at" format:"date-time" extensions:"x-nullable"`
}

// rejectionRow is a sales_intake_rejections row.
type rejectionRow struct {
	ID            int64
	Source        string
	IntakeKey     string
	SyncID        *string
	CRMOrderID    *string `gorm:"column:crm_order_id"`
	Body          string
	BodyBytes     int
	BodyCut       bool
	Reasons       string
	Errors        string
	Detail        string
	Status        string
	Deliveries    int
	Retries       int
	OrderID       *int64
	Outcome       string
	DismissReason string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	ClosedAt      *time.Time
}

func (rejectionRow) TableName() string { return RejectionsTable }

// RejectionsTable is the intake inbox's table, the aggregate type of its
// events.
const RejectionsTable = "sales_intake_rejections"

func (r rejectionRow) rejection() Rejection {
	out := Rejection{ID: r.ID, Source: r.Source, SyncID: r.SyncID, CRMOrderID: r.CRMOrderID, Detail: r.Detail, Status: r.Status,
		BodyBytes: r.BodyBytes, BodyCut: r.BodyCut,
		Deliveries: r.Deliveries, Retries: r.Retries, OrderID: r.OrderID, Outcome: r.Outcome, DismissReason: r.DismissReason,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, ClosedAt: r.ClosedAt, Reasons: []string{}, Errors: []apperr.FieldError{}}
	switch {
	case r.BodyCut:
		out.Body, out.BodyHead = json.RawMessage("null"), r.Body
	case json.Valid([]byte(r.Body)):
		out.Body = json.RawMessage(r.Body)
	default:
		out.Body, _ = json.Marshal(r.Body)
	}
	for _, k := range strings.Split(strings.Trim(r.Reasons, ","), ",") {
		if k != "" {
			out.Reasons = append(out.Reasons, k)
		}
	}
	_ = json.Unmarshal([]byte(r.Errors), &out.Errors) // written by keepRejection
	return out
}

// intakeKeyOf is the key of a delivery's order in the inbox: the shop's
// sync_id or the CRM's order number; "" when it has none.
func intakeKeyOf(source string, in NewOrder) string {
	switch {
	case source == SourceShop && in.SyncID != nil:
		return *in.SyncID
	case source == SourceCRM && in.CRMOrderID != nil && *in.CRMOrderID != "":
		return *in.CRMOrderID
	}
	return ""
}

// refusal is a delivery's refusal with every reason: the error as the
// sender is told it, and its kinds.
type refusal struct {
	err   *apperr.Error
	kinds []string
}

// fullRefusal adds to a content refusal (EINVALID or ECONFLICT) the reasons
// it could not give yet, so that the sender and the inbox see every one at
// once: the unknown SKUs of a delivery refused for other fields first. It
// returns nil when err is not a refusal for the content (EBADREQUEST, an
// internal error).
func fullRefusal(ctx context.Context, db *gorm.DB, in NewOrder, err error) (*refusal, error) {
	e := apperr.As(err)
	if e == nil || (e.Code != apperr.EINVALID && e.Code != apperr.ECONFLICT) {
		return nil, nil
	}
	r := &refusal{err: &apperr.Error{Code: e.Code, Message: e.Message, Fields: slices.Clone(e.Fields), Err: e.Err}}
	kinds := map[string]bool{}
	unknown, lookupErr := unknownSKUs(ctx, db, in.Items)
	if lookupErr != nil {
		return nil, lookupErr
	}
	for _, f := range unknown {
		kinds[ReasonUnknownSKU] = true
		if !slices.Contains(r.err.Fields, f) {
			r.err.Fields = append(r.err.Fields, f)
		}
	}
	if len(unknown) > 0 && e.Code == apperr.EINVALID && len(unknown) < len(r.err.Fields) {
		r.err.Message = "the order is not valid and names unknown products"
	}
	for _, f := range r.err.Fields {
		switch {
		case slices.Contains(unknown, f):
		case strings.Contains(f.Field, ".options") || strings.Contains(f.Field, "decor"):
			kinds[ReasonUnknownDecor] = true
		case e.Code == apperr.EINVALID:
			kinds[ReasonInvalid] = true
		}
	}
	if e.Code == apperr.ECONFLICT {
		if errors.Is(err, errInProduction) {
			kinds[ReasonInProduction] = true
		} else {
			kinds[ReasonConflict] = true
		}
	}
	for _, k := range ReasonKinds {
		if kinds[k] {
			r.kinds = append(r.kinds, k)
		}
	}
	return r, nil
}

// unknownSKUs names, as items[i].sku, each item whose SKU no product has.
func unknownSKUs(ctx context.Context, db *gorm.DB, items []NewItem) ([]apperr.FieldError, error) {
	var skus []string
	for _, it := range items {
		// A SKU too long or not text is refused for that already.
		if sku := strings.TrimSpace(it.SKU); sku != "" && utf8.ValidString(sku) && utf8.RuneCountInString(sku) <= input.MaxSKU {
			skus = append(skus, sku)
		}
	}
	if len(skus) == 0 {
		return nil, nil
	}
	products, err := catalog.ProductsBySKU(ctx, db.WithContext(ctx), skus)
	if err != nil {
		return nil, err
	}
	var out []apperr.FieldError
	for i, it := range items {
		sku := strings.TrimSpace(it.SKU)
		if _, ok := products[sku]; !ok && slices.Contains(skus, sku) {
			out = append(out, apperr.Field(fmt.Sprintf("items[%d].sku", i), "no product has the SKU %q", sku))
		}
	}
	return out, nil
}

// refuse handles a delivery (or row) refused with err: a refusal for its
// content of a delivery that names its order and at least one item is kept
// in the inbox (keepRejection), and the refusal is returned with every
// reason at once. Anything else is returned as it is, nothing kept.
func (s *Service) refuse(ctx context.Context, source string, in NewOrder, body []byte, err error, as ActorIn) error {
	r, lookupErr := fullRefusal(ctx, s.db, in, err)
	if lookupErr != nil {
		return lookupErr
	}
	if r == nil {
		return err
	}
	if intakeKeyOf(source, in) == "" || len(in.Items) == 0 || !utf8.Valid(body) {
		return r.err
	}
	if _, keepErr := s.keepRejection(ctx, source, in, body, r, as); keepErr != nil {
		return keepErr
	}
	return r.err
}

// keepRejection stores a refused delivery in the inbox with its reasons
// and writes intake.rejected, in a transaction of its own: the open
// rejection of the same order (shop id or CRM number) takes the new body
// and reasons, and counts the delivery; otherwise a new one is opened.
func (s *Service) keepRejection(ctx context.Context, source string, in NewOrder, body []byte, r *refusal, as ActorIn) (int64, error) {
	errs, err := json.Marshal(r.err.Fields)
	if err != nil {
		return 0, err
	}
	if r.err.Fields == nil {
		errs = []byte("[]")
	}
	reasons := "," + strings.Join(r.kinds, ",") + ","
	kept, cut := cutBody(body, s.rejectionBodyLimit())
	var id int64
	err = database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		ctx, err := as.in(ctx, tx)
		if err != nil {
			return err
		}
		row := rejectionRow{Source: source, IntakeKey: intakeKeyOf(source, in), SyncID: in.SyncID, CRMOrderID: in.CRMOrderID,
			Body: kept, BodyBytes: len(body), BodyCut: cut, Reasons: reasons, Errors: string(errs), Detail: r.err.Message}
		if err := keepRejection(ctx, tx, &row); err != nil {
			return err
		}
		id = row.ID
		return events.Add(ctx, tx, contracts.IntakeRejected.New(id, rejectedPayload(id, source, in, r, ByDelivery, row.Deliveries)))
	})
	if err == nil {
		s.metrics.rejected(source)
	}
	return id, err
}

func rejectedPayload(id int64, source string, in NewOrder, r *refusal, by string, deliveries int) contracts.IntakeRejectedPayload {
	p := contracts.IntakeRejectedPayload{RejectionID: id, Source: source, SyncID: in.SyncID, Kinds: r.kinds, Reasons: []contracts.RejectionReason{},
		Detail: r.err.Message, By: by, Deliveries: deliveries}
	if source == SourceCRM {
		p.SyncID, p.CRMOrderID = nil, contracts.CRMOrderIDOf(in.CRMOrderID)
	}
	if p.Kinds == nil {
		p.Kinds = []string{}
	}
	for _, f := range r.err.Fields {
		p.Reasons = append(p.Reasons, contracts.RejectionReason{Field: f.Field, Message: f.Message})
	}
	return p
}

// RejectionFilter selects kept rejections; zero fields do not filter.
type RejectionFilter struct {
	Source string // shop or crm
	Reason string // one of ReasonKinds
	Open   *bool  // true: open only; false: resolved or dismissed only
}

// Validate returns EINVALID naming a filter that cannot match.
func (f RejectionFilter) Validate() error {
	var fields []apperr.FieldError
	if f.Source != "" && f.Source != SourceShop && f.Source != SourceCRM {
		fields = append(fields, apperr.Field("source", "must be shop or crm"))
	}
	if f.Reason != "" && !slices.Contains(ReasonKinds, f.Reason) {
		fields = append(fields, apperr.Field("reason", "must be one of %s", strings.Join(ReasonKinds, ", ")))
	}
	if len(fields) > 0 {
		return apperr.Invalid("invalid query", fields...)
	}
	return nil
}

// Rejection returns a kept rejection, or ENOTFOUND.
func (s *Service) Rejection(ctx context.Context, id int64) (Rejection, error) {
	r, err := rejection(ctx, s.db, id)
	return r.rejection(), err
}

func rejection(ctx context.Context, db *gorm.DB, id int64) (rejectionRow, error) {
	r, found, err := rejectionByID(ctx, db, id)
	if err == nil && !found {
		err = apperr.NotFound("rejection %d does not exist", id)
	}
	return r, err
}

// RetryRejection applies a kept delivery again, as its sender would send
// it, the actor from ctx: idempotent by the shop's id or the CRM number, so
// that retried twice, or by many at once, it makes one order. Applied, the
// rejection is resolved (intake.resolved) and returned so; refused again,
// it stays open with the new reasons (intake.rejected, by retry) and is
// returned with them, not as an error. A resolved rejection is returned as
// it is. It returns ENOTFOUND for an unknown rejection and ECONFLICT for a
// dismissed one.
func (s *Service) RetryRejection(ctx context.Context, id int64) (Rejection, error) {
	row, err := rejection(ctx, s.db, id)
	if err != nil {
		return Rejection{}, err
	}
	switch row.Status {
	case RejectionResolved:
		return row.rejection(), nil
	case RejectionDismissed:
		return Rejection{}, apperr.Conflict("rejection %d was dismissed (%s); nothing to retry", id, row.DismissReason)
	}
	if row.BodyCut {
		return Rejection{}, apperr.Conflict("rejection %d kept only the first %d bytes of its %d-byte body (INTAKE_BODY_LIMIT); it cannot be retried: ask its sender to deliver the order again",
			id, len(row.Body), row.BodyBytes)
	}
	var in NewOrder
	uniqueBy, via := "sync_id", ViaShop
	if row.Source == SourceCRM {
		in, err = parseCRMOrder(json.RawMessage(row.Body))
		uniqueBy, via = "crm_order_id", ViaCRM
	} else {
		in, err = ParseShopOrder([]byte(row.Body))
		in.Source = SourceShop
	}
	if err == nil {
		_, _, err = s.receiveOnceBy(ctx, in, uniqueBy, via, nil, ByRetry)
		if err == nil {
			return s.Rejection(ctx, id)
		}
	}
	r, lookupErr := fullRefusal(ctx, s.db, in, err)
	if lookupErr != nil {
		return Rejection{}, lookupErr
	}
	if r == nil {
		return Rejection{}, err
	}
	if err := s.stillRefused(ctx, row, in, r); err != nil {
		return Rejection{}, err
	}
	return s.Rejection(ctx, id)
}

// stillRefused records that a retry was refused again: the rejection, if
// still open, takes the new reasons and counts the retry; intake.rejected.
func (s *Service) stillRefused(ctx context.Context, row rejectionRow, in NewOrder, r *refusal) error {
	errs, err := json.Marshal(r.err.Fields)
	if err != nil {
		return err
	}
	if r.err.Fields == nil {
		errs = []byte("[]")
	}
	return database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		refused, err := refusedAgain(ctx, tx, row.ID, ","+strings.Join(r.kinds, ",")+",", string(errs), r.err.Message)
		if err != nil || !refused { // resolved or dismissed meanwhile
			return err
		}
		return events.Add(ctx, tx, contracts.IntakeRejected.New(row.ID, rejectedPayload(row.ID, row.Source, in, r, ByRetry, row.Deliveries)))
	})
}

// DismissRejection closes an open rejection for the reason given
// (required), with intake.dismissed. It returns EINVALID naming reason,
// ENOTFOUND for an unknown rejection and ECONFLICT for one that is not
// open.
func (s *Service) DismissRejection(ctx context.Context, id int64, reason string) (Rejection, error) {
	reason = strings.TrimSpace(reason)
	if f := requiredReason(reason, MaxDismissReason); len(f) > 0 {
		return Rejection{}, apperr.Invalid("the dismissal is not valid", f...)
	}
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		row, err := rejection(ctx, tx, id)
		if err != nil {
			return err
		}
		dismissed, err := markDismissed(ctx, tx, id, reason)
		if err != nil {
			return err
		}
		if !dismissed {
			return apperr.Conflict("rejection %d is %s; only an open one can be dismissed", id, row.Status)
		}
		return events.Add(ctx, tx, contracts.IntakeDismissed.New(id, contracts.IntakeDismissedPayload{RejectionID: id, Source: row.Source, Reason: reason}))
	})
	if err != nil {
		return Rejection{}, err
	}
	return s.Rejection(ctx, id)
}
