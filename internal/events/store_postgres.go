package events

import (
	"context"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// pgStatements are the dispatcher's statements for PostgreSQL.
type pgStatements struct{}

var pgNow = database.Postgres.Now()

func pgNowPlus(q claimQuery) string { return database.Postgres.NowPlus(q.lease) }

// noSyncCommit, as a statement's first CTE, lets the statement's own
// transaction commit without waiting for its WAL to reach the disk. Only the
// lease bookkeeping uses it: a claim or release lost in a crash changes
// nothing that matters (the batch transaction that follows commits
// synchronously, which flushes the claim's WAL before it, and checks the
// lease as its fence), and it spares a disk flush before the first
// subscriber is called.
const noSyncCommit = `async AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))`

// pgLastEvents joins each lane with its partition's last event up to upto
// (nx.last_id), found once per partition, however many subscribers have a
// lane there, through the (partition, id) index: a row comparison in an
// ordered LIMIT 1 can use no other. With "partition = ? AND id <= upto" the
// planner may walk the primary key back from upto, which reads the whole
// journal after a partition's last event when it has had none for a while.
// OFFSET 0 keeps the planner from pulling the per-partition probes up into
// the join, where it runs one per lane.
func pgLastEvents(upto string) string {
	return `
JOIN (SELECT p.part, le.id AS last_id FROM ` + pgPartitionsLast(upto) + ` OFFSET 0) nx ON nx.part = l.partition`
}

// pgPartitionsLast is a FROM item: every partition p(part), with its last
// event up to upto, if any, as le(partition, id).
func pgPartitionsLast(upto string) string {
	return `generate_series(0, ` + strconv.Itoa(Partitions-1) + `) AS p(part)
  LEFT JOIN LATERAL (SELECT e.partition, e.id FROM events e WHERE (e.partition, e.id) <= (p.part, ` + upto + `)
    ORDER BY e.partition DESC, e.id DESC LIMIT 1) le ON le.partition = p.part`
}

// pgHasWork is true for a lane with events past its position up to the
// last event pgLastEvents found.
const pgHasWork = `nx.last_id > l.position`

func (pgStatements) survey(ctx context.Context, db *gorm.DB, q surveyQuery) (surveyed, error) {
	sv := surveyed{listed: !q.skipLanes}
	// Either the lanes with work, or, when every lane of this dispatcher's
	// subscribers runs here already, what the dispatcher needs to tell
	// which of them have work: each partition's last event and the lanes
	// with a retry due. The lanes' rows are not read then: a session holding
	// an old snapshot leaves many versions of them behind.
	lanes := `coalesce((SELECT string_agg(w.subscriber || ' ' || w.partition || ' ' || w.position || ' ' || w.mine, ',') FROM (` +
		lanesWithWorkSQL(pgNow, pgLastEvents("v.visible"), pgHasWork) + `) AS w), '') AS lanes, '' AS parts, '' AS due`
	if q.skipLanes {
		lanes = `'' AS lanes,
  coalesce((SELECT string_agg(le.partition || ' ' || le.id, ',') FROM ` + pgPartitionsLast("v.visible") + `), '') AS parts,
  coalesce((SELECT string_agg(DISTINCT subscriber || ' ' || partition, ',') FROM events_deliveries
    WHERE status = 'retrying' AND next_attempt_at <= now() AND subscriber IN @names), '') AS due`
	}
	// One statement, one snapshot: pg_locks is read (once) after the
	// snapshot that gave visible, as the horizon needs.
	stmt := `WITH l0 AS MATERIALIZED (SELECT locktype, relation, mode, virtualtransaction, transactionid::text AS xid FROM pg_locks
  WHERE locktype IN ('relation', 'transactionid'))
SELECT v.visible,
  coalesce((SELECT string_agg(DISTINCT t.xid, ',') FROM l0 r JOIN l0 t ON t.virtualtransaction = r.virtualtransaction AND t.locktype = 'transactionid'
    WHERE r.locktype = 'relation' AND r.relation = 'events'::regclass AND r.mode = 'RowExclusiveLock'), '') AS writers,
  coalesce((SELECT string_agg(DISTINCT xid, ',') FROM l0 WHERE locktype = 'transactionid' AND xid = ANY (string_to_array(@pending, ','))), '') AS running,
  ` + lanes + `,
  (SELECT coalesce(max(id), 0) FROM events WHERE type = '` + EventSubscriberReplayed + `' AND id <= v.visible) AS replayed,
  (SELECT extract(epoch FROM min(next_attempt_at) - now()) FROM events_deliveries WHERE status = 'retrying' AND subscriber IN @names) AS next_retry
FROM (SELECT coalesce(max(id), 0) AS visible FROM events) v`
	var writers, running, laneList, parts, due string
	err := db.WithContext(ctx).Raw(stmt, map[string]any{"owner": q.owner, "pending": strings.Join(q.pending, ","), "names": names(q.names)}).
		Row().Scan(&sv.visible, &writers, &running, &laneList, &parts, &due, &sv.replayed, &sv.nextRetry)
	if err != nil {
		return sv, err
	}
	sv.writers, sv.running = splitList(writers), splitList(running)
	if sv.lanes, err = parseLanes(laneList); err != nil {
		return sv, err
	}
	if sv.last, err = parseLast(parts); err != nil {
		return sv, err
	}
	sv.due, err = parseDue(due)
	return sv, err
}

func (pgStatements) lanesWithWork(ctx context.Context, db *gorm.DB, q surveyQuery, upto int64) ([]laneAt, error) {
	return scanLanes(db.WithContext(ctx).Raw(lanesWithWorkSQL(pgNow, pgLastEvents("@upto"), pgHasWork),
		map[string]any{"owner": q.owner, "names": names(q.names), "upto": upto}))
}

func scanLanes(q *gorm.DB) ([]laneAt, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []laneAt
	for rows.Next() {
		var l laneAt
		var mine int
		if err := rows.Scan(&l.sub, &l.part, &l.position, &mine); err != nil {
			return nil, err
		}
		l.mine = mine == 1
		out = append(out, l)
	}
	return out, rows.Err()
}

// claim takes the leases and reads the first batch in one statement. The
// claimed lanes come as one list on every row, so that a batch of n events
// for k lanes is n rows, not n × k.
func (pgStatements) claim(ctx context.Context, db *gorm.DB, q claimQuery) ([]claimedLane, []Event, error) {
	stmt := `WITH ` + noSyncCommit + `, c AS (` + claimUpdateSQL(pgNow, pgNowPlus(q)) + `),
cl AS (SELECT string_agg(c.subscriber || ' ' || c.open::int || ' ' || c.due::int, ',') AS list FROM c)
SELECT cl.list, ` + eventColumns + `
FROM async, cl LEFT JOIN LATERAL (SELECT * FROM events
  WHERE (partition, id) > (@p, @pos) AND (partition, id) <= (@p, @horizon) ORDER BY partition, id LIMIT @n) e ON true
WHERE cl.list IS NOT NULL
ORDER BY e.id`
	rows, err := db.WithContext(ctx).Raw(stmt, map[string]any{"owner": q.owner, "p": q.part, "subs": names(q.subs), "pos": q.pos,
		"horizon": q.horizon, "n": q.limit}).Rows()
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = rows.Close() }()
	var (
		list  string
		batch []Event
	)
	var r eventRow // one for every row, as in readEvents
	dest := append([]any{&list}, r.dest()...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, err
		}
		if r.id.Valid { // else claimed, nothing to read
			batch = append(batch, r.event())
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	claimed, err := parseClaimed(list)
	return claimed, batch, err
}

func (pgStatements) moveLane(tx *gorm.DB, m laneMove) error {
	set := `lease_until = ` + database.Postgres.NowPlus(m.lease)
	if m.release {
		set = `owner = NULL, lease_until = NULL`
	}
	var res *gorm.DB
	if m.batch {
		res = tx.Exec(`WITH fence AS (`+moveLaneSQL(set)+` RETURNING partition)
INSERT INTO events_batches (partition, subscriber, first_id, last_id) SELECT partition, @sub, @first, @next FROM fence`, moveArgs(m))
	} else {
		res = tx.Exec(moveLaneSQL(set), moveArgs(m))
	}
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return errLeaseLost
	}
	return nil
}

func (pgStatements) fenced(tx *gorm.DB, m laneMove, update string, args map[string]any) (int64, error) {
	set := `lease_until = ` + database.Postgres.NowPlus(m.lease)
	res := tx.Exec(`WITH fence AS (`+moveLaneSQL(set)+` RETURNING 1)
`+update+` AND EXISTS (SELECT 1 FROM fence)`, args)
	return res.RowsAffected, res.Error
}

func (pgStatements) release(ctx context.Context, db *gorm.DB, k laneKey, owner string) error {
	return db.WithContext(ctx).Exec(`WITH `+noSyncCommit+` UPDATE events_lanes SET owner = NULL, lease_until = NULL
WHERE subscriber = ? AND partition = ? AND owner = ? AND EXISTS (SELECT 1 FROM async)`, k.sub, k.part, owner).Error
}

func (pgStatements) renew(ctx context.Context, db *gorm.DB, owner string, lease time.Duration) error {
	return db.WithContext(ctx).Exec(`UPDATE events_lanes l SET lease_until = `+database.Postgres.NowPlus(lease)+`
FROM (SELECT subscriber, partition FROM events_lanes WHERE owner = @owner FOR UPDATE SKIP LOCKED) mine
WHERE l.subscriber = mine.subscriber AND l.partition = mine.partition AND l.owner = @owner`, map[string]any{"owner": owner}).Error
}
