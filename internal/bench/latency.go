package bench

import (
	"context"
	"sync"
	"time"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// LatencyResult is the delay from an event's write to its subscriber.
type LatencyResult struct {
	LatencyStats
	PaceMs float64 `json:"pace_ms"`
	// Measured from the start of the writing transaction (as the peers
	// measure theirs) to the call of the local subscriber, the later of the
	// two in a pass.
	From string `json:"from"`
	To   string `json:"to"`
	// OtherXactMaxMs is the age of the oldest transaction holding a
	// transaction id anywhere on the server (the bench's own writes included)
	// seen while the events were written: how busy the server was.
	OtherXactMaxMs float64 `json:"other_xact_max_ms"`
	// OtherXactSlow counts the samples (every 20 ms) that saw one older than 10 ms.
	OtherXactSlow int `json:"other_xact_samples_over_10ms"`
}

const (
	latencyFrom = "start of the writing transaction"
	latencyTo   = "the local subscriber's call"
)

// latency writes events one by one at a steady pace, each in its own
// transaction, with the real Runner (woken by LISTEN/NOTIFY) dispatching
// them to two subscribers, one local and one outside, and records how long
// each took to reach the local one.
func (r *runner) latency(ctx context.Context, res *Result) error {
	n := r.opt.LatencyEvents
	s, err := r.startStream(ctx, twoSubs(nil))
	if err != nil {
		return err
	}
	defer s.close()

	var other struct {
		sync.Mutex
		maxMs float64
		slow  int
	}
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-sampleCtx.Done():
				return
			case <-t.C:
			}
			var age float64
			err := database.Scan(r.db.WithContext(sampleCtx).Raw(`SELECT coalesce(max(extract(epoch FROM clock_timestamp() - xact_start)) * 1000, 0) FROM pg_stat_activity
WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()`), &age)
			if err != nil {
				continue
			}
			other.Lock()
			other.maxMs = max(other.maxMs, age)
			if age > 10 {
				other.slow++
			}
			other.Unlock()
		}
	}()
	defer func() { stopSampling(); <-sampled }()

	r.p.set("latency: events written one by one", 0, int64(n))
	if _, err := s.write(ctx, 0, n, time.Time{}, r.opt.LatencyPace); err != nil {
		return err
	}
	if err := s.catchUp(ctx, subName("local", 0), 30*time.Second); err != nil {
		return err
	}
	stopSampling()
	<-sampled
	other.Lock()
	defer other.Unlock()
	out := LatencyResult{LatencyStats: latencyStats(s.latencies(0)), PaceMs: ms(r.opt.LatencyPace),
		From: latencyFrom, To: latencyTo, OtherXactMaxMs: round(other.maxMs, 1), OtherXactSlow: other.slow}
	res.Latency = out
	res.LatencyP50Ms, res.LatencyP99Ms = out.P50Ms, out.P99Ms
	return nil
}
