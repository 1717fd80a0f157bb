package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// IsolationResult is the delay from commit to a local subscriber while an
// outside subscriber of the same events is slow, beside the same delay while
// it answers at once, measured in one run.
type IsolationResult struct {
	Events  int     `json:"events"`
	PaceMs  float64 `json:"pace_ms"`
	DelayMs float64 `json:"outside_delay_ms"` // what each call of the slow outside subscriber takes
	// Blocks is the order of the blocks of events written: "fast" while the
	// outside subscriber answers at once, "slow" while it takes the delay.
	Blocks []string `json:"blocks"`
	// Fast and Slow are the local subscriber's delays in the fast and the
	// slow blocks.
	Fast  LatencyStats `json:"fast"`
	Slow  LatencyStats `json:"slow"`
	Ratio float64      `json:"p99_ratio"` // Slow.P99Ms / Fast.P99Ms
	// SlowCalls counts the outside subscriber's calls that took the whole
	// delay, and OutsideBehind how many events it had not had yet when the
	// last slow block ended: the proof that it was slow while the local
	// subscriber was measured.
	SlowCalls     int64  `json:"slow_calls"`
	OutsideBehind int    `json:"outside_behind_at_slow_end"`
	From          string `json:"from"`
	To            string `json:"to"`
}

// slowOutside makes the outside subscriber take a delay per call while it
// is switched on. Switching it off ends the calls under way at once, so that
// the subscriber catches up before the next fast block (its backlog would
// otherwise load the fast block).
type slowOutside struct {
	delay time.Duration
	calls atomic.Int64

	mu  sync.Mutex
	on  bool
	off chan struct{} // closed when switched off
}

func (w *slowOutside) set(on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if on == w.on {
		return
	}
	w.on = on
	if on {
		w.off = make(chan struct{})
	} else {
		close(w.off)
	}
}

func (w *slowOutside) call(ctx context.Context, _ string) error {
	w.mu.Lock()
	on, off := w.on, w.off
	w.mu.Unlock()
	if !on {
		return nil
	}
	t := time.NewTimer(w.delay)
	defer t.Stop()
	select {
	case <-t.C:
		w.calls.Add(1)
	case <-off:
	case <-ctx.Done():
	}
	return nil
}

// isolation writes events one by one, as the latency does, to a local and an
// outside subscriber, in four blocks: a quarter with the outside subscriber
// answering at once, half with it taking the delay per call (200 ms: it
// falls behind at once, as its calls, one at a time, cannot keep up with the
// writes), a quarter answering at once again. The local subscriber must
// not notice: its p99 in the slow blocks is compared with its p99 in the fast
// ones. Each block starts once both subscribers have had every event
// written before it, so that neither block inherits the other's backlog.
func (r *runner) isolation(ctx context.Context, res *Result) error {
	n := r.opt.IsolationEvents
	slow := &slowOutside{delay: r.opt.IsolationDelay}
	subs := twoSubs(nil)
	subs.call = slow.call
	s, err := r.startStream(ctx, subs)
	if err != nil {
		return err
	}
	defer s.close()
	defer slow.set(false)

	local, outside := subName("local", 0), subName("outside", 0)
	blocks := []bool{false, true, true, false}
	out := IsolationResult{Events: n, PaceMs: ms(r.opt.LatencyPace), DelayMs: ms(r.opt.IsolationDelay), From: latencyFrom, To: latencyTo}
	r.p.set("isolation: events written one by one, the outside subscriber fast, slow, fast", 0, int64(n))
	prev := false
	for i, on := range blocks {
		k := n / len(blocks)
		if i == len(blocks)-1 {
			k = n - k*(len(blocks)-1)
		}
		if prev && !on {
			out.OutsideBehind = s.behind(outside)
			slow.set(false)
			if err := s.catchUp(ctx, outside, time.Minute); err != nil {
				return err
			}
		}
		slow.set(on)
		prev = on
		phase := 0
		if on {
			phase = 1
		}
		if _, err := s.write(ctx, phase, k, time.Time{}, r.opt.LatencyPace); err != nil {
			return err
		}
		if err := s.catchUp(ctx, local, 30*time.Second); err != nil {
			return err
		}
		out.Blocks = append(out.Blocks, map[bool]string{false: "fast", true: "slow"}[on])
	}
	out.SlowCalls = slow.calls.Load()
	out.Fast, out.Slow = latencyStats(s.latencies(0)), latencyStats(s.latencies(1))
	out.Ratio = ratio(out.Slow.P99Ms, out.Fast.P99Ms)
	res.Isolation = out
	res.IsolationP99Ratio = out.Ratio
	return nil
}
