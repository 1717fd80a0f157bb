// Package database opens tsekh's database (PostgreSQL, or an embedded SQLite
// file when no DATABASE_URL is set), applies the embedded migrations and hides
// the few places where the two dialects differ.
package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	gosqlite "github.com/glebarez/go-sqlite"
	"github.com/glebarez/sqlite"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/tsekh/tsekh/db"
)

// Dialect names the database behind a *gorm.DB.
type Dialect string

// The two dialects tsekh runs on.
const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

// Options say which database to open, and how long its statements may wait.
type Options struct {
	PostgresURL string // when set, PostgreSQL; otherwise SQLite at SQLitePath
	SQLitePath  string
	MaxConns    int // PostgreSQL pool size (default 10)
	// ConnectTimeout bounds the opening of a PostgreSQL connection, the
	// TCP connection and the server's greeting together (default 10s), so
	// that a silent link fails a request instead of holding it.
	ConnectTimeout time.Duration
	// StatementTimeout and LockTimeout are PostgreSQL's statement_timeout
	// and lock_timeout for every session of the pool (0: none, unless the
	// URL sets them). On SQLite, LockTimeout is the busy timeout (10s when 0).
	StatementTimeout time.Duration
	LockTimeout      time.Duration
	// IdleInTxTimeout is PostgreSQL's idle_in_transaction_session_timeout
	// (0: none): the server ends a session whose transaction has waited that
	// long for its client, and so releases its locks, when the client's end
	// of the connection is gone without the server hearing of it.
	IdleInTxTimeout time.Duration
	// WrapConnector, when set, wraps the connector that opens the pool's
	// PostgreSQL connections; the connections it gives must be the ones
	// it wraps, or embed them (*stdlib.Conn). The test suites keep a
	// schema's sessions open from one test to the next this way
	// (internal/platform/dbtest).
	WrapConnector func(driver.Connector) driver.Connector
}

// CancelGrace is how long a statement whose context has ended may take to
// return: the server is asked to cancel it, and the connection is given up
// after CancelGrace when the server does not answer (a silent link).
const CancelGrace = time.Second

// Open connects to the database and checks that it answers.
func Open(ctx context.Context, o Options) (*gorm.DB, error) {
	cfg := &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true, // services open their own transactions
		NowFunc:                func() time.Time { return time.Now().UTC() },
	}
	var (
		gdb *gorm.DB
		err error
	)
	if o.PostgresURL != "" {
		var pcfg *pgx.ConnConfig
		if pcfg, err = pgx.ParseConfig(o.PostgresURL); err != nil {
			return nil, fmt.Errorf("DATABASE_URL: %w", err)
		}
		pcfg.ConnectTimeout = o.ConnectTimeout
		if pcfg.ConnectTimeout <= 0 {
			pcfg.ConnectTimeout = 10 * time.Second
		}
		if o.StatementTimeout > 0 {
			// The server answers every statement within its timeout, with
			// an error if nothing else; a connection that brings no answer
			// by then, and a little more, has a dead link under it.
			dial, wait := pcfg.DialFunc, o.StatementTimeout+silentGrace
			pcfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dial(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return answeredConn{Conn: c, wait: wait}, nil
			}
		}
		for name, d := range map[string]time.Duration{"statement_timeout": o.StatementTimeout, "lock_timeout": o.LockTimeout,
			"idle_in_transaction_session_timeout": o.IdleInTxTimeout} {
			if _, set := pcfg.RuntimeParams[name]; !set && d > 0 {
				pcfg.RuntimeParams[name] = strconv.FormatInt(d.Milliseconds(), 10)
			}
		}
		// A statement whose context ends is cancelled by the server, and its
		// connection stays usable: pgx's default closes the connection, which
		// takes the transaction around the statement with it (a local
		// subscriber's call cut off at its timeout would end its whole batch).
		// A server that does not answer within CancelGrace (the link is
		// silent) loses the connection, so that the statement returns.
		pcfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
			return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: CancelGrace}
		}
		connector := stdlib.GetConnector(*pcfg)
		if o.WrapConnector != nil {
			connector = o.WrapConnector(connector)
		}
		connector = roomConnector{connector} // room.go
		gdb, err = gorm.Open(postgres.New(postgres.Config{Conn: newPgPool(sql.OpenDB(connector))}), cfg)
	} else {
		// One connection: SQLite has one writer, and a single connection turns
		// lock contention into an orderly queue instead of SQLITE_BUSY errors.
		busy := o.LockTimeout
		if busy <= 0 {
			busy = 10 * time.Second
		}
		dsn := "file:" + o.SQLitePath + "?_pragma=busy_timeout(" + strconv.FormatInt(busy.Milliseconds(), 10) + ")&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
		gdb, err = gorm.Open(sqlite.Open(dsn), cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	sqlDB, err := gdb.DB()
	if err != nil {
		return nil, err
	}
	if o.PostgresURL != "" {
		n := o.MaxConns
		if n <= 0 {
			n = 10
		}
		sqlDB.SetMaxOpenConns(n)
		sqlDB.SetMaxIdleConns(n)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	} else {
		sqlDB.SetMaxOpenConns(1)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second+CancelGrace)
	defer cancel()
	if err := sqlDB.PingContext(pingCtx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("database not reachable: %w", err)
	}
	return gdb, nil
}

// silentGrace is how much longer than its statement timeout a connection
// waits for the server's answer before it takes the link for dead.
const silentGrace = 5 * time.Second

// answeredConn is a connection to PostgreSQL that expects an answer within
// wait of each request it sends: a statement (or a ping) whose answer does
// not come in time fails, and its connection is given up, even where no
// context bounds it (the dispatcher's own statements). Only what is sent
// sets the deadline, so that a context's end, which pgx turns into an
// earlier deadline, still wins.
type answeredConn struct {
	net.Conn
	wait time.Duration
}

func (c answeredConn) Write(b []byte) (int, error) {
	if err := c.SetReadDeadline(time.Now().Add(c.wait)); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// DialectOf tells which database gdb talks to.
func DialectOf(gdb *gorm.DB) Dialect {
	if gdb.Name() == "postgres" {
		return Postgres
	}
	return SQLite
}

// Close closes the pool behind gdb, once the NOTIFY of its last announced
// commits is sent (announce.go).
func Close(gdb *gorm.DB) error {
	if a := announcerOf(gdb); a != nil {
		a.close() // the last commits' NOTIFY first
	}
	sqlDB, err := gdb.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

func provider(gdb *gorm.DB) (*goose.Provider, error) {
	sqlDB, err := gdb.DB()
	if err != nil {
		return nil, err
	}
	dialect, dir := goose.DialectSQLite3, "migrations/sqlite"
	if DialectOf(gdb) == Postgres {
		dialect, dir = goose.DialectPostgres, "migrations/postgres"
	}
	fsys, err := fs.Sub(db.Migrations, dir)
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(dialect, sqlDB, fsys, goose.WithGoMigrations(db.GoMigrations()...))
}

// Migrate applies every pending migration and returns how many it applied.
func Migrate(ctx context.Context, gdb *gorm.DB) (int, error) {
	p, err := provider(gdb)
	if err != nil {
		return 0, err
	}
	res, err := p.Up(ctx)
	if err != nil {
		return len(res), fmt.Errorf("migrate: %w", err)
	}
	return len(res), nil
}

// MigrateTo applies the pending migrations up to and including version, for
// tests that need a database as an older tsekh left it.
func MigrateTo(ctx context.Context, gdb *gorm.DB, version int64) error {
	p, err := provider(gdb)
	if err != nil {
		return err
	}
	if _, err := p.UpTo(ctx, version); err != nil {
		return fmt.Errorf("migrate to %d: %w", version, err)
	}
	return nil
}

// MigrateDownTo undoes the applied migrations above version, for tests of
// the migrations' Down.
func MigrateDownTo(ctx context.Context, gdb *gorm.DB, version int64) error {
	p, err := provider(gdb)
	if err != nil {
		return err
	}
	if _, err := p.DownTo(ctx, version); err != nil {
		return fmt.Errorf("migrate down to %d: %w", version, err)
	}
	return nil
}

// Readiness checks that the database answers and has no pending migration,
// for a readiness probe asked every few seconds. Migrations are not undone
// under a running service: once the database has every migration this
// binary knows, later checks only ping it (one round trip, instead of
// building the migrations' list and reading the applied ones each time).
type Readiness struct {
	db       *gorm.DB
	migrated atomic.Bool
}

// NewReadiness returns the readiness check of the database.
func NewReadiness(gdb *gorm.DB) *Readiness { return &Readiness{db: gdb} }

// Check returns why the database is not ready, or nil.
func (r *Readiness) Check(ctx context.Context) error {
	sqlDB, err := r.db.DB()
	if err != nil {
		return err
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("database not reachable: %w", err)
	}
	if r.migrated.Load() {
		return nil
	}
	p, err := provider(r.db)
	if err != nil {
		return err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("migration status: %w", err)
	}
	if pending {
		return errors.New("migrations pending")
	}
	r.migrated.Store(true)
	return nil
}

// Now is the SQL expression for the database clock's current time, in the
// column format of the dialect.
func Now(gdb *gorm.DB) string { return DialectOf(gdb).Now() }

// NowPlus is the SQL expression for the database clock's time d from now.
func NowPlus(gdb *gorm.DB, d time.Duration) string { return DialectOf(gdb).NowPlus(d) }

// TimeArg returns t as a query argument to compare with a time column the
// database clock wrote (see Dialect.TimeArg).
func TimeArg(gdb *gorm.DB, t time.Time) any { return DialectOf(gdb).TimeArg(t) }

// Now is the SQL expression for the database clock's current time, in the
// column format of the dialect.
func (d Dialect) Now() string {
	if d == Postgres {
		return "now()"
	}
	return "strftime('%Y-%m-%d %H:%M:%f', 'now')"
}

// NowPlus is the SQL expression for the database clock's time dur from now.
func (d Dialect) NowPlus(dur time.Duration) string {
	ms := dur.Milliseconds()
	if d == Postgres {
		return fmt.Sprintf("(now() + interval '%d milliseconds')", ms)
	}
	return fmt.Sprintf("strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now', '%+.3f seconds')", float64(ms)/1000)
}

// sqliteTimeLayout is how SQLite columns hold the database clock's times
// (strftime's '%Y-%m-%d %H:%M:%f', see Now), always in UTC.
const sqliteTimeLayout = "2006-01-02 15:04:05.000"

// TimeArg returns t as a query argument to compare with a time column the
// database clock wrote (created_at): on SQLite, text in the column's own
// layout, since SQLite compares such columns as text and the driver's layout
// ("…25.729+00:00") sorts after the column's "…25.729" of the same instant.
// The column holds milliseconds on SQLite and microseconds on PostgreSQL, so
// t is rounded up to that: "at or after t" and "before t" then keep the same
// rows on both.
func (d Dialect) TimeArg(t time.Time) any {
	t = t.UTC()
	if d == Postgres {
		return ceilTime(t, time.Microsecond)
	}
	return ceilTime(t, time.Millisecond).Format(sqliteTimeLayout)
}

func ceilTime(t time.Time, unit time.Duration) time.Time {
	if r := t.Sub(t.Truncate(unit)); r > 0 {
		return t.Truncate(unit).Add(unit)
	}
	return t
}

// IsUniqueViolation tells whether err is a unique-key conflict.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	// SQLite's extended result codes: SQLITE_CONSTRAINT_UNIQUE and
	// SQLITE_CONSTRAINT_PRIMARYKEY.
	var liteErr *gosqlite.Error
	return errors.As(err, &liteErr) && (liteErr.Code() == 2067 || liteErr.Code() == 1555)
}

// IsUnavailable tells whether err means the database could not be reached.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// 57P01..57P03: admin shutdown, crash shutdown, cannot connect now; 08xxx: connection errors;
		// 53300: a full server, past the wait for room (room.go).
		return strings.HasPrefix(pgErr.Code, "57P") || strings.HasPrefix(pgErr.Code, "08") || IsServerFull(err)
	}
	var (
		connErr *pgconn.ConnectError
		netErr  *net.OpError
	)
	if errors.As(err, &connErr) || errors.As(err, &netErr) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "broken pipe") ||
		strings.Contains(msg, "unexpected EOF") || strings.Contains(msg, "conn closed")
}

// IsTimeout tells whether err means the database did not answer in time: a
// statement cancelled at its statement_timeout or its context's end
// (57014), a lock not granted within lock_timeout (55P03), or a context
// that ended while the driver waited.
func IsTimeout(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "57014" || pgErr.Code == "55P03"
	}
	return pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded)
}

// InTx tells whether gdb is inside a transaction.
func InTx(gdb *gorm.DB) bool {
	_, ok := gdb.Statement.ConnPool.(gorm.TxCommitter)
	return ok
}

// WithParams returns the PostgreSQL URL with the connection parameters set
// (search_path, options, …), the ones it has kept. Spaces in a value are
// written as %20, which the driver reads back as spaces (url.Values would
// write a +, which it keeps: options=-c+synchronous_commit=off would name a
// setting "+synchronous_commit").
func WithParams(rawURL string, kv ...string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String(), nil
}
