package events

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/apperr"
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
	drv driver
	reg *Registry
}

// NewJournal returns the journal over db, naming the registry's subscribers.
func NewJournal(db *gorm.DB, reg *Registry) *Journal {
	return &Journal{db: db, drv: driverFor(db), reg: reg}
}

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

func newWaitedSubscriber(name string, types []string) waitedSubscriber {
	w := waitedSubscriber{name: name, types: make(map[string]bool, len(types)), typeList: types}
	for _, t := range types {
		w.types[t] = true
	}
	return w
}

// subscribersOf returns the subscribers the journal waits for and their lanes.
func (j *Journal) subscribersOf(ctx context.Context) ([]waitedSubscriber, map[laneKey]laneState, error) {
	subs, err := j.drv.waitedSubscribers(ctx, j.db)
	if err != nil {
		return nil, nil, err
	}
	subs = j.withOwnSubscribers(subs)
	lanes, err := j.drv.laneStates(ctx, j.db)
	if err != nil {
		return nil, nil, err
	}
	return subs, lanes, nil
}

// withOwnSubscribers adds this process's own subscribers that no replica
// has registered yet: the journal waits for them before a dispatcher has
// registered them (they have no lanes yet), so that it does not call an
// event processed that a subscriber it runs has not seen.
func (j *Journal) withOwnSubscribers(subs []waitedSubscriber) []waitedSubscriber {
	if j.reg == nil {
		return subs
	}
	inDB := make(map[string]bool, len(subs))
	for _, s := range subs {
		inDB[s.name] = true
	}
	for _, s := range j.reg.Subscribers() {
		if !inDB[s.Name] {
			subs = append(subs, newWaitedSubscriber(s.Name, s.Types))
		}
	}
	return subs
}

// List returns the journal newest first (or oldest first, f.Oldest),
// filtered, one page at a time.
// It returns EINVALID for an unknown status and for a cause that is no event.
func (j *Journal) List(ctx context.Context, f Filter, pr page.Request) ([]Entry, string, error) {
	q, err := j.listQuery(ctx, f, pr)
	if err != nil {
		return nil, "", err
	}
	ids, err := j.drv.listIDs(ctx, j.db, q)
	if err != nil {
		return nil, "", err
	}
	return j.page(ctx, ids, pr)
}

// listQuery checks the filter and gathers what its status needs: the
// subscribers the journal waits for.
func (j *Journal) listQuery(ctx context.Context, f Filter, pr page.Request) (listQuery, error) {
	q := listQuery{Filter: f, after: pr.After, limit: pr.Limit + 1}
	if f.CausedBy != 0 {
		if err := j.mustExist(ctx, "caused_by", f.CausedBy); err != nil {
			return q, err
		}
	}
	switch f.Status {
	case "":
	case StatusFailed, StatusProcessed, StatusPending:
		subs, _, err := j.subscribersOf(ctx)
		if err != nil {
			return q, err
		}
		q.subs = subs
	default:
		return q, apperr.Invalid("invalid query", apperr.Field("status", "must be pending, processed or failed"))
	}
	return q, nil
}

// page loads the entries of one page of ids (one more than the page's
// limit, to tell whether there is a next) and the next page's cursor.
func (j *Journal) page(ctx context.Context, ids []int64, pr page.Request) ([]Entry, string, error) {
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
	evs, parts, err := j.drv.eventsWithPartition(ctx, j.db, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*Entry, len(evs))
	for _, ev := range evs {
		byID[ev.ID] = newEntry(ev)
	}
	subs, lanes, err := j.subscribersOf(ctx)
	if err != nil {
		return nil, err
	}
	recorded, err := j.recordedDeliveries(ctx, ids)
	if err != nil {
		return nil, err
	}
	ds := deliveriesToTime(ids, byID, parts, subs, lanes, recorded)
	if err := j.drv.processedAt(ctx, j.db, ds); err != nil {
		return nil, err
	}
	times := make(map[deliveryKey]*time.Time, len(ds))
	for _, d := range ds {
		times[deliveryKey{d.eventID, d.sub}] = d.at
	}
	for id, byName := range recorded {
		for name, d := range byName {
			d.ProcessedAt = times[deliveryKey{id, name}]
			byName[name] = d
		}
	}
	out := make([]Entry, 0, len(ids))
	for _, id := range ids {
		if en, ok := byID[id]; ok {
			derive(en, parts[id], subs, lanes, recorded[id], times)
			out = append(out, *en)
		}
	}
	return out, nil
}

// newEntry is the journal's entry of the event, without its state.
func newEntry(ev Event) *Entry {
	en := &Entry{ID: ev.ID, Type: ev.Type, AggregateType: ev.AggregateType, AggregateID: ev.AggregateID,
		Object: ev.Object(), Payload: ev.Payload, Actor: ev.Actor, CreatedAt: ev.CreatedAt}
	withOrigin(en, ev)
	return en
}

// deliveriesToTime lists the deliveries whose processed_at the entries
// show: every recorded one, and each one that a lane's position says is
// done (the subscriber waits for the event and its lane has passed it).
func deliveriesToTime(ids []int64, byID map[int64]*Entry, parts map[int64]int, subs []waitedSubscriber,
	lanes map[laneKey]laneState, recorded map[int64]map[string]Delivery) []deliveryAt {
	var ds []deliveryAt
	for _, id := range ids {
		en, ok := byID[id]
		if !ok {
			continue
		}
		for name := range recorded[id] {
			ds = append(ds, deliveryAt{eventID: id, part: parts[id], sub: name})
		}
		for _, s := range subs {
			l, ok := lanes[laneKey{s.name, parts[id]}]
			if !ok || !s.types[en.Type] || id <= l.start || id > l.position {
				continue
			}
			if _, rec := recorded[id][s.name]; !rec {
				ds = append(ds, deliveryAt{eventID: id, part: parts[id], sub: s.name})
			}
		}
	}
	return ds
}

// deliveryAt is a delivery and its processed_at (see sqlBase.processedAt).
type deliveryAt struct {
	eventID int64
	part    int
	sub     string
	at      *time.Time
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
		d, ok := waitedDelivery(en, s, part, lanes, recorded, times)
		if !ok {
			continue
		}
		waited[s.name] = true
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
	en.Deliveries = append(en.Deliveries, unwaited(recorded, waited)...)
	if en.Status == StatusProcessed {
		if last == nil || last.Before(en.CreatedAt) {
			t := en.CreatedAt
			last = &t
		}
		en.ProcessedAt = last
	}
}

// waitedDelivery is the subscriber's delivery of the entry's event; false
// when the subscriber does not wait for the event (not of its types, or
// from before its lane started).
func waitedDelivery(en *Entry, s waitedSubscriber, part int, lanes map[laneKey]laneState,
	recorded map[string]Delivery, times map[deliveryKey]*time.Time) (Delivery, bool) {
	l, ok := lanes[laneKey{s.name, part}]
	if !ok {
		l = laneState{position: -1, start: -1} // not registered yet: it has reached nothing
	}
	if !s.types[en.Type] || en.ID <= l.start {
		return Delivery{}, false
	}
	if d, rec := recorded[s.name]; rec {
		return d, true
	}
	if en.ID <= l.position {
		return Delivery{Subscriber: s.name, Status: StatusProcessed, Attempts: 1, ProcessedAt: times[deliveryKey{en.ID, s.name}], Failures: []Failure{}}, true
	}
	return Delivery{Subscriber: s.name, Status: StatusPending, Failures: []Failure{}}, true
}

// unwaited are the recorded deliveries of subscribers no longer waited for
// (retired, or not run since lanes came), by name: they stay visible,
// without a say in the status.
func unwaited(recorded map[string]Delivery, waited map[string]bool) []Delivery {
	var others []string
	for name := range recorded {
		if !waited[name] {
			others = append(others, name)
		}
	}
	sort.Strings(others)
	out := make([]Delivery, 0, len(others))
	for _, name := range others {
		out = append(out, recorded[name])
	}
	return out
}

// recordedDeliveries reads the recorded deliveries of the events ids with
// their failures.
func (j *Journal) recordedDeliveries(ctx context.Context, ids []int64) (map[int64]map[string]Delivery, error) {
	out, err := j.drv.deliveries(ctx, j.db, ids)
	if err != nil || len(out) == 0 {
		return out, err
	}
	fs, err := j.drv.failures(ctx, j.db, ids)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		if d, ok := out[f.eventID][f.sub]; ok {
			d.Failures = append(d.Failures, f.Failure)
			out[f.eventID][f.sub] = d
		}
	}
	return out, nil
}

// Retry re-queues the event's failed deliveries for an immediate attempt and
// returns how many. It returns ENOTFOUND for an unknown event and ECONFLICT
// when the event has no failed delivery.
func (j *Journal) Retry(ctx context.Context, id int64) (int, error) {
	var n int64
	err := j.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		exists, err := j.drv.eventExists(ctx, tx, id)
		if err != nil {
			return err
		}
		if !exists {
			return apperr.NotFound("event %d does not exist", id)
		}
		if n, err = j.drv.retryFailed(ctx, tx, id); err != nil {
			return err
		}
		if n == 0 {
			return apperr.Conflict("event %d has no failed delivery to retry", id)
		}
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
	return driverFor(db).backlog(ctx, db)
}

// Pending returns the size of the dispatcher's backlog.
func (j *Journal) Pending(ctx context.Context) (Summary, error) { return j.drv.backlog(ctx, j.db) }

// Objects names objects of one table (aggregate type) by their ids.
type Objects struct {
	AggregateType string
	IDs           []int64
}

// History returns every event about the objects, oldest first, one page at a
// time (the cursor names the last event of the previous page): an object's
// story in the order it happened.
func (j *Journal) History(ctx context.Context, objs []Objects, pr page.Request) ([]Entry, string, error) {
	ids, err := j.drv.historyIDs(ctx, j.db, objs, pr.After, pr.Limit+1)
	if err != nil {
		return nil, "", err
	}
	return j.page(ctx, ids, pr)
}
