package events

import (
	"context"
	"errors"
	"net/url"
	"time"
)

// retryRules decide what a failed attempt leaves of a delivery: the
// dispatcher's default retry policy, which a subscriber's own overrides
// field by field, and the bound of the delays the other side may ask for.
type retryRules struct {
	defaults      RetryPolicy   // DispatcherOptions.MaxAttempts, BackoffBase, BackoffMax
	retryAfterCap time.Duration // DispatcherOptions.RetryAfterCap
}

func rulesOf(opt DispatcherOptions) retryRules {
	return retryRules{defaults: RetryPolicy{MaxAttempts: opt.MaxAttempts, Base: opt.BackoffBase, Cap: opt.BackoffMax},
		retryAfterCap: opt.RetryAfterCap}
}

// policy is the subscriber's retry policy with the dispatcher's defaults.
func (r retryRules) policy(s *Subscriber) RetryPolicy { return s.Retry.or(r.defaults) }

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
func (r retryRules) afterFailure(s *Subscriber, attempts int, deferred time.Duration, err error) failure {
	f := r.nextAfterFailure(s, attempts, deferred, err)
	var left *leftCallError
	if f.status == StatusRetrying && errors.As(err, &left) && f.retryIn < left.after {
		f.retryIn = left.after
	}
	return f
}

func (r retryRules) nextAfterFailure(s *Subscriber, attempts int, deferred time.Duration, err error) failure {
	p := r.policy(s)
	if after, ok := askedDelay(err); ok {
		if delay := min(after, p.Cap); deferred+delay <= r.retryAfterCap {
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
// one (executor.deliverSet), its record written with its fence.
func (l *lane) retryDue(ctx, stop context.Context) (PassStats, error) {
	var st PassStats
	dues, err := l.deps.dueRetries(ctx, l.key, l.cfg.batchSize)
	if err != nil {
		return st, err
	}
	for _, du := range dues {
		if stop.Err() != nil {
			break
		}
		ok, err := l.retryOne(ctx, du.ev, du.rec, &st)
		if err != nil {
			return st, err
		}
		if !ok || !du.held {
			continue
		}
		// Release what was held behind it, in order, until one fails.
		held, err := l.deps.heldBehind(ctx, l.key.sub, du.ev)
		if err != nil {
			return st, err
		}
		for _, hev := range held {
			ok, err := l.retryOne(ctx, hev, recorded{}, &st)
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
func (l *lane) retryOne(ctx context.Context, ev Event, rec recorded, st *PassStats) (bool, error) {
	c := retryCompletion{s: l.sub, ev: &ev, rec: rec,
		fence: laneMove{key: l.key, owner: l.cfg.owner, pos: l.pos, next: l.pos, lease: l.cfg.lease}}
	outcomes, err := l.deps.deliver(ctx, l.sub, []Event{ev}, nil, c)
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
