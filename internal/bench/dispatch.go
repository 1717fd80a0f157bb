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
	Deliveries    int64   `json:"deliveries"`
	Seconds       float64 `json:"seconds"`
	DeliveriesPS  float64 `json:"deliveries_per_s"`
	InsertPerS    float64 `json:"backlog_insert_per_s"` // events.Add in transactions of 2,000
	HeapPeakMB    float64 `json:"heap_peak_mb"`         // while draining the whole backlog
	HeapPeakMBTen float64 `json:"heap_peak_mb_tenth"`   // while draining a tenth of it
	HeapBaseMB    float64 `json:"heap_base_mb"`         // before draining, after a GC
	BatchSize     int     `json:"batch_size"`
	Workers       int     `json:"workers"`
}

const (
	benchType    = "bench.noop"
	benchAggType = "bench_objects"
)

// benchRegistry holds the bench's event type and two no-op subscribers: one
// whose effect lives in the database (HandleTx, exactly once) and one with an
// outside effect (Handle, at least once), the two kinds tsekh has. Both call
// seen for each delivery.
func benchRegistry(seen func(sub string, ev events.Event)) *events.Registry {
	reg := events.NewRegistry()
	reg.AddTypes(events.Type{Type: benchType, Owner: "bench", AggregateType: benchAggType, Description: "A benchmark event."})
	reg.MustSubscribe(events.Subscriber{
		Name: "bench.outside", Types: []string{benchType}, Description: "No-op outside subscriber.",
		Handle: func(_ context.Context, ev events.Event) error { seen("bench.outside", ev); return nil },
	})
	reg.MustSubscribe(events.Subscriber{
		Name: "bench.local", Types: []string{benchType}, Description: "No-op local subscriber.",
		HandleTx: func(_ context.Context, _ *gorm.DB, ev events.Event) error { seen("bench.local", ev); return nil },
	})
	return reg
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

// drain times the dispatcher's passes until the backlog is dispatched, and
// samples the heap meanwhile.
func (r *runner) drain(ctx context.Context, n int, label string) (elapsed time.Duration, delivered int64, heapPeak, heapBase uint64, err error) {
	var count atomic.Int64
	reg := benchRegistry(func(string, events.Event) { count.Add(1); r.p.add(1) })
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
	want := int64(n) * 2
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

// dispatch measures the dispatcher draining a backlog: first a tenth of it
// (for the memory comparison), then the whole, with the real RunOnce and its
// workers, including the commits that record the deliveries.
func (r *runner) dispatch(ctx context.Context, res *Result) error {
	n := r.opt.Events
	out := DispatchResult{Events: n, Subscribers: 2}

	tenth := max(n/10, 1)
	if _, err := r.addBacklog(ctx, tenth); err != nil {
		return err
	}
	_, _, peakTen, _, err := r.drain(ctx, tenth, "dispatch: draining a tenth of the backlog")
	if err != nil {
		return err
	}
	if err := r.reset(ctx); err != nil {
		return err
	}

	took, err := r.addBacklog(ctx, n)
	if err != nil {
		return err
	}
	out.InsertPerS = round(float64(n)/took.Seconds(), 0)
	if err := r.db.WithContext(ctx).Exec("ANALYZE events").Error; err != nil {
		return err
	}
	elapsed, delivered, peak, base, err := r.drain(ctx, n, "dispatch: draining the backlog")
	if err != nil {
		return err
	}
	// Every event must be recorded as processed, not only handed over.
	pending, err := events.NewJournal(r.db, benchRegistry(func(string, events.Event) {})).Pending(ctx)
	if err != nil {
		return err
	}
	if pending.Pending != 0 {
		return fmt.Errorf("%d events still pending after the drain", pending.Pending)
	}
	out.Deliveries = delivered
	out.Seconds = round(elapsed.Seconds(), 3)
	out.DeliveriesPS = round(float64(delivered)/elapsed.Seconds(), 0)
	out.HeapPeakMB = mb(peak)
	out.HeapPeakMBTen = mb(peakTen)
	out.HeapBaseMB = mb(base)
	out.BatchSize = 1000
	out.Workers = 2
	res.Dispatch = out
	res.DispatchPerS = round(float64(n)/elapsed.Seconds(), 0)
	res.DispatchHeapPeakMB = out.HeapPeakMB
	return nil
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func mb(b uint64) float64 { return round(float64(b)/(1<<20), 1) }
