package events

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// sqlBase holds the statements both dialects share. Where a statement needs
// the database clock or a time to compare with a column the clock wrote, it
// takes the dialect's expression from these methods.
type sqlBase struct{ dialect database.Dialect }

// now is the database clock's current time.
func (b sqlBase) now() string { return b.dialect.Now() }

// nowPlus is the database clock's time d from now.
func (b sqlBase) nowPlus(d time.Duration) string { return b.dialect.NowPlus(d) }

// timeArg is t as an argument to compare with created_at.
func (b sqlBase) timeArg(t time.Time) any { return b.dialect.TimeArg(t) }

// sqlWhere gathers the conditions of a query and their arguments, in order.
type sqlWhere struct {
	conds []string
	args  []any
}

func (w *sqlWhere) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *sqlWhere) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// listIDs builds the listing in three steps: the filter's plain conditions,
// the status condition (with a join on each waited subscriber's lane) and
// the page's cursor.
func (b sqlBase) listIDs(ctx context.Context, db *gorm.DB, q listQuery) ([]int64, error) {
	var w sqlWhere
	b.filterConds(&w, q.Filter)
	join, joinArgs := statusConds(&w, q.Status, q.subs)
	cmp, order := "<", "DESC"
	if q.Oldest {
		cmp, order = ">", "ASC"
	}
	if q.after != 0 {
		w.add("e.id "+cmp+" ?", q.after)
	}
	args := append(append(joinArgs, w.args...), q.limit)
	var ids []int64
	err := database.Scan(db.WithContext(ctx).Raw("SELECT e.id FROM events e"+join+w.String()+" ORDER BY e.id "+order+" LIMIT ?", args...),
		&ids)
	return ids, err
}

// filterConds adds the conditions of the filter's fields that compare a
// column of the event with a value.
func (b sqlBase) filterConds(w *sqlWhere, f Filter) {
	if f.Type != "" {
		w.add("e.type = ?", f.Type)
	}
	if f.AggregateType != "" {
		w.add("e.aggregate_type = ?", f.AggregateType)
	}
	if f.AggregateID != 0 {
		w.add("e.aggregate_id = ?", f.AggregateID)
	}
	if f.ActorID != 0 {
		w.add("e.actor_id = ?", f.ActorID)
	}
	if len(f.HideAggregateTypes) > 0 {
		w.add("e.aggregate_type NOT IN ?", f.HideAggregateTypes)
	}
	if f.AfterID != 0 {
		w.add("e.id > ?", f.AfterID)
	}
	if f.UpToID != 0 {
		w.add("e.id <= ?", f.UpToID)
	}
	if f.CausedBy != 0 {
		w.add("e.caused_by = ?", f.CausedBy)
	}
	if f.CorrelationID != "" {
		w.add("e.correlation_id = ?", f.CorrelationID)
	}
	if !f.Since.IsZero() {
		w.add("e.created_at >= ?", b.timeArg(f.Since))
	}
	if !f.Until.IsZero() {
		w.add("e.created_at < ?", b.timeArg(f.Until))
	}
}

// statusConds adds the condition of a status filter and returns the joins
// it needs. An event is failed when a delivery of a subscriber it waits for
// is; pending when one of them has not reached it yet (its lane is behind
// the event, or it has no lanes yet) or retries or holds it; processed
// otherwise.
func statusConds(w *sqlWhere, status string, subs []waitedSubscriber) (string, []any) {
	if status == "" {
		return "", nil
	}
	failed, failedArgs := "1 = 0", []any(nil)
	if len(subs) > 0 {
		failed = "EXISTS (SELECT 1 FROM events_deliveries d WHERE d.event_id = e.id AND d.status = 'failed' AND d.subscriber IN ?)"
		failedArgs = []any{subscriberNames(subs)}
	}
	var join strings.Builder
	var joinArgs, pendArgs []any
	var pending []string
	for i, s := range subs {
		l := fmt.Sprintf("l%d", i)
		fmt.Fprintf(&join, " LEFT JOIN events_lanes %s ON %s.subscriber = ? AND %s.partition = e.partition", l, l, l)
		joinArgs = append(joinArgs, s.name)
		pending = append(pending, `(e.type IN ? AND e.id > coalesce(`+l+`.start_position, -1) AND (e.id > coalesce(`+l+`.position, -1)
  OR EXISTS (SELECT 1 FROM events_deliveries d WHERE d.event_id = e.id AND d.subscriber = ? AND d.status IN ('retrying', 'held'))))`)
		pendArgs = append(pendArgs, s.typeList, s.name)
	}
	anyPending := "1 = 0"
	if len(pending) > 0 {
		anyPending = "(" + strings.Join(pending, " OR ") + ")"
	}
	switch status {
	case StatusFailed:
		w.add(failed, failedArgs...)
	case StatusProcessed:
		w.add("NOT "+failed, failedArgs...)
		w.add("NOT "+anyPending, pendArgs...)
	case StatusPending:
		w.add("NOT "+failed, failedArgs...)
		w.add(anyPending, pendArgs...)
	}
	return join.String(), joinArgs
}

func subscriberNames(subs []waitedSubscriber) []string {
	ns := make([]string, len(subs))
	for i, s := range subs {
		ns[i] = s.name
	}
	return ns
}

func (sqlBase) historyIDs(ctx context.Context, db *gorm.DB, objs []Objects, after int64, limit int) ([]int64, error) {
	var about []string
	var args []any
	for _, o := range objs {
		if len(o.IDs) == 0 {
			continue
		}
		about = append(about, "(e.aggregate_type = ? AND e.aggregate_id IN ?)")
		args = append(args, o.AggregateType, o.IDs)
	}
	if len(about) == 0 {
		return nil, nil
	}
	q := "SELECT e.id FROM events e WHERE (" + strings.Join(about, " OR ") + ")"
	if after != 0 {
		q, args = q+" AND e.id > ?", append(args, after)
	}
	q, args = q+" ORDER BY e.id LIMIT ?", append(args, limit)
	var ids []int64
	err := database.Scan(db.WithContext(ctx).Raw(q, args...), &ids)
	return ids, err
}

func (sqlBase) eventExists(ctx context.Context, db *gorm.DB, id int64) (bool, error) {
	var n int64
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT count(*) FROM events WHERE id = ?`, id), &n)
	return n > 0, err
}

func (sqlBase) eventsWithPartition(ctx context.Context, db *gorm.DB, ids []int64) ([]Event, map[int64]int, error) {
	rows, err := db.WithContext(ctx).Raw(`SELECT `+eventColumns+`, e.partition FROM events e WHERE e.id IN ?`, ids).Rows()
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = rows.Close() }()
	var evs []Event
	parts := map[int64]int{}
	for rows.Next() {
		var r eventRow
		var part int
		if err := rows.Scan(append(r.dest(), &part)...); err != nil {
			return nil, nil, err
		}
		ev := r.event()
		evs = append(evs, ev)
		parts[ev.ID] = part
	}
	return evs, parts, rows.Err()
}

func (sqlBase) waitedSubscribers(ctx context.Context, db *gorm.DB) ([]waitedSubscriber, error) {
	var subs []struct {
		Name  string
		Types string
	}
	if err := database.Scan(db.WithContext(ctx).Raw(`SELECT name, types FROM events_subscribers WHERE registered_at IS NOT NULL AND retired_at IS NULL ORDER BY id`),
		&subs); err != nil {
		return nil, err
	}
	out := make([]waitedSubscriber, 0, len(subs))
	for _, s := range subs {
		var types []string
		if err := json.Unmarshal([]byte(s.Types), &types); err != nil {
			return nil, fmt.Errorf("events: subscriber %s: types: %w", s.Name, err)
		}
		out = append(out, newWaitedSubscriber(s.Name, types))
	}
	return out, nil
}

func (sqlBase) laneStates(ctx context.Context, db *gorm.DB) (map[laneKey]laneState, error) {
	var lanes []struct {
		Subscriber    string
		Partition     int
		Position      int64
		StartPosition int64
	}
	if err := database.Scan(db.WithContext(ctx).Raw(`SELECT subscriber, partition, position, start_position FROM events_lanes`), &lanes); err != nil {
		return nil, err
	}
	lm := make(map[laneKey]laneState, len(lanes))
	for _, l := range lanes {
		lm[laneKey{l.Subscriber, l.Partition}] = laneState{position: l.Position, start: l.StartPosition}
	}
	return lm, nil
}

func (sqlBase) deliveries(ctx context.Context, db *gorm.DB, ids []int64) (map[int64]map[string]Delivery, error) {
	rows, err := db.WithContext(ctx).Raw(`SELECT event_id, subscriber, status, attempts, last_error, next_attempt_at, blocked_by
FROM events_deliveries WHERE event_id IN ?`, ids).Rows()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := map[int64]map[string]Delivery{}
	for rows.Next() {
		var (
			id        int64
			d         Delivery
			next      nullTime
			blockedBy sql.NullInt64
		)
		if err := rows.Scan(&id, &d.Subscriber, &d.Status, &d.Attempts, &d.LastError, &next, &blockedBy); err != nil {
			return nil, err
		}
		d.NextAttemptAt = next.ptr()
		if blockedBy.Valid {
			d.BlockedBy = &blockedBy.Int64
		}
		if out[id] == nil {
			out[id] = map[string]Delivery{}
		}
		d.Failures = []Failure{}
		out[id][d.Subscriber] = d
	}
	return out, rows.Err()
}

func (sqlBase) failures(ctx context.Context, db *gorm.DB, ids []int64) ([]deliveryFailure, error) {
	rows, err := db.WithContext(ctx).Raw(`SELECT event_id, subscriber, failed_at, error, http_status, spent
FROM events_delivery_failures WHERE event_id IN ? ORDER BY event_id, subscriber, seq`, ids).Rows()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []deliveryFailure
	for rows.Next() {
		var (
			f      deliveryFailure
			at     nullTime
			status sql.NullInt64
		)
		if err := rows.Scan(&f.eventID, &f.sub, &at, &f.Error, &status, &f.Spent); err != nil {
			return nil, err
		}
		f.At = at.t
		if status.Valid {
			n := int(status.Int64)
			f.HTTPStatus = &n
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// processedAtChunk is how many deliveries one processedAt statement asks about.
const processedAtChunk = 200

// processedAt is where a delivery's processed_at comes from, the one place
// that computes it (docs/outbox.md, "Where processed_at comes from"). For
// each delivery (an event and a subscriber that has reached it) it is, in
// this order:
//
//  1. the delivery's own row in events_deliveries, when it has one (an
//     exception: retried, held, failed, or a local subscriber's recorded
//     success): that row's processed_at, null while the delivery is open.
//     The row wins even where a batch covers the event, since the batch
//     that moved the lane past a failed event did not deliver it;
//  2. else the subscriber's own batch covering the event (events_batches
//     with its name): when the batch committed, the moment its lane moved
//     past the event. A subscriber's batches in a partition are disjoint,
//     so the first ending at or after the event is the only candidate;
//  3. else settled_at on the event: compaction (CompactBatches) removes the
//     batch rows of the events every lane has passed and writes on each
//     event the latest time their batches gave, so the time survives them;
//  4. else a batch from before lanes (subscriber ""), which covered the
//     event for every subscriber at once.
//
// An entry's own processed_at is the latest of its waited-for deliveries'
// (derive), never before its creation.
func (sqlBase) processedAt(ctx context.Context, db *gorm.DB, ds []deliveryAt) error {
	for len(ds) > 0 {
		n := min(processedAtChunk, len(ds))
		if err := processedAtOf(ctx, db, ds[:n]); err != nil {
			return err
		}
		ds = ds[n:]
	}
	return nil
}

func processedAtOf(ctx context.Context, db *gorm.DB, ds []deliveryAt) error {
	values := make([]string, 0, len(ds))
	args := make([]any, 0, 3*len(ds))
	for _, d := range ds {
		values = append(values, "(CAST(? AS bigint), CAST(? AS integer), CAST(? AS text))")
		args = append(args, d.eventID, d.part, d.sub)
	}
	covering := func(sub string) string {
		return `(SELECT CASE WHEN b.first_id <= x.eid THEN b.dispatched_at END FROM events_batches b
WHERE b.partition = x.part AND b.subscriber = ` + sub + ` AND b.last_id >= x.eid ORDER BY b.last_id LIMIT 1)`
	}
	rows, err := db.WithContext(ctx).Raw(`WITH x(eid, part, sub) AS (VALUES `+strings.Join(values, ", ")+`)
SELECT x.eid, x.sub, CASE WHEN d.event_id IS NOT NULL THEN d.processed_at
  ELSE coalesce(`+covering("x.sub")+`, (SELECT e.settled_at FROM events e WHERE e.id = x.eid), `+covering("''")+`) END AS at
FROM x LEFT JOIN events_deliveries d ON d.event_id = x.eid AND d.subscriber = x.sub`, args...).Rows()
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	at := make(map[deliveryKey]*time.Time, len(ds))
	for rows.Next() {
		var (
			k deliveryKey
			t nullTime
		)
		if err := rows.Scan(&k.eventID, &k.sub, &t); err != nil {
			return err
		}
		at[k] = t.ptr()
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range ds {
		ds[i].at = at[deliveryKey{ds[i].eventID, ds[i].sub}]
	}
	return nil
}

func (b sqlBase) retryFailed(ctx context.Context, tx *gorm.DB, id int64) (int64, error) {
	res := tx.WithContext(ctx).Exec(`UPDATE events_deliveries SET status = 'retrying', attempts = 0, deferred_ms = 0, next_attempt_at = `+b.now()+`,
updated_at = `+b.now()+` WHERE event_id = ? AND status = 'failed'`, id)
	return res.RowsAffected, res.Error
}

func (sqlBase) backlog(ctx context.Context, db *gorm.DB) (Summary, error) {
	var a, b struct {
		N      int64
		Oldest nullTime
	}
	db = db.WithContext(ctx)
	if err := database.Scan(db.Raw(`SELECT count(*) AS n, min(e.created_at) AS oldest FROM events e
JOIN (SELECT l.partition, min(l.position) AS position FROM events_lanes l
  JOIN events_subscribers s ON s.name = l.subscriber AND s.registered_at IS NOT NULL AND s.retired_at IS NULL
  GROUP BY l.partition) p ON p.partition = e.partition
WHERE e.id > p.position`), &a); err != nil {
		return Summary{}, err
	}
	if err := database.Scan(db.Raw(`SELECT count(*) AS n, min(e.created_at) AS oldest FROM events_deliveries d JOIN events e ON e.id = d.event_id
JOIN events_subscribers s ON s.name = d.subscriber AND s.registered_at IS NOT NULL AND s.retired_at IS NULL
WHERE d.status <> 'processed'`), &b); err != nil {
		return Summary{}, err
	}
	s := Summary{Pending: a.N + b.N}
	for _, t := range []*time.Time{a.Oldest.ptr(), b.Oldest.ptr()} {
		if t != nil && (s.Oldest.IsZero() || t.Before(s.Oldest)) {
			s.Oldest = *t
		}
	}
	return s, nil
}

// The subscribers' statements.

func (b sqlBase) clock(ctx context.Context, db *gorm.DB) (time.Time, error) {
	var now time.Time
	err := database.Scan(db.WithContext(ctx).Raw("SELECT "+b.now()), (*dbTime)(&now))
	return now, err
}

func (sqlBase) registeredSubscribers(ctx context.Context, db *gorm.DB, name string) ([]subscriberRow, error) {
	q, args := `SELECT id, name, types, description, local, replayable, registered_at, retired_at FROM events_subscribers
WHERE registered_at IS NOT NULL`, []any(nil)
	if name != "" {
		q, args = q+" AND name = ?", append(args, name)
	}
	var rows []subscriberRow
	err := database.Scan(db.WithContext(ctx).Raw(q+" ORDER BY name", args...), &rows)
	return rows, err
}

func (sqlBase) laneBacklogs(ctx context.Context, db *gorm.DB, name string, types []string) ([]laneBacklog, error) {
	if len(types) == 0 {
		types = []string{""}
	}
	var lanes []laneBacklog
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT l.partition, l.position, l.owner, l.lease_until, count(e.id) AS n, min(e.created_at) AS oldest
FROM events_lanes l LEFT JOIN events e ON e.partition = l.partition AND e.id > l.position AND e.type IN ?
WHERE l.subscriber = ? GROUP BY l.partition, l.position, l.owner, l.lease_until ORDER BY l.partition`, types, name), &lanes)
	return lanes, err
}

func (sqlBase) openDeliveries(ctx context.Context, db *gorm.DB, name string) ([]statusCount, error) {
	var out []statusCount
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT d.status, count(*) AS n, min(e.created_at) AS oldest FROM events_deliveries d JOIN events e ON e.id = d.event_id
WHERE d.subscriber = ? AND d.status <> 'processed' GROUP BY d.status`, name), &out)
	return out, err
}

func (sqlBase) replicasOf(ctx context.Context, db *gorm.DB, name string) ([]replicaRow, error) {
	var out []replicaRow
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT replica, seen_at FROM events_replicas WHERE subscriber = ? ORDER BY seen_at DESC`, name), &out)
	return out, err
}

func (b sqlBase) activeReplicas(ctx context.Context, tx *gorm.DB, name string, window time.Duration) ([]string, error) {
	var active []string
	err := database.Scan(tx.WithContext(ctx).Raw(`SELECT replica FROM events_replicas WHERE subscriber = ? AND seen_at > `+b.nowPlus(-window)+
		` ORDER BY replica`, name), &active)
	return active, err
}

// rewindSteps are rewind's statements, in order; they take @s, the
// subscriber, and @b, the last event it keeps.
var rewindSteps = []string{
	`UPDATE events_lanes SET position = CASE WHEN position > @b THEN @b ELSE position END,
start_position = CASE WHEN start_position > @b THEN @b ELSE start_position END, owner = NULL, lease_until = NULL WHERE subscriber = @s`,
	`DELETE FROM events_deliveries WHERE subscriber = @s AND event_id > @b`,
	`DELETE FROM events_delivery_failures WHERE subscriber = @s AND event_id > @b`,
	`DELETE FROM events_batches WHERE subscriber = @s AND first_id > @b`,
	`UPDATE events_batches SET last_id = @b WHERE subscriber = @s AND first_id <= @b AND last_id > @b`,
}

func (sqlBase) rewind(ctx context.Context, tx *gorm.DB, name string, before int64) error {
	tx = tx.WithContext(ctx)
	for _, q := range rewindSteps {
		if err := tx.Exec(q, map[string]any{"s": name, "b": before}).Error; err != nil {
			return err
		}
	}
	return nil
}

func (b sqlBase) retire(ctx context.Context, tx *gorm.DB, name string) error {
	tx = tx.WithContext(ctx)
	if err := tx.Exec(`UPDATE events_subscribers SET retired_at = `+b.now()+`, updated_at = `+b.now()+` WHERE name = ?`, name).Error; err != nil {
		return err
	}
	if err := tx.Exec(`DELETE FROM events_lanes WHERE subscriber = ?`, name).Error; err != nil {
		return err
	}
	return tx.Exec(`DELETE FROM events_replicas WHERE subscriber = ?`, name).Error
}

// The registration's statements.

func (sqlBase) subscribersKnown(ctx context.Context, tx *gorm.DB) (int64, error) {
	var n int64
	err := database.Scan(tx.WithContext(ctx).Raw(`SELECT count(*) FROM events_subscribers`), &n)
	return n, err
}

func (sqlBase) subscriberRecord(ctx context.Context, tx *gorm.DB, name string) (subscriberRecord, bool, error) {
	var rows []subscriberRecord
	if err := database.Scan(tx.WithContext(ctx).Raw(`SELECT id, registered_at, retired_at FROM events_subscribers WHERE name = ?`, name), &rows); err != nil {
		return subscriberRecord{}, false, err
	}
	if len(rows) == 0 {
		return subscriberRecord{}, false, nil
	}
	return rows[0], true, nil
}

func (b sqlBase) insertSubscriber(ctx context.Context, tx *gorm.DB, s subscriberSpec) (bool, error) {
	res := tx.WithContext(ctx).Exec(`INSERT INTO events_subscribers (name, types, description, local, replayable, registered_at, updated_at)
VALUES (?, ?, ?, ?, ?, `+b.now()+`, `+b.now()+`) ON CONFLICT (name) DO NOTHING`, s.name, s.types, s.description, s.local, s.replayable)
	return res.RowsAffected == 1, res.Error
}

func (b sqlBase) updateSubscriber(ctx context.Context, tx *gorm.DB, s subscriberSpec) error {
	return tx.WithContext(ctx).Exec(`UPDATE events_subscribers SET types = ?, description = ?, local = ?, replayable = ?, retired_at = NULL,
registered_at = coalesce(registered_at, `+b.now()+`), updated_at = `+b.now()+` WHERE name = ?`,
		s.types, s.description, s.local, s.replayable, s.name).Error
}

func (sqlBase) dropLanes(ctx context.Context, tx *gorm.DB, name string) error {
	return tx.WithContext(ctx).Exec(`DELETE FROM events_lanes WHERE subscriber = ?`, name).Error
}

// addLanes writes every partition's lane in one statement.
func (sqlBase) addLanes(ctx context.Context, tx *gorm.DB, name string, start int64) error {
	rows := make([]string, 0, Partitions)
	args := make([]any, 0, 4*Partitions)
	for p := range Partitions {
		rows = append(rows, "(?, ?, ?, ?)")
		args = append(args, name, p, start, start)
	}
	return tx.WithContext(ctx).Exec(`INSERT INTO events_lanes (subscriber, partition, position, start_position) VALUES `+
		strings.Join(rows, ", ")+` ON CONFLICT (subscriber, partition) DO NOTHING`, args...).Error
}

// seen marks the replica as running the subscribers, in one statement.
func (b sqlBase) seen(ctx context.Context, tx *gorm.DB, replica string, subs []string) error {
	if len(subs) == 0 {
		return nil
	}
	rows := make([]string, 0, len(subs))
	args := make([]any, 0, 2*len(subs))
	for _, s := range subs {
		rows = append(rows, "(?, ?, "+b.now()+")")
		args = append(args, s, replica)
	}
	return tx.WithContext(ctx).Exec(`INSERT INTO events_replicas (subscriber, replica, seen_at) VALUES `+strings.Join(rows, ", ")+`
ON CONFLICT (subscriber, replica) DO UPDATE SET seen_at = excluded.seen_at`, args...).Error
}

func (b sqlBase) forgetReplicas(ctx context.Context, tx *gorm.DB, keep time.Duration) error {
	return tx.WithContext(ctx).Exec(`DELETE FROM events_replicas WHERE seen_at < ` + b.nowPlus(-keep)).Error
}

func (b sqlBase) leaseOwners(ctx context.Context, db *gorm.DB, self string) ([]string, error) {
	var owners []string
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT DISTINCT owner FROM events_lanes WHERE owner IS NOT NULL AND owner <> ? AND lease_until > `+b.now()+
		` ORDER BY owner`, self), &owners)
	return owners, err
}

func (sqlBase) dropLeases(ctx context.Context, db *gorm.DB, owner string) (int64, error) {
	res := db.WithContext(ctx).Exec(`UPDATE events_lanes SET owner = NULL, lease_until = NULL WHERE owner = ?`, owner)
	return res.RowsAffected, res.Error
}

// The compaction's statements. The ranges of a partition are written as row
// comparisons on (partition, id), as readBatch's are, so that the
// events_partition_id index serves them.

func (sqlBase) compactedUpTo(ctx context.Context, tx *gorm.DB, part int) (int64, error) {
	var done []int64
	if err := database.Scan(tx.WithContext(ctx).Raw(`SELECT upto FROM events_compaction WHERE partition = ?`, part), &done); err != nil {
		return 0, err
	}
	if len(done) == 0 {
		return 0, nil
	}
	return done[0], nil
}

func (sqlBase) eventTypesIn(ctx context.Context, tx *gorm.DB, part int, low, high int64, limit int) ([]eventType, error) {
	var evs []eventType
	err := database.Scan(tx.WithContext(ctx).Raw(`SELECT id, type FROM events WHERE (partition, id) > (?, ?) AND (partition, id) <= (?, ?) ORDER BY partition, id LIMIT ?`,
		part, low, part, high, limit), &evs)
	return evs, err
}

func (sqlBase) subscriberBatches(ctx context.Context, tx *gorm.DB, part int, low, high int64) ([]batchSpan, error) {
	var rows []batchSpan
	err := database.Scan(tx.WithContext(ctx).Raw(`SELECT subscriber, first_id, last_id, dispatched_at FROM events_batches
WHERE partition = ? AND subscriber <> '' AND last_id > ? AND first_id <= ? ORDER BY subscriber, first_id`, part, low, high), &rows)
	return rows, err
}

func (sqlBase) recordedIn(ctx context.Context, tx *gorm.DB, part int, low, high int64) (map[deliveryKey]bool, error) {
	var recs []struct {
		EventID    int64
		Subscriber string
	}
	if err := database.Scan(tx.WithContext(ctx).Raw(`SELECT event_id, subscriber FROM events_deliveries WHERE partition = ? AND event_id > ? AND event_id <= ?`,
		part, low, high), &recs); err != nil {
		return nil, err
	}
	out := make(map[deliveryKey]bool, len(recs))
	for _, r := range recs {
		out[deliveryKey{r.EventID, r.Subscriber}] = true
	}
	return out, nil
}

func (sqlBase) settle(ctx context.Context, tx *gorm.DB, part int, first, last int64, at time.Time) error {
	return tx.WithContext(ctx).Exec(`UPDATE events SET settled_at = ? WHERE (partition, id) >= (?, ?) AND (partition, id) <= (?, ?)`,
		at, part, first, part, last).Error
}

func (sqlBase) dropBatches(ctx context.Context, tx *gorm.DB, part int, low, high int64) (int64, error) {
	res := tx.WithContext(ctx).Exec(`DELETE FROM events_batches WHERE partition = ? AND subscriber <> '' AND first_id > ? AND last_id <= ?`,
		part, low, high)
	return res.RowsAffected, res.Error
}

func (sqlBase) markCompacted(ctx context.Context, tx *gorm.DB, part int, upto int64) error {
	return tx.WithContext(ctx).Exec(`INSERT INTO events_compaction (partition, upto) VALUES (?, ?)
ON CONFLICT (partition) DO UPDATE SET upto = excluded.upto`, part, upto).Error
}

// The stream's statement both dialects share.

func (sqlBase) newestID(ctx context.Context, db *gorm.DB) (int64, error) {
	var id int64
	err := db.WithContext(ctx).Raw("SELECT coalesce(max(id), 0) FROM events").Row().Scan(&id)
	return id, err
}
