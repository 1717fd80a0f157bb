package events

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// statements are the dispatcher's SQL statements, most of which differ
// between PostgreSQL and SQLite. They are part of the driver, chosen once,
// in NewDispatcher, so that the logic above them has no dialect branches.
type statements interface {
	// survey reads, in one round trip where the dialect allows, the journal's
	// newest id, the transactions that may still commit events below it, the
	// lanes with work up to it and when the next retry is due.
	survey(ctx context.Context, db *gorm.DB, q surveyQuery) (surveyed, error)
	// lanesWithWork lists the lanes of the named subscribers that have events
	// past their position up to upto, or a retry due, and no live lease of
	// another dispatcher.
	lanesWithWork(ctx context.Context, db *gorm.DB, q surveyQuery, upto int64) ([]laneAt, error)
	// claim takes the leases of the lanes of one partition that stand at pos
	// and reads the first batch after pos up to the horizon.
	claim(ctx context.Context, db *gorm.DB, c claimQuery) ([]claimedLane, []Event, error)
	laneFence
	// release gives a lane's lease back without waiting for the disk.
	release(ctx context.Context, db *gorm.DB, k laneKey, owner string) error
	// renew extends the leases of the owner's lanes, but not of a lane whose
	// row a batch transaction holds (which extends it itself): waiting
	// for that row while holding the others would stop every other lane
	// of the owner behind one slow batch.
	renew(ctx context.Context, db *gorm.DB, owner string, lease time.Duration) error
	// readBatch reads the partition's events after pos up to the horizon,
	// in order, at most limit of them.
	readBatch(ctx context.Context, db *gorm.DB, part int, pos, horizon int64, limit int) ([]Event, error)
	// maxWorkers is the most batch transactions the database serves at
	// once (DispatcherOptions.Workers); 0 puts no bound of its own.
	maxWorkers() int
}

// laneFence are the statements that fence a batch's or a retry's
// transaction by the lane's lease and position.
type laneFence interface {
	// moveLane is a batch transaction's first statement: the fence (the
	// lease must still be this dispatcher's and the lane where the batch
	// began), the lane's new position, the batch's row when it carried
	// events for the subscriber, and, for a lane's last batch, the lease
	// given back.
	moveLane(tx *gorm.DB, m laneMove) error
	// fenced runs update (an UPDATE ending in its WHERE clause, with named
	// arguments) only when the lane is still this dispatcher's and where m
	// says (m.pos), in one statement, and returns the rows it changed. On
	// PostgreSQL the fence also extends the lease and locks the lane's row
	// until the commit.
	fenced(tx *gorm.DB, m laneMove, update string, args map[string]any) (int64, error)
}

// laneKey names one lane: a subscriber's position in one partition.
type laneKey struct {
	sub  string
	part int
}

func (k laneKey) String() string { return k.sub + "/" + strconv.Itoa(k.part) }

// deliveryKey names one subscriber's delivery of one event.
type deliveryKey struct {
	eventID int64
	sub     string
}

// objectKey names the object an event is about.
type objectKey struct {
	aggType string
	aggID   int64
}

// laneAt is a lane with work and where it stands.
type laneAt struct {
	laneKey
	position int64
	mine     bool // this dispatcher holds the lane's lease
}

type surveyQuery struct {
	names   []string // the subscribers this dispatcher runs (and has registered)
	owner   string
	pending []string // PostgreSQL: the xids of the checkpoints not yet final
	// skipLanes: every lane of the subscribers runs here; the survey may
	// give last and due instead of lanes (PostgreSQL does).
	skipLanes bool
}

// surveyed is what a pass starts from.
type surveyed struct {
	seq       uint64          // the survey's number in this process (Dispatcher.surveys)
	visible   int64           // the highest event id visible
	writers   []string        // PostgreSQL: transactions holding a write lock on events, read after visible
	running   []string        // PostgreSQL: those of the checkpoints' transactions still running
	lanes     []laneAt        // lanes with events past their position up to visible, or a retry due, not leased by another
	nextRetry sql.NullFloat64 // seconds until the earliest retry of a subscriber run here
	// listed tells that lanes was read. When it was not (skipLanes), last
	// holds each partition's last event up to visible and due the lanes
	// with a retry due, for the lanes running here.
	listed bool
	last   map[int]int64
	due    map[laneKey]bool
	// replayed is the id of the last subscriber.replayed event: a replay
	// takes the leases of lanes that may be lingering here.
	replayed int64
	// final tells that every event up to visible has committed: the
	// database has one writer at a time (SQLite), whose ids commit in
	// order, so that writers and running are not read.
	final bool
}

type claimQuery struct {
	part         int
	subs         []string
	pos, horizon int64
	limit        int
	owner        string
	lease        time.Duration
}

// claimedLane is a lane this dispatcher now holds the lease of.
type claimedLane struct {
	sub  string
	open bool // some delivery of the lane is still open (retrying, held or failed)
	due  bool // some retry of the lane is due
}

type laneMove struct {
	key       laneKey
	owner     string
	pos, next int64
	batch     bool // record the batch (pos, next] for the subscriber
	release   bool
	lease     time.Duration
}

// names is a list argument that never is empty (IN () is not SQL).
func names(ns []string) []string {
	if len(ns) == 0 {
		return []string{""} // no subscriber has that name
	}
	return ns
}

func parseLanes(list string) ([]laneAt, error) {
	var out []laneAt
	for _, x := range splitList(list) {
		f := strings.Fields(x)
		if len(f) != 4 {
			return nil, fmt.Errorf("events: lane %q", x)
		}
		p, err1 := strconv.Atoi(f[1])
		pos, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("events: lane %q", x)
		}
		out = append(out, laneAt{laneKey{f[0], p}, pos, f[3] == "1"})
	}
	return out, nil
}

func parseClaimed(list string) ([]claimedLane, error) {
	var out []claimedLane
	for _, x := range splitList(list) {
		f := strings.Fields(x)
		if len(f) != 3 {
			return nil, fmt.Errorf("events: claimed lane %q", x)
		}
		out = append(out, claimedLane{sub: f[0], open: f[1] == "1" || f[1] == "true", due: f[2] == "1" || f[2] == "true"})
	}
	return out, nil
}

// parseLast reads "partition id" pairs.
func parseLast(list string) (map[int]int64, error) {
	out := map[int]int64{}
	for _, x := range splitList(list) {
		f := strings.Fields(x)
		if len(f) != 2 {
			return nil, fmt.Errorf("events: partition's last event %q", x)
		}
		p, err1 := strconv.Atoi(f[0])
		id, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("events: partition's last event %q", x)
		}
		out[p] = id
	}
	return out, nil
}

// parseDue reads "subscriber partition" pairs.
func parseDue(list string) (map[laneKey]bool, error) {
	out := map[laneKey]bool{}
	for _, x := range splitList(list) {
		f := strings.Fields(x)
		if len(f) != 2 {
			return nil, fmt.Errorf("events: lane with a retry due %q", x)
		}
		p, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, fmt.Errorf("events: lane with a retry due %q", x)
		}
		out[laneKey{f[0], p}] = true
	}
	return out, nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// eventColumns are the columns eventRow scans, in order.
const eventColumns = `e.id, e.type, e.aggregate_type, e.aggregate_id, e.payload, e.actor_id, e.actor_name, e.created_at,
  e.caused_by, e.correlation_id, e.traceparent, e.tracestate`

// readEvents scans events selected as eventColumns.
func readEvents(q *gorm.DB) ([]Event, error) {
	var out []Event
	err := scanEvents(q, nil, func(ev Event) { out = append(out, ev) })
	return out, err
}

// scanEvents scans rows of the columns extra, then eventColumns, and hands
// each row's event to add, the extra columns scanned into their
// destinations.
func scanEvents(q *gorm.DB, extra []any, add func(Event)) error {
	rows, err := q.Rows()
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	// One row and one list of its fields serve every row: Scan sets every
	// field (a NULL makes a Null* invalid), and a row per event would cost
	// the batch an allocation per event.
	var r eventRow
	dest := make([]any, 0, len(extra)+12)
	dest = append(append(dest, extra...), r.dest()...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		add(r.event())
	}
	return rows.Err()
}

// readBatch is the statement both dialects share (selectBatch).
func (sqlBase) readBatch(ctx context.Context, db *gorm.DB, part int, pos, horizon int64, limit int) ([]Event, error) {
	return selectBatch(ctx, db, part, pos, horizon, limit)
}

// selectBatch reads the next events of the partition after pos, up to the
// horizon. The range is written as row comparisons on (partition, id) so
// that only the events_partition_id index can serve it, in order: with
// "partition = ? AND id > ?" PostgreSQL prefers the primary key (well
// correlated with the table) and filters out the other partitions' events,
// reading sixteen times the batch.
func selectBatch(ctx context.Context, db *gorm.DB, part int, pos, horizon int64, limit int) ([]Event, error) {
	return readEvents(db.WithContext(ctx).Raw(`SELECT `+eventColumns+`
FROM events e WHERE (e.partition, e.id) > (?, ?) AND (e.partition, e.id) <= (?, ?) ORDER BY e.partition, e.id LIMIT ?`,
		part, pos, part, horizon, limit))
}

// eventRow scans the columns id, type, aggregate_type, aggregate_id,
// payload, actor_id, actor_name, created_at, caused_by, correlation_id,
// traceparent, tracestate; all may be NULL (the claim's
// outer join gives a row without an event when there is none to read).
type eventRow struct {
	id, aggID, actorID, causedBy         sql.NullInt64
	typ, aggType, actorName              sql.NullString
	correlation, traceparent, tracestate sql.NullString
	payload                              []byte
	createdAt                            nullTime
}

func (r *eventRow) dest() []any {
	return []any{&r.id, &r.typ, &r.aggType, &r.aggID, &r.payload, &r.actorID, &r.actorName, &r.createdAt,
		&r.causedBy, &r.correlation, &r.traceparent, &r.tracestate}
}

func (r *eventRow) event() Event {
	ev := Event{ID: r.id.Int64, Type: r.typ.String, AggregateType: r.aggType.String, AggregateID: r.aggID.Int64,
		Payload: r.payload, CreatedAt: r.createdAt.t.UTC(),
		CorrelationID: r.correlation.String, Traceparent: r.traceparent.String, Tracestate: r.tracestate.String}
	if r.actorID.Valid {
		ev.Actor = &Actor{ID: r.actorID.Int64, Name: r.actorName.String}
	}
	if r.causedBy.Valid {
		id := r.causedBy.Int64
		ev.CausedBy = &id
	}
	return ev
}

// lanesWithWorkSQL is the query of lanesWithWork, with events counted up to
// the SQL expression upto and the next event of a lane found by next (an
// expression over the lane l, true when it has one up to upto); it takes the
// named arguments @names and @owner.
func lanesWithWorkSQL(now, join, next string) string {
	return `SELECT l.subscriber, l.partition, l.position, CASE WHEN l.owner = @owner THEN 1 ELSE 0 END AS mine FROM events_lanes l` + join + `
WHERE l.subscriber IN @names AND (l.owner IS NULL OR l.owner = @owner OR l.lease_until < ` + now + `)
  AND (` + next + `
    OR EXISTS (SELECT 1 FROM events_deliveries r WHERE r.subscriber = l.subscriber AND r.partition = l.partition
      AND r.status = 'retrying' AND r.next_attempt_at <= ` + now + `))`
}

// claimUpdateSQL takes the leases of the lanes of @p at @pos named in @subs
// and returns, for each, whether it has open deliveries and a retry due.
func claimUpdateSQL(now, until string) string {
	return `UPDATE events_lanes SET owner = @owner, lease_until = ` + until + `
WHERE partition = @p AND subscriber IN @subs AND position = @pos AND (owner IS NULL OR owner = @owner OR lease_until < ` + now + `)
RETURNING subscriber,
  EXISTS (SELECT 1 FROM events_deliveries r WHERE r.partition = events_lanes.partition AND r.subscriber = events_lanes.subscriber
    AND r.status <> 'processed') AS open,
  EXISTS (SELECT 1 FROM events_deliveries r WHERE r.partition = events_lanes.partition AND r.subscriber = events_lanes.subscriber
    AND r.status = 'retrying' AND r.next_attempt_at <= ` + now + `) AS due`
}

// moveLaneSQL is the fence and move of moveLane.
func moveLaneSQL(set string) string {
	return `UPDATE events_lanes SET ` + set + `, position = @next
WHERE subscriber = @sub AND partition = @p AND owner = @owner AND position = @pos`
}

func moveArgs(m laneMove) map[string]any {
	return map[string]any{"sub": m.key.sub, "p": m.key.part, "pos": m.pos, "next": m.next, "first": m.pos + 1, "owner": m.owner}
}
