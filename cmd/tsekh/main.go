// Command tsekh is the order-to-production service of a furniture factory.
//
//	tsekh serve [--no-dispatch]   the HTTP API and the event dispatcher
//	tsekh migrate                 apply the database migrations
//	tsekh seed --demo             load the demo catalog
//	tsekh dispatch --once         one dispatcher pass, for an external cron
//	tsekh import crm FILE.json    import CRM orders from a file
//	tsekh bench                   measure the outbox on PostgreSQL (see docs/performance.md)
//	tsekh subscribers ...         list, replay to or retire subscribers
//	tsekh asyncapi                print the AsyncAPI document of the events
//	tsekh cut FILE                lay a cutting list out on sheets (no database)
//
// Settings come from the environment; see docs/operating.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tsekh/tsekh/api"
	"github.com/tsekh/tsekh/internal/app"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/platform/telemetry"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal starts a graceful shutdown; a second one ends the
	// process at once, as without a handler.
	go func() { <-ctx.Done(); stop() }()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) && !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "tsekh:", err)
		}
		os.Exit(exitCode(err))
	}
}

func exitCode(err error) int {
	if errors.Is(err, flag.ErrHelp) || errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

var errUsage = errors.New("usage")

const usage = `tsekh: the order-to-production service of a furniture factory.

Usage:
  tsekh serve [--no-dispatch]   run the HTTP API, the event dispatcher, the maintenance job and the jobs' runner
  tsekh migrate                 apply the database migrations and exit
  tsekh seed --demo             load the demo catalog (work centres, routes, products)
  tsekh dispatch --once         run one dispatcher pass and exit (for an external cron)
  tsekh import crm FILE.json    import CRM orders from a file, once per crm_order_id
  tsekh bench [flags]           measure the outbox on the PostgreSQL at DATABASE_URL
  tsekh bench cutting [flags]   measure the cutting optimiser (no database)
  tsekh bench plan [flags]      measure the plan at 10k, 50k and 100k live operations (PostgreSQL)
  tsekh subscribers list        the subscribers with their status, lag and failures
  tsekh subscribers replay NAME --from ID
                                deliver the journal again to one subscriber from an event id
  tsekh subscribers retire NAME retire a subscriber that is gone for good
  tsekh asyncapi [--readme F]   print the AsyncAPI document of the events (or F, its table updated)
  tsekh cut [flags] FILE        lay a cutting list (JSON or CSV) out on sheets, print the plan (no database)

Settings come from the environment (DATABASE_URL, HTTP_ADDR, DISPATCH_INTERVAL, ...);
see docs/operating.md. "tsekh COMMAND --help" describes a command.
`

// run is the whole program, with its inputs made explicit for tests.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		_, _ = fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	cmd, rest := args[0], args[1:]
	// Tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT is set; the spans not
	// yet exported are flushed on the way out.
	shutdownTracing, err := telemetry.Setup(ctx, getenv)
	if err != nil {
		return err
	}
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdownTracing(flushCtx); err != nil {
			_, _ = fmt.Fprintln(stderr, "tsekh: flushing the traces:", err)
		}
	}()
	switch cmd {
	case "serve":
		return serve(ctx, rest, getenv, stdout, stderr)
	case "migrate":
		return migrate(ctx, rest, getenv, stdout, stderr)
	case "seed":
		return seed(ctx, rest, getenv, stdout, stderr)
	case "dispatch":
		return dispatch(ctx, rest, getenv, stdout, stderr)
	case "import":
		return importCmd(ctx, rest, getenv, stdout, stderr)
	case "bench":
		if len(rest) > 0 && rest[0] == "cutting" {
			return benchCutting(rest[1:], stdout, stderr)
		}
		if len(rest) > 0 && rest[0] == "plan" {
			return benchPlan(ctx, rest[1:], getenv, stdout, stderr)
		}
		return runBench(ctx, rest, getenv, stdout, stderr)
	case "subscribers":
		return subscribersCmd(ctx, rest, getenv, stdout, stderr)
	case "asyncapi":
		return asyncAPICmd(rest, stdout, stderr)
	case "cut":
		return cutCmd(rest, stdout, stderr)
	default:
		_, _ = fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

func flags(name, summary string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(stderr, "Usage: tsekh %s\n\n%s\n", name, summary)
		fs.PrintDefaults()
	}
	return fs
}

// setup loads the configuration and makes the logger.
func setup(getenv func(string) string, stderr io.Writer) (config.Config, *slog.Logger, error) {
	cfg, err := config.Load(getenv)
	if err != nil {
		return cfg, nil, err
	}
	level := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}[cfg.LogLevel]
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(stderr, opts)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(stderr, opts)
	}
	log := slog.New(h)
	slog.SetDefault(log)
	return cfg, log, nil
}

// openApp loads the configuration, opens the database, applies the
// migrations and wires the service: what every command but serve needs.
func openApp(ctx context.Context, getenv func(string) string, stderr io.Writer) (*app.App, error) {
	cfg, log, err := setup(getenv, stderr)
	if err != nil {
		return nil, err
	}
	return app.Open(ctx, cfg, log)
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flags("serve [--no-dispatch]", "Runs the HTTP API and, unless --no-dispatch, the event dispatcher and the\nmaintenance job. Applies pending migrations first. On a fresh SQLite database\nit loads the demo catalog and prints an admin token.", stderr)
	noDispatch := fs.Bool("no-dispatch", false, "serve the API only, without the dispatcher and the maintenance job (for API-only replicas)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, log, err := setup(getenv, stderr)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintln(stdout, "tsekh configuration:")
	cfg.Print(stdout)
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer func() { _ = a.Close() }()
	token, err := a.Bootstrap(ctx)
	if err != nil {
		return err
	}
	if token != "" {
		_, _ = fmt.Fprintf(stdout, "\nA new database with the demo catalog. Administrator's API token (shown once):\n\n    %s\n\nTry: curl -H 'Authorization: Bearer %s' %s/api/v1/me\n\n", token, token, localURL(cfg.HTTPAddr))
	}

	dispatchCtx, stopDispatch := context.WithCancel(context.WithoutCancel(ctx))
	defer stopDispatch()
	if !*noDispatch {
		if err := a.StartDispatcher(dispatchCtx); err != nil {
			return err
		}
		if err := a.StartMaintenance(dispatchCtx); err != nil {
			return err
		}
		a.StartJobs(dispatchCtx)
	}
	a.ListenForStream(dispatchCtx)
	srv := api.HTTPServer(cfg.HTTPAddr, a.HTTP(), cfg.HTTPRequestTimeout)
	// A graceful shutdown waits for the requests in flight, and a stream
	// of the journal never ends by itself: the shutdown ends the streams
	// (their clients reconnect, with Last-Event-ID, to another replica).
	srv.RegisterOnShutdown(a.Stream.Close)
	errc := make(chan error, 2)
	go func() { errc <- srv.ListenAndServe() }()
	// With METRICS_ADDR the metrics have a listener of their own, for the
	// monitoring only; otherwise the API port serves them to administrators.
	var metricsSrv *http.Server
	if cfg.MetricsAddr != "" {
		metricsSrv = api.HTTPServer(cfg.MetricsAddr, a.MetricsHTTP(), 0)
		go func() { errc <- fmt.Errorf("metrics listener: %w", metricsSrv.ListenAndServe()) }()
	}
	log.Info("tsekh serving", "addr", cfg.HTTPAddr, "metrics", metricsWhere(cfg.MetricsAddr), "dispatch", !*noDispatch, "maintenance", !*noDispatch, "jobs", !*noDispatch,
		"swagger", localURL(cfg.HTTPAddr)+"/swagger/index.html")

	select {
	case err := <-errc:
		shutdownHTTP(srv, metricsSrv, log)
		stopDispatch()
		a.WaitDispatcher()
		a.WaitMaintenance()
		a.WaitJobs()
		return err
	case <-ctx.Done():
	}
	// Stop taking requests, let those in flight finish, then let the
	// dispatcher finish the deliveries in hand.
	log.Info("shutting down")
	shutdownHTTP(srv, metricsSrv, log)
	stopDispatch()
	a.WaitDispatcher()
	a.WaitMaintenance()
	a.WaitJobs()
	log.Info("stopped")
	return nil
}

// shutdownHTTP stops the API and the metrics listener (when there is one),
// letting the requests in flight finish.
func shutdownHTTP(srv, metricsSrv *http.Server, log *slog.Logger) {
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range []*http.Server{srv, metricsSrv} {
		if s == nil {
			continue
		}
		if err := s.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("http shutdown", "addr", s.Addr, "err", err)
		}
	}
}

func metricsWhere(addr string) string {
	if addr == "" {
		return "/metrics on the API port, for administrators"
	}
	return addr
}

// localURL is the URL at which a client on this machine reaches the API
// listening on addr (HTTP_ADDR): ":8080" and "0.0.0.0:80" listen on every
// address, so localhost; a host given is kept, an IPv6 one in brackets.
func localURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	if port == "80" {
		return "http://" + bracketed(host)
	}
	return "http://" + net.JoinHostPort(host, port)
}

// bracketed puts an IPv6 address in brackets, as a URL's host needs.
func bracketed(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flags("migrate", "Applies the pending database migrations and exits.", stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	a, err := openApp(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintln(stdout, "migrations are up to date")
	return a.Close()
}

func seed(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flags("seed --demo", "Loads the demo catalog: work centres, the routes \"Корпус ЛДСП (типовой)\" and\n\"Мягкая мебель (типовой)\", cabinets, wardrobes and a sofa. Does nothing if the\ncatalog has routes already.", stderr)
	demo := fs.Bool("demo", false, "load the demo catalog")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !*demo {
		fs.Usage()
		return errUsage
	}
	a, err := openApp(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = a.Close() }()
	seeded, err := a.Catalog.SeedDemo(ctx)
	if err != nil {
		return err
	}
	if seeded {
		_, _ = fmt.Fprintln(stdout, "demo catalog loaded")
	} else {
		_, _ = fmt.Fprintln(stdout, "the catalog has routes already; nothing loaded")
	}
	return nil
}

func dispatch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flags("dispatch --once", "Runs one dispatcher pass (every pending event and every due retry) and exits.", stderr)
	once := fs.Bool("once", false, "run one pass")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !*once {
		fs.Usage()
		return errUsage
	}
	a, err := openApp(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = a.Close() }()
	var total struct{ events, delivered, failed int }
	// Events committed above a transaction still in flight wait for it; give
	// such a transaction a little time, not for ever.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := a.Dispatcher.RunOnce(ctx)
		if err != nil {
			return err
		}
		total.events += st.Events
		total.delivered += st.Delivered
		total.failed += st.Failed
		if st.Events > 0 {
			continue
		}
		if !st.Lagging || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, _ = fmt.Fprintf(stdout, "dispatched %d events: %d deliveries, %d failed\n", total.events, total.delivered, total.failed)
	return nil
}
