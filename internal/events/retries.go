package events

import (
	"context"
	"errors"
	"net/url"
	"time"
)

// policy is the subscriber's retry policy with the dispatcher's defaults.
func (d *Dispatcher) policy(s *Subscriber) RetryPolicy {
	return s.Retry.or(RetryPolicy{MaxAttempts: d.opt.MaxAttempts, Base: d.opt.BackoffBase, Cap: d.opt.BackoffMax})
}

// failure is what a failed attempt of a delivery leaves: its status, how
// long until its next attempt (none when it failed for good), whether the
// attempt was spent, and how long the delivery has been deferred by
// Retry-After in all.
type failure struct {
	status   string
	retryIn  time.Duration
	spent    bool
	deferred time.Duration
}

// afterFailure returns what a failed attempt leaves of a delivery that had
// spent attempts and been deferred for deferred before it. An error asking
// for a delay (RetryAfter: the other side's 429 or 503 with Retry-After)
// puts the next attempt off by that delay, within the policy's Cap, without
// spending an attempt, while the delivery's deferrals stay within
// RetryAfterCap in all; past it, such answers spend attempts again. Any other
// failure spends one (RetryPolicy.next).
//
// A call the lane stopped waiting for (leftCallError) spends an attempt and
// is tried again no sooner than it asks, whatever the policy's Cap, so that
// the retry never overlaps the call.
func (d *Dispatcher) afterFailure(s *Subscriber, attempts int, deferred time.Duration, err error) failure {
	f := d.nextAfterFailure(s, attempts, deferred, err)
	var left *leftCallError
	if f.status == StatusRetrying && errors.As(err, &left) && f.retryIn < left.after {
		f.retryIn = left.after
	}
	return f
}

func (d *Dispatcher) nextAfterFailure(s *Subscriber, attempts int, deferred time.Duration, err error) failure {
	p := d.policy(s)
	if after, ok := askedDelay(err); ok {
		if delay := min(after, p.Cap); deferred+delay <= d.opt.RetryAfterCap {
			return failure{status: StatusRetrying, retryIn: delay, deferred: deferred + delay}
		}
	}
	status, delay := p.next(attempts+1, err)
	return failure{status: status, retryIn: delay, spent: true, deferred: deferred}
}

// failureHistory is how many failed attempts the journal keeps per delivery:
// the latest ones.
const failureHistory = 20

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
// success the deliveries held behind it, in order. One statement reads the
// retries due with their events; each goes the delivery path of a batch of
// one (deliverSet), its record written with its fence.
func (d *Dispatcher) retryDue(ctx, stop context.Context, l *lane) (PassStats, error) {
	var st PassStats
	dues, err := d.sql.dueRetries(ctx, d.db, l.key, d.opt.BatchSize)
	if err != nil {
		return st, err
	}
	for _, du := range dues {
		if stop.Err() != nil {
			break
		}
		ok, err := d.retryOne(ctx, l, du.ev, du.rec, &st)
		if err != nil {
			return st, err
		}
		if !ok || !du.held {
			continue
		}
		// Release what was held behind it, in order, until one fails.
		held, err := d.sql.heldBehind(ctx, d.db, l.key.sub, du.ev)
		if err != nil {
			return st, err
		}
		for _, hev := range held {
			ok, err := d.retryOne(ctx, l, hev, recorded{}, &st)
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

// dueRetry is a retry due, as read with its event.
type dueRetry struct {
	ev   Event
	rec  recorded
	held bool // deliveries of the same object are held behind it
}

// recorded is what a delivery's row says of its attempts so far; it also
// fences the row's update against another recording meanwhile.
type recorded struct {
	attempts int
	deferred time.Duration
}

// retryOne attempts one recorded delivery through the delivery path of a
// batch of one and records the outcome (retryCompletion); for a local
// subscriber, effect and record commit together. It tells whether the
// delivery succeeded.
func (d *Dispatcher) retryOne(ctx context.Context, l *lane, ev Event, rec recorded, st *PassStats) (bool, error) {
	c := retryCompletion{d: d, s: l.sub, ev: &ev, rec: rec,
		fence: laneMove{key: l.key, owner: d.opt.Owner, pos: l.pos, next: l.pos, lease: d.opt.Lease}}
	outcomes, err := d.deliverSet(ctx, l.sub, []Event{ev}, nil, c)
	if err != nil {
		return false, err
	}
	if len(outcomes) > 0 {
		st.Failed++
		return false, nil
	}
	st.Delivered++
	return true, nil
}
