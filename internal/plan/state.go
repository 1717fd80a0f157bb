package plan

import (
	"context"
	"errors"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// This file is what the shop floor (package floor) reads and writes of the
// production orders the plan launches: an order read or locked, its state
// moved with its event, the units it did not make put back in the backlog.

// unitKey names one unit of one item.
type unitKey struct {
	item int64
	unit int
}

// LoadOrder reads one production order with its items and progress; with
// lock, it locks the row (on PostgreSQL) for a change of state. It returns
// ENOTFOUND for an unknown order.
func LoadOrder(ctx context.Context, db *gorm.DB, id int64, lock bool) (ProdOrder, error) {
	return prodOrder(ctx, db, id, lock)
}

// LockOrder reads a production order with its items, its row locked (on
// PostgreSQL) for the change of its operations: reports on one order
// queue up here, so that each sees what the one before it did. It returns
// ENOTFOUND for an unknown order.
func LockOrder(ctx context.Context, tx *gorm.DB, id int64) (ProdOrder, error) {
	var o ProdOrder
	q := database.ForUpdate(withItems(tx.WithContext(ctx)))
	err := q.First(&o, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return o, apperr.NotFound("production order %d does not exist", id)
	}
	return o, err
}

// Describe is a short human name of the production order, for messages.
func (o ProdOrder) Describe() string { return describe(o) }

// MoveOrderTx changes the order's state from from to to, stamps the column
// stamp with the database clock and writes the event, in tx: ECONFLICT when
// the order is no longer in state from.
func MoveOrderTx(ctx context.Context, tx *gorm.DB, o ProdOrder, from, to, stamp string, ev events.Contract[contracts.ProdOrderPayload]) error {
	res := tx.Model(&ProdOrder{}).Where("id = ? AND status = ?", o.ID, from).
		Updates(map[string]any{"status": to, stamp: gorm.Expr(database.Now(tx))})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return apperr.Conflict("%s changed at the same time; read it again", describe(o))
	}
	return events.Add(ctx, tx, ev.New(o.ID, contracts.ProdOrderPayload{ProdOrderID: o.ID, Items: o.ItemIDs()}))
}

// OrderedNow is how many of the item the sales order wants now: OrderedQty
// when it changed after the launch, else what the order was built on.
func (it ProdItem) OrderedNow() int { return it.orderedNow() }

// CancelledOrders returns which of the sales orders of o's items the plan
// saw cancelled: their items never go back to the backlog.
func CancelledOrders(ctx context.Context, tx *gorm.DB, o ProdOrder) ([]int64, error) {
	var cancelled []int64
	err := tx.WithContext(ctx).Model(&cancelledOrder{}).Where("order_id IN ?", orderIDs(o)).Pluck("order_id", &cancelled).Error
	return cancelled, err
}

// ReturnToBacklogTx puts qty units of each item back in the planning
// backlog (rest[item id]), as the backlog knew the item when it was
// launched; an item in the backlog already is left as it is.
func ReturnToBacklogTx(ctx context.Context, tx *gorm.DB, o ProdOrder, rest map[int64]int) error {
	var back []BacklogItem
	for _, it := range o.Items {
		if n := rest[it.ItemID]; n > 0 {
			back = append(back, backlogRow(it, n))
		}
	}
	if len(back) == 0 {
		return nil
	}
	return tx.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&back).Error
}
