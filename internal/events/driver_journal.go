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

// journalStatements read the journal and its deliveries.
type journalStatements interface {
	// listIDs lists the ids of the events the query selects, in its order,
	// at most q.limit of them.
	listIDs(ctx context.Context, db *gorm.DB, q listQuery) ([]int64, error)
	// historyIDs lists the ids of the events about the objects after the
	// id after, oldest first, at most limit of them.
	historyIDs(ctx context.Context, db *gorm.DB, objs []Objects, after int64, limit int) ([]int64, error)
	// eventExists tells whether an event has the id.
	eventExists(ctx context.Context, db *gorm.DB, id int64) (bool, error)
	// eventsWithPartition reads the events with the ids, in no order, and
	// the partition of each.
	eventsWithPartition(ctx context.Context, db *gorm.DB, ids []int64) ([]Event, map[int64]int, error)
	// waitedSubscribers reads the subscribers registered and not retired,
	// in the order they were first registered.
	waitedSubscribers(ctx context.Context, db *gorm.DB) ([]waitedSubscriber, error)
	// laneStates reads every lane's position and start.
	laneStates(ctx context.Context, db *gorm.DB) (map[laneKey]laneState, error)
	// deliveries reads the recorded deliveries of the events ids (without
	// their failures), by event and subscriber.
	deliveries(ctx context.Context, db *gorm.DB, ids []int64) (map[int64]map[string]Delivery, error)
	// failures reads the failed attempts of the events ids, oldest first
	// for each delivery.
	failures(ctx context.Context, db *gorm.DB, ids []int64) ([]deliveryFailure, error)
	// processedAt fills the time of each delivery: see its doc comment in
	// driver_shared.go and docs/outbox.md, "Where processed_at comes from".
	processedAt(ctx context.Context, db *gorm.DB, ds []deliveryAt) error
	// retryFailed re-queues the event's failed deliveries for an immediate
	// attempt and returns how many.
	retryFailed(ctx context.Context, tx *gorm.DB, id int64) (int64, error)
	// backlog counts the events past the slowest waited-for lane of their
	// partition and the open deliveries of waited-for subscribers.
	backlog(ctx context.Context, db *gorm.DB) (Summary, error)
}

// listQuery is a journal listing: the filter, the subscribers a status
// filter weighs, and the page.
type listQuery struct {
	Filter
	subs  []waitedSubscriber // for a status filter: those the journal waits for
	after int64              // the page's cursor: ids below it (above it, Oldest)
	limit int
}

// deliveryFailure is one failed attempt of a subscriber's delivery of an event.
type deliveryFailure struct {
	eventID int64
	sub     string
	Failure
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
