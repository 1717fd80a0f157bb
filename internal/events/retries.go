package events

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// policy is the subscriber's retry policy with the dispatcher's defaults.
func (d *Dispatcher) policy(s *Subscriber) RetryPolicy {
	return s.Retry.or(RetryPolicy{MaxAttempts: d.opt.MaxAttempts, Base: d.opt.BackoffBase, Cap: d.opt.BackoffMax})
}

// failure is what a failed attempt of a delivery leaves: its status, the
// SQL of its next attempt's time, whether the attempt was spent, and how long
// the delivery has been deferred by Retry-After in all.
type failure struct {
	status, next string
	spent        bool
	deferred     time.Duration
}

// afterFailure returns what a failed attempt leaves of a delivery that had
// spent attempts and been deferred for deferred before it. An error asking
// for a delay (RetryAfter: the other side's 429 or 503 with Retry-After)
// puts the next attempt off by that delay, within the policy's Cap, without
// spending an attempt, while the delivery's deferrals stay within
// RetryAfterCap in all; past it, such answers spend attempts again. Any other
// failure spends one (RetryPolicy.next).
func (d *Dispatcher) afterFailure(s *Subscriber, attempts int, deferred time.Duration, err error) failure {
	p := d.policy(s)
	if after, ok := askedDelay(err); ok {
		if delay := min(after, p.Cap); deferred+delay <= d.opt.RetryAfterCap {
			return failure{status: StatusRetrying, next: database.NowPlus(d.db, delay), deferred: deferred + delay}
		}
	}
	status, delay := p.next(attempts+1, err)
	f := failure{status: status, next: "NULL", spent: true, deferred: deferred}
	if status != StatusFailed {
		f.next = database.NowPlus(d.db, delay)
	}
	return f
}

// failureHistory is how many failed attempts the journal keeps per delivery:
// the latest ones.
const failureHistory = 20

// recordOutcomes writes the delivery rows of the batch's exceptions for one
// subscriber, their failures and the deliveries held behind them, with the
// first entry of each failure's history.
func (d *Dispatcher) recordOutcomes(tx *gorm.DB, s *Subscriber, outcomes []outcome) error {
	if len(outcomes) == 0 {
		return nil
	}
	var sb, hist strings.Builder
	var args, histArgs []any
	sb.WriteString(`INSERT INTO events_deliveries (event_id, subscriber, partition, aggregate_type, aggregate_id, status, attempts, last_error, blocked_by, next_attempt_at, processed_at, deferred_ms) VALUES `)
	hist.WriteString(`INSERT INTO events_delivery_failures (event_id, subscriber, seq, error, http_status, spent) VALUES `)
	for i, oc := range outcomes {
		if i > 0 {
			sb.WriteString(", ")
		}
		ev := oc.ev
		part := PartitionOf(ev.AggregateType, ev.AggregateID)
		if oc.status == StatusHeld {
			sb.WriteString("(?, ?, ?, ?, ?, 'held', 0, '', ?, NULL, NULL, 0)")
			args = append(args, ev.ID, s.Name, part, ev.AggregateType, ev.AggregateID, oc.blockedBy)
			continue
		}
		f := d.afterFailure(s, 0, 0, oc.err)
		msg := errorText(oc.err)
		sb.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, NULL, " + f.next + ", NULL, ?)")
		args = append(args, ev.ID, s.Name, part, ev.AggregateType, ev.AggregateID, f.status, spentCount(f), msg, f.deferred.Milliseconds())
		if len(histArgs) > 0 {
			hist.WriteString(", ")
		}
		hist.WriteString("(?, ?, 1, ?, ?, ?)")
		histArgs = append(histArgs, ev.ID, s.Name, msg, httpStatusOf(oc.err), f.spent)
	}
	if err := tx.Exec(sb.String(), args...).Error; err != nil {
		return err
	}
	if len(histArgs) == 0 {
		return nil
	}
	return tx.Exec(hist.String(), histArgs...).Error
}

func spentCount(f failure) int {
	if f.spent {
		return 1
	}
	return 0
}

// recordFailure adds a failed attempt to the delivery's history and drops
// what is older than its latest failureHistory.
func recordFailure(tx *gorm.DB, evID int64, sub, msg string, err error, spent bool) error {
	if e := tx.Exec(`INSERT INTO events_delivery_failures (event_id, subscriber, seq, error, http_status, spent)
SELECT ?, ?, coalesce(max(seq), 0) + 1, ?, ?, ? FROM events_delivery_failures WHERE event_id = ? AND subscriber = ?`,
		evID, sub, msg, httpStatusOf(err), spent, evID, sub).Error; e != nil {
		return e
	}
	return tx.Exec(`DELETE FROM events_delivery_failures WHERE event_id = ? AND subscriber = ? AND seq <= (
SELECT max(seq) FROM events_delivery_failures WHERE event_id = ? AND subscriber = ?) - ?`, evID, sub, evID, sub, failureHistory).Error
}

// errorText is a delivery's error as the journal records it: at most 2,000
// bytes, and without the query string, user or password of any URL an
// *url.Error in its chain names (a net/http client's errors repeat the URL
// they called, secrets in it included).
func errorText(err error) string { return truncate(ErrorText(err)) }

// RedactURL returns rawURL without its user, password, query string and
// fragment, fit for an error message or a log.
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(an unreadable URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
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
func (d *Dispatcher) retryDue(ctx, stop context.Context, lr *lane) (PassStats, error) {
	var st PassStats
	type due struct {
		EventID    int64
		Attempts   int
		DeferredMs int64
	}
	var dues []due
	err := d.db.WithContext(ctx).Raw(`SELECT event_id, attempts, deferred_ms FROM events_deliveries
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
		ok, err := d.retryOne(ctx, lr, ev, recorded{du.Attempts, time.Duration(du.DeferredMs) * time.Millisecond}, &st)
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
			ok, err := d.retryOne(ctx, lr, hev, recorded{}, &st)
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

// recorded is what a delivery's row says of its attempts so far; it also
// fences the row's update against another recording meanwhile.
type recorded struct {
	attempts int
	deferred time.Duration
}

// retryOne attempts one recorded delivery and records the outcome; for a
// local subscriber, effect and record commit together. When it fails, the
// deliveries still held behind the same object point at it, and the failure
// joins the delivery's history.
func (d *Dispatcher) retryOne(ctx context.Context, lr *lane, ev Event, rec recorded, st *PassStats) (bool, error) {
	s := lr.sub
	var deliverErr error
	if !s.Local() {
		sem := d.callSlots(s)
		sem <- struct{}{}
		var calls leftCalls
		deliverErr = d.deliver(ctx, nil, s, &ev, false, &calls)
		calls.then(func() { <-sem })
	}
	err := d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := d.renewLease(tx, lr.key); err != nil {
			return err
		}
		if s.Local() {
			if msg, ok := d.stuck.take(deliveryKey{ev.ID, s.Name}); ok {
				deliverErr = errors.New(msg)
			} else if deliverErr = d.deliver(ctx, tx, s, &ev, true, nil); errors.Is(deliverErr, errStuck) {
				return errStuck
			}
		}
		var res *gorm.DB
		now := database.Now(tx)
		if deliverErr == nil {
			res = tx.Exec(`UPDATE events_deliveries SET status = 'processed', attempts = attempts + 1, last_error = '', blocked_by = NULL,
next_attempt_at = NULL, processed_at = `+now+`, updated_at = `+now+`
WHERE event_id = ? AND subscriber = ? AND status IN ('retrying', 'held') AND attempts = ? AND deferred_ms = ?`,
				ev.ID, s.Name, rec.attempts, rec.deferred.Milliseconds())
		} else {
			f := d.afterFailure(s, rec.attempts, rec.deferred, deliverErr)
			msg := errorText(deliverErr)
			res = tx.Exec(`UPDATE events_deliveries SET status = ?, attempts = attempts + ?, last_error = ?, blocked_by = NULL,
next_attempt_at = `+f.next+`, deferred_ms = ?, updated_at = `+now+`
WHERE event_id = ? AND subscriber = ? AND status IN ('retrying', 'held') AND attempts = ? AND deferred_ms = ?`,
				f.status, spentCount(f), msg, f.deferred.Milliseconds(), ev.ID, s.Name, rec.attempts, rec.deferred.Milliseconds())
			if res.Error == nil && res.RowsAffected == 1 {
				if err := recordFailure(tx, ev.ID, s.Name, msg, deliverErr, f.spent); err != nil {
					return err
				}
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
		return d.retryOne(ctx, lr, ev, rec, st)
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
