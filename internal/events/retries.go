package events

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// policy is the subscriber's retry policy with the dispatcher's defaults.
func (d *Dispatcher) policy(s *Subscriber) RetryPolicy {
	return s.Retry.or(RetryPolicy{MaxAttempts: d.opt.MaxAttempts, Base: d.opt.BackoffBase, Cap: d.opt.BackoffMax})
}

// afterFailure returns the status and the SQL for the next attempt's time of
// a delivery that has failed attempts times, the last time with err.
func (d *Dispatcher) afterFailure(s *Subscriber, attempts int, err error) (status, next string) {
	status, delay := d.policy(s).next(attempts, err)
	if status == StatusFailed {
		return status, "NULL"
	}
	return status, database.NowPlus(d.db, delay)
}

// recordOutcomes writes the delivery rows of the batch's exceptions for one
// subscriber: its failures and the deliveries held behind them.
func (d *Dispatcher) recordOutcomes(tx *gorm.DB, s *Subscriber, outcomes []outcome) error {
	if len(outcomes) == 0 {
		return nil
	}
	var sb strings.Builder
	var args []any
	sb.WriteString(`INSERT INTO events_deliveries (event_id, subscriber, partition, aggregate_type, aggregate_id, status, attempts, last_error, blocked_by, next_attempt_at, processed_at) VALUES `)
	for i, oc := range outcomes {
		if i > 0 {
			sb.WriteString(", ")
		}
		ev := oc.ev
		part := PartitionOf(ev.AggregateType, ev.AggregateID)
		if oc.status == StatusHeld {
			sb.WriteString("(?, ?, ?, ?, ?, 'held', 0, '', ?, NULL, NULL)")
			args = append(args, ev.ID, s.Name, part, ev.AggregateType, ev.AggregateID, oc.blockedBy)
			continue
		}
		status, next := d.afterFailure(s, 1, oc.err)
		sb.WriteString("(?, ?, ?, ?, ?, ?, 1, ?, NULL, " + next + ", NULL)")
		args = append(args, ev.ID, s.Name, part, ev.AggregateType, ev.AggregateID, status, truncate(ErrorText(oc.err)))
	}
	return tx.Exec(sb.String(), args...).Error
}

func truncate(s string) string {
	const maxLen = 2000
	if len(s) > maxLen {
		return s[:maxLen] + "…"
	}
	return s
}

// retryDue runs the lane's retries whose time has come, and after each
// success the deliveries held behind it, in order.
func (d *Dispatcher) retryDue(ctx, stop context.Context, lr *laneRun) (PassStats, error) {
	var st PassStats
	type due struct {
		EventID  int64
		Attempts int
	}
	var dues []due
	err := d.db.WithContext(ctx).Raw(`SELECT event_id, attempts FROM events_deliveries
WHERE subscriber = ? AND partition = ? AND status = 'retrying' AND next_attempt_at <= `+database.Now(d.db)+` ORDER BY event_id LIMIT ?`,
		lr.key.sub, lr.key.part, d.opt.BatchSize).Scan(&dues).Error
	if err != nil {
		return st, err
	}
	for _, du := range dues {
		if stop.Err() != nil {
			break
		}
		ev, err := d.event(ctx, du.EventID)
		if err != nil {
			return st, err
		}
		ok, err := d.retryOne(ctx, lr, ev, du.Attempts, &st)
		if err != nil || !ok {
			if err != nil {
				return st, err
			}
			continue
		}
		// Release what was held behind it, in order, until one fails.
		var held []int64
		err = d.db.WithContext(ctx).Raw(`SELECT event_id FROM events_deliveries WHERE subscriber = ? AND aggregate_type = ? AND aggregate_id = ?
AND status = 'held' ORDER BY event_id`, lr.key.sub, ev.AggregateType, ev.AggregateID).Scan(&held).Error
		if err != nil {
			return st, err
		}
		for _, id := range held {
			hev, err := d.event(ctx, id)
			if err != nil {
				return st, err
			}
			ok, err := d.retryOne(ctx, lr, hev, 0, &st)
			if err != nil {
				return st, err
			}
			if !ok {
				break
			}
		}
	}
	return st, nil
}

// retryOne attempts one recorded delivery and records the outcome; for a
// local subscriber, effect and record commit together. When it fails, the
// deliveries still held behind the same object point at it.
func (d *Dispatcher) retryOne(ctx context.Context, lr *laneRun, ev Event, attempts int, st *PassStats) (bool, error) {
	s := lr.sub
	var deliverErr error
	if !s.Local() {
		sem := d.callSlots(s)
		sem <- struct{}{}
		deliverErr = d.deliver(ctx, nil, s, &ev, false)
		<-sem
	}
	err := d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := d.renewLease(tx, lr.key); err != nil {
			return err
		}
		if s.Local() {
			if msg, ok := d.stuck.take(deliveryKey{ev.ID, s.Name}); ok {
				deliverErr = errors.New(msg)
			} else if deliverErr = d.deliver(ctx, tx, s, &ev, true); errors.Is(deliverErr, errStuck) {
				return errStuck
			}
		}
		var res *gorm.DB
		now := database.Now(tx)
		if deliverErr == nil {
			res = tx.Exec(`UPDATE events_deliveries SET status = 'processed', attempts = attempts + 1, last_error = '', blocked_by = NULL,
next_attempt_at = NULL, processed_at = `+now+`, updated_at = `+now+`
WHERE event_id = ? AND subscriber = ? AND status IN ('retrying', 'held') AND attempts = ?`, ev.ID, s.Name, attempts)
		} else {
			status, next := d.afterFailure(s, attempts+1, deliverErr)
			res = tx.Exec(`UPDATE events_deliveries SET status = ?, attempts = attempts + 1, last_error = ?, blocked_by = NULL,
next_attempt_at = `+next+`, updated_at = `+now+`
WHERE event_id = ? AND subscriber = ? AND status IN ('retrying', 'held') AND attempts = ?`, status, truncate(ErrorText(deliverErr)), ev.ID, s.Name, attempts)
			if res.Error == nil {
				if err := tx.Exec(`UPDATE events_deliveries SET blocked_by = ? WHERE subscriber = ? AND aggregate_type = ? AND aggregate_id = ?
AND status = 'held' AND event_id > ?`, ev.ID, s.Name, ev.AggregateType, ev.AggregateID, ev.ID).Error; err != nil {
					return err
				}
			}
		}
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return errLeaseLost // someone else recorded it meanwhile
		}
		return nil
	})
	if errors.Is(err, errStuck) {
		// Rolled back; record the failure without calling it again.
		return d.retryOne(ctx, lr, ev, attempts, st)
	}
	if err != nil {
		return false, err
	}
	if s.Local() {
		d.metrics.countDelivery(s.Name, deliverErr)
	}
	if deliverErr != nil {
		st.Failed++
		return false, nil
	}
	st.Delivered++
	return true, nil
}

// renewLease extends the lane's lease inside tx and fails with errLeaseLost
// when another dispatcher has taken it meanwhile (or it was replayed), so
// that a dispatcher that stalled past its lease cannot commit work twice.
func (d *Dispatcher) renewLease(tx *gorm.DB, k laneKey) error {
	res := tx.Exec(`UPDATE events_lanes SET lease_until = `+database.NowPlus(tx, d.opt.Lease)+` WHERE subscriber = ? AND partition = ? AND owner = ?`,
		k.sub, k.part, d.opt.Owner)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return errLeaseLost
	}
	return nil
}

func (d *Dispatcher) event(ctx context.Context, id int64) (Event, error) {
	evs, err := readEvents(d.db.WithContext(ctx).Raw(`SELECT `+eventColumns+` FROM events e WHERE e.id = ?`, id))
	if err != nil {
		return Event{}, err
	}
	if len(evs) == 0 {
		return Event{}, fmt.Errorf("events: event %d not found", id)
	}
	return evs[0], nil
}
