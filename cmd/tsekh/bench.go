package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
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
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
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
