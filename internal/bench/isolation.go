package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// IsolationResult is the delay from commit to a local subscriber while an
// outside subscriber of the same events is slow, beside the same delay
// without that subscriber, measured in one run.
type IsolationResult struct {
	Events  int     `json:"events"`
	PaceMs  float64 `json:"pace_ms"`
	DelayMs float64 `json:"outside_delay_ms"` // what each call of the slow outside subscriber takes
	// Blocks is the order of the blocks of events written: "alone" while
	// the local subscriber is the only one dispatched, "slow" while the
	// outside subscriber is dispatched too and takes the delay per call.
	Blocks     []string  `json:"blocks"`
	BlockP99Ms []float64 `json:"block_p99_ms"` // the local subscriber's p99 in each block
	// Alone and Slow are the local subscriber's delays in the two kinds of
	// block.
	Alone LatencyStats `json:"alone"`
	Slow  LatencyStats `json:"slow"`
	Ratio float64      `json:"p99_ratio"` // Slow.P99Ms / Alone.P99Ms
	// SlowCalls counts the outside subscriber's calls that took the whole
	// delay, and OutsideBehind how many events it had not had yet when the
	// slow blocks ended: the proof that it was slow while the local
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

// isolationBlocks is the order of the isolation's blocks: true where the
// slow outside subscriber is dispatched beside the local one. Alone and
// beside it alternate in pairs (ABBA ABBA), so that a drift of the machine
// over the step (a checkpoint, autovacuum, another process) weighs on both
// alike, and a burst of slow commits in one block is one block of four.
var isolationBlocks = []bool{false, true, true, false, false, true, true, false}

// isolation writes events one by one, as the latency does, in eight
// blocks of an eighth of them (isolationBlocks): half of the blocks with the
// local subscriber alone, half with an outside subscriber of the same
// events dispatched too, which takes the delay per call (200 ms: one call at
// a time, it falls behind at once); each block with a dispatcher of its own
// that runs those subscribers. The local subscriber must not notice the
// slow one: its p99 over the blocks beside it is compared with its p99 over
// the blocks alone. (Beside an outside subscriber that answers at once, the
// local one's p99 is worse than beside a slow one on a loaded machine: the
// fast one's commits load the database; so the baseline is without it.)
//
// In three stretches (alone, beside, alone) of 1,000 events, a stretch's
// p99 was its three slowest events, and the two stretches alone differed by
// more than the ratio measures (4.9 and 21.2 ms in one run, 9.2 and 3.7 in
// another); pooled over four blocks of each kind of 2,000 events, the p99
// is the tenth slowest of a thousand.
func (r *runner) isolation(ctx context.Context, res *Result) error {
	n := r.opt.IsolationEvents
	out := IsolationResult{Events: n, PaceMs: ms(r.opt.LatencyPace), DelayMs: ms(r.opt.IsolationDelay), From: latencyFrom, To: latencyTo}
	var alone, slowLats []time.Duration
	r.p.set("isolation: events written one by one, in blocks with the local subscriber alone and beside a slow one", 0, int64(n))
	stretch := func(k int, withSlow bool) error {
		subs := benchSubs{local: 1}
		slow := &slowOutside{delay: r.opt.IsolationDelay}
		if withSlow {
			subs.outside, subs.call = 1, slow.call
		}
		s, err := r.startStream(ctx, subs)
		if err != nil {
			return err
		}
		defer s.close()
		// Its calls under way end at once when it is switched off, before
		// the stream closes, so that the dispatcher stops at once.
		defer slow.set(false)
		slow.set(withSlow)
		r.p.set("isolation: events written one by one, the local subscriber "+map[bool]string{false: "alone", true: "beside a slow one"}[withSlow],
			0, int64(k))
		if _, err := s.write(ctx, 0, k, time.Time{}, r.opt.LatencyPace); err != nil {
			return err
		}
		if err := s.catchUp(ctx, subName("local", 0), 30*time.Second); err != nil {
			return err
		}
		out.BlockP99Ms = append(out.BlockP99Ms, latencyStats(s.latencies(0)).P99Ms)
		if withSlow {
			slowLats = append(slowLats, s.latencies(0)...)
			out.SlowCalls += slow.calls.Load()
			out.OutsideBehind = s.behind(subName("outside", 0))
			out.Blocks = append(out.Blocks, "slow")
		} else {
			alone = append(alone, s.latencies(0)...)
			out.Blocks = append(out.Blocks, "alone")
		}
		return nil
	}
	for i, withSlow := range isolationBlocks {
		k := n*(i+1)/len(isolationBlocks) - n*i/len(isolationBlocks)
		if err := stretch(k, withSlow); err != nil {
			return err
		}
	}
	out.Alone, out.Slow = latencyStats(alone), latencyStats(slowLats)
	out.Ratio = ratio(out.Slow.P99Ms, out.Alone.P99Ms)
	res.Isolation = out
	res.IsolationP99Ratio = out.Ratio
	return nil
}
