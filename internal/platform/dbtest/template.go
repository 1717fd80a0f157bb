package dbtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// Migrating a database from scratch takes every migration's round trips and
// commits, for each test and dialect. So each test binary migrates one
// template per dialect, once, and gives every test a copy of it:
//
//   - SQLite: the template file's bytes, written to the test's own file;
//   - PostgreSQL: the template schema and its journal check (journal.go),
//     dumped with pg_dump and replayed in one transaction under the test's
//     schema name. Where pg_dump cannot dump the server (not installed, an
//     older version than the server's), each test migrates its schema from
//     scratch, as it would without a template.
//
// The template itself is removed as soon as it has been read, so that no
// test binary leaves anything behind. Within one run of the suite (make
// test), the test binaries share what the first of them built
// (TEST_TEMPLATE_DIR: shared.go).

// template is a migrated database of one dialect, ready to be copied.
type template struct {
	once sync.Once
	err  error
	// sqlite is the migrated file's content.
	sqlite []byte
	postgresTemplate
}

// postgresTemplate is the PostgreSQL template, as pg_dump gave it.
type postgresTemplate struct {
	// Name is the template schema's name, where a copy's name goes in DDL
	// and Reset: the name of the binary's that built it (tmplName).
	Name string `json:"name"`
	// DDL recreates the migrated schema and its journal check; empty when
	// pg_dump is not usable (Fallback says why).
	DDL      string `json:"ddl"`
	Fallback string `json:"fallback"`
	// Reset puts a copy back as the template left it (pool.go).
	Reset string `json:"reset"`
}

var templates = map[database.Dialect]*template{database.Postgres: {}, database.SQLite: {}}

// tmplName names the PostgreSQL template schema: unique, and a token the
// dump holds nowhere else, so that it can be replaced by a test's schema.
var tmplName = "tsekh_tmpl_" + randomHex(8)

// templateOf returns the dialect's template, built on first use.
func templateOf(d database.Dialect) (*template, error) {
	tp := templates[d]
	tp.once.Do(func() {
		if d == database.SQLite {
			tp.sqlite, tp.err = sharedSQLite(sqliteTemplate)
		} else {
			tp.postgresTemplate, tp.err = sharedPostgres(buildPostgres)
		}
	})
	return tp, tp.err
}

// migrated opens the database at opts with one connection, migrates it and,
// on PostgreSQL, installs the journal check.
func migrated(ctx context.Context, opts database.Options) error {
	opts.MaxConns = 1
	db, err := database.Open(ctx, opts)
	if err != nil {
		if opts.PostgresURL != "" {
			err = fmt.Errorf("%w (is PostgreSQL running? set TEST_DATABASE_URL)", err)
		}
		return err
	}
	defer func() { _ = database.Close(db) }()
	if _, err := database.Migrate(ctx, db); err != nil {
		return err
	}
	if database.DialectOf(db) == database.Postgres {
		if err := installJournalCheck(ctx, db); err != nil {
			return fmt.Errorf("the journal check: %w", err)
		}
	}
	return nil
}

// sqliteTemplate migrates a SQLite file and returns its content.
func sqliteTemplate() ([]byte, error) {
	dir, err := os.MkdirTemp("", "tsekh-dbtest-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "tsekh.db")
	ctx := context.Background()
	if err := migrated(ctx, database.Options{SQLitePath: path}); err != nil {
		return nil, err
	}
	// Back to a rollback journal, so that the whole database is in the one
	// file (the copy opens in WAL mode again, as database.Open asks).
	db, err := database.Open(ctx, database.Options{SQLitePath: path})
	if err != nil {
		return nil, err
	}
	err = db.Exec("PRAGMA journal_mode = DELETE").Error
	if cerr := database.Close(db); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// buildPostgres migrates the template schema (tmplName), dumps it with its
// journal check and drops it; it returns the dump and the statements that
// put a copy back as the dump left it (pool.go). When pg_dump cannot dump
// it, it returns why as the fallback and no DDL.
func buildPostgres() (postgresTemplate, error) {
	ctx := context.Background()
	admin, err := database.Open(ctx, database.Options{PostgresURL: PostgresURL(), MaxConns: 1})
	if err != nil {
		return postgresTemplate{}, fmt.Errorf("PostgreSQL is required for this test and is not reachable at %s: %w", PostgresURL(), err)
	}
	defer func() { _ = database.Close(admin) }()
	if err := admin.Exec("CREATE SCHEMA " + tmplName).Error; err != nil {
		return postgresTemplate{}, fmt.Errorf("create schema: %w", err)
	}
	defer func() {
		dropJournalCheck(admin, tmplName)
		_ = admin.Exec("DROP SCHEMA " + tmplName + " CASCADE").Error
	}()
	if err := migrated(ctx, database.Options{PostgresURL: WithSearchPath(PostgresURL(), tmplName)}); err != nil {
		return postgresTemplate{}, err
	}
	dump, err := pgDump(ctx, false, tmplName, tmplName+checkSuffix)
	if err != nil {
		return postgresTemplate{Fallback: err.Error()}, nil
	}
	data, err := pgDump(ctx, true, tmplName, tmplName+checkSuffix)
	if err != nil {
		return postgresTemplate{Fallback: err.Error()}, nil
	}
	var tables []string
	err = database.Scan(admin.Raw("SELECT format('%I.%I', schemaname, tablename) FROM pg_tables WHERE schemaname IN (?, ?) ORDER BY 1",
		tmplName, tmplName+checkSuffix), &tables)
	if err != nil {
		return postgresTemplate{}, err
	}
	// The dump must replay on this server (a newer pg_dump may set what an
	// older server does not know): tried once, under the template's name.
	dropJournalCheck(admin, tmplName)
	if err := admin.Exec("DROP SCHEMA " + tmplName + " CASCADE").Error; err != nil {
		return postgresTemplate{}, err
	}
	if err := replay(ctx, dump, tmplName, tmplName); err != nil {
		return postgresTemplate{Fallback: "pg_dump's dump does not replay: " + err.Error()}, nil
	}
	return postgresTemplate{Name: tmplName, DDL: dump, Reset: resetSQL(tables, data)}, nil
}

// replay runs the template's DDL (the template schema's name in it) under
// the schema name, in one transaction (one simple-protocol query: its
// statements commit together).
func replay(ctx context.Context, ddl, name, schema string) error {
	return onServer(ctx, func(ctx context.Context, conn *pgconn.PgConn) error {
		_, err := conn.Exec(ctx, strings.ReplaceAll(ddl, name, schema)).ReadAll()
		return err
	})
}

// pgDump returns the SQL that recreates the schemas, data included (only
// their data with dataOnly), as statements that one simple-protocol Exec
// runs.
func pgDump(ctx context.Context, dataOnly bool, schemas ...string) (string, error) {
	bin, err := exec.LookPath("pg_dump")
	if err != nil {
		return "", err
	}
	args := []string{"--dbname=" + PostgresURL(), "--no-owner", "--no-privileges", "--no-comments", "--inserts"}
	if dataOnly {
		args = append(args, "--data-only")
	}
	for _, s := range schemas {
		args = append(args, "--schema="+s)
	}
	var stdout, stderr bytes.Buffer
	// pg_dump's session is refused as any other on a full server: it is
	// asked again, as the pools' connections are (database.WaitForRoom).
	_, err = database.WaitForRoom(ctx, func(ctx context.Context) (struct{}, error) {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil && strings.Contains(stderr.String(), "too many clients") {
			err = &pgconn.PgError{Code: "53300", Message: strings.TrimSpace(stderr.String())}
		}
		return struct{}{}, err
	})
	if err != nil {
		return "", fmt.Errorf("pg_dump: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var b strings.Builder
	for line := range strings.Lines(stdout.String()) {
		// psql's meta-commands (\restrict) are not SQL.
		if strings.HasPrefix(line, `\`) {
			continue
		}
		b.WriteString(line)
	}
	out := b.String()
	if !dataOnly && !strings.Contains(out, "CREATE SCHEMA "+tmplName+";") {
		return "", errors.New("pg_dump: the dump does not create the template schema")
	}
	return out, nil
}

// copyTemplate fills the empty database at opts (a file not yet created, or
// an empty schema) with a copy of the dialect's template. It returns false
// when the dialect has no copy to give (PostgreSQL without pg_dump): the
// caller migrates the database itself.
func copyTemplate(ctx context.Context, opts database.Options, schema string) (bool, error) {
	d := database.Postgres
	if opts.SQLitePath != "" {
		d = database.SQLite
	}
	tp, err := templateOf(d)
	if err != nil {
		return false, err
	}
	if d == database.SQLite {
		return true, os.WriteFile(opts.SQLitePath, tp.sqlite, 0o600)
	}
	if tp.DDL == "" {
		return false, nil
	}
	// The DDL creates the test's schema itself.
	if err := replay(ctx, tp.DDL, tp.Name, schema); err != nil {
		return false, fmt.Errorf("copy the template schema: %w", err)
	}
	return true, nil
}
