package events

import (
	"errors"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how often and how soon a subscriber's failed delivery is
// attempted again. Zero fields take the dispatcher's defaults
// (DISPATCH_MAX_ATTEMPTS, 1s, 1h).
type RetryPolicy struct {
	MaxAttempts int           // attempts before the delivery is failed
	Base        time.Duration // the delay after the first failure, doubled per attempt
	Cap         time.Duration // the longest delay
}

func (p RetryPolicy) or(def RetryPolicy) RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = def.MaxAttempts
	}
	if p.Base <= 0 {
		p.Base = def.Base
	}
	if p.Cap <= 0 {
		p.Cap = def.Cap
	}
	return p
}

// next returns the status of a delivery that has failed attempts times with
// err, and the delay before its next attempt: failed at once for a permanent
// error or when the attempts are used up; else retrying after the delay the
// error asks for (RetryAfter, up to Cap) or an exponential back-off with jitter.
func (p RetryPolicy) next(attempts int, err error) (status string, delay time.Duration) {
	var perm *permanentError
	if errors.As(err, &perm) || attempts >= p.MaxAttempts {
		return StatusFailed, 0
	}
	var ra *retryAfterError
	if errors.As(err, &ra) && ra.after > 0 {
		return StatusRetrying, min(ra.after, p.Cap)
	}
	return StatusRetrying, Backoff(attempts, p.Base, p.Cap)
}

// Backoff is the delay before the attempt after the given number of failed
// ones: base doubled per attempt up to maxDelay, with "equal jitter" (a random
// half), so that many failing deliveries do not retry in lockstep.
func Backoff(attempts int, base, maxDelay time.Duration) time.Duration {
	delay := maxDelay
	if attempts >= 1 && attempts < 32 {
		if d := base << (attempts - 1); d > 0 && d < maxDelay {
			delay = d
		}
	}
	half := delay / 2
	return half + rand.N(half+1)
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return "permanent: " + e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks a subscriber's error as one that no retry can cure (the
// other side refused the event for good): the delivery is failed at once,
// visible in the journal, and an admin may still retry it.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// RetryAfter marks a subscriber's error with the delay the other side asked
// for (HTTP Retry-After): the next attempt comes after it, within the policy's
// cap, instead of after the exponential back-off.
func RetryAfter(after time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, after: after}
}

// askedDelay returns the delay an error asks for with RetryAfter, when it
// asks for one and is not permanent.
func askedDelay(err error) (time.Duration, bool) {
	var perm *permanentError
	var ra *retryAfterError
	if errors.As(err, &perm) || !errors.As(err, &ra) || ra.after <= 0 {
		return 0, false
	}
	return ra.after, true
}

type httpStatusError struct {
	err    error
	status int
}

func (e *httpStatusError) Error() string { return e.err.Error() }
func (e *httpStatusError) Unwrap() error { return e.err }

// HTTPStatus marks a subscriber's error with the HTTP status the other side
// answered, which the journal keeps in the delivery's history of failures.
func HTTPStatus(status int, err error) error {
	if err == nil {
		return nil
	}
	return &httpStatusError{err: err, status: status}
}

// httpStatusOf returns the HTTP status err is marked with, or nil.
func httpStatusOf(err error) *int {
	var hs *httpStatusError
	if errors.As(err, &hs) {
		return &hs.status
	}
	return nil
}
