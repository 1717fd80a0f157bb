package events

import (
	"context"
	"strings"

	"gorm.io/gorm"
)

// pgDriver is the outbox's driver for PostgreSQL, where transactions commit
// out of the order of their event ids: the stream computes a commit horizon
// from the transactions writing events.
type pgDriver struct{ sqlBase }

func (pgDriver) ordered() bool { return false }

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
