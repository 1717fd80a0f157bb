package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tsekh/tsekh/internal/plan/schedblob"
)

// planSchedulesUp (00055) fills plan_schedules (00054) with every
// production order's operations and their planned slots, from
// plan_operations' columns, which 00056 then drops. In Go, because the
// schedules are in package schedblob's binary form.
func planSchedulesUp(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT prod_order_id FROM plan_operations ORDER BY prod_order_id`)
	if err != nil {
		return err
	}
	var orders []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			_ = rows.Close()
			return err
		}
		orders = append(orders, id)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	// A few hundred orders at a time: a factory's history may hold
	// millions of operations.
	for len(orders) > 0 {
		n := min(len(orders), 500)
		if err := planSchedulesOf(ctx, tx, orders[0], orders[n-1]); err != nil {
			return err
		}
		orders = orders[n:]
	}
	return nil
}

// planSchedulesOf writes the schedules of the production orders from id
// first to id last.
func planSchedulesOf(ctx context.Context, tx *sql.Tx, first, last int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT prod_order_id, id, item_id, coalesce(part_id, 0), unit, seq, work_center_id, minutes,
start_day, start_min, end_day, end_min FROM plan_operations WHERE prod_order_id BETWEEN $1 AND $2 ORDER BY prod_order_id, id`, first, last)
	if err != nil {
		return err
	}
	type schedule struct {
		order int64
		ops   []schedblob.Op
		slots []schedblob.Slot
	}
	var scheds []*schedule
	for rows.Next() {
		var (
			order      int64
			op         schedblob.Op
			sl         schedblob.Slot
			start, end any
		)
		if err := rows.Scan(&order, &op.ID, &op.ItemID, &op.PartID, &op.Unit, &op.Seq, &op.WorkCenterID, &op.Minutes,
			&start, &sl.StartMin, &end, &sl.EndMin); err != nil {
			_ = rows.Close()
			return err
		}
		if sl.StartDay, err = epochDay(start); err == nil {
			sl.EndDay, err = epochDay(end)
		}
		if err != nil {
			_ = rows.Close()
			return fmt.Errorf("operation %d: %w", op.ID, err)
		}
		if len(scheds) == 0 || scheds[len(scheds)-1].order != order {
			scheds = append(scheds, &schedule{order: order})
		}
		s := scheds[len(scheds)-1]
		s.ops, s.slots = append(s.ops, op), append(s.slots, sl)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	for _, s := range scheds {
		first, last := int64(schedblob.NoDay), int64(schedblob.NoDay)
		for _, sl := range s.slots {
			if sl.StartDay != schedblob.NoDay && (first == schedblob.NoDay || sl.StartDay < first) {
				first = sl.StartDay
			}
			if sl.EndDay != schedblob.NoDay && sl.EndDay > last {
				last = sl.EndDay
			}
		}
		// $1 placeholders: both PostgreSQL and SQLite read them.
		if _, err := tx.ExecContext(ctx, `INSERT INTO plan_schedules (prod_order_id, ops, slots, first_day, last_day) VALUES ($1, $2, $3, $4, $5)`,
			s.order, schedblob.EncodeOps(s.ops), schedblob.EncodeSlots(s.slots), dayText(first), dayText(last)); err != nil {
			return fmt.Errorf("production order %d: %w", s.order, err)
		}
	}
	return nil
}

// planSchedulesDown puts the slots back into plan_operations' columns
// (00056's down brings them back empty) and empties plan_schedules.
func planSchedulesDown(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT ops, slots FROM plan_schedules ORDER BY prod_order_id`)
	if err != nil {
		return err
	}
	var (
		ops   []schedblob.Op
		slots []schedblob.Slot
	)
	for rows.Next() {
		var o, s []byte
		if err := rows.Scan(&o, &s); err != nil {
			_ = rows.Close()
			return err
		}
		n := len(ops)
		if ops, err = schedblob.DecodeOps(o, ops); err == nil {
			slots, err = schedblob.DecodeSlots(s, slots)
		}
		if err == nil && len(ops)-n != len(slots)-n {
			err = schedblob.ErrCorrupt
		}
		if err != nil {
			_ = rows.Close()
			return err
		}
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	for i, op := range ops {
		sl := slots[i]
		if _, err := tx.ExecContext(ctx, `UPDATE plan_operations SET start_day = $1, start_min = $2, end_day = $3, end_min = $4 WHERE id = $5`,
			dayText(sl.StartDay), sl.StartMin, dayText(sl.EndDay), sl.EndMin, op.ID); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM plan_schedules`)
	return err
}

// epochDay is the day a DATE column held (a time on PostgreSQL, text on
// SQLite), counted from 1970-01-01; NoDay for NULL.
func epochDay(v any) (int64, error) {
	var t time.Time
	switch v := v.(type) {
	case nil:
		return schedblob.NoDay, nil
	case time.Time:
		t = v
	case []byte:
		return epochDay(string(v))
	case string:
		var err error
		if t, err = time.Parse(time.DateOnly, v[:min(len(v), len(time.DateOnly))]); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("a day of type %T", v)
	}
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400, nil
}

// dayText is "YYYY-MM-DD" of the day counted from 1970-01-01, or nil.
func dayText(day int64) any {
	if day == schedblob.NoDay {
		return nil
	}
	return time.Unix(day*86400, 0).UTC().Format(time.DateOnly)
}
