package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// pgPool is the PostgreSQL connection pool behind tsekh's *gorm.DB. It is the
// *sql.DB itself, except that its transactions (gorm's db.Transaction and
// db.Begin) are pgTx: transactions that save round trips by pipelining. Their
// BEGIN travels with their first statement, and statements given to
// WithCommit travel with their COMMIT. Its announcer announces the commits
// that asked for it (announce.go).
type pgPool struct {
	*sql.DB
	ann *announcer
}

// BeginTx starts a transaction on a connection of its own. Nothing is sent
// yet: the BEGIN goes with the first statement.
func (p pgPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	begin := "BEGIN"
	if opts != nil {
		if opts.Isolation != sql.LevelDefault {
			begin += " ISOLATION LEVEL " + strings.ToUpper(opts.Isolation.String())
		}
		if opts.ReadOnly {
			begin += " READ ONLY"
		}
	}
	conn, err := p.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &pgTx{db: p.DB, ann: p.ann, conn: conn, begin: begin}, nil
}

func newPgPool(db *sql.DB) pgPool { return pgPool{DB: db, ann: newAnnouncer(db)} }

// GetDBConn gives gorm's db.DB() the *sql.DB.
func (p pgPool) GetDBConn() (*sql.DB, error) { return p.DB, nil }

// pgTx is a transaction on one pooled connection. Its BEGIN is sent with its
// first statement, in one pipelined round trip (a statement that returns rows
// is preceded by the BEGIN on its own). Statements run at once, except those
// given to WithCommit, which wait for the commit and travel with it.
// Savepoints cover them too: rolling back to a savepoint drops the
// statements held back since it was set. A transaction that sent nothing
// ends without a round trip.
type pgTx struct {
	db    *sql.DB
	ann   *announcer
	conn  *sql.Conn
	begin string

	mu       sync.Mutex
	begun    bool  // the BEGIN has been sent and succeeded
	failed   error // a pipeline failed before its BEGIN ran: the commit must fail
	held     []heldStatement
	done     bool
	announce bool // AnnounceCommit: announce the commit (announce.go)
}

type heldStatement struct {
	sql  string
	args []any
}

// WithCommit makes tx send the statement with its COMMIT, in the same round
// trip, and reports whether it could: false when tx is not such a
// transaction (SQLite, or not a transaction), in which case the caller runs
// the statement itself. An error of the statement fails the commit, and the
// transaction rolls back.
func WithCommit(tx *gorm.DB, query string, args ...any) bool {
	t, ok := tx.Statement.ConnPool.(*pgTx)
	if !ok {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.held = append(t.held, heldStatement{sql: query, args: args})
	return true
}

// Flush sends the statements tx holds for its commit now, in one round trip,
// so that the transaction can read what they wrote (an event's id, say). It
// does nothing in a transaction that holds nothing back.
func Flush(ctx context.Context, tx *gorm.DB) error {
	t, ok := tx.Statement.ConnPool.(*pgTx)
	if !ok {
		return nil
	}
	_, err := t.pipeline(ctx, true, "", nil)
	return err
}

func (t *pgTx) isBegun() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.begun
}

// pipeline sends, in one round trip: the BEGIN if it has not been sent, the
// held statements if withHeld (they are gone afterwards, whatever happened),
// and query if not empty. It returns query's command tag and the first error.
// A connection whose BEGIN failed, or that closed, is never reused.
func (t *pgTx) pipeline(ctx context.Context, withHeld bool, query string, args []any) (pgconn.CommandTag, error) {
	t.mu.Lock()
	begin := !t.begun
	var held []heldStatement
	if withHeld {
		held, t.held = t.held, nil
	}
	t.mu.Unlock()
	var (
		tag      pgconn.CommandTag
		firstErr error
	)
	if !begin && len(held) == 0 && query == "" {
		return tag, nil
	}
	rawErr := t.conn.Raw(func(dc any) error {
		c := pgxOf(dc)
		b := &pgx.Batch{}
		if begin {
			b.Queue(t.begin)
		}
		for _, h := range held {
			b.Queue(h.sql, h.args...)
		}
		if query != "" {
			b.Queue(query, args...)
		}
		res := c.SendBatch(ctx, b)
		keep := func(err error) {
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}
		beginFailed := false
		if begin {
			_, err := res.Exec()
			t.mu.Lock()
			if beginFailed = err != nil; beginFailed {
				t.failed = err
			} else {
				t.begun = true
			}
			t.mu.Unlock()
			keep(err)
		}
		for range held {
			_, err := res.Exec()
			keep(err)
		}
		if query != "" {
			var err error
			tag, err = res.Exec()
			keep(err)
		}
		keep(res.Close())
		if beginFailed || c.IsClosed() {
			return driver.ErrBadConn
		}
		return nil
	})
	if firstErr == nil {
		firstErr = rawErr
	}
	return tag, firstErr
}

// ensureBegun sends the BEGIN on its own, before a statement that cannot go
// in a pipeline with it.
func (t *pgTx) ensureBegun(ctx context.Context) error {
	if t.isBegun() {
		return nil
	}
	_, err := t.pipeline(ctx, false, "", nil)
	return err
}

func (t *pgTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	if err := t.ensureBegun(ctx); err != nil {
		return nil, err
	}
	return t.conn.PrepareContext(ctx, query)
}

// ExecContext runs a statement; the transaction's first one takes the BEGIN
// with it. gorm's savepoint statements are handled here too: the statements
// held so far are sent before a SAVEPOINT, so that every statement still held
// was issued after the latest savepoint, and a ROLLBACK TO SAVEPOINT drops
// them all. (Savepoint names are random: they are sent in the simple
// protocol, never prepared and cached.)
func (t *pgTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	switch {
	case strings.HasPrefix(query, "SAVEPOINT "):
		if _, err := t.pipeline(ctx, true, "", nil); err != nil {
			return nil, err
		}
	case strings.HasPrefix(query, "ROLLBACK TO SAVEPOINT "):
		t.mu.Lock()
		t.held = nil
		t.mu.Unlock()
	case !t.isBegun():
		tag, err := t.pipeline(ctx, false, query, args)
		if err != nil {
			return nil, err
		}
		return driver.RowsAffected(tag.RowsAffected()), nil
	}
	return t.conn.ExecContext(ctx, query, args...)
}

func (t *pgTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := t.ensureBegun(ctx); err != nil {
		return nil, err
	}
	return t.conn.QueryContext(ctx, query, args...)
}

// QueryRowContext cannot return the BEGIN's error itself; a failed BEGIN
// closes the connection, so the row then carries sql.ErrConnDone.
func (t *pgTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	_ = t.ensureBegun(ctx)
	return t.conn.QueryRowContext(ctx, query, args...)
}

// GetDBConn gives gorm's tx.DB() the pool, as it does for a *sql.Tx.
func (t *pgTx) GetDBConn() (*sql.DB, error) { return t.db, nil }

// ErrCommitRolledBack is returned by a commit that PostgreSQL turned into a
// rollback because a statement of the transaction had failed.
var ErrCommitRolledBack = errors.New("commit unexpectedly resulted in rollback")

// endTimeout bounds COMMIT and ROLLBACK, which gorm calls without a context.
const endTimeout = 30 * time.Second

// Commit sends the held statements and the COMMIT together (with the BEGIN,
// for a transaction that only held statements back: one round trip in all).
// Any failure leaves nothing committed; a connection whose state is then
// unknown is closed rather than returned to the pool.
func (t *pgTx) Commit() error {
	if t.done {
		return sql.ErrTxDone
	}
	t.done = true
	defer func() { _ = t.conn.Close() }()
	if t.failed != nil {
		return fmt.Errorf("commit: %w: %w", ErrCommitRolledBack, t.failed)
	}
	if !t.isBegun() && len(t.held) == 0 {
		return nil // nothing was sent: nothing to commit
	}
	ctx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	tag, err := t.pipeline(ctx, true, "COMMIT", nil)
	if err == nil && tag.String() == "ROLLBACK" {
		err = ErrCommitRolledBack
	}
	// A commit whose answer was lost may have happened: it is announced
	// too (a wake-up too many costs a look at the journal).
	if t.announce && !errors.Is(err, ErrCommitRolledBack) {
		t.ann.committed()
	}
	if err == nil {
		return nil
	}
	// End the transaction before the connection goes back to the pool; if
	// even that fails, the connection goes.
	_ = t.conn.Raw(func(dc any) error {
		c := pgxOf(dc)
		if c.IsClosed() {
			return driver.ErrBadConn
		}
		if c.PgConn().TxStatus() != 'I' {
			if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
				return driver.ErrBadConn
			}
		}
		return nil
	})
	return fmt.Errorf("commit: %w", err)
}

// Rollback ends the transaction; after a commit it does nothing, and nor
// does it for a transaction that sent nothing.
func (t *pgTx) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	defer func() { _ = t.conn.Close() }()
	if !t.isBegun() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	return t.conn.Raw(func(dc any) error {
		c := pgxOf(dc)
		if c.IsClosed() {
			return driver.ErrBadConn
		}
		if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
			return driver.ErrBadConn
		}
		return nil
	})
}

// pgxOf is the pgx connection under a pooled connection: pgx's own, or one
// that a connector given by Options.WrapConnector wraps around it.
func pgxOf(dc any) *pgx.Conn {
	return dc.(interface{ Conn() *pgx.Conn }).Conn()
}
