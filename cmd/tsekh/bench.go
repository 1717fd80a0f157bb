package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"

	"github.com/tsekh/tsekh/internal/bench"
	"github.com/tsekh/tsekh/internal/platform/config"
)

const benchSummary = `Measures the outbox on the PostgreSQL at DATABASE_URL, in a schema of its own
(bench_<random>, migrated for the run and dropped afterwards unless --keep):
the cost of the event in an order's write, the dispatcher's throughput and
memory on a backlog, the delay from commit to subscriber, and a deep page of
the journal. Prints a progress line and a summary on stderr, and one JSON
object on stdout. The defaults are the sizes the targets in README.md are
stated for; smaller sizes make a quick run.`

func runBench(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flags("bench [flags]", benchSummary, stderr)
	var o bench.Options
	fs.IntVar(&o.Events, "events", 100_000, "dispatch: events in the backlog (2 subscribers each)")
	fs.IntVar(&o.Journal, "journal", 1_000_000, "journal: events in the journal for the deep page and the claim plan")
	fs.IntVar(&o.LatencyEvents, "latency-events", 1000, "latency: events written one by one")
	fs.DurationVar(&o.LatencyPace, "latency-pace", 0, "latency: time between two writes (default 5ms)")
	fs.IntVar(&o.Writes, "writes", 500, "write overhead: orders per round and variant")
	fs.IntVar(&o.Rounds, "rounds", 5, "write overhead: rounds (the median ratio is reported)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the bench schema after the run")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return err
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
