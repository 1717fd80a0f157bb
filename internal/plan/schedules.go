package plan

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/plan/schedblob"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// This file is where the planned slots are kept: one row of plan_schedules
// per production order, holding its operations as the schedule places them
// (item, part, unit, step, work centre, minutes) and, apart, their slots,
// in the form of package schedblob. A change of priority in the middle of
// a big plan moves tens of thousands of operations: as rows of
// plan_operations that was tens of thousands of row writes, as schedules
// it is the slots of a few hundred orders. plan_operations keeps the rest
// of an operation (its name, scope and status, the floor's stamps);
// whether one is done is read there. Whatever adds operations to an order
// or takes some away goes through this file (StoreSchedules,
// AddOperations, DeleteOperations), so that the two tables always hold the
// same operations.

// scheduleBatch is the production orders whose schedules one statement
// reads; writes take a fifth of it.
const scheduleBatch = 500

// epochDay is the day's number counted from 1970-01-01.
func epochDay(t time.Time) int64 {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// blobSlot is the stored form of sl.
func blobSlot(sl Slot) schedblob.Slot {
	out := schedblob.Slot{StartDay: schedblob.NoDay, StartMin: sl.Start.Min, EndDay: schedblob.NoDay, EndMin: sl.End.Min}
	if !sl.Start.Day.IsZero() {
		out.StartDay = epochDay(sl.Start.Day)
	}
	if !sl.End.Day.IsZero() {
		out.EndDay = epochDay(sl.End.Day)
	}
	return out
}

// slotOfBlob is the slot that s stores.
func slotOfBlob(s schedblob.Slot) Slot {
	out := Slot{Start: Moment{Min: s.StartMin}, End: Moment{Min: s.EndMin}}
	if s.StartDay != schedblob.NoDay {
		out.Start.Day = dayOf(s.StartDay)
	}
	if s.EndDay != schedblob.NoDay {
		out.End.Day = dayOf(s.EndDay)
	}
	return out
}

// dayOf is midnight UTC of the day numbered d from 1970-01-01.
func dayOf(d int64) time.Time { return time.Unix(d*86400, 0).UTC() }

// encodedSchedule is an order's schedule in its stored form.
type encodedSchedule struct {
	id          int64
	ops, slots  []byte
	first, last database.Date
}

// encodeSchedule is the stored form of production order id's operations
// (sorted here by id, in place, as they are stored).
func encodeSchedule(id int64, ops []liveOp) encodedSchedule {
	out := encodeSlots(id, ops)
	blob := make([]schedblob.Op, len(ops))
	for i, op := range ops {
		blob[i] = op.Op
	}
	out.ops = schedblob.EncodeOps(blob)
	return out
}

// encodeSlots is the stored form of the slots of production order id's
// operations (sorted here by id, in place, as they are stored), and their
// first and last days.
func encodeSlots(id int64, ops []liveOp) encodedSchedule {
	slices.SortFunc(ops, func(a, b liveOp) int { return cmp.Compare(a.ID, b.ID) })
	slots := make([]schedblob.Slot, len(ops))
	for i, op := range ops {
		slots[i] = op.Slot
	}
	first, last := spanOf(ops)
	return encodedSchedule{id: id, slots: schedblob.EncodeSlots(slots), first: first, last: last}
}

// spanOf is the first start day and the last end day of ops (zero: none).
func spanOf(ops []liveOp) (first, last database.Date) {
	lo, hi := int64(schedblob.NoDay), int64(schedblob.NoDay)
	for _, op := range ops {
		if d := op.Slot.StartDay; d != schedblob.NoDay && (lo == schedblob.NoDay || d < lo) {
			lo = d
		}
		if d := op.Slot.EndDay; d != schedblob.NoDay && d > hi {
			hi = d
		}
	}
	if lo != schedblob.NoDay {
		first = database.DateOf(dayOf(lo))
	}
	if hi != schedblob.NoDay {
		last = database.DateOf(dayOf(hi))
	}
	return first, last
}

// decoder reads stored schedules, reusing its buffers.
type decoder struct {
	ops   []schedblob.Op
	slots []schedblob.Slot
}

// decode appends the operations of production order id that its stored
// ops and slots hold to out.
func (d *decoder) decode(id int64, ops, slots []byte, out []liveOp) ([]liveOp, error) {
	var err error
	if d.ops, err = schedblob.DecodeOps(ops, d.ops[:0]); err != nil {
		return out, fmt.Errorf("plan: the schedule of production order %d: %w", id, err)
	}
	if d.slots, err = schedblob.DecodeSlots(slots, d.slots[:0]); err != nil {
		return out, fmt.Errorf("plan: the schedule of production order %d: %w", id, err)
	}
	if len(d.ops) != len(d.slots) {
		return out, fmt.Errorf("plan: the schedule of production order %d has %d operations and %d slots", id, len(d.ops), len(d.slots))
	}
	out = slices.Grow(out, len(d.ops))
	for i, op := range d.ops {
		out = append(out, liveOp{Op: op, ProdOrderID: id, Slot: d.slots[i]})
	}
	return out, nil
}

// scanSchedules reads the rows (prod_order_id, ops, slots) that q selects
// into out: each order's operations, in id order.
func scanSchedules(q *gorm.DB, out map[int64][]liveOp) error {
	rows, err := q.Rows()
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	var (
		d          decoder
		id         int64
		ops, slots sql.RawBytes // read before the next row
	)
	for rows.Next() {
		if err := rows.Scan(&id, &ops, &slots); err != nil {
			return err
		}
		if out[id], err = d.decode(id, ops, slots, out[id][:0]); err != nil {
			return err
		}
	}
	return rows.Err()
}

// schedulesOf reads the schedules of the production orders ids: every
// operation of each, done or not, in id order.
func schedulesOf(ctx context.Context, tx *gorm.DB, ids []int64) (map[int64][]liveOp, error) {
	out := make(map[int64][]liveOp, len(ids))
	for batch := range slices.Chunk(ids, scheduleBatch) {
		q := tx.WithContext(ctx).Raw("SELECT prod_order_id, ops, slots FROM plan_schedules WHERE prod_order_id IN ?", batch)
		if err := scanSchedules(q, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// liveSchedules reads the schedules of the live (launched or in-progress)
// production orders that the condition on plan_prod_orders (with its args)
// selects, and which of their operations are done.
func liveSchedules(ctx context.Context, tx *gorm.DB, where string, args ...any) (map[int64][]liveOp, map[int64]bool, error) {
	out := map[int64][]liveOp{}
	q := tx.WithContext(ctx).Table("plan_schedules").Select("plan_schedules.prod_order_id, plan_schedules.ops, plan_schedules.slots").
		Joins("JOIN plan_prod_orders ON plan_prod_orders.id = plan_schedules.prod_order_id").
		Where("plan_prod_orders.status IN ?", liveStatuses).Where(where, args...)
	if err := scanSchedules(q, out); err != nil {
		return nil, nil, err
	}
	var done []int64
	err := tx.WithContext(ctx).Model(&Operation{}).Joins("JOIN plan_prod_orders ON plan_prod_orders.id = plan_operations.prod_order_id").
		Where("plan_operations.status = ? AND plan_prod_orders.status IN ?", OpDone, liveStatuses).Where(where, args...).
		Pluck("plan_operations.id", &done).Error
	if err != nil {
		return nil, nil, err
	}
	return out, setOf(done), nil
}

// doneOf returns which operations of the production orders ids are done.
func doneOf(ctx context.Context, tx *gorm.DB, ids []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	for batch := range slices.Chunk(ids, scheduleBatch) {
		var done []int64
		if err := tx.WithContext(ctx).Model(&Operation{}).Where("prod_order_id IN ? AND status = ?", batch, OpDone).Pluck("id", &done).Error; err != nil {
			return nil, err
		}
		for _, id := range done {
			out[id] = true
		}
	}
	return out, nil
}

func setOf(ids []int64) map[int64]bool {
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// writeSchedules stores the schedules of the orders given, replacing what
// they had; an order with no operations left has none.
func writeSchedules(ctx context.Context, tx *gorm.DB, scheds map[int64][]liveOp) error {
	var gone []int64
	var rows []encodedSchedule
	for _, id := range slices.Sorted(maps.Keys(scheds)) {
		if len(scheds[id]) == 0 {
			gone = append(gone, id)
			continue
		}
		rows = append(rows, encodeSchedule(id, scheds[id]))
	}
	for batch := range slices.Chunk(rows, scheduleBatch/5) {
		args := make([]any, 0, 5*len(batch))
		for _, r := range batch {
			args = append(args, r.id, r.ops, r.slots, r.first, r.last)
		}
		q := "INSERT INTO plan_schedules (prod_order_id, ops, slots, first_day, last_day) VALUES " + valueRows(len(batch), 5) +
			" ON CONFLICT (prod_order_id) DO UPDATE SET ops = excluded.ops, slots = excluded.slots, " +
			"first_day = excluded.first_day, last_day = excluded.last_day"
		if err := tx.WithContext(ctx).Exec(q, args...).Error; err != nil {
			return err
		}
	}
	for batch := range slices.Chunk(gone, scheduleBatch) {
		if err := tx.WithContext(ctx).Exec("DELETE FROM plan_schedules WHERE prod_order_id IN ?", batch).Error; err != nil {
			return err
		}
	}
	return nil
}

// writeSlots stores the slots of the orders given, whose operations are
// those of their stored schedules: a re-plan moves them and changes
// nothing else. On PostgreSQL one statement takes them all, as arrays.
func writeSlots(ctx context.Context, tx *gorm.DB, scheds map[int64][]liveOp) error {
	if len(scheds) == 0 {
		return nil
	}
	rows := make([]encodedSchedule, 0, len(scheds))
	for _, id := range slices.Sorted(maps.Keys(scheds)) {
		rows = append(rows, encodeSlots(id, scheds[id]))
	}
	if database.DialectOf(tx) == database.Postgres {
		ids, slots, first, last := make([]int64, len(rows)), make([][]byte, len(rows)), make([]string, len(rows)), make([]string, len(rows))
		for i, r := range rows {
			ids[i], slots[i], first[i], last[i] = r.id, r.slots, r.first.String(), r.last.String()
		}
		// Through the transaction itself: gorm would spread the arrays
		// into lists.
		res, err := tx.Statement.ConnPool.ExecContext(ctx, `UPDATE plan_schedules AS s SET slots = v.slots,
  first_day = NULLIF(v.first_day, '')::date, last_day = NULLIF(v.last_day, '')::date
FROM unnest($1::bigint[], $2::bytea[], $3::text[], $4::text[]) AS v (id, slots, first_day, last_day) WHERE s.prod_order_id = v.id`,
			ids, slots, first, last)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		return slotsWritten(n, len(rows))
	}
	for batch := range slices.Chunk(rows, scheduleBatch/5) {
		args := make([]any, 0, 4*len(batch))
		for _, r := range batch {
			args = append(args, r.id, r.slots, r.first, r.last)
		}
		q := "WITH v (id, slots, first_day, last_day) AS (VALUES " + valueRows(len(batch), 4) +
			") UPDATE plan_schedules SET slots = v.slots, first_day = v.first_day, last_day = v.last_day FROM v WHERE plan_schedules.prod_order_id = v.id"
		res := tx.WithContext(ctx).Exec(q, args...)
		if res.Error != nil {
			return res.Error
		}
		if err := slotsWritten(res.RowsAffected, len(batch)); err != nil {
			return err
		}
	}
	return nil
}

// valueRows is n rows of width placeholders each: "(?, ?), (?, ?)".
func valueRows(n, width int) string {
	row := "(" + strings.Repeat("?, ", width-1) + "?)"
	return strings.Repeat(row+", ", n-1) + row
}

// slotsWritten is the error of a write of the slots of want orders that
// found only n of their schedules: a bug, never a user's doing.
func slotsWritten(n int64, want int) error {
	if n != int64(want) {
		return fmt.Errorf("plan: %d of %d production orders had a schedule to move", n, want)
	}
	return nil
}

// scheduledOf is the operation as its schedule holds it.
func scheduledOf(op Operation) liveOp {
	out := liveOp{Op: schedblob.Op{ID: op.ID, ItemID: op.ItemID, Unit: op.Unit, Seq: op.Seq, WorkCenterID: op.WorkCenterID, Minutes: op.Minutes},
		ProdOrderID: op.ProdOrderID, Slot: blobSlot(slotOf(op))}
	if op.PartID != nil {
		out.PartID = *op.PartID
	}
	return out
}

// StoreSchedules stores the schedules of the production orders of ops:
// each order's schedule becomes its operations among ops, with their
// planned slots. The operations are in plan_operations already (their ids
// are known).
func StoreSchedules(ctx context.Context, tx *gorm.DB, ops []Operation) error {
	scheds := map[int64][]liveOp{}
	for _, op := range ops {
		scheds[op.ProdOrderID] = append(scheds[op.ProdOrderID], scheduledOf(op))
	}
	return writeSchedules(ctx, tx, scheds)
}

// AddOperations adds ops to plan_operations (their ids the database's) and
// to their production orders' schedules, with the planned slots they
// carry. The caller holds the orders' rows locked.
func AddOperations(ctx context.Context, tx *gorm.DB, ops []Operation) error {
	if len(ops) == 0 {
		return nil
	}
	if err := tx.WithContext(ctx).Omit("ID").Create(&ops).Error; err != nil {
		return err
	}
	scheds, err := schedulesOf(ctx, tx, ordersOf(ops))
	if err != nil {
		return err
	}
	for _, op := range ops {
		scheds[op.ProdOrderID] = append(scheds[op.ProdOrderID], scheduledOf(op))
	}
	return writeSchedules(ctx, tx, scheds)
}

// ordersOf are the production orders of ops, in id order.
func ordersOf(ops []Operation) []int64 {
	ids := make([]int64, 0, len(ops))
	for _, op := range ops {
		ids = append(ids, op.ProdOrderID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// DeleteOperations deletes the operations of production order orderID
// that the condition (with its args) selects, from plan_operations and
// from its schedule.
func DeleteOperations(ctx context.Context, tx *gorm.DB, orderID int64, where string, args ...any) error {
	if err := tx.WithContext(ctx).Where("prod_order_id = ?", orderID).Where(where, args...).Delete(&Operation{}).Error; err != nil {
		return err
	}
	var kept []int64
	if err := tx.WithContext(ctx).Model(&Operation{}).Where("prod_order_id = ?", orderID).Pluck("id", &kept).Error; err != nil {
		return err
	}
	scheds, err := schedulesOf(ctx, tx, []int64{orderID})
	if err != nil {
		return err
	}
	keep := setOf(kept)
	scheds[orderID] = slices.DeleteFunc(scheds[orderID], func(op liveOp) bool { return !keep[op.ID] })
	return writeSchedules(ctx, tx, scheds)
}

// FillSlots sets the planned slots of ops (read from plan_operations) from
// their production orders' schedules.
func FillSlots(ctx context.Context, db *gorm.DB, ops []Operation) error {
	if len(ops) == 0 {
		return nil
	}
	slots, err := slotsOf(ctx, db, ordersOf(ops))
	if err != nil {
		return err
	}
	for i := range ops {
		setSlot(&ops[i], slots[ops[i].ID])
	}
	return nil
}

// slotsOf are the planned slots of the operations of the production
// orders ids, by operation.
func slotsOf(ctx context.Context, db *gorm.DB, ids []int64) (map[int64]Slot, error) {
	scheds, err := schedulesOf(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	out := map[int64]Slot{}
	for _, s := range scheds {
		for _, op := range s {
			out[op.ID] = slotOfBlob(op.Slot)
		}
	}
	return out, nil
}

// setSlot sets op's planned slot (a zero day stays zero).
func setSlot(op *Operation, sl Slot) {
	op.StartDay, op.StartMin = database.DateOf(sl.Start.Day), sl.Start.Min
	op.EndDay, op.EndMin = database.DateOf(sl.End.Day), sl.End.Min
}

// VerifySchedules checks that the schedules hold exactly the operations of
// plan_operations, each as it is there (item, part, unit, step, work
// centre, minutes), every operation with a slot; the tests run it after
// whatever adds or removes operations.
func VerifySchedules(ctx context.Context, db *gorm.DB) error {
	scheds := map[int64][]liveOp{}
	if err := scanSchedules(db.WithContext(ctx).Raw("SELECT prod_order_id, ops, slots FROM plan_schedules"), scheds); err != nil {
		return err
	}
	held := map[int64]liveOp{}
	for _, ops := range scheds {
		for _, op := range ops {
			held[op.ID] = op
		}
	}
	var ops []Operation
	if err := db.WithContext(ctx).Order("id").Find(&ops).Error; err != nil {
		return err
	}
	var errs []error
	for _, op := range ops {
		h, ok := held[op.ID]
		delete(held, op.ID)
		want := scheduledOf(op)
		want.Slot = h.Slot
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("operation %d of production order %d is in no schedule", op.ID, op.ProdOrderID))
		case h != want:
			errs = append(errs, fmt.Errorf("operation %d: the schedule holds %+v, plan_operations %+v", op.ID, h, want))
		case h.Slot.StartDay == schedblob.NoDay || h.Slot.EndDay == schedblob.NoDay:
			errs = append(errs, fmt.Errorf("operation %d of production order %d has no slot", op.ID, op.ProdOrderID))
		}
	}
	for id, h := range held {
		errs = append(errs, fmt.Errorf("the schedule of production order %d holds operation %d, which plan_operations has not", h.ProdOrderID, id))
	}
	return errors.Join(errs...)
}
