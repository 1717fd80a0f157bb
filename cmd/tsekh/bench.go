package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/tsekh/tsekh/internal/bench"
	"github.com/tsekh/tsekh/internal/platform/config"
)

const benchSummary = `Measures the outbox on the PostgreSQL at DATABASE_URL, in a schema of its own
(bench_<random>, migrated for the run and dropped afterwards unless --keep):
the cost of the event in an order's write (as a ratio and in µs) and in a
one-row transaction (in µs, as the peers' harnesses measure a job or a
message), the commits a second of eight
writers of events at once, the dispatcher's throughput and
memory on a backlog with two and with four subscribers, the delay from commit
to subscriber (alone, beside a slow outside subscriber, and while another
session holds a snapshot), a deep page of the journal, and the delay from
commit to 50 clients of the journal's SSE stream. Prints a progress
line and a summary on stderr, and one JSON object on stdout. The defaults are
the sizes the targets in docs/performance.md are stated for; smaller sizes make a quick
run, and --only runs some of the steps.`

func runBench(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flags("bench [flags]", benchSummary, stderr)
	var o bench.Options
	fs.IntVar(&o.Events, "events", 100_000, "dispatch: events in the backlog (dispatched to 2 subscribers, then to 4)")
	fs.IntVar(&o.Journal, "journal", 1_000_000, "journal: events in the journal for the deep page and the claim plan")
	fs.IntVar(&o.LatencyEvents, "latency-events", 1000, "latency: events written one by one")
	fs.DurationVar(&o.LatencyPace, "latency-pace", 0, "latency and isolation: time between two writes (default 5ms)")
	fs.IntVar(&o.IsolationEvents, "isolation-events", 2000, "isolation: events written one by one, in eight blocks (alone, beside a slow subscriber, beside it, alone, and again)")
	fs.DurationVar(&o.IsolationDelay, "isolation-delay", 200*time.Millisecond, "isolation: what each call of the slow outside subscriber takes")
	fs.DurationVar(&o.XminDuration, "xmin-duration", time.Minute, "xmin: each phase, before and while a snapshot is held (the step takes twice this)")
	fs.Float64Var(&o.XminRate, "xmin-rate", 150, "xmin: events written a second")
	fs.IntVar(&o.Writes, "writes", 500, "write overhead: orders per round and variant")
	fs.IntVar(&o.Rounds, "rounds", 5, "write overhead: rounds (the median ratio is reported)")
	fs.IntVar(&o.WriteBlock, "write-block", 50, "write overhead: orders per block, with and without the event in turn")
	fs.IntVar(&o.DataRowBlocks, "data-row-blocks", 8, "added µs per tx: blocks of each kind (a data row alone, with its event)")
	fs.IntVar(&o.DataRowTx, "data-row-tx", 300, "added µs per tx: transactions per block")
	fs.DurationVar(&o.WritersTime, "writers-time", 5*time.Second, "writers: how long 8 writers commit one event per transaction at once")
	fs.IntVar(&o.StreamEvents, "stream-events", 1000, "stream-sse: events written one by one (at --latency-pace) to the stream's clients")
	fs.IntVar(&o.StreamClients, "stream-clients", 50, "stream-sse: SSE clients connected to GET /api/v1/events/stream")
	only := fs.String("only", "", "run only these steps, comma-separated: "+strings.Join(bench.Steps, ","))
	fs.BoolVar(&o.Keep, "keep", false, "keep the bench schema after the run")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *only != "" {
		o.Only = strings.Split(*only, ",")
	}
	stop, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stop()
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	o.DatabaseURL = cfg.DatabaseURL
	o.Progress = stderr
	o.Logger = slog.New(slog.DiscardHandler)
	res, err := bench.Run(ctx, o)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return err
	}
	_, _ = fmt.Fprint(stderr, bench.Summary(res))
	return nil
}

const benchPlanSummary = `Measures the plan on the PostgreSQL at DATABASE_URL, each size in a schema of
its own (created, migrated, seeded with the demo catalogue, dropped): the live
work is copies of a launched three-door wardrobe (56 operations), laid out by
a re-plan of everything; then a one-item launch one after the other (p50,
p99), eight launches at once, re-plans of everything, and changes of priority
(the last order lowered: it alone moves; an order in the middle raised above
all: those behind it move). Then the shortages at --shortage-items items
waiting in the backlog: their time and the Go heap's peak above idle while
they are counted. Prints one JSON object on stdout.`

func benchPlan(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flags("bench plan [flags]", benchPlanSummary, stderr)
	sizes := fs.String("sizes", "10000,50000,100000", "live operations, comma-separated")
	var o bench.PlanOptions
	fs.IntVar(&o.Launches, "launches", 30, "one-item launches timed one after the other at each size")
	fs.IntVar(&o.Concurrent, "concurrent", 8, "launches started at once")
	fs.IntVar(&o.Replans, "replans", 3, "re-plans of everything timed at each size")
	fs.IntVar(&o.Priorities, "priorities", 3, "changes of priority of each kind timed at each size")
	fs.IntVar(&o.ShortageItems, "shortage-items", 50000, "items waiting in the backlog for the shortages (0: leave them out)")
	fs.IntVar(&o.ShortageRuns, "shortage-runs", 10, "shortage calls timed")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	stop, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stop()
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("--sizes: %q is not a positive number", s)
		}
		o.Sizes = append(o.Sizes, n)
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	o.DatabaseURL = cfg.DatabaseURL
	o.Progress = stderr
	res, err := bench.RunPlan(ctx, o)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// startCPUProfile writes a CPU profile of the run to path until the
// function it returns is called; with no path it profiles nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
