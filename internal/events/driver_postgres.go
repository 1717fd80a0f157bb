package events

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// pgDriver is the outbox's driver for PostgreSQL, where transactions commit
// out of the order of their event ids: the stream computes a commit horizon
// from the transactions writing events.
type pgDriver struct {
	sqlBase
	pgStatements
}

// maxWorkers puts no bound of its own on DispatcherOptions.Workers: the
// pool's connections are the bound.
func (pgDriver) maxWorkers() int { return 0 }

// insertEvent takes the transaction id before the event id, so that every
// transaction holding an event id is visible in later snapshots as in
// progress (or done); the commit horizon relies on it (docs/outbox.md). The
// INSERT travels with the transaction's COMMIT, in the same round trip
// (database.WithCommit), and the commit is announced to the dispatchers once
// it is done (database.AnnounceCommit); tx is a transaction of a pool of
// database.Open, as every PostgreSQL transaction of tsekh is.
func (pgDriver) insertEvent(ctx context.Context, tx *gorm.DB, r newEventRow) error {
	const q = `WITH x AS MATERIALIZED (SELECT pg_current_xact_id() AS xid)
INSERT INTO events (id, type, aggregate_type, aggregate_id, partition, payload, actor_id, actor_name,
  caused_by, correlation_id, traceparent, tracestate)
SELECT nextval('events_id_seq'), $1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11 FROM x`
	args := []any{r.typ, r.aggType, r.aggID, r.part, r.payload, r.actorID, r.actorName,
		r.causedBy, r.correlation, r.traceparent, r.tracestate}
	database.AnnounceCommit(tx)
	if database.WithCommit(tx, q, args...) {
		return nil
	}
	_, err := tx.Statement.ConnPool.ExecContext(ctx, q, args...)
	return err
}

// streamSurvey reads, in one snapshot, the highest id visible, the
// transactions holding a write lock on events (read after it) and which of
// pending still run, as the dispatcher's survey does.
func (pgDriver) streamSurvey(ctx context.Context, db *gorm.DB, pending []string) (surveyed, error) {
	var sv surveyed
	var writers, running string
	err := db.WithContext(ctx).Raw(`WITH l0 AS MATERIALIZED (SELECT locktype, relation, mode, virtualtransaction, transactionid::text AS xid FROM pg_locks
  WHERE locktype IN ('relation', 'transactionid'))
SELECT v.visible,
  coalesce((SELECT string_agg(DISTINCT t.xid, ',') FROM l0 r JOIN l0 t ON t.virtualtransaction = r.virtualtransaction AND t.locktype = 'transactionid'
    WHERE r.locktype = 'relation' AND r.relation = 'events'::regclass AND r.mode = 'RowExclusiveLock'), '') AS writers,
  coalesce((SELECT string_agg(DISTINCT xid, ',') FROM l0 WHERE locktype = 'transactionid' AND xid = ANY (string_to_array(?, ','))), '') AS running
FROM (SELECT coalesce(max(id), 0) AS visible FROM events) v`, strings.Join(pending, ",")).Row().Scan(&sv.visible, &writers, &running)
	sv.writers, sv.running = splitList(writers), splitList(running)
	return sv, err
}

func (pgDriver) supportsListener() bool { return true }

func (pgDriver) listener(url string) commitListener { return &pgListener{url: url} }

func (pgDriver) announcer(pool *gorm.DB) string { return database.AnnouncerID(pool) }

func (pgDriver) watchCommits(pool *gorm.DB, wake func()) func() {
	return database.WatchCommits(pool, wake)
}

// pgListener LISTENs on database.CommitChannel, on a connection of its own
// made from url (not one of a pool's: a listening session lives as long as
// the listener).
type pgListener struct {
	url  string
	conn *pgx.Conn
}

func (l *pgListener) connect(ctx context.Context) error {
	cfg, err := pgx.ParseConfig(l.url)
	if err != nil {
		return err
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	conn, err := database.WaitForRoom(ctx, func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, cfg) })
	if err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+database.CommitChannel); err != nil {
		_ = conn.Close(context.Background())
		return err
	}
	l.conn = conn
	return nil
}

func (l *pgListener) wait(ctx context.Context) (string, error) {
	n, err := l.conn.WaitForNotification(ctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) {
			return "", errNoAnnouncement
		}
		return "", err
	}
	return n.Payload, nil
}

func (l *pgListener) ping(ctx context.Context) error { return l.conn.Ping(ctx) }

func (l *pgListener) close(ctx context.Context) error {
	if l.conn == nil {
		return nil
	}
	err := l.conn.Close(ctx)
	l.conn = nil
	return err
}
