package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
)

// LatencyResult is the delay from an event's write to its subscriber.
type LatencyResult struct {
	Events int     `json:"events"`
	PaceMs float64 `json:"pace_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
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

// latency writes events one by one at a steady pace, each in its own
// transaction, with the real Runner (woken by LISTEN/NOTIFY) dispatching
// them, and records how long each took to reach the local subscriber.
func (r *runner) latency(ctx context.Context, res *Result) error {
	n := r.opt.LatencyEvents
	var mu sync.Mutex
	lats := make([]time.Duration, 0, n)
	got := make(chan struct{}, n)
	reg := benchRegistry(func(sub string, ev events.Event) {
		if sub != "bench.local" {
			return
		}
		var p struct {
			At int64 `json:"at"`
		}
		if err := json.Unmarshal(ev.Payload, &p); err != nil || p.At == 0 {
			return
		}
		mu.Lock()
		lats = append(lats, time.Since(time.Unix(0, p.At)))
		mu.Unlock()
		select {
		case got <- struct{}{}:
		default:
		}
	})
	d := events.NewDispatcher(r.db, reg, events.DispatcherOptions{Logger: r.opt.Logger})
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	runner := events.NewRunner(d, events.RunnerOptions{Interval: time.Minute, ListenURL: r.url})
	if err := runner.Start(runCtx); err != nil {
		return err
	}
	defer runner.Wait()
	defer stop()
	time.Sleep(300 * time.Millisecond) // let the listener connect

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
			err := r.db.WithContext(sampleCtx).Raw(`SELECT coalesce(max(extract(epoch FROM clock_timestamp() - xact_start)) * 1000, 0) FROM pg_stat_activity
WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()`).Scan(&age).Error
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
	tick := time.NewTicker(r.opt.LatencyPace)
	defer tick.Stop()
	for i := range n {
		at := time.Now().UnixNano()
		err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			err := events.Add(ctx, tx, events.New{Type: benchType, AggregateType: benchAggType, AggregateID: int64(i + 1),
				Payload: map[string]any{"n": i, "at": at}})
			return err
		})
		if err != nil {
			return err
		}
		r.p.add(1)
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	deadline := time.After(30 * time.Second)
	for {
		mu.Lock()
		k := len(lats)
		mu.Unlock()
		if k >= n {
			break
		}
		select {
		case <-got:
		case <-deadline:
			return fmt.Errorf("%d of %d events reached the subscriber in 30s", k, n)
		}
	}
	stop()
	stopSampling()
	<-sampled
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lats)
	out := LatencyResult{Events: n, PaceMs: ms(r.opt.LatencyPace),
		P50Ms: percentile(lats, 50), P90Ms: percentile(lats, 90), P99Ms: percentile(lats, 99), MaxMs: ms(lats[len(lats)-1]),
		From: "start of the writing transaction", To: "the local subscriber's call",
		OtherXactMaxMs: round(other.maxMs, 1), OtherXactSlow: other.slow}
	res.Latency = out
	res.LatencyP50Ms, res.LatencyP99Ms = out.P50Ms, out.P99Ms
	return nil
}
