package sales

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// What tsekh does with a shop delivery built on an older tsekh version that
// changes fields the office changed since (SHOP_CONFLICTS).
const (
	// ConflictsOffice refuses it: 409 naming the fields, the delivery kept
	// in the intake inbox, the order unchanged. The default.
	ConflictsOffice = "office"
	// ConflictsShop applies the fields the office did not touch, keeps the
	// office's values of the others and flags the order for a manager
	// (order.shop_conflict).
	ConflictsShop = "shop"
)

// SetShopConflicts says what to do with a shop delivery that conflicts with
// the office's changes: ConflictsOffice (the default) or ConflictsShop.
func (s *Service) SetShopConflicts(mode string) {
	if mode == ConflictsShop {
		s.conflicts = ConflictsShop
		return
	}
	s.conflicts = ConflictsOffice
}

// advanceVersion moves the order's tsekh version on by one and returns it:
// every journalled change of an order calls it once before writing its
// event, whose payload carries the new version.
func advanceVersion(ctx context.Context, tx *gorm.DB, id int64) (int64, error) {
	v, err := bumpVersion(ctx, tx, id)
	if err == nil && v == 0 {
		err = apperr.NotFound("order %d does not exist", id)
	}
	return v, err
}

// officeChanges reads what the office changed of an order, at which
// version: an order field ("customer.phone", "due_date"…), an item
// ("item:<id>": changed, added or removed) or a SKU whose item the office
// removed ("removed:<sku>").
func officeChanges(o Order) map[string]int64 {
	m := map[string]int64{}
	if o.OfficeChanges != "" {
		_ = json.Unmarshal([]byte(o.OfficeChanges), &m) // written only by recordOfficeChanges
	}
	return m
}

// recordOfficeChanges remembers, for the conflicts of later shop
// deliveries, what a change that did not come from the shop changed, at
// the version it made.
func recordOfficeChanges(ctx context.Context, tx *gorm.DB, o Order, p contracts.OrderChangedPayload, version int64) error {
	m := officeChanges(o)
	for _, f := range p.Fields {
		m[f.Field] = version
	}
	for _, it := range p.Items {
		m["item:"+strconv.FormatInt(it.ItemID, 10)] = version
		if it.Change == "removed" {
			m["removed:"+it.SKU] = version
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return setOfficeChanges(ctx, tx, o.ID, string(b))
}

// shopConflict is one thing a shop delivery would change that the office
// changed after the version the delivery was built on: named as the
// delivery names it, with the part of the edit that makes it.
type shopConflict struct {
	apperr.FieldError
	field string // an order field of Edit, or ""
	line  int    // the edit's item that makes it (its index in Edit.Items), or -1
}

// shopConflicts finds what a shop delivery would change (the edit e, made
// by intakeEdit, and its plan p) that the office changed after the tsekh
// version the delivery was built on. A delivery that sends no tsekh_version
// was built on none: every office change counts.
func shopConflicts(o Order, in NewOrder, e Edit, p editPlan) []shopConflict {
	office := officeChanges(o)
	if len(office) == 0 {
		return nil
	}
	var built int64
	if in.TsekhVersion != nil {
		built = *in.TsekhVersion
	}
	since := func(key string) (int64, bool) {
		v, ok := office[key]
		return v, ok && v > built
	}
	var out []shopConflict
	for _, f := range p.payload.Fields {
		if v, ok := since(f.Field); ok {
			out = append(out, shopConflict{field: f.Field, line: -1, FieldError: apperr.Field(f.Field,
				"the office changed it at version %d (to %q), after version %d the delivery was built on", v, f.Before, built)})
		}
	}
	for i, ie := range e.Items {
		name := fmt.Sprintf("items[%d]", i)
		switch {
		case ie.ID == 0:
			if v, ok := since("removed:" + ie.SKU); ok {
				out = append(out, shopConflict{line: i, FieldError: apperr.Field(name+".sku",
					"the office removed the item of %s at version %d, after version %d the delivery was built on", ie.SKU, v, built)})
			}
		case !planTouches(p, ie.ID):
		case ie.Remove:
			if v, ok := since("item:" + strconv.FormatInt(ie.ID, 10)); ok {
				out = append(out, shopConflict{line: i, FieldError: apperr.Field("items",
					"the delivery drops item %d (%s), which the office changed or added at version %d, after version %d the delivery was built on",
					ie.ID, itemSKU(o, ie.ID), v, built)})
			}
		default:
			if v, ok := since("item:" + strconv.FormatInt(ie.ID, 10)); ok {
				out = append(out, shopConflict{line: i, FieldError: apperr.Field(name,
					"the office changed item %d (%s) at version %d, after version %d the delivery was built on", ie.ID, itemSKU(o, ie.ID), v, built)})
			}
		}
	}
	return out
}

// conflictFields are the conflicts as a problem's fields.
func conflictFields(cs []shopConflict) []apperr.FieldError {
	out := make([]apperr.FieldError, len(cs))
	for i, c := range cs {
		out[i] = c.FieldError
	}
	return out
}

// planTouches tells whether the plan changes or removes the item.
func planTouches(p editPlan, id int64) bool {
	for _, it := range p.payload.Items {
		if it.ItemID == id {
			return true
		}
	}
	return false
}

func itemSKU(o Order, id int64) string {
	for _, it := range o.Items {
		if it.ID == id {
			return it.SKU
		}
	}
	return ""
}

// withoutConflicts is the edit e without what the conflicts name: the
// office's values of those fields and items stay.
func withoutConflicts(e Edit, conflicts []shopConflict) Edit {
	lines := map[int]bool{}
	for _, c := range conflicts {
		switch c.field {
		case "customer.name":
			e.CustomerName = nil
		case "customer.phone":
			e.CustomerPhone = nil
		case "customer.email":
			e.CustomerEmail = nil
		case "due_date":
			e.DueDate = nil
		case "delivery_address":
			e.DeliveryAddress = nil
		case "delivery_date":
			e.DeliveryDate = nil
		case "currency":
			e.Currency = nil
		case "total":
			e.Total = nil
		}
		if c.line >= 0 {
			lines[c.line] = true
		}
	}
	items := make([]ItemEdit, 0, len(e.Items))
	for i, ie := range e.Items {
		if !lines[i] {
			items = append(items, ie)
		}
	}
	e.Items = items
	return e
}

// flagShopConflict records, with a delivery merged around the office's
// changes, what was kept: the order's attention note for a manager and
// order.shop_conflict.
func flagShopConflict(ctx context.Context, tx *gorm.DB, id int64, in NewOrder, conflicts []shopConflict) error {
	o, err := order(ctx, tx, id)
	if err != nil {
		return err
	}
	names := make([]string, len(conflicts))
	reasons := make([]contracts.RejectionReason, len(conflicts))
	for i, c := range conflicts {
		names[i] = c.Field
		reasons[i] = contracts.RejectionReason{Field: c.Field, Message: c.Message}
	}
	note := fmt.Sprintf("a shop delivery built on version %d changed what the office had changed since (%s): the office's values were kept, the rest applied",
		ptrValue(in.TsekhVersion), strings.Join(names, ", "))
	v, err := advanceVersion(ctx, tx, id)
	if err != nil {
		return err
	}
	if err := setAttention(ctx, tx, id, note); err != nil {
		return err
	}
	p := contracts.OrderShopConflictPayload{OrderID: id, SyncID: o.SyncID, Status: o.Status, TsekhVersion: ptrValue(in.TsekhVersion),
		ShopVersion: in.Version, Fields: reasons, Version: v, ETA: o.ETA.String()}
	if in.UpdatedAt != nil {
		p.ShopUpdatedAt = formatMark(*in.UpdatedAt)
	}
	return events.Add(ctx, tx, contracts.OrderShopConflict.New(id, p))
}

// ClearAttention clears the order's attention note (set when a shop
// delivery was merged around the office's changes) once a manager has
// looked at it, with order.attention_cleared (the order's version stays:
// the shop is not told of it). It returns ENOTFOUND for an
// unknown order and ECONFLICT when the order has no note.
func (s *Service) ClearAttention(ctx context.Context, id int64) (Order, error) {
	var o Order
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		if err := lockOrder(ctx, tx, id); err != nil {
			return err
		}
		var err error
		if o, err = order(ctx, tx, id); err != nil {
			return err
		}
		if o.Attention == "" {
			return apperr.Conflict("order %d has no attention note to clear", id)
		}
		if err := setAttention(ctx, tx, id, ""); err != nil {
			return err
		}
		// The note is the office's own: the shop is not told of clearing
		// it, so the order keeps its version (the shop sees every version).
		if err := events.Add(ctx, tx, contracts.OrderAttentionCleared.New(id, contracts.OrderAttentionClearedPayload{OrderID: id, Attention: o.Attention, Version: o.Version})); err != nil {
			return err
		}
		o, err = order(ctx, tx, id)
		return err
	})
	return o, err
}
