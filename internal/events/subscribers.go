package events

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// SubscriberStats is a subscriber as operators see it: its lanes, the
// replicas that run it, its backlog and failures.
type SubscriberStats struct {
	Name          string        `json:"name" example:"sales.shop-callback"`
	Types         []string      `json:"types"`
	Description   string        `json:"description"`
	Local         bool          `json:"local"`      // its effect commits with its delivery record (exactly once)
	Replayable    bool          `json:"replayable"` // an admin may replay the journal to it
	Status        string        `json:"status" enums:"active,waiting,retired"`
	RegisteredAt  *time.Time    `json:"registered_at" extensions:"x-nullable" format:"date-time"`
	RetiredAt     *time.Time    `json:"retired_at" extensions:"x-nullable" format:"date-time"`
	Pending       int64         `json:"pending"` // its events past its lanes' positions
	Retrying      int64         `json:"retrying"`
	Held          int64         `json:"held"`
	Failed        int64         `json:"failed"`
	OldestPending *time.Time    `json:"oldest_pending_at" extensions:"x-nullable" format:"date-time"`
	LagSeconds    float64       `json:"lag_seconds"` // age of its oldest pending event
	Lanes         []LaneStats   `json:"lanes"`
	Replicas      []ReplicaSeen `json:"replicas"`
}

// LaneStats is one of a subscriber's lanes: its position in a partition.
type LaneStats struct {
	Partition  int        `json:"partition"`
	Position   int64      `json:"position"`                      // the last event id of the partition it has passed
	LagEvents  int64      `json:"lag_events"`                    // its events of the partition past the position
	LagSeconds float64    `json:"lag_seconds"`                   // age of the oldest of them
	Owner      *string    `json:"owner" extensions:"x-nullable"` // the replica holding the lane's lease
	LeaseUntil *time.Time `json:"lease_until" extensions:"x-nullable" format:"date-time"`
}

// ReplicaSeen is a replica that ran the subscriber, and when last.
type ReplicaSeen struct {
	Replica string    `json:"replica"`
	SeenAt  time.Time `json:"seen_at" format:"date-time"`
}

type subscriberRow struct {
	ID           int64
	Name         string
	Types        string
	Description  string
	Local        bool
	Replayable   bool
	RegisteredAt nullTime
	RetiredAt    nullTime
}

// Subscribers returns every subscriber a replica has run, the retired ones
// included, with its lanes, replicas, backlog and failures. A subscriber
// known from before lanes that no replica has run since is left out.
func (j *Journal) Subscribers(ctx context.Context) ([]SubscriberStats, error) {
	now, err := j.drv.clock(ctx, j.db)
	if err != nil {
		return nil, err
	}
	rows, err := j.drv.registeredSubscribers(ctx, j.db, "")
	if err != nil {
		return nil, err
	}
	out := make([]SubscriberStats, 0, len(rows))
	for _, r := range rows {
		st, err := j.subscriberStats(ctx, r, now)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// subscriberStats gathers one subscriber's stats in three steps: its lanes'
// backlog, its open deliveries and its replicas.
func (j *Journal) subscriberStats(ctx context.Context, r subscriberRow, now time.Time) (SubscriberStats, error) {
	st := SubscriberStats{Name: r.Name, Description: r.Description, Local: r.Local, Replayable: r.Replayable,
		RegisteredAt: r.RegisteredAt.ptr(), RetiredAt: r.RetiredAt.ptr(), Lanes: []LaneStats{}, Replicas: []ReplicaSeen{}}
	if err := json.Unmarshal([]byte(r.Types), &st.Types); err != nil {
		return st, fmt.Errorf("events: subscriber %s: types: %w", r.Name, err)
	}
	var oldest *time.Time
	older := func(t *time.Time) {
		if t != nil && (oldest == nil || t.Before(*oldest)) {
			oldest = t
		}
	}
	if err := j.laneStats(ctx, &st, now, older); err != nil {
		return st, err
	}
	if err := j.openStats(ctx, &st, older); err != nil {
		return st, err
	}
	st.OldestPending = oldest
	if oldest != nil {
		st.LagSeconds = max(0, now.Sub(*oldest).Seconds())
	}
	if err := j.replicaStats(ctx, &st, now); err != nil {
		return st, err
	}
	if r.RetiredAt.valid {
		st.Status = SubscriberRetired
	}
	return st, nil
}

// laneStats fills the subscriber's lanes and its events past them.
func (j *Journal) laneStats(ctx context.Context, st *SubscriberStats, now time.Time, older func(*time.Time)) error {
	lanes, err := j.drv.laneBacklogs(ctx, j.db, st.Name, st.Types)
	if err != nil {
		return err
	}
	for _, l := range lanes {
		ls := LaneStats{Partition: l.Partition, Position: l.Position, LagEvents: l.N, Owner: l.Owner, LeaseUntil: l.LeaseUntil.ptr()}
		if t := l.Oldest.ptr(); t != nil {
			ls.LagSeconds = max(0, now.Sub(*t).Seconds())
		}
		st.Pending += l.N
		older(l.Oldest.ptr())
		st.Lanes = append(st.Lanes, ls)
	}
	return nil
}

// openStats counts the subscriber's open deliveries by status.
func (j *Journal) openStats(ctx context.Context, st *SubscriberStats, older func(*time.Time)) error {
	recorded, err := j.drv.openDeliveries(ctx, j.db, st.Name)
	if err != nil {
		return err
	}
	for _, rc := range recorded {
		switch rc.Status {
		case StatusRetrying:
			st.Retrying = rc.N
		case StatusHeld:
			st.Held = rc.N
		case StatusFailed:
			st.Failed = rc.N
		}
		older(rc.Oldest.ptr())
	}
	return nil
}

// replicaStats fills the replicas that ran the subscriber and, from them,
// its status: active when one ran it within ActiveWindow.
func (j *Journal) replicaStats(ctx context.Context, st *SubscriberStats, now time.Time) error {
	replicas, err := j.drv.replicasOf(ctx, j.db, st.Name)
	if err != nil {
		return err
	}
	st.Status = SubscriberWaiting
	for _, rp := range replicas {
		t := rp.SeenAt.ptr()
		if t == nil {
			continue
		}
		st.Replicas = append(st.Replicas, ReplicaSeen{Replica: rp.Replica, SeenAt: *t})
		if now.Sub(*t) <= ActiveWindow {
			st.Status = SubscriberActive
		}
	}
	return nil
}

func (j *Journal) subscriber(ctx context.Context, tx *gorm.DB, name string) (subscriberRow, error) {
	rows, err := j.drv.registeredSubscribers(ctx, tx, name)
	if err != nil {
		return subscriberRow{}, err
	}
	if len(rows) == 0 {
		return subscriberRow{}, apperr.NotFound("subscriber %q does not exist", name)
	}
	return rows[0], nil
}

// Replayed is the payload of subscriber.replayed: the subscriber receives
// again every event of its types with an id from FromEventID on.
type Replayed struct {
	Subscriber  string `json:"subscriber"`
	FromEventID int64  `json:"from_event_id" jsonschema:"minimum=1"`
}

// Replay makes every event of the subscriber's types with id >= from reach
// that subscriber again, and no other: its lanes move back before from (a
// lane already behind it stays), its delivery records from there on are
// dropped with their failures, and its batches from there on forgotten, so that the journal
// shows those deliveries pending until the replay has passed them. A batch
// in flight for the subscriber fails its fence and is done again.
//
// It returns ENOTFOUND for an unknown subscriber, ECONFLICT for a retired one
// and for a local subscriber that is not replayable (its effects would apply
// twice), and EINVALID for from < 1.
func (j *Journal) Replay(ctx context.Context, name string, from int64) (Replayed, error) {
	out := Replayed{Subscriber: name, FromEventID: from}
	if from < 1 {
		return out, apperr.Invalid("invalid replay", apperr.Field("from_event_id", "must be an event id, 1 or more"))
	}
	err := j.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		s, err := j.subscriber(ctx, tx, name)
		if err != nil {
			return err
		}
		switch {
		case s.RetiredAt.valid:
			return apperr.Conflict("subscriber %q is retired; a replica that runs it again brings it back", name)
		case s.Local && !s.Replayable:
			return apperr.Conflict("subscriber %q applies its effects in this database and is not replayable: its effects would apply twice", name)
		}
		if err := j.drv.rewind(ctx, tx, name, from-1); err != nil {
			return err
		}
		return Add(ctx, tx, SubscriberReplayedEvent.New(s.ID, out))
	})
	return out, err
}

// Retired is the payload of subscriber.retired.
type Retired struct {
	Subscriber string `json:"subscriber"`
}

// Retire retires a subscriber that is gone for good: no event waits for it
// any more, its lanes are dropped, and its recorded deliveries stay visible.
// A replica that runs it again brings it back, starting at the journal's end.
//
// It returns ENOTFOUND for an unknown subscriber and ECONFLICT for one that
// is retired already or that a replica ran within ActiveWindow.
func (j *Journal) Retire(ctx context.Context, name string) error {
	return j.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		s, err := j.subscriber(ctx, tx, name)
		if err != nil {
			return err
		}
		if s.RetiredAt.valid {
			return apperr.Conflict("subscriber %q is retired already", name)
		}
		active, err := j.drv.activeReplicas(ctx, tx, name, ActiveWindow)
		if err != nil {
			return err
		}
		if len(active) > 0 {
			return apperr.Conflict("subscriber %q is still run by %v; stop it there first, then retire it", name, active)
		}
		if err := j.drv.retire(ctx, tx, name); err != nil {
			return err
		}
		return Add(ctx, tx, SubscriberRetiredEvent.New(s.ID, Retired{Subscriber: name}))
	})
}

// The events module's own event types, declared like every module's (see
// internal/contracts); OwnEvents registers them.
var (
	SubscriberReplayedEvent = Declare[Replayed](EventSubscriberReplayed, "events", SubscribersTable,
		"An admin replayed the journal to one subscriber from an event id on.")
	SubscriberRetiredEvent = Declare[Retired](EventSubscriberRetired, "events", SubscribersTable,
		"An admin retired a subscriber that is gone for good; no event waits for it any more.")
)

// OwnEvents declares the events module's own event types; it subscribes to
// none.
var OwnEvents Module = ModuleFunc(func(r *Registrar) { r.Declare(SubscriberReplayedEvent, SubscriberRetiredEvent) })
