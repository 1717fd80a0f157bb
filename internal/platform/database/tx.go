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
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"
)

// pgPool is the PostgreSQL connection pool behind tsekh's *gorm.DB. It is the
// *sql.DB itself, except that its transactions (gorm's db.Transaction and
// db.Begin) are pgTx: transactions that can hold statements back until the
// COMMIT and send them with it, in one round trip (see WithCommit).
type pgPool struct {
	*sql.DB
}

// BeginTx starts a transaction on a connection of its own.
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
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // state unknown: never reuse it
		_ = conn.Close()
		return nil, err
	}
	return &pgTx{db: p.DB, conn: conn}, nil
}

// GetDBConn gives gorm's db.DB() the *sql.DB.
func (p pgPool) GetDBConn() (*sql.DB, error) { return p.DB, nil }

// pgTx is a transaction on one pooled connection. Statements run at once,
// except those given to WithCommit, which wait for the commit and travel with
// it in one pipelined round trip. Savepoints cover them too: rolling back to a
// savepoint drops the statements held back since it was set.
type pgTx struct {
	db   *sql.DB
	conn *sql.Conn

	mu   sync.Mutex
	held []heldStatement
	done bool
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

func (t *pgTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.conn.PrepareContext(ctx, query)
}

func (t *pgTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if handled, err := t.execSavepoint(ctx, query); handled {
		return driver.RowsAffected(0), err
	}
	return t.conn.ExecContext(ctx, query, args...)
}

func (t *pgTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.conn.QueryContext(ctx, query, args...)
}

func (t *pgTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.conn.QueryRowContext(ctx, query, args...)
}

// GetDBConn gives gorm's tx.DB() the pool, as it does for a *sql.Tx.
func (t *pgTx) GetDBConn() (*sql.DB, error) { return t.db, nil }

// Flush sends the statements tx holds for its commit now, in one round trip,
// so that the transaction can read what they wrote (an event's id, say). It
// does nothing in a transaction that holds nothing back.
func Flush(ctx context.Context, tx *gorm.DB) error {
	t, ok := tx.Statement.ConnPool.(*pgTx)
	if !ok {
		return nil
	}
	return t.send(ctx, "")
}

// send runs the held statements and then query (if any) in one pipelined
// round trip; the held statements are gone afterwards, whatever happened.
func (t *pgTx) send(ctx context.Context, query string) error {
	t.mu.Lock()
	held := t.held
	t.held = nil
	t.mu.Unlock()
	if len(held) == 0 && query == "" {
		return nil
	}
	return t.conn.Raw(func(dc any) error {
		b := &pgx.Batch{}
		for _, h := range held {
			b.Queue(h.sql, h.args...)
		}
		if query != "" {
			b.Queue(query)
		}
		return dc.(*stdlib.Conn).Conn().SendBatch(ctx, b).Close()
	})
}

// execSavepoint runs gorm's savepoint statements. The statements held so far
// go with a SAVEPOINT, so that every statement still held was issued after
// the latest savepoint; a ROLLBACK TO SAVEPOINT then drops them all.
func (t *pgTx) execSavepoint(ctx context.Context, query string) (handled bool, err error) {
	switch {
	case strings.HasPrefix(query, "SAVEPOINT "):
		return true, t.send(ctx, query)
	case strings.HasPrefix(query, "ROLLBACK TO SAVEPOINT "):
		t.mu.Lock()
		t.held = nil
		t.mu.Unlock()
	}
	return false, nil
}

// ErrCommitRolledBack is returned by a commit that PostgreSQL turned into a
// rollback because a statement of the transaction had failed.
var ErrCommitRolledBack = errors.New("commit unexpectedly resulted in rollback")

// endTimeout bounds COMMIT and ROLLBACK, which gorm calls without a context.
const endTimeout = 30 * time.Second

// Commit sends the held statements and the COMMIT together. Any failure
// leaves nothing committed; a connection whose state is then unknown is
// closed rather than returned to the pool.
func (t *pgTx) Commit() error {
	if t.done {
		return sql.ErrTxDone
	}
	t.done = true
	defer func() { _ = t.conn.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	var commitErr error
	err := t.conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		if commitErr = commit(ctx, c, t.held); commitErr == nil {
			return nil
		}
		// End the transaction before the connection goes back to the pool;
		// if even that fails, the connection goes.
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
	if commitErr != nil {
		return fmt.Errorf("commit: %w", commitErr)
	}
	return err
}

// commit runs the held statements and COMMIT in one round trip.
func commit(ctx context.Context, c *pgx.Conn, held []heldStatement) error {
	var tag pgconn.CommandTag
	if len(held) == 0 {
		var err error
		if tag, err = c.Exec(ctx, "COMMIT"); err != nil {
			return err
		}
	} else {
		b := &pgx.Batch{}
		for _, h := range held {
			b.Queue(h.sql, h.args...)
		}
		b.Queue("COMMIT")
		res := c.SendBatch(ctx, b)
		var firstErr error
		for range held {
			if _, err := res.Exec(); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		var err error
		tag, err = res.Exec()
		if firstErr == nil {
			firstErr = err
		}
		if err := res.Close(); err != nil && firstErr == nil {
			firstErr = err
		}
		if firstErr != nil {
			return firstErr
		}
	}
	if tag.String() == "ROLLBACK" {
		return ErrCommitRolledBack
	}
	return nil
}

// Rollback ends the transaction; after a commit it does nothing.
func (t *pgTx) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	defer func() { _ = t.conn.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	return t.conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		if c.IsClosed() {
			return driver.ErrBadConn
		}
		if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
			return driver.ErrBadConn
		}
		return nil
	})
}
