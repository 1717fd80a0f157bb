package events

import (
	"log/slog"
	"math/rand/v2"
	"time"
)

// DispatcherOptions tune the dispatcher; zero values take the defaults.
type DispatcherOptions struct {
	BatchSize   int           // events read per lane and batch (1000)
	MaxAttempts int           // default attempts before a delivery is failed (10)
	Timeout     time.Duration // per delivery (30s)
	// CallBudget is how long a lane waits for one call of an outside
	// subscriber (5s, at most Timeout). A call still in flight then goes on
	// until Timeout, unheard: the lane records its event as a retry (an
	// attempt spent, as for a call that timed out), due once the call's
	// Timeout has passed, holds the object's later events behind it, and
	// goes on with the other objects.
	CallBudget  time.Duration
	Lease       time.Duration // how long a lane stays claimed without renewal (1m)
	Workers     int           // local subscribers' batch transactions at once, and reads + outside ones at once (2; at most what the driver allows: 1 on SQLite)
	BackoffBase time.Duration // default first retry delay (1s), doubled per attempt, with jitter
	BackoffMax  time.Duration // default retry delay cap (1h)
	// RetryAfterCap is how long in all a delivery may be put off by answers
	// asking for a delay (RetryAfter: HTTP 429 or 503 with Retry-After)
	// without spending attempts (24h); past it, such answers spend attempts
	// like any failure.
	RetryAfterCap time.Duration
	// Linger is how long a lane started by Start (the Runner) keeps its
	// lease and waits for more work once it has none (1s). Events written
	// one after the other then move the lane's row once each, not three
	// times (claim, move, release). RunOnce never lingers.
	Linger time.Duration
	Owner  string // this dispatcher's name in leases and the replica list (host-pid-random~mark, see owner.go)
	Logger *slog.Logger
}

// defaults fills in the zero values; maxWorkers, when positive, is the most
// Workers the database serves at once (the driver's maxWorkers).
func (o *DispatcherOptions) defaults(maxWorkers int) {
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Lease <= 0 {
		o.Lease = time.Minute
	}
	if o.CallBudget <= 0 {
		o.CallBudget = 5 * time.Second
	}
	o.CallBudget = min(o.CallBudget, o.Timeout)
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if maxWorkers > 0 {
		o.Workers = min(o.Workers, maxWorkers)
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = time.Second
	}
	if o.RetryAfterCap <= 0 {
		o.RetryAfterCap = 24 * time.Hour
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = time.Hour
	}
	if o.Linger <= 0 {
		o.Linger = time.Second
	}
	if o.Owner == "" {
		o.Owner = defaultOwner(rand.IntN(0x10000))
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// PassStats counts what a pass, or a lane, did.
type PassStats struct {
	Events    int  // events read from the journal for a subscriber
	Delivered int  // successful deliveries
	Failed    int  // failed attempts
	Lagging   bool // events were visible beyond the safe horizon: run again soon
	// RetryWaiting tells that a delivery of a subscriber run here waits for a
	// retry, due in NextRetry (zero or less: due already), as seen when the
	// pass began.
	RetryWaiting bool
	NextRetry    time.Duration
}

func (s *PassStats) add(o PassStats) {
	s.Events += o.Events
	s.Delivered += o.Delivered
	s.Failed += o.Failed
}

// Busy tells whether the pass or lane did anything.
func (s PassStats) Busy() bool { return s.Events > 0 || s.Delivered > 0 || s.Failed > 0 }
