package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// followBacklog is the subscriber plan.backlog: one subscriber for
// order.received and order.changed, so that an order's change reaches the
// backlog after the order itself (events of one object reach a subscriber in
// the order they were written).
func (s *Service) followBacklog(ctx context.Context, tx *gorm.DB, ev events.Event) error {
	if ev.Type == contracts.OrderChanged.Name() {
		return s.orderChanged(ctx, tx, ev)
	}
	return s.addToBacklog(ctx, tx, ev)
}

// orderChanged runs in the dispatcher's transaction when a sales order
// changed: the backlog follows (a quantity, an item added or removed, the
// due date). An item that has left the backlog for a production order
// already (launched before the change, or while sales checked it) is not
// changed there: the production order is flagged for the planner instead,
// naming the item and what changed, since it was built on what the item
// was; the item remembers what is ordered now (ordered_qty, or removed),
// which a cancellation of that production order puts back into the backlog.
func (s *Service) orderChanged(ctx context.Context, tx *gorm.DB, ev events.Event) error {
	p, err := contracts.OrderChanged.Decode(ev)
	if err != nil {
		return err
	}
	// Launches take turns under launchLock, and so does this: a launch in
	// flight either committed before (its production order is read below)
	// or starts after (it reads the backlog as changed here). Without it, a
	// launch that had read an item's old quantity could commit after this
	// changed the backlog, and its production order would make the old
	// quantity with nobody told.
	if err := database.LockKey(tx, launchLock); err != nil {
		return err
	}
	due, _ := database.ParseDate(p.DueDate) // absent: no due date
	if err := followOrderFields(tx, p, due); err != nil {
		return err
	}
	var stale staleLaunches
	for _, ch := range p.Items {
		c, err := itemChangeOf(ch)
		if err != nil {
			return err
		}
		done, err := followInBacklog(tx, ev, p, due, c)
		if err != nil {
			return err
		}
		if done {
			continue
		}
		if err := stale.mark(tx, c); err != nil {
			return err
		}
	}
	return s.flagStale(ctx, tx, p.OrderID, &stale)
}

// followOrderFields follows, on the backlog and the production orders'
// items not released, the order's fields the plan keeps: the customer's
// name and the due date.
func followOrderFields(tx *gorm.DB, p contracts.OrderChangedPayload, due database.Date) error {
	for _, f := range p.Fields {
		if f.Field == "customer.name" {
			// The name people see on the backlog and production orders.
			if err := tx.Model(&BacklogItem{}).Where("order_id = ?", p.OrderID).Update("customer", f.After).Error; err != nil {
				return err
			}
			if err := tx.Model(&ProdItem{}).Where("order_id = ? AND NOT released", p.OrderID).Update("customer", f.After).Error; err != nil {
				return err
			}
			continue
		}
		if f.Field != "due_date" {
			continue
		}
		if err := tx.Model(&BacklogItem{}).Where("order_id = ?", p.OrderID).Update("due_date", due).Error; err != nil {
			return err
		}
		err := tx.Model(&ProdItem{}).Where("order_id = ? AND NOT released", p.OrderID).Update("due_date", due).Error
		if err != nil {
			return err
		}
	}
	return nil
}

// itemChange is an item's change with what the plan reads of it: the
// change of its note and of its options, each nil when it did not change.
type itemChange struct {
	contracts.ItemChange
	note *contracts.FieldChange
	opts *optionsDiff
}

func itemChangeOf(ch contracts.ItemChange) (itemChange, error) {
	note := noteChange(ch)
	opts, err := optionsChange(ch)
	return itemChange{ItemChange: ch, note: note, opts: opts}, err
}

// followInBacklog follows an item's change in the backlog: an added item
// joins it, a removed one leaves it, a new quantity, note or options
// replace the old. done is true when nothing more is to be done: the item
// was added, only its prices changed (production does not use them), or it
// still waits in the backlog; false when it has left the backlog for a
// production order.
func followInBacklog(tx *gorm.DB, ev events.Event, p contracts.OrderChangedPayload, due database.Date, c itemChange) (done bool, err error) {
	ch, note, opts := c.ItemChange, c.note, c.opts
	var res *gorm.DB
	switch {
	case ch.Change == "added" && ch.Qty != nil:
		row := BacklogItem{ItemID: ch.ItemID, OrderID: p.OrderID, SKU: ch.SKU, Qty: ch.Qty.After, DueDate: due, ReceivedAt: ev.CreatedAt, EventID: ev.ID}
		if note != nil {
			row.Note = note.After
		}
		if opts != nil {
			row.Options = opts.after
		}
		if row.Customer, err = customerOf(tx, p.OrderID); err != nil {
			return false, err
		}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
			return false, err
		}
		return true, nil
	case ch.Change == "removed":
		res = tx.Where("item_id = ?", ch.ItemID).Delete(&BacklogItem{})
	case ch.Qty != nil || note != nil || opts != nil:
		set := map[string]any{}
		if opts != nil {
			set["options"] = opts.after // the next launch cuts the new decor
		}
		if ch.Qty != nil {
			set["qty"] = ch.Qty.After
		}
		if note != nil {
			set["note"] = note.After
		}
		res = tx.Model(&BacklogItem{}).Where("item_id = ?", ch.ItemID).Updates(set)
	default: // prices: production does not use them
		return true, nil
	}
	if res.Error != nil {
		return false, res.Error
	}
	// Still waiting in the backlog: followed there.
	return res.RowsAffected > 0, nil
}

// staleLaunches are the production orders built on items that changed after
// they were launched, in the order met, each with what changed of its items.
type staleLaunches struct {
	whats map[int64][]string // production order → what changed of its items
	items map[int64][]int64  // production order → its items that changed
	ids   []int64
}

// mark notes the change of an item that has left the backlog on each live
// production order of it (not released), and has the item remember what is
// ordered now: its quantity, or that it was removed.
func (st *staleLaunches) mark(tx *gorm.DB, c itemChange) error {
	ch, note, opts := c.ItemChange, c.note, c.opts
	if st.whats == nil {
		st.whats, st.items = map[int64][]string{}, map[int64][]int64{}
	}
	var live []ProdItem
	if err := tx.Where("item_id = ? AND NOT released", ch.ItemID).Find(&live).Error; err != nil {
		return err
	}
	for _, it := range live {
		var whats []string
		mark := map[string]any{}
		switch {
		case ch.Change == "removed":
			whats = append(whats, "was removed")
			mark["removed"] = true
		case ch.Qty != nil:
			whats = append(whats, fmt.Sprintf("changed quantity %d → %d", ch.Qty.Before, ch.Qty.After))
			mark["ordered_qty"] = ch.Qty.After
		}
		if note != nil && ch.Change != "removed" {
			whats = append(whats, fmt.Sprintf("changed note %q → %q", note.Before, note.After))
		}
		if opts != nil && ch.Change != "removed" {
			whats = append(whats, fmt.Sprintf("changed decors %s → %s", orNone(opts.before), orNone(opts.after)))
		}
		if len(mark) > 0 {
			err := tx.Model(&ProdItem{}).Where("prod_order_id = ? AND item_id = ?", it.ProdOrderID, it.ItemID).Updates(mark).Error
			if err != nil {
				return err
			}
		}
		if _, ok := st.whats[it.ProdOrderID]; !ok {
			st.ids = append(st.ids, it.ProdOrderID)
		}
		st.whats[it.ProdOrderID] = append(st.whats[it.ProdOrderID], fmt.Sprintf("item %d (%s) %s", ch.ItemID, ch.SKU, strings.Join(whats, " and ")))
		st.items[it.ProdOrderID] = append(st.items[it.ProdOrderID], ch.ItemID)
	}
	return nil
}

// flagStale flags for the planner each stale production order not
// cancelled, naming its items and what changed of them.
func (s *Service) flagStale(ctx context.Context, tx *gorm.DB, orderID int64, st *staleLaunches) error {
	for _, id := range st.ids {
		o, err := prodOrder(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if o.Status == StatusCancelled {
			continue
		}
		reason := fmt.Sprintf("sales order %d changed after its items were launched: %s; the production order was built on what they were",
			orderID, strings.Join(st.whats[id], ", "))
		if err := s.flagFor(ctx, tx, o, orderID, st.items[id], reason); err != nil {
			return err
		}
	}
	return nil
}

// customerOf is the customer's name the plan keeps for the sales order's
// items, from its backlog rows or its production orders' items.
func customerOf(tx *gorm.DB, orderID int64) (string, error) {
	var names []string
	err := database.Scan(tx.Raw(`SELECT customer FROM plan_backlog WHERE order_id = ? UNION ALL
SELECT customer FROM plan_prod_order_items WHERE order_id = ? LIMIT 1`, orderID, orderID), &names)
	if err != nil || len(names) == 0 {
		return "", err
	}
	return names[0], nil
}

// noteChange is the change of the item's note, nil when it did not change.
func noteChange(ch contracts.ItemChange) *contracts.FieldChange {
	for i, f := range ch.Fields {
		if f.Field == "note" {
			return &ch.Fields[i]
		}
	}
	return nil
}

// optionsDiff is the change of an item's choices of board per decor slot.
type optionsDiff struct {
	before, after catalog.Options
}

// optionsChange is the change of the item's options (order.changed's field
// "options", JSON objects of board codes by slot, "" for none), nil when
// they did not change.
func optionsChange(ch contracts.ItemChange) (*optionsDiff, error) {
	for _, f := range ch.Fields {
		if f.Field != "options" {
			continue
		}
		d := &optionsDiff{before: catalog.Options{}, after: catalog.Options{}}
		for _, v := range []struct {
			text string
			to   *catalog.Options
		}{{f.Before, &d.before}, {f.After, &d.after}} {
			if v.text == "" {
				continue
			}
			if err := json.Unmarshal([]byte(v.text), (*map[string]string)(v.to)); err != nil {
				return nil, fmt.Errorf("plan: order.changed options of item %d: %w", ch.ItemID, err)
			}
		}
		return d, nil
	}
	return nil, nil
}

// orNone writes an item's options for a planner to read.
func orNone(o catalog.Options) string {
	if len(o) == 0 {
		return "(the slots' defaults)"
	}
	b, _ := json.Marshal(map[string]string(o))
	return string(b)
}
