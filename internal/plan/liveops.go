package plan

import (
	"cmp"
	"slices"

	"github.com/tsekh/tsekh/internal/plan/schedblob"
)

// This file is what a re-plan places again of an order: its operations
// not done, as its schedule holds them (schedules.go), and the tasks they
// make for the scheduler.

// liveOp is an operation as its order's schedule holds it: what the
// scheduler needs of it, and its slot.
type liveOp struct {
	schedblob.Op
	ProdOrderID int64
	Slot        schedblob.Slot // where it is planned now, as stored
}

// precedes is Operation.Precedes for live operations.
func (op liveOp) precedes(next liveOp) bool {
	if op.ItemID != next.ItemID || op.Unit != next.Unit || op.Seq >= next.Seq {
		return false
	}
	return op.PartID == 0 || next.PartID == 0 || op.PartID == next.PartID
}

// liveOpsOf are the operations not done among each order's scheduled
// ops, by order and then seq and id. An order none of whose operations is
// done keeps its slice, sorted so in place.
func liveOpsOf(scheds map[int64][]liveOp, done map[int64]bool) map[int64][]liveOp {
	out := make(map[int64][]liveOp, len(scheds))
	for id, ops := range scheds {
		live := ops
		if slices.ContainsFunc(ops, func(op liveOp) bool { return done[op.ID] }) {
			live = slices.DeleteFunc(slices.Clone(ops), func(op liveOp) bool { return done[op.ID] })
		}
		slices.SortFunc(live, func(a, b liveOp) int { return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID)) })
		out[id] = live
	}
	return out
}

// appendRemainingTasks appends to tasks the scheduler's tasks for an
// order's operations not done (sorted by seq, then id), numbered on from
// len(tasks): each after the operations of the step before it in the route
// that it waits for (on its part, or of its unit when either is
// item-scope, as explode plans them). A predecessor that is done is not
// waited for; the route order the shop floor keeps means that then every
// earlier one is done too. The tasks' After lists share one array.
func appendRemainingTasks(tasks []Task, ops []liveOp) []Task {
	base := len(tasks)
	for _, op := range ops {
		tasks = append(tasks, Task{Center: op.WorkCenterID, Minutes: op.Minutes})
	}
	// The operations by unit, each unit's in seq order.
	at := make([]int, len(ops))
	for i := range at {
		at[i] = i
	}
	byUnit := func(a, b int) int {
		return cmp.Or(cmp.Compare(ops[a].ItemID, ops[b].ItemID), cmp.Compare(ops[a].Unit, ops[b].Unit))
	}
	if !slices.IsSortedFunc(at, byUnit) { // an order of one unit is
		slices.SortStableFunc(at, byUnit)
	}
	var after []int
	for u := 0; u < len(at); {
		end := u + 1
		for end < len(at) && ops[at[end]].ItemID == ops[at[u]].ItemID && ops[at[end]].Unit == ops[at[u]].Unit {
			end++
		}
		unit := at[u:end]
		// A step's operations follow each other in unit; each waits for
		// those of the step before that precede it.
		var before []int
		for from := 0; from < len(unit); {
			to := from + 1
			for to < len(unit) && ops[unit[to]].Seq == ops[unit[from]].Seq {
				to++
			}
			for _, i := range unit[from:to] {
				start := len(after)
				for _, j := range before {
					if ops[j].precedes(ops[i]) {
						after = append(after, base+j)
					}
				}
				if len(after) > start {
					tasks[base+i].After = after[start:len(after):len(after)]
				}
			}
			before, from = unit[from:to], to
		}
		u = end
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
