// Package bench measures what tsekh's outbox costs and how fast it goes, on
// the PostgreSQL server it is pointed at: the cost of the event in an order's
// write, the commits a second of eight writers of events at once, the
// dispatcher's throughput and memory on a backlog (with two and
// with four subscribers), the delay from commit to subscriber (alone, beside
// a slow outside subscriber, and while another session holds a snapshot),
// the journal's deep pages, and the delay from commit to the clients of the
// journal's live stream (SSE). It works in a schema of
// its own (bench_<random>), created, migrated and dropped for the run, so it
// never touches real data. `tsekh bench` is its command line.
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// Options are the sizes of a run; zero values take the defaults, which are
// the sizes the targets are stated for.
type Options struct {
	DatabaseURL     string        // PostgreSQL; required
	Events          int           // dispatch backlog (100,000 events; 2 subscribers: 200,000 deliveries, 4: 400,000)
	Journal         int           // journal size for the deep page and the claim plan (1,000,000)
	LatencyEvents   int           // events written one by one for the latency (1,000)
	LatencyPace     time.Duration // between two of those writes, and the isolation's (5ms)
	IsolationEvents int           // events written one by one for the isolation (2,000)
	IsolationDelay  time.Duration // what each call of the slow outside subscriber takes (200ms)
	XminDuration    time.Duration // each of the xmin figure's two phases (1m, as the target is stated)
	XminRate        float64       // events a second in the xmin figure (150)
	Writes          int           // orders per round and variant for the write overhead (500)
	Rounds          int           // rounds of the write overhead; the median is reported (5)
	WriteBlock      int           // orders per block of the write overhead, the kinds in turn (50)
	DataRowBlocks   int           // blocks of each kind for the data row's added µs (8, as the peers')
	DataRowTx       int           // transactions per block for the data row's added µs (300, as the peers')
	WritersTime     time.Duration // how long the 8 concurrent writers write (5s)
	StreamEvents    int           // events written one by one for the SSE stream's delay, at LatencyPace (1,000)
	StreamClients   int           // SSE clients connected meanwhile (50)
	// Only, when not empty, names the steps to run (see Steps); the others'
	// figures stay zero.
	Only     []string
	Keep     bool // keep the schema after the run
	Progress io.Writer
	Logger   *slog.Logger
}

// Steps are the measurements of a run, in the order they run.
var Steps = []string{"write", "writers", "dispatch", "dispatch-four", "latency", "isolation", "xmin", "journal", "stream-sse"}

func (o *Options) defaults() {
	orDefault(&o.Events, 100_000)
	orDefault(&o.Journal, 1_000_000)
	orDefault(&o.LatencyEvents, 1000)
	orDefault(&o.LatencyPace, 5*time.Millisecond)
	orDefault(&o.IsolationEvents, 2000)
	orDefault(&o.IsolationDelay, 200*time.Millisecond)
	orDefault(&o.XminDuration, time.Minute)
	orDefault(&o.XminRate, 150)
	orDefault(&o.Writes, 500)
	orDefault(&o.Rounds, 5)
	orDefault(&o.WriteBlock, 50)
	orDefault(&o.DataRowBlocks, 8)
	orDefault(&o.DataRowTx, 300)
	orDefault(&o.WritersTime, 5*time.Second)
	orDefault(&o.StreamEvents, 1000)
	orDefault(&o.StreamClients, 50)
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// orDefault sets *v to d when it is zero or less: a size left out.
func orDefault[T int | float64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Result is what a run measured. The figures the targets name come first.
type Result struct {
	WriteOverheadRatio   float64 `json:"write_overhead_ratio"`
	WriteAddedUs         float64 `json:"write_added_us_per_order"` // the event's µs in an order's write
	DataRowAddedUs       float64 `json:"added_us_per_tx"`          // the event's µs in a one-row transaction, as the peers report theirs
	ConcurrentWritesPerS float64 `json:"concurrent_writes_per_s"`  // 8 writers, one event per transaction
	DispatchPerS         float64 `json:"dispatch_per_s"`           // two subscribers, one local, one outside
	DispatchFourPerS     float64 `json:"dispatch_four_per_s"`      // four, two local, two outside
	LatencyP50Ms         float64 `json:"latency_p50_ms"`
	LatencyP99Ms         float64 `json:"latency_p99_ms"`
	IsolationP99Ratio    float64 `json:"isolation_p99_ratio"` // local p99 beside a slow outside subscriber ÷ alone
	XminP99Ratio         float64 `json:"xmin_p99_ratio"`      // p99 while a snapshot is held ÷ before
	JournalPageMs        float64 `json:"journal_page_ms"`
	DispatchHeapPeakMB   float64 `json:"dispatch_heap_peak_mb"`
	StreamSSEP99Ms       float64 `json:"stream_sse_p99_ms"` // write → SSE client, with StreamClients connected

	Write        WriteResult     `json:"write"`
	Writers      WritersResult   `json:"writers"`
	Dispatch     DispatchResult  `json:"dispatch"`
	DispatchFour DispatchResult  `json:"dispatch_four"`
	Latency      LatencyResult   `json:"latency"`
	Isolation    IsolationResult `json:"isolation"`
	Xmin         XminResult      `json:"xmin"`
	JournalR     JournalResult   `json:"journal"`
	Claim        ClaimResult     `json:"claim"`
	StreamSSE    StreamSSEResult `json:"stream_sse"`
	Machine      Machine         `json:"machine"`
	Steps        []string        `json:"steps"` // the steps run
	Schema       string          `json:"schema"`
	Seconds      float64         `json:"seconds"`
}

// Machine describes where the figures come from.
type Machine struct {
	CPUs       int    `json:"cpus"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	Go         string `json:"go"`
	Postgres   string `json:"postgres"`
	SyncCommit string `json:"synchronous_commit"`
}

// Run creates a fresh schema, runs every measurement in it and drops it
// (unless Keep). It refuses anything but PostgreSQL.
func Run(ctx context.Context, opt Options) (Result, error) {
	opt.defaults()
	var res Result
	if opt.DatabaseURL == "" {
		return res, errors.New("bench needs PostgreSQL: set DATABASE_URL to a postgres:// URL " +
			"(it works in a schema of its own, created and dropped for the run); the embedded SQLite is not benchmarked")
	}
	for _, o := range opt.Only {
		if !slices.Contains(Steps, o) {
			return res, fmt.Errorf("bench: no step %q (the steps: %s)", o, strings.Join(Steps, ", "))
		}
	}
	start := time.Now()
	p := newProgress(opt.Progress)
	defer p.stop()

	schema := "bench_" + randomHex(6)
	res.Schema = schema
	admin, err := database.Open(ctx, database.Options{PostgresURL: opt.DatabaseURL, MaxConns: 1})
	if err != nil {
		return res, err
	}
	defer func() { _ = database.Close(admin) }()
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		return res, fmt.Errorf("create schema %s: %w", schema, err)
	}
	if !opt.Keep {
		defer func() {
			p.set("dropping schema "+schema, 0, 0)
			if err := admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error; err != nil {
				opt.Logger.Warn("drop bench schema", "schema", schema, "err", err)
			}
		}()
	}
	url, err := withSearchPath(opt.DatabaseURL, schema)
	if err != nil {
		return res, err
	}
	db, err := database.Open(ctx, database.Options{PostgresURL: url})
	if err != nil {
		return res, err
	}
	defer func() { _ = database.Close(db) }()
	p.set("migrating "+schema, 0, 0)
	if _, err := database.Migrate(ctx, db); err != nil {
		return res, err
	}
	res.Machine, err = machine(ctx, db)
	if err != nil {
		return res, err
	}

	r := &runner{opt: opt, db: db, url: url, p: p}
	steps := map[string]func(context.Context, *Result) error{
		"write":         r.writeOverhead,
		"writers":       r.writers,
		"dispatch":      r.dispatch,
		"dispatch-four": r.dispatchFour,
		"latency":       r.latency,
		"isolation":     r.isolation,
		"xmin":          r.xmin,
		"journal":       r.journal,
		"stream-sse":    r.streamSSE,
	}
	for _, name := range Steps {
		if len(opt.Only) > 0 && !slices.Contains(opt.Only, name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := r.reset(ctx); err != nil {
			return res, err
		}
		if err := steps[name](ctx, &res); err != nil {
			return res, fmt.Errorf("%s: %w", name, err)
		}
		res.Steps = append(res.Steps, name)
	}
	res.Seconds = round(time.Since(start).Seconds(), 1)
	return res, nil
}

// runner carries what every measurement needs.
type runner struct {
	opt Options
	db  *gorm.DB
	url string // the bench schema's URL (for LISTEN)
	p   *progress
}

// reset empties the journal between measurements, so that each starts from
// a journal of its own size.
func (r *runner) reset(ctx context.Context) error {
	return r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return tx.Exec("TRUNCATE events_deliveries, events_batches, events, events_lanes, events_subscribers, events_replicas CASCADE").Error
	})
}

func machine(ctx context.Context, db *gorm.DB) (Machine, error) {
	m := Machine{CPUs: runtime.NumCPU(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Go: runtime.Version()}
	err := database.Scan(db.WithContext(ctx).Raw("SELECT current_setting('server_version')"), &m.Postgres)
	if err != nil {
		return m, err
	}
	err = database.Scan(db.WithContext(ctx).Raw("SELECT current_setting('synchronous_commit')"), &m.SyncCommit)
	return m, err
}

func withSearchPath(rawURL, schema string) (string, error) {
	u, err := database.WithParams(rawURL, "search_path", schema)
	if err != nil {
		return "", fmt.Errorf("bad DATABASE_URL: %w", err)
	}
	return u, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// percentile returns the p-th percentile (0..100) of sorted durations, in ms.
func percentile(sorted []time.Duration, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := len(sorted) * p / 100
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return ms(sorted[i])
}

func ms(d time.Duration) float64 { return round(float64(d.Nanoseconds())/1e6, 3) }

func round(x float64, digits int) float64 {
	f := 1.0
	for range digits {
		f *= 10
	}
	if x < 0 {
		return -float64(int64(-x*f+0.5)) / f
	}
	return float64(int64(x*f+0.5)) / f
}

// Summary is a short human reading of a result.
func Summary(r Result) string {
	var b strings.Builder
	ran := func(step string) bool { return slices.Contains(r.Steps, step) }
	fmt.Fprintf(&b, "tsekh bench (%d CPUs, PostgreSQL %s, synchronous_commit=%s, %s) in %.0fs\n",
		r.Machine.CPUs, r.Machine.Postgres, r.Machine.SyncCommit, r.Machine.Go, r.Seconds)
	if ran("write") {
		w := r.Write
		fmt.Fprintf(&b, "  write overhead    %.3f, %.1f µs per order  (%.3f ms per order with its event, %.3f ms without; %d rounds of %d,\n",
			r.WriteOverheadRatio, r.WriteAddedUs, w.WithMs, w.WithoutMs, w.Rounds, w.Orders)
		fmt.Fprintf(&b, "                    in blocks of %d; the ratio the rounds' median, the µs the median of %d pairs of blocks)\n",
			w.BlockOrders, w.Pairs)
		fmt.Fprintf(&b, "  added µs per tx   %.1f  (a data row alone %.1f µs, with its event %.1f µs; %d blocks of %d of each, as the peers')\n",
			r.DataRowAddedUs, w.DataRow.DataOnlyUs, w.DataRow.WithEventUs, w.DataRow.Blocks, w.DataRow.TxPerBlock)
	}
	if ran("writers") {
		fmt.Fprintf(&b, "  writers           %.0f commits/s  (%d writers at once, one event per transaction, %.1fs)\n",
			r.ConcurrentWritesPerS, r.Writers.Writers, r.Writers.Seconds)
	}
	if ran("dispatch") {
		fmt.Fprintf(&b, "  dispatch          %.0f events/s  (1 local + 1 outside subscriber; %d events, %d deliveries in %.2fs; %.0f deliveries/s)\n",
			r.DispatchPerS, r.Dispatch.Events, r.Dispatch.Deliveries, r.Dispatch.Seconds, r.Dispatch.DeliveriesPS)
		fmt.Fprintf(&b, "  dispatcher heap   %.1f MB peak at %d events, %.1f MB at a tenth\n",
			r.Dispatch.HeapPeakMB, r.Dispatch.Events, r.Dispatch.HeapPeakMBTen)
	}
	if ran("dispatch-four") {
		fmt.Fprintf(&b, "  dispatch, four    %.0f events/s  (2 local + 2 outside subscribers; %d events, %d deliveries in %.2fs; %.0f deliveries/s)\n",
			r.DispatchFourPerS, r.DispatchFour.Events, r.DispatchFour.Deliveries, r.DispatchFour.Seconds, r.DispatchFour.DeliveriesPS)
	}
	if ran("latency") {
		fmt.Fprintf(&b, "  latency           p50 %.2f ms, p99 %.2f ms  (%d events, one every %.0f ms; oldest transaction on the server meanwhile %.0f ms)\n",
			r.LatencyP50Ms, r.LatencyP99Ms, r.Latency.Events, r.Latency.PaceMs, r.Latency.OtherXactMaxMs)
	}
	if ran("isolation") {
		i := r.Isolation
		fmt.Fprintf(&b, "  isolation         %.2f  (local p99 %.2f ms beside an outside subscriber taking %.0f ms a call, %.2f ms alone;\n",
			i.Ratio, i.Slow.P99Ms, i.DelayMs, i.Alone.P99Ms)
		fmt.Fprintf(&b, "                    %d + %d events, one every %.0f ms; %d slow calls, the outside subscriber %d events behind at the end)\n",
			i.Alone.Events, i.Slow.Events, i.PaceMs, i.SlowCalls, i.OutsideBehind)
	}
	if ran("xmin") {
		x := r.Xmin
		fmt.Fprintf(&b, "  xmin horizon      %.2f  (p99 %.2f ms while a snapshot is held, %.2f ms before, p50 %.2f and %.2f ms;\n",
			x.Ratio, x.During.P99Ms, x.Before.P99Ms, x.During.P50Ms, x.Before.P50Ms)
		fmt.Fprintf(&b, "                    %d + %d events at %.0f/s and %.0f/s of %.0f/s, %.0fs each;\n",
			x.Before.Written, x.During.Written, x.Before.PerS, x.During.PerS, x.TargetPerS, x.Seconds)
		fmt.Fprintf(&b, "                    the snapshot %d transactions old at the end; events_lanes %.0f kB, %.0f kB when it was taken, %.0f kB at the end;\n",
			x.SnapshotAge, x.LanesKB[0], x.LanesKB[1], x.LanesKB[2])
		fmt.Fprintf(&b, "                    %.0f%% of its updates HOT before, %.0f%% during)\n", x.LanesHOTPct[0], x.LanesHOTPct[1])
	}
	if ran("journal") {
		fmt.Fprintf(&b, "  journal page      %.2f ms  (median; type filter, cursor 90%% deep in %d events; first page %.2f ms)\n",
			r.JournalPageMs, r.JournalR.Events, r.JournalR.FirstMs)
		fmt.Fprintf(&b, "  claim + read      %.3f ms with 0 processed events, %.3f ms with %d\n",
			r.Claim.EmptyMs, r.Claim.FullMs, r.JournalR.Events)
		if r.Claim.Plan != "" {
			for _, l := range strings.Split(r.Claim.Plan, "\n") {
				fmt.Fprintf(&b, "    %s\n", l)
			}
		}
	}
	if ran("stream-sse") {
		x := r.StreamSSE
		fmt.Fprintf(&b, "  stream (SSE)      p50 %.2f ms, p99 %.2f ms  (write → client; %d clients, %d events one every %.0f ms; max %.2f ms)\n",
			x.P50Ms, x.P99Ms, x.Clients, x.Events/max(1, x.Clients), x.PaceMs, x.MaxMs)
	}
	return b.String()
}
