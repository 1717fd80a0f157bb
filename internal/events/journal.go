package events

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// Entry is one event of the journal with its derived state.
type Entry struct {
	ID            int64           `json:"id" example:"132"`
	Type          string          `json:"type" example:"order.received"`
	AggregateType string          `json:"aggregate_type" example:"sales_orders"`
	AggregateID   int64           `json:"aggregate_id" example:"22"`
	Object        string          `json:"object" example:"sales_orders #22"`
	Payload       json.RawMessage `json:"payload" swaggertype:"object"`
	Actor         *Actor          `json:"actor" extensions:"x-nullable"` // null for the system ("—")
	CreatedAt     time.Time       `json:"created_at" format:"date-time"`
	ProcessedAt   *time.Time      `json:"processed_at" extensions:"x-nullable" format:"date-time"`
	Status        string          `json:"status" enums:"pending,processed,failed"`
	Deliveries    []Delivery      `json:"deliveries"`
	// Cause, correlation and trace (see docs/journal.md, "Tracing and causes").
	CausedBy      *int64  `json:"caused_by" extensions:"x-nullable" example:"131"`                             // the event whose handling wrote it; null for a request's, a command's or the scheduler's
	CorrelationID *string `json:"correlation_id" extensions:"x-nullable" example:"NZ3QWRKPM5ZJ7DO7GRNXO6GHKS"` // the request's X-Request-Id (or a command's id) that set it going
	TraceID       *string `json:"trace_id" extensions:"x-nullable" example:"4bf92f3577b34da6a3ce929d0e0e4736"`
	Traceparent   *string `json:"traceparent" extensions:"x-nullable" example:"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"` // W3C trace context of the span that wrote it
	Tracestate    *string `json:"tracestate" extensions:"x-nullable"`
}

// Delivery is one subscriber's state of one event.
type Delivery struct {
	Subscriber    string     `json:"subscriber"`
	Status        string     `json:"status" enums:"pending,processed,retrying,held,failed"`
	Attempts      int        `json:"attempts"`
	LastError     string     `json:"last_error"`
	NextAttemptAt *time.Time `json:"next_attempt_at" extensions:"x-nullable" format:"date-time"`
	ProcessedAt   *time.Time `json:"processed_at" extensions:"x-nullable" format:"date-time"`
	BlockedBy     *int64     `json:"blocked_by" extensions:"x-nullable"` // a held delivery waits for this event's delivery
	// Failures are the delivery's failed attempts, oldest first: the latest
	// 20, kept after the delivery has succeeded.
	Failures []Failure `json:"failures"`
}

// Failure is one failed attempt of a delivery.
type Failure struct {
	At         time.Time `json:"at" format:"date-time"`
	Error      string    `json:"error"`
	HTTPStatus *int      `json:"http_status" extensions:"x-nullable"` // the other side's answer, when there was one
	// Spent is false for an answer asking for a delay (429 or 503 with
	// Retry-After) that put the next attempt off without spending one.
	Spent bool `json:"spent"`
}

// Filter selects journal entries; zero fields do not filter.
type Filter struct {
	Type          string
	AggregateType string
	AggregateID   int64
	Status        string
	ActorID       int64
	Since, Until  time.Time // created_at >= Since, created_at < Until

	// HideAggregateTypes leaves out the events about objects of these
	// tables (those a caller's role may not read).
	HideAggregateTypes []string
	// AfterID and UpToID, when not zero, bound the ids: id > AfterID, id <=
	// UpToID. Oldest lists oldest first (the page's cursor then moves up).
	AfterID, UpToID int64
	Oldest          bool
	CausedBy        int64 // events written by the handling of this event
	CorrelationID   string
}

// Journal answers questions about the event table.
type Journal struct {
	db  *gorm.DB
	reg *Registry
}

// NewJournal returns the journal over db, naming the registry's subscribers.
func NewJournal(db *gorm.DB, reg *Registry) *Journal { return &Journal{db: db, reg: reg} }

// waitedSubscriber is a subscriber the journal waits for: registered by a
// replica and not retired. Its lanes say from which event on it receives
// and how far it has come.
type waitedSubscriber struct {
	name     string
	types    map[string]bool
	typeList []string
}

type laneState struct {
	position, start int64
}

// subscribersOf returns the subscribers the journal waits for and their lanes.
func (j *Journal) subscribersOf(ctx context.Context) ([]waitedSubscriber, map[laneKey]laneState, error) {
	db := j.db.WithContext(ctx)
	var subs []struct {
		Name  string
		Types string
	}
	if err := db.Raw(`SELECT name, types FROM events_subscribers WHERE registered_at IS NOT NULL AND retired_at IS NULL ORDER BY id`).
		Scan(&subs).Error; err != nil {
		return nil, nil, err
	}
	out := make([]waitedSubscriber, 0, len(subs))
	inDB := map[string]bool{}
	for _, s := range subs {
		w := waitedSubscriber{name: s.Name, types: map[string]bool{}}
		if err := json.Unmarshal([]byte(s.Types), &w.typeList); err != nil {
			return nil, nil, fmt.Errorf("events: subscriber %s: types: %w", s.Name, err)
		}
		for _, t := range w.typeList {
			w.types[t] = true
		}
		out = append(out, w)
		inDB[s.Name] = true
	}
	// This process's own subscribers are waited for before a dispatcher has
	// registered them (they have no lanes yet): the journal does not call
	// an event processed that a subscriber it runs has not seen.
	if j.reg != nil {
		for _, s := range j.reg.Subscribers() {
			if inDB[s.Name] {
				continue
			}
			w := waitedSubscriber{name: s.Name, types: map[string]bool{}, typeList: s.Types}
			for _, t := range s.Types {
				w.types[t] = true
			}
			out = append(out, w)
		}
	}
	var lanes []struct {
		Subscriber    string
		Partition     int
		Position      int64
		StartPosition int64
	}
	if err := db.Raw(`SELECT subscriber, partition, position, start_position FROM events_lanes`).Scan(&lanes).Error; err != nil {
		return nil, nil, err
	}
	lm := make(map[laneKey]laneState, len(lanes))
	for _, l := range lanes {
		lm[laneKey{l.Subscriber, l.Partition}] = laneState{position: l.Position, start: l.StartPosition}
	}
	return out, lm, nil
}

// List returns the journal newest first (or oldest first, f.Oldest),
// filtered, one page at a time.
// It returns EINVALID for an unknown status.
func (j *Journal) List(ctx context.Context, f Filter, pr page.Request) ([]Entry, string, error) {
	var where []string
	var args []any
	if f.Type != "" {
		where, args = append(where, "e.type = ?"), append(args, f.Type)
	}
	if f.AggregateType != "" {
		where, args = append(where, "e.aggregate_type = ?"), append(args, f.AggregateType)
	}
	if f.AggregateID != 0 {
		where, args = append(where, "e.aggregate_id = ?"), append(args, f.AggregateID)
	}
	if f.ActorID != 0 {
		where, args = append(where, "e.actor_id = ?"), append(args, f.ActorID)
	}
	if len(f.HideAggregateTypes) > 0 {
		where, args = append(where, "e.aggregate_type NOT IN ?"), append(args, f.HideAggregateTypes)
	}
	if f.AfterID != 0 {
		where, args = append(where, "e.id > ?"), append(args, f.AfterID)
	}
	if f.UpToID != 0 {
		where, args = append(where, "e.id <= ?"), append(args, f.UpToID)
	}
	if f.CausedBy != 0 {
		if err := j.mustExist(ctx, "caused_by", f.CausedBy); err != nil {
			return nil, "", err
		}
		where, args = append(where, "e.caused_by = ?"), append(args, f.CausedBy)
	}
	if f.CorrelationID != "" {
		where, args = append(where, "e.correlation_id = ?"), append(args, f.CorrelationID)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "e.created_at >= ?"), append(args, database.TimeArg(j.db, f.Since))
	}
	if !f.Until.IsZero() {
		where, args = append(where, "e.created_at < ?"), append(args, database.TimeArg(j.db, f.Until))
	}
	var join strings.Builder
	var joinArgs []any
	switch f.Status {
	case "":
	case StatusFailed, StatusProcessed, StatusPending:
		subs, _, err := j.subscribersOf(ctx)
		if err != nil {
			return nil, "", err
		}
		// An event is failed when a delivery of a subscriber it waits for
		// is; pending when one of them has not reached it yet (its lane is
		// behind the event) or retries or holds it.
		failed := "1 = 0"
		var pending []string
		if len(subs) > 0 {
			ns := make([]string, len(subs))
			for i, s := range subs {
				ns[i] = s.name
			}
			failed = "EXISTS (SELECT 1 FROM events_deliveries d WHERE d.event_id = e.id AND d.status = 'failed' AND d.subscriber IN ?)"
			if f.Status == StatusFailed {
				args = append(args, ns)
			}
		}
		for i, s := range subs {
			l := fmt.Sprintf("l%d", i)
			fmt.Fprintf(&join, " LEFT JOIN events_lanes %s ON %s.subscriber = ? AND %s.partition = e.partition", l, l, l)
			joinArgs = append(joinArgs, s.name)
			// A subscriber without lanes (not registered yet) has reached nothing.
			pending = append(pending, `(e.type IN ? AND e.id > coalesce(`+l+`.start_position, -1) AND (e.id > coalesce(`+l+`.position, -1)
  OR EXISTS (SELECT 1 FROM events_deliveries d WHERE d.event_id = e.id AND d.subscriber = ? AND d.status IN ('retrying', 'held'))))`)
		}
		anyPending := "1 = 0"
		if len(pending) > 0 {
			anyPending = "(" + strings.Join(pending, " OR ") + ")"
		}
		var pendArgs []any
		for _, s := range subs {
			pendArgs = append(pendArgs, s.typeList, s.name)
		}
		nsArgs := func() []any {
			if len(subs) == 0 {
				return nil
			}
			ns := make([]string, len(subs))
			for i, s := range subs {
				ns[i] = s.name
			}
			return []any{ns}
		}
		switch f.Status {
		case StatusFailed:
			where = append(where, failed)
		case StatusProcessed:
			where = append(where, "NOT "+failed, "NOT "+anyPending)
			args = append(append(args, nsArgs()...), pendArgs...)
		case StatusPending:
			where = append(where, "NOT "+failed, anyPending)
			args = append(append(args, nsArgs()...), pendArgs...)
		}
	default:
		return nil, "", apperr.Invalid("invalid query", apperr.Field("status", "must be pending, processed or failed"))
	}
	cmp, order := "<", "DESC"
	if f.Oldest {
		cmp, order = ">", "ASC"
	}
	if pr.After != 0 {
		where, args = append(where, "e.id "+cmp+" ?"), append(args, pr.After)
	}
	q := "SELECT e.id FROM events e" + join.String()
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY e.id " + order + " LIMIT ?"
	args = append(append(joinArgs, args...), pr.Limit+1)
	var ids []int64
	if err := j.db.WithContext(ctx).Raw(q, args...).Scan(&ids).Error; err != nil {
		return nil, "", err
	}
	ids, next := page.Next(ids, pr.Limit, func(id int64) int64 { return id })
	entries, err := j.entries(ctx, ids)
	return entries, next, err
}

// Get returns one event with its deliveries, or ENOTFOUND.
func (j *Journal) Get(ctx context.Context, id int64) (Entry, error) {
	entries, err := j.entries(ctx, []int64{id})
	if err != nil {
		return Entry{}, err
	}
	if len(entries) == 0 {
		return Entry{}, apperr.NotFound("event %d does not exist", id)
	}
	return entries[0], nil
}

// entries loads the events with the ids, in the order given, with their
// state and the delivery of every subscriber they wait for.
func (j *Journal) entries(ctx context.Context, ids []int64) ([]Entry, error) {
	if len(ids) == 0 {
		return []Entry{}, nil
	}
	db := j.db.WithContext(ctx)
	rows, err := db.Raw(`SELECT `+eventColumns+`, e.partition FROM events e WHERE e.id IN ?`, ids).Rows()
	if err != nil {
		return nil, err
	}
	byID := map[int64]*Entry{}
	parts := map[int64]int{}
	func() {
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var r eventRow
			var part int
			if err = rows.Scan(append(r.dest(), &part)...); err != nil {
				return
			}
			ev := r.event()
			byID[ev.ID] = &Entry{ID: ev.ID, Type: ev.Type, AggregateType: ev.AggregateType, AggregateID: ev.AggregateID,
				Object: ev.Object(), Payload: ev.Payload, Actor: ev.Actor, CreatedAt: ev.CreatedAt}
			withOrigin(byID[ev.ID], ev)
			parts[ev.ID] = part
		}
		err = rows.Err()
	}()
	if err != nil {
		return nil, err
	}
	subs, lanes, err := j.subscribersOf(ctx)
	if err != nil {
		return nil, err
	}
	recorded, err := j.recordedDeliveries(ctx, ids)
	if err != nil {
		return nil, err
	}
	// The deliveries that the lanes' positions say are done: their time is
	// that of the batch that moved the lane past the event.
	var done []deliveryAt
	for _, id := range ids {
		en, ok := byID[id]
		if !ok {
			continue
		}
		for _, s := range subs {
			l, ok := lanes[laneKey{s.name, parts[id]}]
			if !ok || !s.types[en.Type] || id <= l.start || id > l.position {
				continue
			}
			if _, rec := recorded[id][s.name]; !rec {
				done = append(done, deliveryAt{eventID: id, part: parts[id], sub: s.name})
			}
		}
	}
	if err := j.batchTimes(ctx, done); err != nil {
		return nil, err
	}
	times := map[deliveryKey]*time.Time{}
	for _, d := range done {
		times[deliveryKey{d.eventID, d.sub}] = d.at
	}
	out := make([]Entry, 0, len(ids))
	for _, id := range ids {
		en, ok := byID[id]
		if !ok {
			continue
		}
		derive(en, parts[id], subs, lanes, recorded[id], times)
		out = append(out, *en)
	}
	return out, nil
}

// deliveryAt is a delivery done by a lane's batch, and when.
type deliveryAt struct {
	eventID int64
	part    int
	sub     string
	at      *time.Time
}

// batchTimes finds the time of each delivery's batch: the subscriber's own
// batch covering the event; or else, once compaction has removed that, the
// time written on the event (settled_at); or else a batch from before lanes,
// which covered it for every subscriber. A subscriber's batches in a
// partition are disjoint, so the first ending at or after the event is the
// only candidate.
func (j *Journal) batchTimes(ctx context.Context, ds []deliveryAt) error {
	const chunk = 200
	for len(ds) > 0 {
		n := min(chunk, len(ds))
		part := ds[:n]
		ds = ds[n:]
		var values []string
		var args []any
		for _, d := range part {
			values = append(values, "(CAST(? AS bigint), CAST(? AS integer), CAST(? AS text))")
			args = append(args, d.eventID, d.part, d.sub)
		}
		covering := func(sub string) string {
			return `(SELECT CASE WHEN b.first_id <= x.eid THEN b.dispatched_at END FROM events_batches b
WHERE b.partition = x.part AND b.subscriber = ` + sub + ` AND b.last_id >= x.eid ORDER BY b.last_id LIMIT 1)`
		}
		rows, err := j.db.WithContext(ctx).Raw(`WITH x(eid, part, sub) AS (VALUES `+strings.Join(values, ", ")+`)
SELECT x.eid, x.sub, `+covering("x.sub")+` AS own, coalesce((SELECT e.settled_at FROM events e WHERE e.id = x.eid), `+covering("''")+`) AS shared
FROM x`, args...).Rows()
		if err != nil {
			return err
		}
		at := map[deliveryKey]*time.Time{}
		for rows.Next() {
			var (
				k           deliveryKey
				own, shared nullTime
			)
			if err := rows.Scan(&k.eventID, &k.sub, &own, &shared); err != nil {
				_ = rows.Close()
				return err
			}
			if t := own.ptr(); t != nil {
				at[k] = t
			} else {
				at[k] = shared.ptr()
			}
		}
		_ = rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i := range part {
			part[i].at = at[deliveryKey{part[i].eventID, part[i].sub}]
		}
	}
	return nil
}

// derive fills an entry's status, processed_at and deliveries: for each
// subscriber it waits for, the recorded delivery if there is one, else
// processed when the subscriber's lane has passed the event, else pending.
// An event that no subscriber waits for is processed when it is created.
func derive(en *Entry, part int, subs []waitedSubscriber, lanes map[laneKey]laneState, recorded map[string]Delivery, times map[deliveryKey]*time.Time) {
	en.Deliveries = []Delivery{}
	en.Status = StatusProcessed
	var last *time.Time
	waited := map[string]bool{}
	for _, s := range subs {
		l, ok := lanes[laneKey{s.name, part}]
		if !ok {
			l = laneState{position: -1, start: -1} // not registered yet: it has reached nothing
		}
		if !s.types[en.Type] || en.ID <= l.start {
			continue
		}
		waited[s.name] = true
		d, rec := recorded[s.name]
		switch {
		case rec:
		case en.ID <= l.position:
			d = Delivery{Subscriber: s.name, Status: StatusProcessed, Attempts: 1, ProcessedAt: times[deliveryKey{en.ID, s.name}], Failures: []Failure{}}
		default:
			d = Delivery{Subscriber: s.name, Status: StatusPending, Failures: []Failure{}}
		}
		en.Deliveries = append(en.Deliveries, d)
		switch d.Status {
		case StatusFailed:
			en.Status = StatusFailed
		case StatusProcessed:
			if t := d.ProcessedAt; t != nil && (last == nil || t.After(*last)) {
				last = t
			}
		default:
			if en.Status != StatusFailed {
				en.Status = StatusPending
			}
		}
	}
	// Deliveries of subscribers no longer waited for (retired, or not run
	// since lanes came) stay visible, without a say in the status.
	var others []string
	for name := range recorded {
		if !waited[name] {
			others = append(others, name)
		}
	}
	sort.Strings(others)
	for _, name := range others {
		en.Deliveries = append(en.Deliveries, recorded[name])
	}
	if en.Status == StatusProcessed {
		if last == nil || last.Before(en.CreatedAt) {
			t := en.CreatedAt
			last = &t
		}
		en.ProcessedAt = last
	}
}

func (j *Journal) recordedDeliveries(ctx context.Context, ids []int64) (map[int64]map[string]Delivery, error) {
	rows, err := j.db.WithContext(ctx).Raw(`SELECT event_id, subscriber, status, attempts, last_error, next_attempt_at, processed_at, blocked_by
FROM events_deliveries WHERE event_id IN ?`, ids).Rows()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := map[int64]map[string]Delivery{}
	for rows.Next() {
		var (
			id         int64
			d          Delivery
			next, done nullTime
			blockedBy  sql.NullInt64
		)
		if err := rows.Scan(&id, &d.Subscriber, &d.Status, &d.Attempts, &d.LastError, &next, &done, &blockedBy); err != nil {
			return nil, err
		}
		d.NextAttemptAt, d.ProcessedAt = next.ptr(), done.ptr()
		if blockedBy.Valid {
			d.BlockedBy = &blockedBy.Int64
		}
		if out[id] == nil {
			out[id] = map[string]Delivery{}
		}
		d.Failures = []Failure{}
		out[id][d.Subscriber] = d
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return out, nil
	}
	return out, j.failures(ctx, ids, out)
}

// failures adds their failures to the recorded deliveries of the events ids.
func (j *Journal) failures(ctx context.Context, ids []int64, recorded map[int64]map[string]Delivery) error {
	rows, err := j.db.WithContext(ctx).Raw(`SELECT event_id, subscriber, failed_at, error, http_status, spent
FROM events_delivery_failures WHERE event_id IN ? ORDER BY event_id, subscriber, seq`, ids).Rows()
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var (
			id     int64
			sub    string
			at     nullTime
			f      Failure
			status sql.NullInt64
		)
		if err := rows.Scan(&id, &sub, &at, &f.Error, &status, &f.Spent); err != nil {
			return err
		}
		f.At = at.t
		if status.Valid {
			n := int(status.Int64)
			f.HTTPStatus = &n
		}
		if d, ok := recorded[id][sub]; ok {
			d.Failures = append(d.Failures, f)
			recorded[id][sub] = d
		}
	}
	return rows.Err()
}

// Retry re-queues the event's failed deliveries for an immediate attempt and
// returns how many. It returns ENOTFOUND for an unknown event and ECONFLICT
// when the event has no failed delivery.
func (j *Journal) Retry(ctx context.Context, id int64) (int, error) {
	var n int64
	err := j.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var exists int64
		if err := tx.Raw("SELECT count(*) FROM events WHERE id = ?", id).Scan(&exists).Error; err != nil {
			return err
		}
		if exists == 0 {
			return apperr.NotFound("event %d does not exist", id)
		}
		res := tx.Exec(`UPDATE events_deliveries SET status = 'retrying', attempts = 0, deferred_ms = 0, next_attempt_at = `+database.Now(tx)+`,
updated_at = `+database.Now(tx)+` WHERE event_id = ? AND status = 'failed'`, id)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return apperr.Conflict("event %d has no failed delivery to retry", id)
		}
		n = res.RowsAffected
		return nil
	})
	return int(n), err
}

// Summary is the size of the dispatcher's backlog.
type Summary struct {
	Pending int64     // events past the slowest waited-for lane of their partition, plus open deliveries
	Oldest  time.Time // creation of the oldest of them; zero when none
}

func pendingSummary(ctx context.Context, db *gorm.DB) (Summary, error) {
	var a, b struct {
		N      int64
		Oldest nullTime
	}
	db = db.WithContext(ctx)
	if err := db.Raw(`SELECT count(*) AS n, min(e.created_at) AS oldest FROM events e
JOIN (SELECT l.partition, min(l.position) AS position FROM events_lanes l
  JOIN events_subscribers s ON s.name = l.subscriber AND s.registered_at IS NOT NULL AND s.retired_at IS NULL
  GROUP BY l.partition) p ON p.partition = e.partition
WHERE e.id > p.position`).Scan(&a).Error; err != nil {
		return Summary{}, err
	}
	if err := db.Raw(`SELECT count(*) AS n, min(e.created_at) AS oldest FROM events_deliveries d JOIN events e ON e.id = d.event_id
JOIN events_subscribers s ON s.name = d.subscriber AND s.registered_at IS NOT NULL AND s.retired_at IS NULL
WHERE d.status <> 'processed'`).Scan(&b).Error; err != nil {
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

// Pending returns the size of the dispatcher's backlog.
func (j *Journal) Pending(ctx context.Context) (Summary, error) { return pendingSummary(ctx, j.db) }

// nullTime scans a nullable time that SQLite may hand over as text.
type nullTime struct {
	t     time.Time
	valid bool
}

func (n *nullTime) Scan(src any) error {
	if src == nil {
		*n = nullTime{}
		return nil
	}
	var t dbTime
	if err := t.Scan(src); err != nil {
		return err
	}
	*n = nullTime{t: time.Time(t), valid: true}
	return nil
}

// Value implements driver.Valuer, which lets GORM scan into it.
func (n nullTime) Value() (driver.Value, error) {
	if !n.valid {
		return nil, nil
	}
	return n.t, nil
}

func (n nullTime) ptr() *time.Time {
	if !n.valid {
		return nil
	}
	t := n.t.UTC()
	return &t
}

// dbTime scans a time from either dialect: PostgreSQL hands over time.Time;
// SQLite hands over time.Time for declared DATETIME columns and text for
// computed expressions.
type dbTime time.Time

var timeLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00"}

func (t *dbTime) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		*t = dbTime(v.UTC())
		return nil
	case string:
		return t.parse(v)
	case []byte:
		return t.parse(string(v))
	}
	return errors.New("events: cannot scan time")
}

func (t *dbTime) parse(s string) error {
	for _, l := range timeLayouts {
		if p, err := time.Parse(l, s); err == nil {
			*t = dbTime(p.UTC())
			return nil
		}
	}
	return errors.New("events: bad time " + s)
}

// Objects names objects of one table (aggregate type) by their ids.
type Objects struct {
	AggregateType string
	IDs           []int64
}

// History returns every event about the objects, oldest first, one page at a
// time (the cursor names the last event of the previous page): an object's
// story in the order it happened.
func (j *Journal) History(ctx context.Context, objs []Objects, pr page.Request) ([]Entry, string, error) {
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
		return []Entry{}, "", nil
	}
	q := "SELECT e.id FROM events e WHERE (" + strings.Join(about, " OR ") + ")"
	if pr.After != 0 {
		q, args = q+" AND e.id > ?", append(args, pr.After)
	}
	q, args = q+" ORDER BY e.id LIMIT ?", append(args, pr.Limit+1)
	var ids []int64
	if err := j.db.WithContext(ctx).Raw(q, args...).Scan(&ids).Error; err != nil {
		return nil, "", err
	}
	ids, next := page.Next(ids, pr.Limit, func(id int64) int64 { return id })
	entries, err := j.entries(ctx, ids)
	return entries, next, err
}
