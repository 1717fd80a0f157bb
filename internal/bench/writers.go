package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
)

// WritersResult is the journal's throughput under concurrent writers.
type WritersResult struct {
	Writers int     `json:"writers"`
	Seconds float64 `json:"seconds"`
	Commits int64   `json:"commits"`
	PerS    float64 `json:"commits_per_s"`
}

// writersCount is the step's writers: as many as a busy replica has
// requests in flight.
const writersCount = 8

// writers runs writersCount goroutines that each commit one event per
// transaction through events.Add (with a correlation id of its own, as a
// request writes it) for Options.WritersTime, and reports the commits per second:
// what a writing commit costs the others (until migration 00032 every one
// took PostgreSQL's NOTIFY lock, one for the whole server, across its
// commit).
func (r *runner) writers(ctx context.Context, res *Result) error {
	r.p.set(fmt.Sprintf("writers: %d at once", writersCount), 0, 0)
	var n atomic.Int64
	var firstErr error
	var once sync.Once
	end := time.Now().Add(r.opt.WritersTime)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writersCount {
		wg.Go(func() {
			for i := int64(0); time.Now().Before(end) && ctx.Err() == nil; i++ {
				err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
					return events.Add(events.WithCorrelation(ctx, rand.Text()), tx, events.New{Type: "bench.written",
						AggregateType: "bench", AggregateID: int64(w)<<32 | i, Payload: map[string]any{"writer": w, "n": i}})
				})
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	secs := time.Since(start).Seconds()
	res.Writers = WritersResult{Writers: writersCount, Seconds: round(secs, 3), Commits: n.Load(), PerS: round(float64(n.Load())/secs, 0)}
	res.ConcurrentWritesPerS = res.Writers.PerS
	return nil
}
