package dbtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// Copying the template into a new PostgreSQL schema and dropping it again
// costs the server about a fifth of a second for each test: every table,
// index, constraint and trigger is created and removed in the catalogue. So
// a test binary that asks for it (Run, from its TestMain) keeps the schemas
// its tests are done with and gives them to the next tests, put back as the
// template left them:
//
//   - only a schema whose structure is still the copy's is kept: a test that
//     changed it (a table, a column, a trigger, a function, a constraint, a
//     type added, dropped, altered, disabled) leaves it to be dropped, as
//     does any failure to put it back;
//   - putting it back is one transaction, with the triggers (the journal
//     check's, the foreign keys') off: every row of the schema and of its
//     journal check deleted, the template's rows inserted again and every
//     sequence set where the template's was. It needs a superuser (the
//     local one is); without, schemas are dropped as before;
//   - when the binary's tests end, Run drops every schema it kept, and, on a
//     server that runs without autovacuum (CI's servers do), vacuums the
//     catalogue tables that creating and dropping schemas fills with dead
//     rows: unvacuumed, they grew by hundreds of megabytes a run and slowed
//     every later run. A binary whose TestMain does not call Run keeps none.
//
// A schema is never given to two tests at once: a test's cleanups (its
// journal check and its services' closing) run before its schema is put
// back.

// pool holds the schemas ready for the next test.
var pool schemaPool

type schemaPool struct {
	mu   sync.Mutex
	on   bool
	free []pooledSchema
	// kept are the schemas the pool has adopted, free or in use, with
	// their sessions, for Run to end and drop when the tests end.
	kept map[string]*sessions
}

// pooledSchema is a schema as the template left it, with the fingerprint of
// its structure then, and the sessions its tests' pools keep (sessions.go).
type pooledSchema struct {
	name, print string
	sessions    *sessions
}

// Run runs the binary's tests with schemas reused between them, drops the
// schemas when the tests end and returns the exit code; a package's
// TestMain calls it: os.Exit(dbtest.Run(m)).
func Run(m *testing.M) int {
	pool.mu.Lock()
	pool.on = true
	pool.mu.Unlock()
	stop := make(chan struct{})
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		pool.sweep(stop)
	}()
	code := m.Run()
	close(stop)
	<-swept
	pool.dropAll()
	vacuumCatalogue()
	closeChecks()
	closeServerPool()
	return code
}

// churned are the catalogue tables that a schema's creation and drop leave
// dead rows in.
const churned = "pg_catalog.pg_attribute, pg_catalog.pg_class, pg_catalog.pg_attrdef, pg_catalog.pg_constraint, " +
	"pg_catalog.pg_depend, pg_catalog.pg_index, pg_catalog.pg_trigger, pg_catalog.pg_type, pg_catalog.pg_proc, " +
	"pg_catalog.pg_sequence, pg_catalog.pg_namespace"

// vacuumCatalogue vacuums the churned catalogue tables when the server's
// autovacuum is off; a plain VACUUM, which takes no lock other sessions'
// DDL waits for.
func vacuumCatalogue() {
	err := onServer(context.Background(), func(ctx context.Context, conn *pgconn.PgConn) error {
		res := conn.ExecParams(ctx, "SELECT current_setting('autovacuum')", nil, nil, nil, nil).Read()
		if res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "off" {
			return res.Err
		}
		_, err := conn.Exec(ctx, "VACUUM "+churned).ReadAll()
		return err
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "dbtest: vacuum the catalogue: %v\n", err)
	}
}

// take returns a schema ready for a test, if the pool holds one.
func (p *schemaPool) take() (pooledSchema, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		return pooledSchema{}, false
	}
	s := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	return s, true
}

// adopt fingerprints a schema just copied from the template, so that it can
// be put back after its test; it reports false when the pool is off.
func (p *schemaPool) adopt(ctx context.Context, schema string) (pooledSchema, bool) {
	p.mu.Lock()
	on := p.on
	p.mu.Unlock()
	if !on {
		return pooledSchema{}, false
	}
	var print string
	err := onServer(ctx, func(ctx context.Context, conn *pgconn.PgConn) (err error) {
		print, err = fingerprint(ctx, conn, schema)
		return err
	})
	if err != nil {
		return pooledSchema{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kept == nil {
		p.kept = map[string]*sessions{}
	}
	ps := pooledSchema{name: schema, print: print, sessions: &sessions{}}
	p.kept[schema] = ps.sessions
	return ps, true
}

// giveBack puts the schema back as the template left it and keeps it for the
// next test; when it cannot (its structure changed, the reset failed) it
// drops the schema.
func (p *schemaPool) giveBack(ctx context.Context, s pooledSchema) {
	if err := reset(ctx, s); err != nil {
		p.mu.Lock()
		delete(p.kept, s.name)
		p.mu.Unlock()
		s.sessions.close()
		dropSchema(s.name)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, s)
}

// endIdleSessions ends the idle sessions of every schema the pool keeps.
func (p *schemaPool) endIdleSessions() {
	for _, s := range p.sessions() {
		s.endIdle(false)
	}
}

// sessions are the sessions of every schema the pool keeps.
func (p *schemaPool) sessions() []*sessions {
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := make([]*sessions, 0, len(p.kept))
	for _, s := range p.kept {
		kept = append(kept, s)
	}
	return kept
}

// sweep ends the sessions kept idle longer than keptFor, every keptFor/2,
// until stop is closed: idle, they hold places of the server's that the
// other test binaries running at once may want.
func (p *schemaPool) sweep(stop <-chan struct{}) {
	tick := time.NewTicker(keptFor / 2)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			for _, s := range p.sessions() {
				s.endStale(now.Add(-keptFor))
			}
		}
	}
}

// dropAll drops every schema the pool made.
func (p *schemaPool) dropAll() {
	p.mu.Lock()
	kept := p.kept
	p.kept, p.free = nil, nil
	p.mu.Unlock()
	for n, s := range kept {
		s.close()
		dropSchema(n)
	}
}

// fingerprintSQL describes the structure of the schema $1 and of its
// journal check's: its relations, columns, defaults, constraints,
// triggers (with whether they are enabled), functions and types, by their
// object ids, so that anything created again has another. A relation's
// columns, defaults and triggers are looked up by its id (OFFSET 0 keeps
// each lookup an index probe): joined by hash, they were scans of the
// whole catalogue, whose size is every test schema's on the server (30 ms
// a call with 40 schemas, against 13).
const fingerprintSQL = `
WITH ns AS (SELECT oid FROM pg_namespace WHERE nspname IN ($1::text, $1::text || '` + checkSuffix + `')),
rels AS MATERIALIZED (SELECT c.oid, c.relname, c.relkind FROM pg_class c WHERE c.relnamespace IN (SELECT oid FROM ns))
SELECT md5(string_agg(x, ',' ORDER BY x)) FROM (
	SELECT concat_ws(':', 'r', r.oid, r.relname, r.relkind) AS x FROM rels r
	UNION ALL
	SELECT concat_ws(':', 'a', a.attrelid, a.attnum, a.attname, a.atttypid, a.attnotnull, a.atthasdef, a.attisdropped)
	FROM rels r CROSS JOIN LATERAL (SELECT * FROM pg_attribute a WHERE a.attrelid = r.oid OFFSET 0) a
	UNION ALL
	SELECT concat_ws(':', 'd', d.oid) FROM rels r CROSS JOIN LATERAL (SELECT d.oid FROM pg_attrdef d WHERE d.adrelid = r.oid OFFSET 0) d
	UNION ALL
	SELECT concat_ws(':', 'c', k.oid, k.convalidated) FROM pg_constraint k WHERE k.connamespace IN (SELECT oid FROM ns)
	UNION ALL
	SELECT concat_ws(':', 't', t.oid, t.tgenabled) FROM rels r CROSS JOIN LATERAL (SELECT t.oid, t.tgenabled FROM pg_trigger t WHERE t.tgrelid = r.oid OFFSET 0) t
	UNION ALL
	SELECT concat_ws(':', 'f', p.oid, md5(p.prosrc)) FROM pg_proc p WHERE p.pronamespace IN (SELECT oid FROM ns)
	UNION ALL
	SELECT concat_ws(':', 'y', y.oid) FROM pg_type y WHERE y.typnamespace IN (SELECT oid FROM ns)
) s`

// fingerprint returns the fingerprint of the schema's structure.
func fingerprint(ctx context.Context, conn *pgconn.PgConn, schema string) (string, error) {
	res := conn.ExecParams(ctx, fingerprintSQL, [][]byte{[]byte(schema)}, nil, nil, nil).Read()
	if res.Err != nil {
		return "", res.Err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return "", fmt.Errorf("dbtest: no fingerprint for schema %s", schema)
	}
	return string(res.Rows[0][0]), nil
}

// reset checks that the schema's structure is the copy's and puts its rows
// and sequences back as the template left them, in one transaction.
func reset(ctx context.Context, s pooledSchema) error {
	tp, err := templateOf(database.Postgres)
	if err != nil {
		return err
	}
	return onServer(ctx, func(ctx context.Context, conn *pgconn.PgConn) error {
		print, err := fingerprint(ctx, conn, s.name)
		if err != nil {
			return err
		}
		if print != s.print {
			return fmt.Errorf("dbtest: the test changed the structure of schema %s", s.name)
		}
		_, err = conn.Exec(ctx, strings.ReplaceAll(tp.Reset, tp.Name, s.name)).ReadAll()
		return err
	})
}

// resetSQL returns the statements that put a copy of the template back as
// the template left it (with the template's name for its name): its tables and its
// journal check's emptied, then the data-only dump's rows and sequence
// values, with no trigger firing.
func resetSQL(tables []string, data string) string {
	var b strings.Builder
	b.WriteString("BEGIN;\nSET LOCAL session_replication_role = replica;\nSET LOCAL lock_timeout = '10s';\n")
	for _, t := range tables {
		fmt.Fprintf(&b, "DELETE FROM %s;\n", t)
	}
	b.WriteString(data)
	b.WriteString("\nCOMMIT;\n")
	return b.String()
}

// dropSchema drops a test schema and its journal check's.
func dropSchema(schema string) {
	err := onServer(context.Background(), func(ctx context.Context, conn *pgconn.PgConn) error {
		_, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+quoteIdent(schema+checkSuffix)+" CASCADE; DROP SCHEMA IF EXISTS "+schema+" CASCADE").ReadAll()
		return err
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "dbtest: drop schema %s: %v\n", schema, err)
	}
}

// onServer runs fn on a connection to the tests' server (the simple
// protocol: one Exec may run many statements), taken from the test
// binary's pool of them: a backend's start costs the server several
// milliseconds of CPU, and each test's end calls onServer. A connection is
// given again with its session state discarded, and not at all after fn
// failed on it or left a transaction open.
func onServer(ctx context.Context, fn func(ctx context.Context, conn *pgconn.PgConn) error) error {
	p, err := serverPool()
	if err != nil {
		return err
	}
	c, err := database.WaitForRoom(ctx, p.Acquire)
	if err != nil {
		return err
	}
	defer c.Release()
	if err := fn(ctx, c.Conn().PgConn()); err != nil {
		_ = c.Conn().Close(context.Background()) // Release drops a closed connection
		return err
	}
	return nil
}

// server is the pool onServer draws on, made on first use.
var server struct {
	mu   sync.Mutex
	pool *pgxpool.Pool
}

func serverPool() (*pgxpool.Pool, error) {
	server.mu.Lock()
	defer server.mu.Unlock()
	if server.pool != nil {
		return server.pool, nil
	}
	cfg, err := pgxpool.ParseConfig(PostgresURL())
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 8
	cfg.AfterRelease = func(c *pgx.Conn) bool {
		_, err := c.PgConn().Exec(context.Background(), "DISCARD ALL").ReadAll()
		return err == nil
	}
	server.pool, err = pgxpool.NewWithConfig(context.Background(), cfg)
	return server.pool, err
}

// closeServerPool closes onServer's pool.
func closeServerPool() {
	server.mu.Lock()
	defer server.mu.Unlock()
	if server.pool != nil {
		server.pool.Close()
		server.pool = nil
	}
}
