package sales

import (
	"context"
	"encoding/json"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
)

// What closes a rejection of the intake inbox, and which rejections are
// about an order.

// resolveRejections closes, inside the transaction that received, found
// or changed the order of a delivery, the open rejection of the same
// order, naming the order and the outcome, with intake.resolved: only what
// resolves it does. A manager's retry of it that passes does, whatever its
// outcome; a delivery only when it was applied (created the order or
// changed it) and is not older than the delivery the rejection keeps. A
// repeat or a stale delivery never does: the customer's refused change
// stays in the inbox for the office.
func resolveRejections(ctx context.Context, tx *gorm.DB, in NewOrder, orderID int64, out Outcome, by string) error {
	source := in.Source
	key := intakeKeyOf(source, in)
	if key == "" || (source != SourceShop && source != SourceCRM) {
		return nil
	}
	if by == ByDelivery && out != OutcomeCreated && out != OutcomeChanged {
		return nil
	}
	open, err := openRejectionsByKey(ctx, tx, source, key)
	if err != nil {
		return err
	}
	var ids []int64
	for _, r := range open {
		if by == ByDelivery && keptIsNewer(r, in) {
			continue
		}
		resolved, err := markResolved(ctx, tx, r.ID, orderID, string(out))
		if err != nil {
			return err
		}
		if resolved {
			ids = append(ids, r.ID)
		}
	}
	for _, id := range ids {
		err := events.Add(ctx, tx, contracts.IntakeResolved.New(id, contracts.IntakeResolvedPayload{RejectionID: id, Source: source,
			OrderID: orderID, Outcome: string(out), By: by}))
		if err != nil {
			return err
		}
	}
	return nil
}

// keptIsNewer tells whether the delivery a rejection keeps is newer, by the
// sender's own marks, than the delivery in: an older delivery applied after
// it does not make its change, so it does not resolve it.
func keptIsNewer(r rejectionRow, in NewOrder) bool {
	var kept NewOrder
	if r.Source == SourceCRM {
		kept, _ = parseCRMOrder(json.RawMessage(r.Body))
	} else {
		kept, _ = ParseShopOrder([]byte(r.Body))
	}
	switch {
	case kept.Version != nil && in.Version != nil:
		return *kept.Version > *in.Version
	case kept.UpdatedAt != nil && in.UpdatedAt != nil:
		return kept.UpdatedAt.After(*in.UpdatedAt)
	}
	return false
}

// RejectionsOfOrder returns the ids of the intake inbox's rejections about
// the order, in id order: those resolved into it and those kept under its
// key (the shop's sync_id, the CRM's order id), open or closed.
func (s *Service) RejectionsOfOrder(ctx context.Context, o Order) ([]int64, error) {
	return rejectionsAbout(ctx, s.db, o)
}
