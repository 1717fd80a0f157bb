package events

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// Event statuses, as the journal shows them.
const (
	StatusPending   = "pending"   // not yet handled by every subscriber
	StatusProcessed = "processed" // handled by every subscriber (or none registered)
	StatusFailed    = "failed"    // a delivery gave up after its attempts; an admin may retry it
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
}

// Filter selects journal entries; zero fields do not filter.
type Filter struct {
	Type          string
	AggregateType string
	AggregateID   int64
	Status        string
	ActorID       int64
	Since, Until  time.Time // created_at >= Since, created_at < Until
}

// Journal answers questions about the event table.
type Journal struct {
	db  *gorm.DB
	reg *Registry
}

// NewJournal returns the journal over db, naming the registry's subscribers.
func NewJournal(db *gorm.DB, reg *Registry) *Journal { return &Journal{db: db, reg: reg} }

// coveringBatch is a SQL expression: the time e's batch was dispatched, or
// NULL. Batches of a partition are disjoint, so the first batch ending at or
// after e.id is the only candidate.
const coveringBatch = `(SELECT CASE WHEN b.first_id <= e.id THEN b.dispatched_at END FROM events_batches b
WHERE b.partition = e.partition AND b.last_id >= e.id ORDER BY b.last_id LIMIT 1)`

const (
	hasFailed = `EXISTS (SELECT 1 FROM events_deliveries d WHERE d.event_id = e.id AND d.status = 'failed')`
	hasOpen   = `EXISTS (SELECT 1 FROM events_deliveries d WHERE d.event_id = e.id AND d.status <> 'processed')`
)

// List returns the journal newest first, filtered, one page at a time.
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
	if !f.Since.IsZero() {
		where, args = append(where, "e.created_at >= ?"), append(args, f.Since.UTC())
	}
	if !f.Until.IsZero() {
		where, args = append(where, "e.created_at < ?"), append(args, f.Until.UTC())
	}
	switch f.Status {
	case "":
	case StatusFailed:
		where = append(where, hasFailed)
	case StatusProcessed:
		where = append(where, "NOT "+hasOpen, coveringBatch+" IS NOT NULL")
	case StatusPending:
		where = append(where, "NOT "+hasFailed, "("+hasOpen+" OR "+coveringBatch+" IS NULL)")
	default:
		return nil, "", apperr.Invalid("invalid query", apperr.Field("status", "must be pending, processed or failed"))
	}
	if pr.After != 0 {
		where, args = append(where, "e.id < ?"), append(args, pr.After)
	}
	q := "SELECT e.id FROM events e"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY e.id DESC LIMIT ?"
	args = append(args, pr.Limit+1)
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
// state and every subscriber's delivery.
func (j *Journal) entries(ctx context.Context, ids []int64) ([]Entry, error) {
	if len(ids) == 0 {
		return []Entry{}, nil
	}
	db := j.db.WithContext(ctx)
	rows, err := db.Raw(`SELECT e.id, e.type, e.aggregate_type, e.aggregate_id, e.payload, e.actor_id, e.actor_name, e.created_at,
e.partition, p.position, `+coveringBatch+` AS batch_at
FROM events e JOIN events_partitions p ON p.partition = e.partition WHERE e.id IN ?`, ids).Rows()
	if err != nil {
		return nil, err
	}
	type extra struct {
		position int64
		batchAt  *time.Time
	}
	byID := map[int64]*Entry{}
	extras := map[int64]extra{}
	func() {
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var (
				en        Entry
				payload   []byte
				actorID   sql.NullInt64
				actorName sql.NullString
				partition int
				position  int64
				batchAt   nullTime
			)
			if err = rows.Scan(&en.ID, &en.Type, &en.AggregateType, &en.AggregateID, &payload, &actorID, &actorName, &en.CreatedAt,
				&partition, &position, &batchAt); err != nil {
				return
			}
			en.Payload = payload
			en.CreatedAt = en.CreatedAt.UTC()
			if actorID.Valid {
				en.Actor = &Actor{ID: actorID.Int64, Name: actorName.String}
			}
			en.Object = Event{AggregateType: en.AggregateType, AggregateID: en.AggregateID}.Object()
			byID[en.ID] = &en
			extras[en.ID] = extra{position: position, batchAt: batchAt.ptr()}
		}
		err = rows.Err()
	}()
	if err != nil {
		return nil, err
	}
	recorded, err := j.recordedDeliveries(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(ids))
	for _, id := range ids {
		en, ok := byID[id]
		if !ok {
			continue
		}
		x := extras[id]
		j.derive(en, x.batchAt, recorded[id])
		out = append(out, *en)
	}
	return out, nil
}

// derive fills an entry's status, processed_at and deliveries from its batch
// (if it was dispatched) and its recorded deliveries (the exceptions).
func (j *Journal) derive(en *Entry, batchAt *time.Time, recorded map[string]Delivery) {
	subs := j.reg.SubscribersOf(en.Type)
	en.Deliveries = make([]Delivery, 0, len(subs))
	names := map[string]bool{}
	for _, s := range subs {
		names[s.Name] = true
		if d, ok := recorded[s.Name]; ok {
			en.Deliveries = append(en.Deliveries, d)
			continue
		}
		d := Delivery{Subscriber: s.Name, Status: StatusPending}
		if batchAt != nil {
			d.Status, d.Attempts, d.ProcessedAt = StatusProcessed, 1, batchAt
		}
		en.Deliveries = append(en.Deliveries, d)
	}
	// Deliveries of subscribers no longer registered stay visible.
	for name, d := range recorded {
		if !names[name] {
			en.Deliveries = append(en.Deliveries, d)
		}
	}
	en.Status = StatusProcessed
	last := batchAt
	if batchAt == nil {
		en.Status = StatusPending
	}
	for _, d := range recorded {
		switch d.Status {
		case StatusFailed:
			en.Status = StatusFailed
		case StatusProcessed:
			if d.ProcessedAt != nil && (last == nil || d.ProcessedAt.After(*last)) {
				last = d.ProcessedAt
			}
		default:
			if en.Status != StatusFailed {
				en.Status = StatusPending
			}
		}
	}
	if en.Status == StatusProcessed {
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
		out[id][d.Subscriber] = d
	}
	return out, rows.Err()
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
		res := tx.Exec(`UPDATE events_deliveries SET status = 'retrying', attempts = 0, next_attempt_at = `+database.Now(tx)+`,
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

// SubscriberStats is a subscriber's backlog and failures.
type SubscriberStats struct {
	Name          string     `json:"name"`
	Types         []string   `json:"types"`
	Description   string     `json:"description"`
	Local         bool       `json:"local"` // its effect commits with its delivery record (exactly once)
	Pending       int64      `json:"pending"`
	Retrying      int64      `json:"retrying"`
	Held          int64      `json:"held"`
	Failed        int64      `json:"failed"`
	OldestPending *time.Time `json:"oldest_pending_at" extensions:"x-nullable" format:"date-time"`
	LagSeconds    float64    `json:"lag_seconds"` // age of its oldest pending event
}

// Subscribers returns every registered subscriber with its lag and failures.
func (j *Journal) Subscribers(ctx context.Context) ([]SubscriberStats, error) {
	db := j.db.WithContext(ctx)
	var now time.Time
	if err := db.Raw("SELECT " + database.Now(db)).Scan((*dbTime)(&now)).Error; err != nil {
		return nil, err
	}
	out := make([]SubscriberStats, 0, len(j.reg.Subscribers()))
	for _, s := range j.reg.Subscribers() {
		st := SubscriberStats{Name: s.Name, Types: s.Types, Description: s.Description, Local: s.Local()}
		var unsent struct {
			N      int64
			Oldest nullTime
		}
		if err := db.Raw(`SELECT count(*) AS n, min(e.created_at) AS oldest FROM events e
JOIN events_partitions p ON p.partition = e.partition WHERE e.id > p.position AND e.type IN ?`, s.Types).Scan(&unsent).Error; err != nil {
			return nil, err
		}
		var recorded []struct {
			Status string
			N      int64
			Oldest nullTime
		}
		if err := db.Raw(`SELECT d.status, count(*) AS n, min(e.created_at) AS oldest FROM events_deliveries d JOIN events e ON e.id = d.event_id
WHERE d.subscriber = ? AND d.status <> 'processed' GROUP BY d.status`, s.Name).Scan(&recorded).Error; err != nil {
			return nil, err
		}
		st.Pending = unsent.N
		oldest := unsent.Oldest.ptr()
		for _, r := range recorded {
			switch r.Status {
			case statusRetrying:
				st.Retrying = r.N
			case statusHeld:
				st.Held = r.N
			case statusFailed:
				st.Failed = r.N
			}
			if o := r.Oldest.ptr(); o != nil && (oldest == nil || o.Before(*oldest)) {
				oldest = o
			}
		}
		st.OldestPending = oldest
		if oldest != nil {
			st.LagSeconds = max(0, now.Sub(*oldest).Seconds())
		}
		out = append(out, st)
	}
	return out, nil
}

// Summary is the size of the dispatcher's backlog.
type Summary struct {
	Pending int64     // events past their partition's position, plus open deliveries
	Oldest  time.Time // creation of the oldest of them; zero when none
}

func pendingSummary(ctx context.Context, db *gorm.DB) (Summary, error) {
	var a, b struct {
		N      int64
		Oldest nullTime
	}
	db = db.WithContext(ctx)
	if err := db.Raw(`SELECT count(*) AS n, min(e.created_at) AS oldest FROM events e
JOIN events_partitions p ON p.partition = e.partition WHERE e.id > p.position`).Scan(&a).Error; err != nil {
		return Summary{}, err
	}
	if err := db.Raw(`SELECT count(*) AS n, min(e.created_at) AS oldest FROM events_deliveries d JOIN events e ON e.id = d.event_id
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
