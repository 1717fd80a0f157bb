package events

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// pgStatements are the dispatcher's statements for PostgreSQL.
type pgStatements struct{}

const pgNow = "now()"

func pgNowPlus(db *gorm.DB, q claimQuery) string { return database.NowPlus(db, q.lease) }

// noSyncCommit, as a statement's first CTE, lets the statement's own
// transaction commit without waiting for its WAL to reach the disk. Only the
// lease bookkeeping uses it: a claim or release lost in a crash changes
// nothing that matters (the batch transaction that follows commits
// synchronously, which flushes the claim's WAL before it, and checks the
// lease as its fence), and it spares a disk flush before the first
// subscriber is called.
const noSyncCommit = `async AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))`

// pgNextEvent finds the next event of each lane's partition through the
// (partition, id) index: a row comparison in an ordered LIMIT 1 can use no
// other. With "partition = ? AND id > position" the planner may walk the
// primary key from the position on, which reads the whole journal after it
// when a partition has had no event for a while.
const pgNextEvent = `
LEFT JOIN LATERAL (SELECT e.partition, e.id FROM events e WHERE (e.partition, e.id) > (l.partition, l.position)
  ORDER BY e.partition, e.id LIMIT 1) nx ON true`

// pgNextID is the next event's id found by pgNextEvent, when it is of the
// lane's partition.
const pgNextID = `CASE WHEN nx.partition = l.partition THEN nx.id END`

func (pgStatements) survey(ctx context.Context, db *gorm.DB, q surveyQuery) (surveyed, error) {
	var sv surveyed
	lanes := lanesWithWorkSQL(pgNow, pgNextEvent, pgNextID, `(nx.partition = l.partition AND nx.id <= v.visible)`)
	// One statement, one snapshot: pg_locks is read (once) after the
	// snapshot that gave visible, as the horizon needs. When that snapshot
	// proves the journal final up to visible (no writer in flight, or no id
	// missing above the safe horizon: see commitHorizon.advance, which
	// decides alike), the statement also claims the lanes with work and
	// reads their first batches, sparing a round trip before the first
	// subscriber is called.
	stmt := `WITH ` + noSyncCommit + `,
l0 AS MATERIALIZED (SELECT locktype, relation, mode, virtualtransaction, transactionid::text AS xid FROM pg_locks
  WHERE locktype IN ('relation', 'transactionid')),
v AS MATERIALIZED (SELECT coalesce(max(id), 0) AS visible FROM events),
s AS MATERIALIZED (SELECT v.visible,
  coalesce((SELECT string_agg(DISTINCT t.xid, ',') FROM l0 r JOIN l0 t ON t.virtualtransaction = r.virtualtransaction AND t.locktype = 'transactionid'
    WHERE r.locktype = 'relation' AND r.relation = 'events'::regclass AND r.mode = 'RowExclusiveLock'), '') AS writers,
  coalesce((SELECT string_agg(DISTINCT xid, ',') FROM l0 WHERE locktype = 'transactionid' AND xid = ANY (string_to_array(@pending, ','))), '') AS running,
  (SELECT extract(epoch FROM min(next_attempt_at) - now()) FROM events_deliveries WHERE status = 'retrying' AND subscriber IN @names) AS next_retry,
  CASE WHEN @safe >= 0 AND v.visible > @safe AND v.visible - @safe <= @gapWindow
    THEN (SELECT count(*) FROM events WHERE id > @safe AND id <= v.visible) = v.visible - @safe ELSE false END AS gapless
  FROM v),
w AS MATERIALIZED (SELECT x.* FROM v, LATERAL (` + lanes + `) x),
c AS (UPDATE events_lanes SET owner = @owner, lease_until = ` + database.NowPlus(db, q.lease) + `
  FROM w, s, async
  WHERE @claim AND (s.writers = '' OR (s.gapless AND @safe >= 0))
    AND events_lanes.subscriber = w.subscriber AND events_lanes.partition = w.partition AND events_lanes.position = w.position
    AND NOT ((w.subscriber || ' ' || w.partition) = ANY (string_to_array(@inHand, ',')))
    AND (events_lanes.owner IS NULL OR events_lanes.owner = @owner OR events_lanes.lease_until < now())
  RETURNING events_lanes.subscriber, events_lanes.partition, events_lanes.position,
    EXISTS (SELECT 1 FROM events_deliveries r WHERE r.partition = events_lanes.partition AND r.subscriber = events_lanes.subscriber
      AND r.status <> 'processed') AS open,
    EXISTS (SELECT 1 FROM events_deliveries r WHERE r.partition = events_lanes.partition AND r.subscriber = events_lanes.subscriber
      AND r.status = 'retrying' AND r.next_attempt_at <= now()) AS due),
g AS (SELECT partition, position, string_agg(subscriber || ' ' || open::int || ' ' || due::int, ',') AS list FROM c GROUP BY partition, position)
SELECT s.visible, s.writers, s.running,
  coalesce((SELECT string_agg(w.subscriber || ' ' || w.partition || ' ' || w.position || ' ' || w.next, ',') FROM w), '') AS lanes,
  s.next_retry, s.gapless, g.partition, g.position, g.list, ` + eventColumns + `
FROM s LEFT JOIN g ON true LEFT JOIN LATERAL (SELECT * FROM events
  WHERE (partition, id) > (g.partition, g.position) AND (partition, id) <= (g.partition, s.visible) ORDER BY partition, id LIMIT @n) e ON true
ORDER BY g.partition, g.position, e.id`
	inHand := make([]string, len(q.running))
	for i, k := range q.running {
		inHand[i] = k.sub + " " + strconv.Itoa(k.part)
	}
	rows, err := db.WithContext(ctx).Raw(stmt, map[string]any{"owner": q.owner, "pending": strings.Join(q.pending, ","), "names": names(q.names),
		"safe": q.safe, "gapWindow": gaplessWindow, "claim": q.claim, "inHand": strings.Join(inHand, ","), "n": max(q.limit, 1)}).Rows()
	if err != nil {
		return sv, err
	}
	defer func() { _ = rows.Close() }()
	var writers, running, laneList string
	for rows.Next() {
		var (
			part sql.NullInt64
			pos  sql.NullInt64
			list sql.NullString
			ev   eventRow
		)
		dest := append([]any{&sv.visible, &writers, &running, &laneList, &sv.nextRetry, &sv.gapless, &part, &pos, &list}, ev.dest()...)
		if err := rows.Scan(dest...); err != nil {
			return sv, err
		}
		if !list.Valid {
			continue // nothing claimed: the one row of the survey
		}
		n := len(sv.claimed)
		if n == 0 || sv.claimed[n-1].part != int(part.Int64) || sv.claimed[n-1].pos != pos.Int64 {
			claimed, err := parseClaimed(list.String)
			if err != nil {
				return sv, err
			}
			sv.claimed = append(sv.claimed, claimedGroup{part: int(part.Int64), pos: pos.Int64, lanes: claimed})
			n++
		}
		if ev.id.Valid {
			sv.claimed[n-1].batch = append(sv.claimed[n-1].batch, ev.event())
		}
	}
	if err := rows.Err(); err != nil {
		return sv, err
	}
	sv.writers, sv.running = splitList(writers), splitList(running)
	sv.lanes, err = parseLanes(laneList)
	return sv, err
}

// gaplessWindow bounds the ids a survey counts to tell that the journal
// above the safe horizon has no gap (see commitHorizon).
const gaplessWindow = 4096

func (pgStatements) lanesWithWork(ctx context.Context, db *gorm.DB, q surveyQuery, upto int64) ([]laneAt, error) {
	return scanLanes(db.WithContext(ctx).Raw(lanesWithWorkSQL(pgNow, pgNextEvent, pgNextID, `(nx.partition = l.partition AND nx.id <= @upto)`),
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
		if err := rows.Scan(&l.sub, &l.part, &l.position, &l.next); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// claim takes the leases and reads the first batch in one statement. The
// claimed lanes come as one list on every row, so that a batch of n events
// for k lanes is n rows, not n × k.
func (pgStatements) claim(ctx context.Context, db *gorm.DB, q claimQuery) ([]claimedLane, []Event, error) {
	stmt := `WITH ` + noSyncCommit + `, c AS (` + claimUpdateSQL(pgNow, pgNowPlus(db, q)) + `),
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
	for rows.Next() {
		var r eventRow
		if err := rows.Scan(append([]any{&list}, r.dest()...)...); err != nil {
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
	set := `lease_until = ` + database.NowPlus(tx, m.lease)
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

func (pgStatements) release(ctx context.Context, db *gorm.DB, k laneKey, owner string) error {
	return db.WithContext(ctx).Exec(`WITH `+noSyncCommit+` UPDATE events_lanes SET owner = NULL, lease_until = NULL
WHERE subscriber = ? AND partition = ? AND owner = ? AND EXISTS (SELECT 1 FROM async)`, k.sub, k.part, owner).Error
}
