package sales

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// Intake: the orders the shop and the CRM send, received once per key and
// applied again when sent again. This file holds their path, top to bottom.
// A shop webhook delivery goes
//
//	ReceiveShopDelivery     parses the body (ParseShopOrder, shop.go)
//	 └ ReceiveShopOrder     keys it by sync_id
//	    └ receiveOnce       (a CRM row comes in here too, from ImportCRMOrder, crm.go;
//	       └ receiveOnceBy   and a kept rejection retried, from rejections.go)
//	          one transaction:
//	          lockIntakeKey    deliveries of one key take turns
//	          orderIDByKey     is there an order of that key?
//	          no:  createOrderOnce (sales.go), order.received
//	          yes: redeliver     repeated, stale, or a change:
//	                 contentHash, intakeEdit, newer, then the change as a
//	                 PATCH makes it (resolveOptions, diffEdit, applyEdit in
//	                 changes.go; the shop's conflicts with the office,
//	                 versions.go), order.changed
//	          resolveRejections (rejections.go) closes the key's open rejection
//	 └ refuse (rejections.go) answers a refused delivery with every reason,
//	   and keeps it in the intake inbox (intake.rejected).

// ReceiveShopDelivery reads an authentic webhook delivery's body (its
// signature checked by the caller) and receives it as ReceiveShopOrder
// does. A delivery refused for its content (unknown SKU, an invalid field,
// items in production, a conflict with the office's changes) is refused
// with every reason at once and, when it names its order and at least one
// item, kept in the intake inbox (intake.rejected); a body that is not a
// JSON object is refused and not kept.
func (s *Service) ReceiveShopDelivery(ctx context.Context, body []byte, as ActorIn) (Order, Outcome, error) {
	in, err := ParseShopOrder(body)
	if err == nil {
		var o Order
		var out Outcome
		if o, out, err = s.ReceiveShopOrder(ctx, in, as); err == nil {
			return o, out, nil
		}
	}
	in.Source = SourceShop
	return Order{}, "", s.refuse(ctx, SourceShop, in, body, err, as)
}

// ReceiveShopOrder stores an order from the shop webhook once per sync_id:
// the first delivery creates the order and its order.received event
// (OutcomeCreated). A later one, even at the same instant, finds it: the
// same content is OutcomeRepeated and writes nothing; other content is a
// change when it is newer (OutcomeChanged, order.changed), ignored when it
// is not (OutcomeStale), and ECONFLICT when it carries neither version nor
// updated_at or the order cannot take the change (see redeliver). It
// returns EINVALID for unknown SKUs.
//
// as, when not nil, gives the shop's user inside the delivery's transaction
// (creating it on the first delivery), and the events name them; otherwise
// the actor comes from ctx. A refused delivery so leaves nothing behind, not
// even the shop's user.
func (s *Service) ReceiveShopOrder(ctx context.Context, in NewOrder, as ActorIn) (Order, Outcome, error) {
	if in.SyncID == nil || !strings.HasPrefix(*in.SyncID, SyncIDPrefix) {
		return Order{}, "", apperr.Invalid("the shop order is not valid", apperr.Field("id", "is required"))
	}
	in.Source = SourceShop
	return s.receiveOnce(ctx, in, "sync_id", ViaShop, as)
}

// ActorIn gives, inside a delivery's transaction, the user the delivery
// acts as: an integration's user of its own, created (with its
// user.created) on its first delivery in that same transaction, so that a
// delivery refused for its content leaves no user behind.
type ActorIn func(ctx context.Context, tx *gorm.DB) (events.Actor, error)

// in returns ctx with the actor as names in tx, or ctx as it is when as is nil.
func (as ActorIn) in(ctx context.Context, tx *gorm.DB) (context.Context, error) {
	if as == nil {
		return ctx, nil
	}
	a, err := as(ctx, tx)
	if err != nil {
		return ctx, err
	}
	return events.WithActor(ctx, a), nil
}

// Outcome is what became of an order sent again by the shop or the CRM.
type Outcome string

// Outcomes of a delivery of the shop or a CRM row.
const (
	OutcomeCreated  Outcome = "created"  // a new order
	OutcomeRepeated Outcome = "repeated" // the same as the order (or as the delivery last applied): nothing written
	OutcomeChanged  Outcome = "changed"  // newer and different: applied, order.changed written
	OutcomeStale    Outcome = "stale"    // different but not newer than the delivery last applied: ignored
)

// receiveOnce stores an order of the shop or the CRM once per key
// (uniqueBy: sync_id or crm_order_id), or applies it again to the order of
// that key (see redeliver). Deliveries of one key take turns
// (lockIntakeKey), so that many at the same instant make one order and one
// event, and none spends an order number. as, when not nil, gives the actor
// in the transaction (see ActorIn).
func (s *Service) receiveOnce(ctx context.Context, in NewOrder, uniqueBy, via string, as ActorIn) (o Order, out Outcome, err error) {
	return s.receiveOnceBy(ctx, in, uniqueBy, via, as, ByDelivery)
}

// receiveOnceBy is receiveOnce for a delivery (ByDelivery) or a manager's
// retry of a kept rejection (ByRetry): once the order is received, found or
// changed, the open rejection of its key is resolved in the same
// transaction.
func (s *Service) receiveOnceBy(ctx context.Context, in NewOrder, uniqueBy, via string, as ActorIn, by string) (o Order, out Outcome, err error) {
	err = database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		if err := lockIntakeKey(ctx, tx, uniqueBy, in); err != nil {
			return err
		}
		ctx, err := as.in(ctx, tx)
		if err != nil {
			return err
		}
		id, err := orderIDByKey(ctx, tx, uniqueBy, in)
		if err != nil {
			return err
		}
		if id == 0 {
			var created bool
			o, created, err = createOrderOnce(ctx, tx, in, uniqueBy)
			out = OutcomeRepeated
			if created {
				out = OutcomeCreated
			}
		} else {
			o, out, err = redeliver(ctx, tx, id, in, via, s.conflicts)
		}
		if err != nil {
			return err
		}
		return resolveRejections(ctx, tx, in, o.ID, out, by)
	})
	return o, out, err
}

// intakeKeyLock is the first key of the PostgreSQL advisory locks that
// serialise the deliveries of one shop order or CRM row (the second is a
// hash of the key's value).
const intakeKeyLock = 0x73616c65 // "sale"

// lockIntakeKey serialises, until tx ends, the transactions that receive
// the order of one key (sync_id or crm_order_id): the first looks the order
// up, finds none and inserts it; the others wait and then find it, so that
// none of them spends an order number on an insert that cannot succeed
// (PostgreSQL takes the sequence's value before it meets the conflict). On
// SQLite the one connection serialises them already.
func lockIntakeKey(ctx context.Context, tx *gorm.DB, uniqueBy string, in NewOrder) error {
	key := uniqueBy + ":"
	switch {
	case uniqueBy == "sync_id" && in.SyncID != nil:
		key += *in.SyncID
	case uniqueBy == "crm_order_id" && in.CRMOrderID != nil:
		key += *in.CRMOrderID
	default:
		return fmt.Errorf("sales: no %s to lock", uniqueBy)
	}
	return database.LockClassName(tx.WithContext(ctx), intakeKeyLock, key)
}

// orderIDByKey returns the id of the order with in's sync_id or
// crm_order_id, 0 when there is none.
func orderIDByKey(ctx context.Context, tx *gorm.DB, uniqueBy string, in NewOrder) (int64, error) {
	var key any
	switch uniqueBy {
	case "sync_id":
		key = in.SyncID
	case "crm_order_id":
		key = in.CRMOrderID
	default:
		return 0, fmt.Errorf("sales: no unique key %q", uniqueBy)
	}
	return orderByKey(ctx, tx, uniqueBy, key)
}

// redeliver applies a delivery of an order that exists (id):
//   - the same content as the delivery last applied (for the shop: and not
//     newer by its marks), or as the order is now: repeated, nothing written;
//   - different, without version or updated_at: ECONFLICT, since it cannot
//     be told from an older delivery arriving late;
//   - different, and its version (when sent; otherwise its updated_at) is
//     not newer than the last applied one of the same kind: stale, ignored;
//   - different and newer: applied as a change (applyEdit: ECONFLICT when
//     the order cannot take it, EINVALID for an unknown SKU), with its
//     version, updated_at and content remembered.
//
// A shop delivery (via shop) that is newer but was built on an older tsekh
// version (in.TsekhVersion) and changes what the office changed since is
// ECONFLICT naming those fields when mode is ConflictsOffice; with
// ConflictsShop the rest is applied, the office's values kept, and the
// order flagged (order.shop_conflict).
func redeliver(ctx context.Context, tx *gorm.DB, id int64, in NewOrder, via, mode string) (Order, Outcome, error) {
	if err := lockOrder(ctx, tx, id); err != nil {
		return Order{}, "", err
	}
	o, err := order(ctx, tx, id)
	if err != nil {
		return o, "", err
	}
	hash := contentHash(in)
	marked := in.Version != nil || in.UpdatedAt != nil
	if hash == o.SourceHash && (via != ViaShop || !marked || !newer(o, in)) {
		// A replay of the delivery last applied. The shop's same content
		// newer by its marks is the shop saying it again over what changed
		// since: compared with the order like any newer delivery (and
		// refused if the office changed it since the version it was built on).
		return o, OutcomeRepeated, nil
	}
	e := intakeEdit(o, in)
	if err := resolveOptions(ctx, tx, o, &e); err != nil {
		return o, "", err
	}
	p, err := diffEdit(o, e)
	if err != nil {
		return o, "", err
	}
	if p.empty() {
		return o, OutcomeRepeated, nil
	}
	if in.Version == nil && in.UpdatedAt == nil {
		return o, "", apperr.Conflict("order %d was received before with other content; send updated_at or version with a changed order, so that it can be told from an older one arriving late", o.ID)
	}
	if !newer(o, in) {
		return o, OutcomeStale, nil
	}
	var merged []shopConflict
	if via == ViaShop {
		if cs := shopConflicts(o, in, e, p); len(cs) > 0 {
			if mode != ConflictsShop {
				return o, "", &apperr.Error{Code: apperr.ECONFLICT, Fields: conflictFields(cs), Err: errOfficeChanged, Message: fmt.Sprintf(
					"order %d: the delivery, built on tsekh version %d, changes what the office has changed since (%d conflicting); read the order (version %d) and send it built on that",
					o.ID, ptrValue(in.TsekhVersion), len(cs), o.Version)}
			}
			e, merged = withoutConflicts(e, cs), cs
		}
	}
	o, _, err = applyEdit(ctx, tx, o, e, via)
	if err != nil {
		return o, "", err
	}
	if len(merged) > 0 {
		if err := flagShopConflict(ctx, tx, id, in, merged); err != nil {
			return o, "", err
		}
	}
	sets, args := []string{"source_hash = ?"}, []any{hash}
	if in.Version != nil {
		sets, args = append(sets, "source_version = ?"), append(args, *in.Version)
	}
	if in.UpdatedAt != nil {
		sets, args = append(sets, "source_updated_at = ?", "source_updated_ns = ?"), append(args, database.TimeArg(tx, *in.UpdatedAt), in.UpdatedAt.UnixNano())
	}
	if err := setOrderColumns(ctx, tx, id, sets, args, false); err != nil {
		return o, "", err
	}
	o, err = order(ctx, tx, id)
	return o, OutcomeChanged, err
}

// newer tells whether the delivery is newer than the last one applied to
// the order: by version when it has one, else by updated_at, each compared
// with the last applied of the same kind (none applied: newer).
func newer(o Order, in NewOrder) bool {
	if in.Version != nil {
		return o.SourceVersion == nil || *in.Version > *o.SourceVersion
	}
	switch {
	case o.SourceUpdatedNS != nil: // to the nanosecond, as sent
		return in.UpdatedAt.UnixNano() > *o.SourceUpdatedNS
	case o.SourceUpdatedAt != nil: // applied before it was kept so
		return in.UpdatedAt.After(*o.SourceUpdatedAt)
	}
	return true
}

// formatMark writes a shop's updated_at as it was sent: RFC 3339 in UTC
// with as many fraction digits as it has.
func formatMark(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// intakeEdit is the edit that makes the order what the delivery says: its
// customer, due date and the shop's fields, and its lines matched to the
// order's items by SKU, in order (the second line of a SKU is the second
// item of that SKU): a line without an item is added, an item without a
// line is removed. Each line's options replace its item's.
func intakeEdit(o Order, in NewOrder) Edit {
	e := Edit{CustomerName: &in.Customer.Name, CustomerPhone: &in.Customer.Phone, CustomerEmail: &in.Customer.Email,
		DueDate: &in.DueDate, DeliveryAddress: &in.DeliveryAddress, DeliveryDate: &in.DeliveryDate, Currency: &in.Currency, Total: &in.Total}
	used := make([]bool, len(o.Items))
	for _, l := range in.Items {
		options := l.Options // the delivery says them all: none sent, each slot's default
		if options == nil {
			options = map[string]string{}
		}
		j := -1
		for k, it := range o.Items {
			if !used[k] && it.SKU == l.SKU {
				j = k
				break
			}
		}
		if j < 0 {
			e.Items = append(e.Items, ItemEdit{SKU: l.SKU, Qty: &l.Qty, Note: &l.Note, UnitPrice: &l.UnitPrice, LineTotal: &l.LineTotal, Options: options})
			continue
		}
		used[j] = true
		e.Items = append(e.Items, ItemEdit{ID: o.Items[j].ID, Qty: &l.Qty, Note: &l.Note, UnitPrice: &l.UnitPrice, LineTotal: &l.LineTotal, Options: options})
	}
	for k, it := range o.Items {
		if !used[k] {
			e.Items = append(e.Items, ItemEdit{ID: it.ID, Remove: true})
		}
	}
	return e
}

// contentHash is the hash of what a delivery says of the order (not its
// version or updated_at), amounts compared as numbers, by which a repeat
// of the delivery last applied is recognised.
func contentHash(in NewOrder) string {
	type line struct {
		SKU, Note, UnitPrice, LineTotal string
		Qty                             int
		Options                         map[string]string `json:",omitempty"` // omitted when none, as before options were hashed
	}
	c := struct {
		Customer                                         Customer
		DueDate, DeliveryAddress, DeliveryDate, Currency string
		Total                                            string
		Items                                            []line
	}{Customer: in.Customer, DueDate: in.DueDate.String(), DeliveryAddress: in.DeliveryAddress, DeliveryDate: in.DeliveryDate.String(),
		Currency: in.Currency, Total: in.Total.canonical()}
	for _, it := range in.Items {
		c.Items = append(c.Items, line{SKU: it.SKU, Qty: it.Qty, Note: it.Note, UnitPrice: it.UnitPrice.canonical(), LineTotal: it.LineTotal.canonical(),
			Options: it.Options})
	}
	b, _ := json.Marshal(c)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
