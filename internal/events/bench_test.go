package events_test

// Benchmarks of the outbox's hot paths on PostgreSQL, so that a regression
// shows in review:
//
//	go test -run XXX -bench . ./internal/events/
//
// They run only with -bench (make test runs none). `tsekh bench` measures the
// whole service; these isolate one path each.

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// benchRegistry declares bench.noop with two no-op subscribers, one local
// and one outside, and bench.quiet with none.
func benchRegistry() *events.Registry {
	reg := events.NewRegistry()
	reg.AddTypes(
		events.Type{Type: "bench.noop", Owner: "bench", AggregateType: "things"},
		events.Type{Type: "bench.quiet", Owner: "bench", AggregateType: "things"},
	)
	reg.MustSubscribe(events.Subscriber{Name: "bench.local", Types: []string{"bench.noop"},
		HandleTx: func(context.Context, *gorm.DB, events.Event) error { return nil }})
	reg.MustSubscribe(events.Subscriber{Name: "bench.outside", Types: []string{"bench.noop"},
		Handle: func(context.Context, events.Event) error { return nil }})
	return reg
}

// fourRegistry declares bench.noop with four no-op subscribers, two local
// and two outside.
func fourRegistry() *events.Registry {
	reg := events.NewRegistry()
	reg.AddTypes(events.Type{Type: "bench.noop", Owner: "bench", AggregateType: "things"})
	for _, n := range []string{"bench.local", "bench.local-2"} {
		reg.MustSubscribe(events.Subscriber{Name: n, Types: []string{"bench.noop"},
			HandleTx: func(context.Context, *gorm.DB, events.Event) error { return nil }})
	}
	for _, n := range []string{"bench.outside", "bench.outside-2"} {
		reg.MustSubscribe(events.Subscriber{Name: n, Types: []string{"bench.noop"},
			Handle: func(context.Context, events.Event) error { return nil }})
	}
	return reg
}

// generate inserts n events of the type into one partition (or, with
// partition < 0, spread over all), as one transaction.
func generate(b *testing.B, db *gorm.DB, typ string, n, partition int) {
	b.Helper()
	part := "i % 16"
	if partition >= 0 {
		part = "?"
	}
	args := []any{typ}
	if partition >= 0 {
		args = append(args, partition)
	}
	args = append(args, n)
	err := db.Exec(`INSERT INTO events (type, aggregate_type, aggregate_id, partition, payload)
SELECT ?, 'things', i, `+part+`, jsonb_build_object('n', i, 'source', 'shop', 'lines', 2) FROM generate_series(1, ?) AS i`, args...).Error
	if err != nil {
		b.Fatal(err)
	}
}

// drainAll runs passes until the dispatcher has nothing left to read.
func drainAll(b *testing.B, d *events.Dispatcher) int {
	b.Helper()
	total := 0
	for {
		st, err := d.RunOnce(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		total += st.Events
		if st.Events == 0 && !st.Lagging {
			return total
		}
	}
}

// orderPayload is the payload of an order.received event of two lines.
func orderPayload(id int64) map[string]any {
	return map[string]any{"order_id": id, "lines": 2, "source": "shop", "sync_id": "shop-7826d8468b3d",
		"items": []map[string]any{{"item_id": id * 2, "sku": "SHK-KUPE-1600", "qty": 1}, {"item_id": id*2 + 1, "sku": "TMB-600", "qty": 2}}}
}

// BenchmarkPayload_Encode is the payload encoding Add does for an
// order.received event.
func BenchmarkPayload_Encode(b *testing.B) {
	p := orderPayload(22)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdd_InTransaction is the cost of one event in its owner's
// transaction, 100 events per transaction. The events' INSERTs travel with
// the COMMIT, so every 100th iteration pays for the hundred of them.
func BenchmarkAdd_InTransaction(b *testing.B) {
	db := dbtest.New(b, database.Postgres)
	ctx := context.Background()
	b.ReportAllocs()
	tx := db.Begin()
	n := 0
	for b.Loop() {
		if err := events.Add(ctx, tx, events.New{Type: "order.received", AggregateType: "sales_orders", AggregateID: int64(n), Payload: orderPayload(int64(n))}); err != nil {
			b.Fatal(err)
		}
		if n++; n%100 == 0 {
			if err := tx.Commit().Error; err != nil {
				b.Fatal(err)
			}
			tx = db.Begin()
		}
	}
	_ = tx.Commit()
}

// BenchmarkDispatch_Batch is one full batch: 1,000 events of one partition
// claimed, handed to two no-op subscribers and recorded as done.
func BenchmarkDispatch_Batch(b *testing.B) {
	db := dbtest.New(b, database.Postgres)
	d := events.NewDispatcher(db, benchRegistry(), events.DispatcherOptions{BatchSize: 1000})
	benchBatches(b, db, d, "bench.noop")
}

// BenchmarkDispatch_MarkDone is the claim and the commit that marks a batch
// of 1,000 events done, with no subscriber to call: the dispatcher's own
// cost per batch.
func BenchmarkDispatch_MarkDone(b *testing.B) {
	db := dbtest.New(b, database.Postgres)
	d := events.NewDispatcher(db, benchRegistry(), events.DispatcherOptions{BatchSize: 1000})
	benchBatches(b, db, d, "bench.quiet")
}

// BenchmarkDispatch_FourLanes is a backlog of 2,000 events in each of the
// sixteen partitions dispatched to four subscribers, two local and two
// outside: four lanes per partition, claimed together, whose claim reads
// their first batch. The lanes of a partition should then share their
// reads of the journal: reads/partition counts the batch reads after the
// claims, 2 when the four lanes share them (the second batch, and the read
// that finds the end), 8 when each lane reads alone.
func BenchmarkDispatch_FourLanes(b *testing.B) {
	db := dbtest.New(b, database.Postgres)
	reads := &readCounter{}
	d := events.NewDispatcher(db.Session(&gorm.Session{Logger: reads}), fourRegistry(), events.DispatcherOptions{BatchSize: 1000})
	ctx := context.Background()
	if _, err := d.RunOnce(ctx); err != nil { // registers the subscribers
		b.Fatal(err)
	}
	const perPartition = 2000
	var n int
	var busy time.Duration
	for b.Loop() {
		b.StopTimer()
		generate(b, db, "bench.noop", perPartition*events.Partitions, -1)
		if err := db.Exec("ANALYZE events").Error; err != nil {
			b.Fatal(err)
		}
		reads.n.Store(0)
		b.StartTimer()
		t0 := time.Now()
		got := drainAll(b, d)
		busy += time.Since(t0)
		if got != 4*perPartition*events.Partitions {
			b.Fatalf("%d deliveries", got)
		}
		n++
	}
	b.ReportMetric(float64(n*perPartition*events.Partitions)/busy.Seconds(), "events/s")
	b.ReportMetric(float64(reads.n.Load())/events.Partitions, "reads/partition")
}

// readCounter is a GORM logger that counts the dispatcher's batch reads
// (the claims' reads aside).
type readCounter struct{ n atomic.Int64 }

func (c *readCounter) LogMode(logger.LogLevel) logger.Interface { return c }
func (c *readCounter) Info(context.Context, string, ...any)     {}
func (c *readCounter) Warn(context.Context, string, ...any)     {}
func (c *readCounter) Error(context.Context, string, ...any)    {}
func (c *readCounter) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	if q, _ := fc(); strings.Contains(q, "(e.partition, e.id) >") {
		c.n.Add(1)
	}
}

// BenchmarkDispatch_OneEvent is the path of an event written alone: a pass
// that finds one event just committed, claims its partition, hands it to two
// no-op subscribers and records it (the survey, the claim with its read, the
// batch transaction), in a journal with history.
func BenchmarkDispatch_OneEvent(b *testing.B) {
	db := dbtest.New(b, database.Postgres)
	d := events.NewDispatcher(db, benchRegistry(), events.DispatcherOptions{})
	generate(b, db, "bench.noop", 50_000, -1)
	drainAll(b, d)
	ctx := context.Background()
	var passes int
	var busy time.Duration
	for n := 0; b.Loop(); n++ {
		b.StopTimer()
		err := db.Transaction(func(tx *gorm.DB) error {
			return events.Add(ctx, tx, events.New{Type: "bench.noop", AggregateType: "things", AggregateID: int64(n), Payload: orderPayload(int64(n))})
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for got := 0; got < 1; {
			t0 := time.Now()
			st, err := d.RunOnce(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if st.Events > 0 {
				busy += time.Since(t0)
				got += st.Events
				passes++
			}
		}
	}
	b.ReportMetric(busy.Seconds()*1000/float64(passes), "ms/pass")
}

func benchBatches(b *testing.B, db *gorm.DB, d *events.Dispatcher, typ string) {
	b.Helper()
	// A journal with history: the claim must not slow down as it grows.
	generate(b, db, typ, 50_000, -1)
	drainAll(b, d)
	require := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	require(db.Exec("ANALYZE events").Error)
	// Passes that find nothing (a transaction elsewhere on the server holds
	// the horizon back) are not the path measured: the metrics count only the
	// passes that dispatched.
	var events int
	var busy time.Duration
	for b.Loop() {
		b.StopTimer()
		generate(b, db, typ, 1000, 3)
		b.StartTimer()
		for got := 0; got < 1000; {
			t0 := time.Now()
			st, err := d.RunOnce(context.Background())
			require(err)
			if st.Events > 0 {
				busy += time.Since(t0)
				got += st.Events
			}
		}
		events += 1000
	}
	b.ReportMetric(float64(events)/busy.Seconds(), "events/s")
	b.ReportMetric(busy.Seconds()*1000/float64(events/1000), "ms/batch")
}

// BenchmarkJournal_DeepPage is GET /api/v1/events's query with a type
// filter and a cursor deep in a journal of 200,000 dispatched events.
func BenchmarkJournal_DeepPage(b *testing.B) {
	db := dbtest.New(b, database.Postgres)
	reg := benchRegistry()
	generate(b, db, "bench.noop", 100_000, -1)
	generate(b, db, "bench.quiet", 100_000, -1)
	drainAll(b, events.NewDispatcher(db, reg, events.DispatcherOptions{}))
	if err := db.Exec("ANALYZE events").Error; err != nil {
		b.Fatal(err)
	}
	var minID int64
	if err := database.Scan(db.Raw("SELECT min(id) FROM events"), &minID); err != nil {
		b.Fatal(err)
	}
	j := events.NewJournal(db, reg)
	ctx := context.Background()
	for b.Loop() {
		entries, _, err := j.List(ctx, events.Filter{Type: "bench.noop"}, page.Request{Limit: 50, After: minID + 20_000})
		if err != nil {
			b.Fatal(err)
		}
		if len(entries) != 50 {
			b.Fatalf("got %d entries", len(entries))
		}
	}
}
