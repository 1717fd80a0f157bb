// Package dbtest gives tests real, migrated databases: a fresh PostgreSQL
// schema (TEST_DATABASE_URL, by default the local "test" database) and a fresh
// SQLite file, so that one suite runs on both. A test that needs PostgreSQL
// fails when it cannot be reached; it never skips.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts/contractstest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// DefaultPostgresURL is used when TEST_DATABASE_URL is not set.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// PostgresURL is the server the tests use, with its sessions' commits not
// waiting for the write-ahead log to reach the disk (synchronous_commit
// off) and no JIT compilation of their queries (jit off), unless the URL
// sets options of its own. A test database need not outlive a crash of its
// server, and a commit is as atomic, as isolated and as visible to the
// other sessions as ever; what goes is the wait for the disk at each
// commit, which made a test writing events one transaction at a time spend
// most of its time in fsync. (The test that restarts a database under load
// runs a server of its own, with its defaults.) JIT compilation paid off
// for no test query: the journal check's statements (journal.go), costed
// high on tables never analysed, were compiled at each test's end, about
// 0.1 s of the server's CPU each, and each compiling session loaded LLVM.
func PostgresURL() string {
	raw := os.Getenv("TEST_DATABASE_URL")
	if raw == "" {
		raw = DefaultPostgresURL
	}
	if u, err := url.Parse(raw); err != nil || u.Query().Has("options") {
		return raw // database.Open says what is wrong with a bad one
	}
	u, err := database.WithParams(raw, "options", "-c synchronous_commit=off -c jit=off")
	if err != nil {
		return raw
	}
	return u
}

// Dialects are the dialects this test process runs its tests on:
// PostgreSQL and SQLite, or the one TEST_DIALECTS names ("postgres" or
// "sqlite"). make test runs the service's tests in two processes at once,
// one per dialect (see the Makefile).
func Dialects() []database.Dialect {
	switch v := os.Getenv("TEST_DIALECTS"); v {
	case "":
		return []database.Dialect{database.Postgres, database.SQLite}
	case string(database.Postgres), string(database.SQLite):
		return []database.Dialect{database.Dialect(v)}
	default:
		panic(fmt.Sprintf("dbtest: TEST_DIALECTS is %q: give postgres, sqlite or nothing (both)", v))
	}
}

// skipUnselected skips a test of a dialect that Dialects leaves out: it
// runs in the process that runs its dialect.
func skipUnselected(t testing.TB, d database.Dialect) {
	t.Helper()
	if !slices.Contains(Dialects(), d) {
		t.Skipf("TEST_DIALECTS=%s: the tests on %s run in another process", os.Getenv("TEST_DIALECTS"), d)
	}
}

// Each runs fn as a subtest per dialect of Dialects ("postgres" and
// "sqlite"), each with its own freshly migrated database.
func Each(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	for _, d := range Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, New(t, d))
		})
	}
}

// New returns a freshly migrated database of the dialect, removed when the
// test ends. On PostgreSQL it carries the journal check (journal.go).
func New(t testing.TB, d database.Dialect) *gorm.DB {
	t.Helper()
	skipUnselected(t, d)
	return open(t, d)
}

// NewAlways is New whatever TEST_DIALECTS says, for a test that compares
// the dialects' answers.
func NewAlways(t testing.TB, d database.Dialect) *gorm.DB {
	t.Helper()
	return open(t, d)
}

func open(t testing.TB, d database.Dialect) *gorm.DB {
	t.Helper()
	opts, ps := options(t, d)
	if ps != nil && ps.sessions != nil {
		opts.WrapConnector = ps.sessions.wrap // sessions.go
	}
	gdb, err := database.Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("dbtest: %v (is PostgreSQL running? set TEST_DATABASE_URL)", err)
	}
	t.Cleanup(func() { _ = database.Close(gdb) })
	if d == database.Postgres {
		// A test's pool keeps few idle sessions, and none for long: the
		// test binaries running at once share the server's sessions (100
		// by default), and a burst of one test's requests left its pool
		// holding them idle to its end while other tests waited for room.
		// A session closed here goes to the schema's kept ones (sessions.go).
		if sqlDB, err := gdb.DB(); err == nil {
			sqlDB.SetMaxIdleConns(idleConns)
			sqlDB.SetConnMaxIdleTime(keptFor)
		}
	}
	return gdb
}

// idleConns is how many idle sessions a test's pool keeps.
const idleConns = 3

// Options prepares a freshly migrated database of the dialect (a new schema
// or a new file) and returns the options that open it, so that tests can
// open several connection pools, or start the tsekh binary, on the same
// database. On PostgreSQL the schema carries the journal check (journal.go):
// when the test ends, it fails for every committed transaction that changed
// owned data and wrote no event. The database is a copy of a template the
// test binary migrated once (template.go).
func Options(t testing.TB, d database.Dialect) database.Options {
	t.Helper()
	skipUnselected(t, d)
	opts, _ := options(t, d)
	return opts
}

// options is Options, with what the pool knows of the schema (nil on
// SQLite).
func options(t testing.TB, d database.Dialect) (database.Options, *pooledSchema) {
	t.Helper()
	ctx := context.Background()
	if d == database.Postgres {
		if ps, ok := pool.take(); ok {
			return schemaOptions(t, &ps), &ps
		}
	}
	opts, schema, ps := target(t, d)
	copied, err := copyTemplate(ctx, opts, schema)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	if copied {
		if ps != nil {
			if adopted, ok := pool.adopt(ctx, schema); ok {
				*ps = adopted
			}
		}
		return opts, ps
	}
	t.Logf("dbtest: no template to copy, the schema is migrated from scratch: %s", templates[d].Fallback)
	createSchema(t, schema)
	if err := migrated(ctx, opts); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return opts, ps
}

// empty prepares an empty database of the dialect and returns the options
// that open it.
func empty(t testing.TB, d database.Dialect) database.Options {
	t.Helper()
	opts, schema, _ := target(t, d)
	if d == database.Postgres {
		createSchema(t, schema)
	}
	return opts
}

// target names a new database of the dialect, not yet created: a file in the
// test's directory, or a schema (its name is returned too, and what the pool
// knows of it: pool.go); and returns the options that open it. Its events
// are checked when the test ends (CheckEvents); then it is removed.
func target(t testing.TB, d database.Dialect) (database.Options, string, *pooledSchema) {
	t.Helper()
	if d == database.SQLite {
		opts := database.Options{SQLitePath: filepath.Join(t.TempDir(), "tsekh.db")}
		t.Cleanup(func() { CheckEvents(t, opts) }) // before the directory is removed
		return opts, "", nil
	}
	ps := &pooledSchema{name: "t_" + randomHex(8)}
	return schemaOptions(t, ps), ps.name, ps
}

// schemaOptions returns the options that open the PostgreSQL schema. When
// the test ends, its events are checked (CheckEvents); then the schema is
// given back to the pool if the pool adopted it, else dropped.
func schemaOptions(t testing.TB, ps *pooledSchema) database.Options {
	t.Helper()
	t.Cleanup(func() {
		if ps.print != "" {
			pool.giveBack(context.Background(), *ps)
			return
		}
		dropSchema(ps.name)
	})
	opts := database.Options{PostgresURL: WithSearchPath(PostgresURL(), ps.name)}
	t.Cleanup(func() { CheckEvents(t, opts) }) // before the schema is dropped or reset
	return opts
}

// createSchema creates the empty PostgreSQL schema.
func createSchema(t testing.TB, schema string) {
	t.Helper()
	admin, err := database.Open(context.Background(), database.Options{PostgresURL: PostgresURL(), MaxConns: 1})
	if err != nil {
		t.Fatalf("dbtest: PostgreSQL is required for this test and is not reachable at %s: %v", PostgresURL(), err)
	}
	defer func() { _ = database.Close(admin) }()
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		t.Fatalf("dbtest: create schema: %v", err)
	}
}

// CheckEvents fails the test when an event in the database does not match
// the payload schema its type declares (see contractstest), and, on
// PostgreSQL, when a committed transaction changed owned data and wrote no
// event (the journal check, journal.go): every test database is checked
// this way when its test ends, so a writer that drifts from its declaration,
// or forgets its event, fails the suite. Types no events.Declare declares
// (tests' own) are not checked.
func CheckEvents(t testing.TB, opts database.Options) {
	t.Helper()
	ctx := context.Background()
	check := func(db *gorm.DB) {
		if err := contractstest.CheckJournal(ctx, db); err != nil {
			t.Errorf("dbtest: events that drift from their contracts (internal/contracts):\n%v", err)
		}
		if err := checkJournal(ctx, db); err != nil {
			t.Errorf("dbtest: changes with no event (docs/outbox.md, Delivery guarantees: no change without its event):\n%v", err)
		}
	}
	if schema := searchPathOf(opts.PostgresURL); schema != "" && opts.PostgresURL == WithSearchPath(PostgresURL(), schema) {
		if err := onChecks(ctx, schema, check); err != nil {
			t.Errorf("dbtest: cannot check the test's events: %v", err)
		}
		return
	}
	if opts.SQLitePath != "" {
		if _, err := os.Stat(opts.SQLitePath); err != nil {
			return // never opened
		}
	}
	opts.MaxConns = 1
	db, err := database.Open(ctx, opts)
	if err != nil {
		t.Errorf("dbtest: cannot open the test's database to check its events: %v", err)
		return
	}
	defer func() { _ = database.Close(db) }()
	check(db)
}

// checks is the connection pool, one for the test binary, that the checks
// at each PostgreSQL test's end run on (CheckEvents), a connection at a
// time with its search_path set to the test's schema: a session of their
// own for each test cost the server a backend's start, several
// milliseconds of its CPU, every time.
var checks struct {
	mu sync.Mutex
	db *gorm.DB
}

// onChecks runs fn on a connection of the checks' pool whose search_path
// is schema.
func onChecks(ctx context.Context, schema string, fn func(db *gorm.DB)) error {
	checks.mu.Lock()
	if checks.db == nil {
		db, err := database.Open(ctx, database.Options{PostgresURL: PostgresURL(), MaxConns: 4})
		if err != nil {
			checks.mu.Unlock()
			return err
		}
		checks.db = db
	}
	db := checks.db
	checks.mu.Unlock()
	return db.WithContext(ctx).Connection(func(tx *gorm.DB) error {
		if err := tx.Exec("SELECT set_config('search_path', ?, false)", schema).Error; err != nil {
			return err
		}
		fn(tx)
		return tx.Exec("RESET search_path").Error
	})
}

// closeChecks closes the checks' pool.
func closeChecks() {
	checks.mu.Lock()
	defer checks.mu.Unlock()
	if checks.db != nil {
		_ = database.Close(checks.db)
		checks.db = nil
	}
}

// searchPathOf returns the search_path a PostgreSQL URL sets, or "".
func searchPathOf(rawURL string) string {
	if rawURL == "" {
		return ""
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Query().Get("search_path")
}

// WithSearchPath returns the URL with its search_path set to schema.
func WithSearchPath(rawURL, schema string) string {
	u, err := database.WithParams(rawURL, "search_path", schema)
	if err != nil {
		panic(fmt.Sprintf("dbtest: bad URL: %v", err))
	}
	return u
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// LastEventID returns the id of the event the transaction wrote last: on
// PostgreSQL it first sends the statements held for the commit (see
// database.Flush), then reads the session's last id of the events sequence.
func LastEventID(tx *gorm.DB) (int64, error) {
	ctx := tx.Statement.Context
	if ctx == nil {
		ctx = context.Background()
	}
	if err := database.Flush(ctx, tx); err != nil {
		return 0, err
	}
	q := "SELECT currval('events_id_seq')"
	if database.DialectOf(tx) == database.SQLite {
		q = "SELECT last_insert_rowid()"
	}
	var id int64
	err := database.Scan(tx.Raw(q), &id)
	return id, err
}

// At returns a fresh database of the dialect migrated up to version only, for
// tests of the migrations after it: they write rows as an older tsekh left
// them, then migrate the rest of the way (database.Migrate). It has no
// journal check: such rows have no events.
func At(t testing.TB, d database.Dialect, version int64) *gorm.DB {
	t.Helper()
	ctx := context.Background()
	db, err := database.Open(ctx, empty(t, d))
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	if err := database.MigrateTo(ctx, db, version); err != nil {
		t.Fatalf("dbtest: migrate to %d: %v", version, err)
	}
	return db
}
