package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
)

// DispatchResult is the dispatcher's throughput and memory on a backlog.
type DispatchResult struct {
	Events        int     `json:"events"`
	Subscribers   int     `json:"subscribers"`
	Local         int     `json:"local_subscribers"`
	Outside       int     `json:"outside_subscribers"`
	Deliveries    int64   `json:"deliveries"`
	Seconds       float64 `json:"seconds"`
	EventsPerS    float64 `json:"events_per_s"`
	DeliveriesPS  float64 `json:"deliveries_per_s"`
	InsertPerS    float64 `json:"backlog_insert_per_s"`         // events.Add in transactions of 2,000
	HeapPeakMB    float64 `json:"heap_peak_mb"`                 // while draining the whole backlog
	HeapPeakMBTen float64 `json:"heap_peak_mb_tenth,omitempty"` // while draining a tenth of it
	HeapBaseMB    float64 `json:"heap_base_mb"`                 // before draining, after a GC
	BatchSize     int     `json:"batch_size"`
	Workers       int     `json:"workers"`
}

const (
	benchType    = "bench.noop"
	benchAggType = "bench_objects"
)

// benchSubs are the subscribers of a bench registry: no-op subscribers of
// the two kinds tsekh has, whose effect lives in the database (HandleTx,
// exactly once) or outside it (Handle, at least once).
type benchSubs struct {
	local, outside int
	// seen, when set, is called for each delivery.
	seen func(sub string, ev events.Event)
	// call, when set, is what an outside subscriber does before it returns
	// (the isolation's slow subscriber sleeps there).
	call func(ctx context.Context, sub string) error
}

// subName names the i-th (from 0) subscriber of a kind: bench.local,
// bench.local-2, …
func subName(kind string, i int) string {
	if i == 0 {
		return "bench." + kind
	}
	return fmt.Sprintf("bench.%s-%d", kind, i+1)
}

// benchRegistry holds the bench's event type and its subscribers.
func benchRegistry(s benchSubs) *events.Registry {
	reg := events.NewRegistry()
	reg.AddTypes(events.Type{Type: benchType, Owner: "bench", AggregateType: benchAggType, Description: "A benchmark event."})
	seen := s.seen
	if seen == nil {
		seen = func(string, events.Event) {}
	}
	for i := range s.outside {
		name := subName("outside", i)
		reg.MustSubscribe(events.Subscriber{
			Name: name, Types: []string{benchType}, Description: "No-op outside subscriber.",
			Handle: func(ctx context.Context, ev events.Event) error {
				if s.call != nil {
					if err := s.call(ctx, name); err != nil {
						return err
					}
				}
				seen(name, ev)
				return nil
			},
		})
	}
	for i := range s.local {
		name := subName("local", i)
		reg.MustSubscribe(events.Subscriber{
			Name: name, Types: []string{benchType}, Description: "No-op local subscriber.",
			HandleTx: func(_ context.Context, _ *gorm.DB, ev events.Event) error { seen(name, ev); return nil },
		})
	}
	return reg
}

// twoSubs are the bench's usual subscribers: one local, one outside.
func twoSubs(seen func(sub string, ev events.Event)) benchSubs {
	return benchSubs{local: 1, outside: 1, seen: seen}
}

// addBacklog writes n events through events.Add, in transactions of 2,000,
// spread over n/4 objects (four events per object).
func (r *runner) addBacklog(ctx context.Context, n int) (time.Duration, error) {
	const perTx = 2_000
	objects := max(n/4, 1)
	start := time.Now()
	r.p.set("dispatch: writing a backlog of events", 0, int64(n))
	for done := 0; done < n; {
		k := min(perTx, n-done)
		err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			for i := done; i < done+k; i++ {
				err := events.Add(ctx, tx, events.New{Type: benchType, AggregateType: benchAggType, AggregateID: int64(i%objects + 1),
					Payload: map[string]any{"n": i, "at": time.Now().UnixNano()}})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		done += k
		r.p.add(int64(k))
	}
	return time.Since(start), nil
}

// drain times the dispatcher's passes until the backlog of n events is
// dispatched to every subscriber of subs, and samples the heap meanwhile.
func (r *runner) drain(ctx context.Context, n int, subs benchSubs, label string) (elapsed time.Duration, delivered int64, heapPeak, heapBase uint64, err error) {
	var count atomic.Int64
	subs.seen = func(string, events.Event) { count.Add(1); r.p.add(1) }
	reg := benchRegistry(subs)
	d := events.NewDispatcher(r.db, reg, events.DispatcherOptions{Logger: r.opt.Logger})
	runtime.GC()
	heapBase = heapInUse()
	var peak atomic.Uint64
	peak.Store(heapBase)
	stopSampling := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
				if h := heapInUse(); h > peak.Load() {
					peak.Store(h)
				}
			}
		}
	}()
	want := int64(n) * int64(subs.local+subs.outside)
	r.p.set(label, 0, want)
	start := time.Now()
	deadline := start.Add(10 * time.Minute)
	for count.Load() < want {
		st, err := d.RunOnce(ctx)
		if err != nil {
			close(stopSampling)
			wg.Wait()
			return 0, 0, 0, 0, err
		}
		if st.Events == 0 {
			if time.Now().After(deadline) {
				close(stopSampling)
				wg.Wait()
				return 0, 0, 0, 0, fmt.Errorf("the dispatcher delivered %d of %d in 10 minutes", count.Load(), want)
			}
			time.Sleep(time.Millisecond) // a transaction elsewhere holds the horizon back
		}
	}
	elapsed = time.Since(start)
	close(stopSampling)
	wg.Wait()
	return elapsed, count.Load(), peak.Load(), heapBase, nil
}

// dispatch measures the dispatcher draining a backlog with two subscribers
// (one local, one outside): first a tenth of it (for the memory
// comparison), then the whole, with the real RunOnce and its workers,
// including the commits that record the deliveries.
func (r *runner) dispatch(ctx context.Context, res *Result) error {
	n := r.opt.Events
	subs := twoSubs(nil)
	tenth := max(n/10, 1)
	if _, err := r.addBacklog(ctx, tenth); err != nil {
		return err
	}
	_, _, peakTen, _, err := r.drain(ctx, tenth, subs, "dispatch: draining a tenth of the backlog")
	if err != nil {
		return err
	}
	if err := r.reset(ctx); err != nil {
		return err
	}
	out, err := r.drainBacklog(ctx, n, subs, "dispatch: draining the backlog")
	if err != nil {
		return err
	}
	out.HeapPeakMBTen = mb(peakTen)
	res.Dispatch = out
	res.DispatchPerS = out.EventsPerS
	res.DispatchHeapPeakMB = out.HeapPeakMB
	return nil
}

// dispatchFour is dispatch with four subscribers, two local and two
// outside: eight lanes per partition, which share their reads of the
// journal while they keep up with each other.
func (r *runner) dispatchFour(ctx context.Context, res *Result) error {
	n := r.opt.Events
	out, err := r.drainBacklog(ctx, n, benchSubs{local: 2, outside: 2}, "dispatch: draining the backlog to four subscribers")
	if err != nil {
		return err
	}
	res.DispatchFour = out
	res.DispatchFourPerS = out.EventsPerS
	return nil
}

// drainBacklog writes a backlog of n events and times its dispatch to subs;
// every event must end up recorded as processed, not only handed over.
func (r *runner) drainBacklog(ctx context.Context, n int, subs benchSubs, label string) (DispatchResult, error) {
	out := DispatchResult{Events: n, Subscribers: subs.local + subs.outside, Local: subs.local, Outside: subs.outside}
	took, err := r.addBacklog(ctx, n)
	if err != nil {
		return out, err
	}
	out.InsertPerS = round(float64(n)/took.Seconds(), 0)
	if err := r.db.WithContext(ctx).Exec("ANALYZE events").Error; err != nil {
		return out, err
	}
	elapsed, delivered, peak, base, err := r.drain(ctx, n, subs, label)
	if err != nil {
		return out, err
	}
	pending, err := events.NewJournal(r.db, benchRegistry(subs)).Pending(ctx)
	if err != nil {
		return out, err
	}
	if pending.Pending != 0 {
		return out, fmt.Errorf("%d events still pending after the drain", pending.Pending)
	}
	out.Deliveries = delivered
	out.Seconds = round(elapsed.Seconds(), 3)
	out.EventsPerS = round(float64(n)/elapsed.Seconds(), 0)
	out.DeliveriesPS = round(float64(delivered)/elapsed.Seconds(), 0)
	out.HeapPeakMB = mb(peak)
	out.HeapBaseMB = mb(base)
	out.BatchSize = 1000
	out.Workers = 2
	return out, nil
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func mb(b uint64) float64 { return round(float64(b)/(1<<20), 1) }
