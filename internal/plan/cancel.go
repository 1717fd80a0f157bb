package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/stock"
)

// orderCancelled runs in the dispatcher's transaction when a sales order is
// cancelled: its items leave the backlog for good and every production
// order that makes them reacts (see releaseCancelled).
func (s *Service) orderCancelled(ctx context.Context, tx *gorm.DB, ev events.Event) error {
	// The backlog first: its rows are what a launch takes, so on PostgreSQL
	// this waits for a launch in flight with the same items, and the reads
	// below see what it committed.
	if err := s.dropFromBacklog(ctx, tx, ev); err != nil {
		return err
	}
	p, err := contracts.OrderCancelled.Decode(ev)
	if err != nil {
		return err
	}
	if p.OrderID == 0 {
		return nil
	}
	return s.releaseCancelled(ctx, tx, p)
}

// releaseCancelled takes the cancelled order's items out of the live
// production orders that make them. A production order on which no work has
// started loses them (with their parts and operations) and is cancelled when
// nothing is left of it; one on which work has started is flagged for the
// planner instead.
func (s *Service) releaseCancelled(ctx context.Context, tx *gorm.DB, p contracts.OrderCancelledPayload) error {
	q := tx.WithContext(ctx).Where("NOT released AND order_id = ?", p.OrderID)
	if len(p.Items) > 0 {
		q = tx.WithContext(ctx).Where("NOT released AND (order_id = ? OR item_id IN ?)", p.OrderID, p.Items)
	}
	var live []ProdItem
	if err := q.Order("prod_order_id, item_id").Find(&live).Error; err != nil {
		return err
	}
	byOrder := map[int64][]int64{}
	var prodIDs []int64
	for _, it := range live {
		if !slices.Contains(prodIDs, it.ProdOrderID) {
			prodIDs = append(prodIDs, it.ProdOrderID)
		}
		byOrder[it.ProdOrderID] = append(byOrder[it.ProdOrderID], it.ItemID)
	}
	for _, id := range prodIDs {
		o, err := prodOrder(ctx, tx, id, true)
		if err != nil {
			return err
		}
		items := byOrder[id]
		switch o.Status {
		case StatusLaunched:
			if len(items) == len(o.Items) {
				err = s.cancelEmptied(ctx, tx, o)
			} else {
				err = s.removeItems(ctx, tx, o, p.OrderID, items)
			}
		case StatusInProgress, StatusDone:
			err = s.flag(ctx, tx, o, p.OrderID, items)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// cancelEmptied cancels a production order none of whose items is wanted
// any more; they do not go back to the backlog.
func (s *Service) cancelEmptied(ctx context.Context, tx *gorm.DB, o ProdOrder) error {
	if err := MoveOrderTx(ctx, tx, o, StatusLaunched, StatusCancelled, "cancelled_at", contracts.ProdOrderCancelled); err != nil {
		return err
	}
	if err := s.stock.ReleaseOrderTx(ctx, tx, o.ID, stock.ForCancelled); err != nil {
		return err
	}
	return tx.Model(&ProdItem{}).Where("prod_order_id = ?", o.ID).Update("released", true).Error
}

// removeItems takes items out of a production order on which no work has
// started: their operations, parts and fittings go, the counts follow, and
// the planned ETA becomes the end of the last operation left (the promised
// ETA follows it unless a planner gave one); the event says what the order
// still needs of each material, for its reservations to come down to it.
func (s *Service) removeItems(ctx context.Context, tx *gorm.DB, o ProdOrder, orderID int64, items []int64) error {
	if err := DeleteOperations(ctx, tx, o.ID, "item_id IN ?", items); err != nil {
		return err
	}
	if err := tx.Where("prod_order_id = ? AND item_id IN ?", o.ID, items).Delete(&Part{}).Error; err != nil {
		return err
	}
	if err := tx.Where("prod_order_id = ? AND item_id IN ?", o.ID, items).Delete(&Unit{}).Error; err != nil {
		return err
	}
	if err := tx.Where("prod_order_id = ? AND item_id IN ?", o.ID, items).Delete(&Fitting{}).Error; err != nil {
		return err
	}
	if err := tx.Where("prod_order_id = ? AND item_id IN ?", o.ID, items).Delete(&ProdItem{}).Error; err != nil {
		return err
	}
	var parts, ops int64
	if err := tx.Model(&Part{}).Where("prod_order_id = ?", o.ID).Count(&parts).Error; err != nil {
		return err
	}
	if err := tx.Model(&Operation{}).Where("prod_order_id = ?", o.ID).Count(&ops).Error; err != nil {
		return err
	}
	planned := o.PlannedETA
	scheds, err := schedulesOf(ctx, tx, []int64{o.ID})
	if err != nil {
		return err
	}
	if _, last := spanOf(scheds[o.ID]); !last.IsZero() {
		planned = last
	}
	eta := o.ETA
	if !o.ETAGiven {
		eta = planned
	}
	res := tx.Model(&ProdOrder{}).Where("id = ? AND status = ?", o.ID, StatusLaunched).
		Updates(map[string]any{"parts_count": parts, "ops_count": ops, "planned_eta": planned, "eta": eta})
	if res.Error != nil {
		return res.Error
	}
	var remaining []int64
	for _, it := range o.Items {
		if !slices.Contains(items, it.ItemID) {
			remaining = append(remaining, it.ItemID)
		}
	}
	err = events.Add(ctx, tx, contracts.ProdOrderItemsReleased.New(o.ID, contracts.ProdOrderItemsReleasedPayload{
		ProdOrderID: o.ID, OrderID: orderID, Items: items, Remaining: remaining, PartsCount: int(parts), OpsCount: int(ops), ETA: eta.String()}))
	if err != nil {
		return err
	}
	// What it still needs is what its parts and units left need.
	o.Items = slices.DeleteFunc(o.Items, func(it ProdItem) bool { return slices.Contains(items, it.ItemID) })
	needs, err := RemainingNeeds(ctx, tx, o)
	if err != nil {
		return err
	}
	return s.stock.SetNeedsTx(ctx, tx, o.ID, needs, stock.ForItemsReleased)
}

// flag marks a production order on which work has started for the
// planner's attention: it makes items of a cancelled sales order.
func (s *Service) flag(ctx context.Context, tx *gorm.DB, o ProdOrder, orderID int64, items []int64) error {
	ids := make([]string, len(items))
	for i, id := range items {
		ids[i] = fmt.Sprint(id)
	}
	reason := fmt.Sprintf("sales order %d was cancelled after work had started on its items %s", orderID, strings.Join(ids, ", "))
	return s.flagFor(ctx, tx, o, orderID, items, reason)
}

// flagFor marks a production order for the planner's attention, adding the
// reason to those it has, and writes prod_order.needs_attention.
func (s *Service) flagFor(ctx context.Context, tx *gorm.DB, o ProdOrder, orderID int64, items []int64, reason string) error {
	stored := reason
	if o.AttentionReason != "" && !strings.Contains(o.AttentionReason, reason) {
		stored = o.AttentionReason + "; " + reason
	}
	res := tx.Model(&ProdOrder{}).Where("id = ?", o.ID).Updates(map[string]any{"needs_attention": true, "attention_reason": stored})
	if res.Error != nil {
		return res.Error
	}
	return events.Add(ctx, tx, contracts.ProdOrderNeedsAttention.New(o.ID, contracts.ProdOrderNeedsAttentionPayload{
		ProdOrderID: o.ID, OrderID: orderID, Items: items, Status: o.Status, Reason: reason}))
}

// CancelProdOrder cancels a production order on which no operation has
// started: its items are released and go back to the planning backlog
// (unless their sales order was cancelled meanwhile), its operations no
// longer load the work centres, and prod_order.cancelled is written. It
// returns ENOTFOUND, or ECONFLICT when work has started or the order is
// cancelled already.
func (s *Service) CancelProdOrder(ctx context.Context, id int64) (ProdOrder, error) {
	var o ProdOrder
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		o, err = prodOrder(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if o.Status != StatusLaunched {
			return apperr.Conflict("%s is %s; only an order on which no work has started can be cancelled", describe(o), o.Status)
		}
		if err := MoveOrderTx(ctx, tx, o, StatusLaunched, StatusCancelled, "cancelled_at", contracts.ProdOrderCancelled); err != nil {
			return err
		}
		if err := s.stock.ReleaseOrderTx(ctx, tx, id, stock.ForCancelled); err != nil {
			return err
		}
		if err := tx.Model(&ProdItem{}).Where("prod_order_id = ?", id).Update("released", true).Error; err != nil {
			return err
		}
		var cancelled []int64
		if err := tx.Model(&cancelledOrder{}).Where("order_id IN ?", orderIDs(o)).Pluck("order_id", &cancelled).Error; err != nil {
			return err
		}
		var back []BacklogItem
		for _, it := range o.Items {
			if !slices.Contains(cancelled, it.OrderID) && !it.Removed {
				back = append(back, backlogRow(it, it.orderedNow()))
			}
		}
		if len(back) > 0 {
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&back).Error; err != nil {
				return err
			}
		}
		o, err = prodOrder(ctx, tx, id, false)
		return err
	})
	if err != nil {
		return o, err
	}
	os := []ProdOrder{o}
	err = s.fillShort(ctx, s.db, os)
	return os[0], err
}

// backlogRow is the backlog's row for qty units of a production order's
// item: what the backlog knew of the item when it was launched.
func backlogRow(it ProdItem, qty int) BacklogItem {
	return BacklogItem{ItemID: it.ItemID, OrderID: it.OrderID, SKU: it.SKU, Qty: qty,
		DueDate: it.DueDate, ReceivedAt: it.ReceivedAt, EventID: it.EventID, Customer: it.Customer, Note: it.Note, Options: it.Options}
}

func orderIDs(o ProdOrder) []int64 {
	var ids []int64
	for _, it := range o.Items {
		if !slices.Contains(ids, it.OrderID) {
			ids = append(ids, it.OrderID)
		}
	}
	return ids
}

// cancelledOrder remembers a sales order the plan saw cancelled.
type cancelledOrder struct {
	OrderID int64 `gorm:"primaryKey;autoIncrement:false"`
	EventID int64
}

func (cancelledOrder) TableName() string { return "plan_cancelled_orders" }

// dropFromBacklog runs in the dispatcher's transaction: a cancelled sales
// order's items leave the backlog, and the plan remembers the order so that
// a cancelled production order never puts them back.
func (s *Service) dropFromBacklog(ctx context.Context, tx *gorm.DB, ev events.Event) error {
	p, err := contracts.OrderCancelled.Decode(ev)
	if err != nil {
		return err
	}
	if p.OrderID == 0 {
		return nil
	}
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&cancelledOrder{OrderID: p.OrderID, EventID: ev.ID}).Error; err != nil {
		return err
	}
	q := tx.Where("order_id = ?", p.OrderID)
	if len(p.Items) > 0 {
		q = tx.Where("order_id = ? OR item_id IN ?", p.OrderID, p.Items)
	}
	return q.Delete(&BacklogItem{}).Error
}
