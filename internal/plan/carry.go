package plan

import (
	"context"
	"slices"
	"strings"

	"gorm.io/gorm"
)

// This file is "nothing made is lost": a production order closed short
// sends the units it did not make back to the backlog with their parts
// (closeBack); launching the item again takes those parts over, where they
// were (carriedUnits, carryOver): the steps done on them are not done again
// and the new order counts only the rest.

// carried is a unit closed short to carry on: its parts and what was done.
type carried struct {
	unit  Unit
	parts []Part
	// done holds the seqs done of each part (by id) and, under 0, of the unit's item-scope steps.
	done map[int64][]int
}

// carriedUnits returns, per backlog item, the units closed back to carry on
// (at most the item's quantity), oldest first, with their live parts and
// the steps done.
func carriedUnits(ctx context.Context, tx *gorm.DB, backlog []BacklogItem) (map[int64][]carried, error) {
	out := map[int64][]carried{}
	for _, b := range backlog {
		var units []Unit
		err := tx.WithContext(ctx).Where("item_id = ? AND closed_back AND carried_to IS NULL", b.ItemID).Order("id").Limit(max(b.Qty, 0)).Find(&units).Error
		if err != nil {
			return nil, err
		}
		for _, u := range units {
			c := carried{unit: u, done: map[int64][]int{}}
			err := tx.WithContext(ctx).Where("prod_order_id = ? AND item_id = ? AND unit = ? AND status = ?", u.ProdOrderID, u.ItemID, u.Unit, PartLive).
				Order("id").Find(&c.parts).Error
			if err != nil {
				return nil, err
			}
			// The steps done on its parts, in whichever order did them (a unit
			// carried twice has steps done by both), and on the unit itself.
			var ops []Operation
			err = tx.WithContext(ctx).Where("prod_order_id = ? AND item_id = ? AND unit = ? AND part_id IS NULL AND status = ?", u.ProdOrderID, u.ItemID, u.Unit, OpDone).
				Find(&ops).Error
			if err != nil {
				return nil, err
			}
			ids := make([]int64, len(c.parts))
			for i, p := range c.parts {
				ids[i] = p.ID
			}
			var partOps []Operation
			if len(ids) > 0 {
				if err := tx.WithContext(ctx).Where("part_id IN ? AND status = ?", ids, OpDone).Find(&partOps).Error; err != nil {
					return nil, err
				}
			}
			ops = append(ops, partOps...)
			for _, op := range ops {
				var part int64
				if op.PartID != nil {
					part = *op.PartID
				}
				c.done[part] = append(c.done[part], op.Seq)
			}
			out[b.ItemID] = append(out[b.ItemID], c)
		}
	}
	return out, nil
}

// carryOver makes the exploded launch take over the carried units: the
// i-th carried unit of an item is its unit i; each of its parts that
// matches one of the new unit's (the same line, name and size, in order)
// is reused, and the operations done on it (and the unit's item-scope steps
// done) are dropped from the launch: the schedule and the counts see only
// the rest.
func (x *exploded) carryOver(carry map[int64][]carried) {
	if len(carry) == 0 {
		return
	}
	x.reuse = map[int]Part{}
	drop := make([]bool, len(x.ops))
	for item, units := range carry {
		for n, c := range units {
			unit := n + 1
			used := map[int64]bool{}
			for i, p := range x.parts {
				if p.ItemID != item || p.Unit != unit {
					continue
				}
				j := slices.IndexFunc(c.parts, func(old Part) bool {
					return !used[old.ID] && old.Seq == p.Seq && old.Name == p.Name && old.LengthMM == p.LengthMM && old.WidthMM == p.WidthMM &&
						strings.EqualFold(old.Board, p.Board) // a part cut from another board is not this one
				})
				if j < 0 {
					continue
				}
				old := c.parts[j]
				used[old.ID] = true
				x.reuse[i] = old
				for k, op := range x.ops {
					if x.opPart[k] == i && slices.Contains(c.done[old.ID], op.Seq) {
						drop[k] = true
					}
				}
			}
			for k, op := range x.ops {
				if op.ItemID == item && op.Unit == unit && x.opPart[k] < 0 && slices.Contains(c.done[0], op.Seq) {
					drop[k] = true
				}
			}
		}
	}
	x.dropOps(drop)
}

// dropOps takes the operations marked out of the launch; what followed one
// of them (done already) no longer waits for it.
func (x *exploded) dropOps(drop []bool) {
	index := make([]int, len(x.ops))
	var ops []Operation
	var opPart []int
	var tasks []Task
	for k := range x.ops {
		if drop[k] {
			index[k] = -1
			continue
		}
		index[k] = len(ops)
		ops, opPart, tasks = append(ops, x.ops[k]), append(opPart, x.opPart[k]), append(tasks, x.tasks[k])
	}
	for i := range tasks {
		var after []int
		for _, a := range tasks[i].After {
			if index[a] >= 0 {
				after = append(after, index[a])
			}
		}
		tasks[i].After = after
	}
	x.ops, x.opPart, x.tasks = ops, opPart, tasks
}

func (x *exploded) carriedParts() int { return len(x.reuse) }

// storeParts writes the launch's parts: new ones created with their codes,
// carried ones moved to the order (their codes, labels and history kept).
func (x *exploded) storeParts(tx *gorm.DB, orderID int64) error {
	var fresh []Part
	var at []int
	for i := range x.parts {
		if old, ok := x.reuse[i]; ok {
			err := tx.Model(&Part{}).Where("id = ?", old.ID).
				Updates(map[string]any{"prod_order_id": orderID, "unit": x.parts[i].Unit, "board_need": x.parts[i].BoardNeed}).Error
			if err != nil {
				return err
			}
			x.parts[i].ID, x.parts[i].Code = old.ID, old.Code
			continue
		}
		fresh, at = append(fresh, x.parts[i]), append(at, i)
	}
	if len(fresh) > 0 {
		if err := tx.Omit("ID").CreateInBatches(&fresh, insertBatch).Error; err != nil {
			return err
		}
	}
	for j, i := range at {
		x.parts[i].ID = fresh[j].ID
	}
	return nil
}

// markCarried records that the order took over the carried units.
func markCarried(tx *gorm.DB, orderID int64, carry map[int64][]carried) error {
	var ids []int64
	for _, units := range carry {
		for _, c := range units {
			ids = append(ids, c.unit.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return tx.Model(&Unit{}).Where("id IN ?", ids).Update("carried_to", orderID).Error
}
