package sales

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// EditRejection replaces the body an open rejection keeps with body, the
// delivery (or CRM row) as the manager corrected it: a SKU, a decor, a
// quantity, the customer's contacts. It is applied later by RetryRejection,
// as its sender's would be. The change is journalled as intake.edited with
// the actor from ctx and every value that changed, by its path; a body that
// changes nothing writes nothing. It returns ENOTFOUND for an unknown
// rejection, ECONFLICT for one that is not open or kept only the
// beginning of its body (body_cut), and EINVALID when body is not a JSON
// object, is larger than INTAKE_BODY_LIMIT, or names another order (the
// shop's id, the CRM's crm_order_id, which the edit must keep).
func (s *Service) EditRejection(ctx context.Context, id int64, body []byte) (Rejection, error) {
	var edited map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&edited); err != nil || edited == nil {
		return Rejection{}, apperr.Invalid("the body is not valid", apperr.Field("body", "must be a JSON object: the delivery as it should have been sent"))
	}
	compact, err := json.Marshal(edited)
	if err != nil {
		return Rejection{}, err
	}
	if limit := s.rejectionBodyLimit(); len(compact) > limit {
		return Rejection{}, apperr.Invalid("the body is too large", apperr.Field("body", "is %d bytes; the inbox keeps at most %d (INTAKE_BODY_LIMIT)", len(compact), limit))
	}
	err = database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		row, err := rejection(ctx, tx, id)
		if err != nil {
			return err
		}
		if row.Status != RejectionOpen {
			return apperr.Conflict("rejection %d is %s; only an open one can be edited", id, row.Status)
		}
		if row.BodyCut {
			return apperr.Conflict("rejection %d kept only the first %d bytes of its %d-byte body (INTAKE_BODY_LIMIT); it cannot be edited: ask its sender to deliver the order again",
				id, len(row.Body), row.BodyBytes)
		}
		var kept map[string]any
		kd := json.NewDecoder(bytes.NewReader([]byte(row.Body)))
		kd.UseNumber()
		if err := kd.Decode(&kept); err != nil {
			return fmt.Errorf("sales: rejection %d keeps a body that is not an object: %w", id, err)
		}
		if f := sameOrder(row.Source, kept, edited); f != "" {
			return apperr.Invalid("the edit names another order", apperr.Field("body."+f, "must stay %s: the edit corrects the order, it does not name another", jsonText(kept[f])))
		}
		changes := bodyChanges(kept, edited)
		if len(changes) == 0 {
			return nil
		}
		set, err := setRejectionBody(ctx, tx, id, string(compact))
		if err != nil {
			return err
		}
		if !set {
			return apperr.Conflict("rejection %d was closed meanwhile", id)
		}
		p := contracts.IntakeEditedPayload{RejectionID: id, Source: row.Source, Changes: changes}
		if row.Source == SourceCRM {
			p.CRMOrderID = contracts.CRMOrderIDOf(row.CRMOrderID)
		} else {
			p.SyncID = row.SyncID
		}
		return events.Add(ctx, tx, contracts.IntakeEdited.New(id, p))
	})
	if err != nil {
		return Rejection{}, err
	}
	return s.Rejection(ctx, id)
}

// sameOrder names the member that says which order a body is, when the
// edit changes it: the shop's id or the CRM's crm_order_id; "" when it
// keeps it.
func sameOrder(source string, kept, edited map[string]any) string {
	key := "id"
	if source == SourceCRM {
		key = "crm_order_id"
	}
	if jsonText(kept[key]) != jsonText(edited[key]) {
		return key
	}
	return ""
}

// bodyChanges lists every value that differs between two bodies, by its
// path (customer.phone, items[0].options.корпус), in path order.
func bodyChanges(before, after map[string]any) []contracts.BodyChange {
	b, a := map[string]string{}, map[string]string{}
	flatten("", before, b)
	flatten("", after, a)
	var paths []string
	for p := range b {
		paths = append(paths, p)
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var out []contracts.BodyChange
	for _, p := range paths {
		if b[p] != a[p] {
			out = append(out, contracts.BodyChange{Field: p, Before: b[p], After: a[p]})
		}
	}
	return out
}

// flatten writes every scalar of v under its path into out.
func flatten(path string, v any, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, e, out)
		}
	case []any:
		for i, e := range v {
			flatten(path+"["+strconv.Itoa(i)+"]", e, out)
		}
	default:
		out[path] = jsonText(v)
	}
}

// jsonText is a JSON value as text: a string without its quotes, anything
// else as JSON; "" for none.
func jsonText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}
