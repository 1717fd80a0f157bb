package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
)

// LatencyStats sum up delays from the start of an event's writing
// transaction to the call of the local subscriber.
type LatencyStats struct {
	Events int     `json:"events"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

func latencyStats(lats []time.Duration) LatencyStats {
	if len(lats) == 0 {
		return LatencyStats{}
	}
	sorted := slices.Clone(lats)
	slices.Sort(sorted)
	return LatencyStats{Events: len(sorted), P50Ms: percentile(sorted, 50), P90Ms: percentile(sorted, 90),
		P99Ms: percentile(sorted, 99), MaxMs: ms(sorted[len(sorted)-1])}
}

// ratio is a/b rounded, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round(a/b, 3)
}

// stream is the set-up of the latency figures: events written one by one,
// each in its own transaction (whose BEGIN, INSERT and COMMIT travel in one
// round trip, so that the transaction's start is as good as its commit),
// dispatched by the real Runner woken by LISTEN/NOTIFY, as in the service.
// It records, by phase, the delay from the start of each event's writing
// transaction to the call of the local subscriber bench.local, and counts
// every subscriber's deliveries.
type stream struct {
	r       *runner
	mu      sync.Mutex
	lats    map[int][]time.Duration // by phase
	seen    map[string]int          // deliveries by subscriber
	written int
	got     chan struct{}
	stop    context.CancelFunc
	run     *events.Runner
}

// warmUp is how many events a stream writes (in phase -1, not reported)
// before it is measured: the first ones open the pool's connections and
// prepare its statements.
const warmUp = 100

// startStream starts a Runner over a bench registry of subs (whose seen it
// sets), waits for its listener to connect and warms it up.
func (r *runner) startStream(ctx context.Context, subs benchSubs) (*stream, error) {
	s := &stream{r: r, lats: map[int][]time.Duration{}, seen: map[string]int{}, got: make(chan struct{}, 1)}
	subs.seen = s.observe
	d := events.NewDispatcher(r.db, benchRegistry(subs), events.DispatcherOptions{Logger: r.opt.Logger})
	runCtx, stop := context.WithCancel(ctx)
	s.stop = stop
	s.run = events.NewRunner(d, events.RunnerOptions{Interval: time.Minute, ListenURL: r.url})
	if err := s.run.Start(runCtx); err != nil {
		stop()
		return nil, err
	}
	if err := r.warmPool(ctx); err != nil {
		s.close()
		return nil, err
	}
	time.Sleep(300 * time.Millisecond) // let the listener connect
	if _, err := s.write(ctx, -1, warmUp, time.Time{}, r.opt.LatencyPace); err != nil {
		s.close()
		return nil, err
	}
	if err := s.catchUp(ctx, subName("local", 0), 30*time.Second); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// warmPool opens every connection of the pool at once, so that the
// latencies do not include opening one (a new server process, which takes
// tens of milliseconds and more on a loaded machine): a running service has
// its pool open.
func (r *runner) warmPool(ctx context.Context) error {
	sqlDB, err := r.db.DB()
	if err != nil {
		return err
	}
	n := sqlDB.Stats().MaxOpenConnections
	conns := make([]*sql.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range n {
		c, err := sqlDB.Conn(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
		if err := c.PingContext(ctx); err != nil {
			return err
		}
	}
	return nil
}

// close stops the Runner and waits for its lanes to finish their batches.
func (s *stream) close() {
	s.stop()
	s.run.Wait()
}

// streamPayload is what the bench's events carry.
type streamPayload struct {
	N     int   `json:"n"`
	At    int64 `json:"at"` // the start of the writing transaction, Unix ns
	Phase int   `json:"phase"`
}

func (s *stream) observe(sub string, ev events.Event) {
	var lat time.Duration
	var p streamPayload
	local := sub == subName("local", 0)
	if local {
		if err := json.Unmarshal(ev.Payload, &p); err != nil || p.At == 0 {
			local = false
		} else {
			lat = time.Since(time.Unix(0, p.At))
		}
	}
	s.mu.Lock()
	s.seen[sub]++
	if local {
		s.lats[p.Phase] = append(s.lats[p.Phase], lat)
	}
	s.mu.Unlock()
	select {
	case s.got <- struct{}{}:
	default:
	}
}

// write writes events of the phase one by one, one every pace, n of them or
// (n == 0) until the time is up, and returns how many it wrote. A write
// slower than the pace delays the next one, so the rate reached may fall
// short of the pace's on a loaded machine.
func (s *stream) write(ctx context.Context, phase, n int, until time.Time, pace time.Duration) (int, error) {
	tick := time.NewTicker(pace)
	defer tick.Stop()
	k := 0
	for ; n > 0 && k < n || n == 0 && time.Now().Before(until); k++ {
		s.mu.Lock()
		i := s.written
		s.mu.Unlock()
		at := time.Now().UnixNano()
		err := s.r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			return events.Add(ctx, tx, events.New{Type: benchType, AggregateType: benchAggType, AggregateID: int64(i + 1),
				Payload: streamPayload{N: i, At: at, Phase: phase}})
		})
		if err != nil {
			return k, err
		}
		s.mu.Lock()
		s.written++
		s.mu.Unlock()
		s.r.p.add(1)
		select {
		case <-tick.C:
		case <-ctx.Done():
			return k, ctx.Err()
		}
	}
	return k, nil
}

// behind returns how many of the events written the subscriber has not had.
func (s *stream) behind(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written - s.seen[sub]
}

// catchUp waits until the subscriber has had every event written.
func (s *stream) catchUp(ctx context.Context, sub string, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		k := s.behind(sub)
		if k <= 0 {
			return nil
		}
		select {
		case <-s.got:
		case <-deadline.C:
			return fmt.Errorf("%s: %d events written have not reached it in %s", sub, k, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// latencies returns the phase's delays to bench.local.
func (s *stream) latencies(phase int) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lats[phase])
}
