// Package app wires tsekh together: the database, the modules' services, the
// event registry with every type and subscriber, the dispatcher and the HTTP
// layer. The command line and the tests build the service through it.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/api"
	"github.com/tsekh/tsekh/internal/auth"
	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/cutplan"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/jobs"
	"github.com/tsekh/tsekh/internal/labels"
	"github.com/tsekh/tsekh/internal/maintenance"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/purchasing"
	"github.com/tsekh/tsekh/internal/relay"
	"github.com/tsekh/tsekh/internal/render"
	"github.com/tsekh/tsekh/internal/sales"
	"github.com/tsekh/tsekh/internal/stock"
)

// App is the wired service.
type App struct {
	Config config.Config
	DB     *gorm.DB // the API's pool
	// DispatchDB is the dispatcher's and the maintenance job's pool
	// (DISPATCH_DB_MAX_CONNS) on PostgreSQL, apart from the API's so that
	// neither starves the other; DB itself on SQLite, which has one
	// connection.
	DispatchDB *gorm.DB
	Logger     *slog.Logger
	Registry   *events.Registry
	Journal    *events.Journal
	Dispatcher *events.Dispatcher
	// Stream is the live journal (GET /api/v1/events/stream); the server's
	// shutdown closes it.
	Stream  *events.Stream
	Metrics *prometheus.Registry
	// Maintenance is the housekeeping job (serve starts it unless --no-dispatch).
	Maintenance *maintenance.Maintainer

	Auth       *auth.Service
	Catalog    *catalog.Service
	Sales      *sales.Service
	Plan       *plan.Service
	Floor      *floor.Service
	Purchasing *purchasing.Service
	Stock      *stock.Service
	CutPlan    *cutplan.Service
	Labels     *labels.Service
	// Jobs queues long work (a cutting plan); JobRunner runs it.
	Jobs      *jobs.Service
	JobRunner *jobs.Runner

	runner   *events.Runner
	relay    *relay.Relay
	asyncAPI []byte // the AsyncAPI document, served at /asyncapi.json
}

// Open connects to the configured database, applies the migrations and
// wires the service.
func Open(ctx context.Context, cfg config.Config, log *slog.Logger) (*App, error) {
	db, err := database.Open(ctx, DatabaseOptions(cfg, cfg.DBMaxConns))
	if err != nil {
		return nil, err
	}
	n, err := database.Migrate(ctx, db)
	if err != nil {
		_ = database.Close(db)
		return nil, err
	}
	if n > 0 {
		log.Info("migrations applied", "count", n)
	}
	ddb := db
	if cfg.UsesPostgres() {
		if ddb, err = database.Open(ctx, DatabaseOptions(cfg, cfg.DispatchDBMaxConns)); err != nil {
			_ = database.Close(db)
			return nil, err
		}
	}
	a, err := newApp(db, ddb, cfg, log)
	if err != nil {
		if ddb != db {
			_ = database.Close(ddb)
		}
		_ = database.Close(db)
		return nil, err
	}
	return a, nil
}

// DatabaseOptions are the options of a pool of n connections to the
// configured database, with its timeouts.
func DatabaseOptions(cfg config.Config, n int) database.Options {
	return database.Options{PostgresURL: cfg.DatabaseURL, SQLitePath: cfg.SQLitePath, MaxConns: n,
		ConnectTimeout: cfg.DBConnectTimeout, StatementTimeout: cfg.DBStatementTimeout, LockTimeout: cfg.DBLockTimeout,
		IdleInTxTimeout: idleInTxTimeout(cfg)}
}

// idleInTxTimeout is how long the server keeps a session whose transaction
// waits for its client: a transaction whose client's connection died
// without the server hearing of it (a link cut by a firewall, a silent
// link) would hold its locks, the rows of the lanes it dispatched among
// them, until TCP gives up on it, hours later. tsekh never leaves a
// transaction idle on purpose: its transactions wait only for the
// subscribers they call, each call bounded by DISPATCH_TIMEOUT.
func idleInTxTimeout(cfg config.Config) time.Duration {
	return max(time.Minute, 2*cfg.DispatchTimeout)
}

// goCollector reports the Go runtime's metrics. One serves the process,
// whatever the number of Apps in it (the tests start hundreds): building
// one matches the name of every runtime metric against its rules.
var goCollector = sync.OnceValue(func() prometheus.Collector { return collectors.NewGoCollector() })

// New wires the service over an open, migrated database. It returns an error
// when the modules' events do not fit together (see events.Registry.Register).
func New(db *gorm.DB, cfg config.Config, log *slog.Logger) (*App, error) {
	return newApp(db, db, cfg, log)
}

// newApp wires the service with the API on db and the dispatcher and the
// maintenance job on ddb (which may be db).
func newApp(db, ddb *gorm.DB, cfg config.Config, log *slog.Logger) (*App, error) {
	if log == nil {
		log = slog.Default()
	}
	a := &App{Config: cfg, DB: db, DispatchDB: ddb, Logger: log, Registry: events.NewRegistry(), Metrics: prometheus.NewRegistry()}
	a.Auth = auth.NewService(db)
	a.Catalog = catalog.NewService(db)
	a.Sales = sales.NewService(db)
	a.Sales.SetShopConflicts(cfg.ShopConflicts)
	a.Sales.SetRejectionBodyLimit(cfg.IntakeBodyLimit)
	a.Stock = stock.NewService(db, stock.Settings{KerfMM: cfg.CuttingKerfMM, Stages: cfg.CuttingStages, MinOffcutMM: cfg.CuttingMinOffcutMM,
		EdgeOverhangMM: cfg.EdgeOverhangMM})
	a.Purchasing = purchasing.NewService(db, a.Stock)
	a.Plan = plan.NewService(db, a.Stock)
	a.Plan.SetTimeZone(cfg.FactoryLocation())
	a.Floor = floor.NewService(db, a.Stock)
	reasons := make([]floor.ScrapReason, len(cfg.FloorScrapReasons))
	for i, r := range cfg.FloorScrapReasons {
		reasons[i].Code, reasons[i].Label = config.SplitScrapReason(r)
	}
	a.Floor.SetScrapReasons(reasons)
	a.CutPlan = cutplan.NewService(db, a.Floor, a.Stock, cutplan.Settings{KerfMM: cfg.CuttingKerfMM, Stages: cfg.CuttingStages,
		MinOffcutMM: cfg.CuttingMinOffcutMM, OffcutWeight: cfg.CuttingOffcutWeight, TimeBudget: cfg.CuttingTimeBudget,
		EffortPerPart: cfg.CuttingEffort})
	a.Jobs = jobs.NewService(db)
	a.JobRunner = jobs.NewRunner(a.Jobs, jobs.RunnerOptions{Concurrency: cfg.JobsConcurrency, Lease: cfg.JobsLease, Logger: log})
	a.JobRunner.Handle(cutplan.JobKind, a.CutPlan.RunJob)
	a.JobRunner.Handle(plan.ReplanJobKind, a.Plan.RunReplanJob)
	a.Labels = labels.NewService(a.Floor, a.CutPlan, labelSize(cfg))
	a.JobRunner.Handle(labels.JobKind, a.Labels.RunJob)
	if cfg.NATSURL != "" {
		a.relay = relay.New(relay.Options{URL: cfg.NATSURL, Logger: log, DataSchema: DataSchemaURL(cfg.PublicURL)})
	}
	if err := a.Registry.Register(a.eventModules(cfg)...); err != nil {
		return nil, fmt.Errorf("wiring the events: %w", err)
	}
	doc, err := asyncAPIDocument(a.Registry.Types())
	if err != nil {
		return nil, err
	}
	a.asyncAPI = doc

	a.Journal = events.NewJournal(db, a.Registry)
	a.Stream = events.NewStream(db, a.Journal, events.StreamOptions{MaxClients: cfg.StreamMaxClients, Logger: log, Frame: api.StreamFrame})
	a.Dispatcher = events.NewDispatcher(ddb, a.Registry, events.DispatcherOptions{
		BatchSize:   cfg.DispatchBatchSize,
		MaxAttempts: cfg.DispatchMaxAttempts,
		Timeout:     cfg.DispatchTimeout,
		CallBudget:  cfg.DispatchCallBudget,
		Lease:       cfg.DispatchLease,
		Logger:      log,

		RetryAfterCap: cfg.DispatchRetryAfter,
	})
	a.Metrics.MustRegister(goCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.Dispatcher.SetMetrics(events.NewMetrics(a.Metrics, db))
	a.Sales.RegisterMetrics(a.Metrics)
	a.Stock.RegisterMetrics(a.Metrics)

	// Housekeeping, run by one replica at a time: one line per task.
	a.Maintenance = maintenance.New(ddb, maintenance.Options{Interval: cfg.MaintenanceInterval, Logger: log, Metrics: a.Metrics})
	a.Maintenance.Add("expire_idempotency_keys", func(ctx context.Context) (int64, error) {
		return a.Sales.ExpireIdempotencyKeys(ctx, cfg.IdempotencyKeyTTL)
	})
	a.Maintenance.Add("expire_job_documents", func(ctx context.Context) (int64, error) {
		return a.Jobs.ExpireDocuments(ctx, cfg.JobsDocumentRetention)
	})
	a.Maintenance.Add("compact_event_batches", func(ctx context.Context) (int64, error) {
		return events.CompactBatches(ctx, ddb, 0)
	})
	return a, nil
}

// eventModules are the parts of the service that declare event types or run
// subscribers, as cfg wires them. The registry declares every module's types
// before it subscribes anyone, so their order does not matter.
func (a *App) eventModules(cfg config.Config) []events.Module {
	mods := []events.Module{events.OwnEvents, a.Auth, a.Catalog, a.Sales, a.Plan, a.Floor, a.Stock, a.Purchasing, a.CutPlan, a.Jobs}
	if cfg.ShopCallbackURL != "" {
		cb := sales.ShopCallback(cfg.ShopCallbackURL, cfg.ShopWebhookSecret, nil)
		cb.Concurrency = cfg.ShopCallbackConc
		mods = append(mods, events.ModuleFunc(func(r *events.Registrar) { r.Subscribe(cb) }))
	}
	if a.relay != nil {
		rs := a.relay.Subscriber() // every declared type
		rs.Concurrency = cfg.NATSRelayConc
		mods = append(mods, events.ModuleFunc(func(r *events.Registrar) { r.Subscribe(rs) }))
	}
	return mods
}

// HTTP returns the Echo app. It serves /metrics to administrators unless
// METRICS_ADDR gives the metrics a listener of their own (MetricsHTTP).
func (a *App) HTTP() *echo.Echo {
	var metrics prometheus.Gatherer
	if a.Config.MetricsAddr == "" {
		metrics = a.Metrics
	}
	return api.New(api.Deps{
		DB: a.DB, Auth: a.Auth, Catalog: a.Catalog, Sales: a.Sales, Plan: a.Plan, Floor: a.Floor, Stock: a.Stock, Purchasing: a.Purchasing, CutPlans: a.CutPlan, Jobs: a.Jobs,
		Journal: a.Journal, Registry: a.Registry, Metrics: metrics, Logger: a.Logger,
		OnCommit: a.WakeDispatcher, ShopWebhookSecret: a.Config.ShopWebhookSecret, AsyncAPI: a.asyncAPI,
		RequestTimeout: a.Config.HTTPRequestTimeout,
		TimeZone:       a.Config.FactoryLocation(), Stream: a.Stream, StreamHeartbeat: a.Config.StreamHeartbeat,
		Labels: a.Labels,
	})
}

// labelSize is LABEL_SIZE_MM, the default for a configuration not loaded
// (and so not validated) from the environment.
func labelSize(cfg config.Config) render.LabelSize {
	w, h, err := cfg.LabelSize()
	if err != nil {
		return render.DefaultLabelSize
	}
	return render.LabelSize{WidthMM: w, HeightMM: h}
}

// MetricsHTTP returns the handler of the METRICS_ADDR listener: /metrics,
// the dispatcher's included, without a token.
func (a *App) MetricsHTTP() http.Handler { return api.MetricsHandler(a.Metrics) }

// StartDispatcher runs the dispatcher in the background until ctx is
// cancelled; WaitDispatcher waits for it to finish the pass in hand.
func (a *App) StartDispatcher(ctx context.Context) error {
	// The API's pool's commits (requests, and what else this process
	// writes) wake the runner at once, as its own pool's do. Other
	// processes' commits: the runner listens for them where the database
	// announces them (PostgreSQL) and looks at the journal's newest id,
	// cheaply, every Poll where it does not (SQLite, where HTTP writes wake
	// it at once too).
	opt := events.RunnerOptions{Interval: a.Config.DispatchInterval, OnWake: a.Stream.Wake, Watch: []*gorm.DB{a.DB},
		ListenURL: a.Config.DatabaseURL, Poll: 250 * time.Millisecond}
	a.runner = events.NewRunner(a.Dispatcher, opt)
	return a.runner.Start(ctx)
}

// WaitDispatcher blocks until the dispatcher started by StartDispatcher stops.
func (a *App) WaitDispatcher() {
	if a.runner != nil {
		a.runner.Wait()
	}
}

// StartJobs runs the background jobs' runner until ctx is cancelled;
// WaitJobs waits for it to stop (its running jobs queued again).
func (a *App) StartJobs(ctx context.Context) { a.JobRunner.Start(ctx) }

// WaitJobs blocks until the runner started by StartJobs stops.
func (a *App) WaitJobs() { a.JobRunner.Wait() }

// StartMaintenance runs the maintenance job in the background until ctx is
// cancelled; WaitMaintenance waits for it to stop.
func (a *App) StartMaintenance(ctx context.Context) error {
	return a.Maintenance.Start(ctx)
}

// WaitMaintenance blocks until the job started by StartMaintenance stops.
func (a *App) WaitMaintenance() { a.Maintenance.Wait() }

// WakeDispatcher asks the running dispatcher for a pass now; the HTTP layer
// calls it after a request that wrote, so that on SQLite (which has no
// NOTIFY) events are dispatched at once too.
func (a *App) WakeDispatcher() {
	if a.runner != nil {
		a.runner.Wake()
	} else {
		a.Stream.Wake()
	}
}

// ListenForStream wakes the live journal on every commit's NOTIFY, on a
// replica that runs no dispatcher (whose runner's listener does it
// otherwise), until ctx is cancelled. On SQLite, which has no listener
// (events.ListenForCommits returns at once), the HTTP layer's writes wake
// the stream, and it polls every second.
func (a *App) ListenForStream(ctx context.Context) {
	if a.runner != nil {
		return
	}
	go events.ListenForCommits(ctx, a.DB, a.Config.DatabaseURL, a.Stream.Wake, a.Logger)
}

// Bootstrap prepares a database for first use. With a token it ensures the
// administrator "Администратор" logging in with it, and revokes the token of
// an earlier, different BOOTSTRAP_ADMIN_TOKEN. On a fresh SQLite
// database (no users yet) it also seeds the demo catalog and, with no token
// given, creates one; the token it made (or "") is returned to be shown once.
func (a *App) Bootstrap(ctx context.Context) (newToken string, err error) {
	fresh := false
	if database.Embedded(a.DB) {
		has, err := a.Auth.HasUsers(ctx)
		if err != nil {
			return "", err
		}
		fresh = !has
	}
	token := a.Config.BootstrapAdminToken
	if fresh {
		if _, err := a.Catalog.SeedDemo(ctx); err != nil {
			return "", fmt.Errorf("seed demo catalog: %w", err)
		}
		if token == "" {
			token = auth.NewTokenSecret()
			newToken = token
		}
	}
	if token != "" {
		_, err := a.Auth.EnsureAdmin(ctx, token)
		switch {
		case errors.Is(err, auth.ErrBootstrapTokenRevoked), errors.Is(err, auth.ErrBootstrapAdminDeactivated):
			// An administrator's decision outlives a restart; the service
			// runs, and the other administrators' tokens work.
			a.Logger.Warn("bootstrap admin: " + err.Error())
		case err != nil:
			return "", fmt.Errorf("bootstrap admin: %w", err)
		}
	}
	return newToken, nil
}

// Close releases the database.
func (a *App) Close() error {
	a.Stream.Close()
	if a.relay != nil {
		a.relay.Close()
	}
	var err error
	if a.DispatchDB != nil && a.DispatchDB != a.DB {
		err = database.Close(a.DispatchDB)
	}
	return errors.Join(err, database.Close(a.DB))
}
