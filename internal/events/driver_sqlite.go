package events

import (
	"context"

	"gorm.io/gorm"
)

// sqliteDriver is the outbox's driver for SQLite, which has one writer at a
// time: events commit in the order of their ids.
type sqliteDriver struct {
	sqlBase
	sqliteStatements
}

// maxWorkers is 1: one writer at a time, on one connection.
func (sqliteDriver) maxWorkers() int { return 1 }

// SQLite announces no commit to other sessions: the runner polls the
// journal, and the HTTP layer wakes it after a request that wrote.
func (sqliteDriver) supportsListener() bool { return false }

func (sqliteDriver) listener(string) commitListener { return nil }

func (sqliteDriver) announcer(*gorm.DB) string { return "" }

func (sqliteDriver) watchCommits(*gorm.DB, func()) func() { return func() {} }

// insertEvent writes the event at once; with one writer, ids follow commits.
func (sqliteDriver) insertEvent(ctx context.Context, tx *gorm.DB, r newEventRow) error {
	return tx.WithContext(ctx).Exec(`INSERT INTO events (type, aggregate_type, aggregate_id, partition, payload, actor_id, actor_name,
  caused_by, correlation_id, traceparent, tracestate)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.typ, r.aggType, r.aggID, r.part, r.payload, r.actorID, r.actorName,
		r.causedBy, r.correlation, r.traceparent, r.tracestate).Error
}

// streamSurvey reads the highest id visible; with one writer, every event
// below it has committed (final).
func (s sqliteDriver) streamSurvey(ctx context.Context, db *gorm.DB, _ []string) (surveyed, error) {
	visible, err := s.newestID(ctx, db)
	return surveyed{visible: visible, final: true}, err
}
