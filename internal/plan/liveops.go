package plan

import (
	"cmp"
	"context"
	"database/sql"
	"slices"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// This file is what a re-plan reads of the operations it places again:
// the few columns the schedule needs, read row by row into a compact
// value, not the whole operation. A re-plan of everything reads every live
// operation (100,000 in a big factory), so their reading is most of its
// time.

// liveOp is an operation not done, as a re-plan places it.
type liveOp struct {
	ID           int64
	ProdOrderID  int64
	ItemID       int64
	PartID       int64 // 0: an item-scope operation
	Unit         int
	Seq          int
	WorkCenterID int64
	Minutes      float64
	Slot         Slot // where it is planned now
}

// precedes is Operation.Precedes for live operations.
func (op liveOp) precedes(next liveOp) bool {
	if op.ItemID != next.ItemID || op.Unit != next.Unit || op.Seq >= next.Seq {
		return false
	}
	return op.PartID == 0 || next.PartID == 0 || op.PartID == next.PartID
}

// opsBatch is the production orders whose operations one query reads.
const opsBatch = 500

// liveOpsOf reads the operations not done of the production orders ids,
// by order and then seq and id, a batch of orders a query. They are
// sorted here: PostgreSQL would sort tens of thousands of rows on disk.
func liveOpsOf(ctx context.Context, tx *gorm.DB, ids []int64) (map[int64][]liveOp, error) {
	out := make(map[int64][]liveOp, len(ids))
	for batch := range slices.Chunk(ids, opsBatch) {
		if err := readLiveOps(ctx, tx, batch, out); err != nil {
			return nil, err
		}
	}
	for _, ops := range out {
		slices.SortFunc(ops, func(a, b liveOp) int { return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID)) })
	}
	return out, nil
}

func readLiveOps(ctx context.Context, tx *gorm.DB, ids []int64, out map[int64][]liveOp) error {
	rows, err := tx.WithContext(ctx).Raw(`SELECT id, prod_order_id, item_id, part_id, unit, seq, work_center_id, minutes,
		start_day, start_min, end_day, end_min FROM plan_operations
		WHERE prod_order_id IN ? AND status <> ?`, ids, OpDone).Rows()
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	var (
		op         liveOp
		part       sql.NullInt64
		start, end database.Date
	)
	for rows.Next() {
		err := rows.Scan(&op.ID, &op.ProdOrderID, &op.ItemID, &part, &op.Unit, &op.Seq, &op.WorkCenterID, &op.Minutes,
			&start, &op.Slot.Start.Min, &end, &op.Slot.End.Min)
		if err != nil {
			return err
		}
		op.PartID = part.Int64
		op.Slot.Start.Day, op.Slot.End.Day = start.Time, end.Time
		out[op.ProdOrderID] = append(out[op.ProdOrderID], op)
	}
	return rows.Err()
}

// remainingTasks are the scheduler's tasks for an order's operations not
// done (sorted by seq, then id), numbered from base: each after the
// operations of the step before it in the route that it waits for (on its
// part, or of its unit when either is item-scope, as explode plans them).
// A predecessor that is done is not waited for; the route order the shop
// floor keeps means that then every earlier one is done too.
func remainingTasks(ops []liveOp, base int) []Task {
	tasks := make([]Task, len(ops))
	units := map[unitKey][]int{} // indices into ops, in seq order
	for i, op := range ops {
		tasks[i] = Task{Center: op.WorkCenterID, Minutes: op.Minutes}
		k := unitKey{op.ItemID, op.Unit}
		units[k] = append(units[k], i)
	}
	for _, at := range units {
		// A step's operations follow each other in at; each waits for
		// those of the step before that precede it.
		var before []int
		for from := 0; from < len(at); {
			to := from + 1
			for to < len(at) && ops[at[to]].Seq == ops[at[from]].Seq {
				to++
			}
			for _, i := range at[from:to] {
				for _, j := range before {
					if ops[j].precedes(ops[i]) {
						tasks[i].After = append(tasks[i].After, base+j)
					}
				}
			}
			before, from = at[from:to], to
		}
	}
	return tasks
}

// seqsOf are the operations' route steps, in their order.
func seqsOf(ops []liveOp) []int {
	seqs := make([]int, len(ops))
	for i, op := range ops {
		seqs[i] = op.Seq
	}
	return seqs
}

// seqs are the route steps of a launch's operations, in their order.
func (x *exploded) seqs() []int {
	seqs := make([]int, len(x.ops))
	for i, op := range x.ops {
		seqs[i] = op.Seq
	}
	return seqs
}
