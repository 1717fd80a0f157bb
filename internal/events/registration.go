package events

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"gorm.io/gorm"
)

// The events module's own event types.
const (
	EventSubscriberReplayed = "subscriber.replayed"
	EventSubscriberRetired  = "subscriber.retired"
	// SubscribersTable is the object of the subscriber events.
	SubscribersTable = "events_subscribers"
)

// HeartbeatEvery is how often a dispatching replica records that it runs its
// subscribers; ActiveWindow is how recently a replica must have done so for
// its subscribers to count as active.
const (
	HeartbeatEvery = 15 * time.Second
	ActiveWindow   = time.Minute
)

// replicasKept is how long a replica that no longer runs a subscriber stays
// in its list.
const replicasKept = 24 * time.Hour

// registration records this process's subscribers once (register) and,
// every HeartbeatEvery, that this replica runs them (heartbeat); it also
// takes back the lanes of this machine's dispatchers that are gone
// (takeBackFromDead, owner.go).
type registration struct {
	db    *gorm.DB
	sql   registrationStatements
	reg   *Registry
	owner string // the dispatcher's name in leases and the replica list
	log   *slog.Logger

	mu         sync.Mutex
	registered bool      // this process's subscribers have their lanes
	lastSeen   time.Time // the last heartbeat written
}

// register records this process's subscribers and gives each one seen for
// the first time its lanes: at the journal's end (the safe horizon), or at
// its beginning on a database where no subscriber was ever registered (so
// that a new installation's first events, such as its demo data, are
// delivered). A subscriber from before lanes continues from the old shared
// position; a retired one that comes back starts again at the end.
func (r *registration) register(ctx context.Context, horizon int64) error {
	drv := r.sql
	err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		known, err := drv.subscribersKnown(ctx, tx)
		if err != nil {
			return err
		}
		start := horizon
		if known == 0 {
			start = 0
		}
		for _, s := range r.reg.Subscribers() {
			if err := registerOne(ctx, drv, tx, s, start, horizon); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.registered = true
	r.mu.Unlock()
	r.heartbeat(ctx, true)
	return nil
}

// done tells whether register has recorded this process's subscribers.
func (r *registration) done() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.registered
}

// registerOne records one subscriber and, when it is seen for the first
// time or comes back from retirement, gives it its lanes at start (at
// horizon, for one that comes back).
func registerOne(ctx context.Context, drv registrationStatements, tx *gorm.DB, s *Subscriber, start, horizon int64) error {
	types, err := json.Marshal(s.Types)
	if err != nil {
		return err
	}
	spec := subscriberSpec{name: s.Name, types: string(types), description: s.Description, local: s.Local(), replayable: s.Replayable}
	rec, found, err := drv.subscriberRecord(ctx, tx, s.Name)
	if err != nil {
		return err
	}
	fresh := false
	switch {
	case !found:
		if fresh, err = drv.insertSubscriber(ctx, tx, spec); err != nil {
			return err
		}
	case rec.RetiredAt.valid:
		if err := drv.dropLanes(ctx, tx, s.Name); err != nil {
			return err
		}
		start, fresh = horizon, true
	case !rec.RegisteredAt.valid:
		fresh = true // from before lanes: its lanes are there already
	}
	if err := drv.updateSubscriber(ctx, tx, spec); err != nil {
		return err
	}
	if !fresh {
		return nil
	}
	return drv.addLanes(ctx, tx, s.Name, start)
}

// Heartbeat records that this replica runs its subscribers, for the
// subscriber list and its active/waiting status.
// It also takes back the lanes of this machine's dispatchers that are gone.
func (d *Dispatcher) Heartbeat(ctx context.Context) {
	d.members.heartbeat(ctx, true)
	if d.members.done() {
		d.members.takeBackFromDead(ctx)
	}
}

// heartbeat records that this replica runs its subscribers, at most every
// HeartbeatEvery unless forced, once they are registered.
func (r *registration) heartbeat(ctx context.Context, force bool) {
	r.mu.Lock()
	if !r.registered || (!force && time.Since(r.lastSeen) < HeartbeatEvery) || len(r.reg.Subscribers()) == 0 {
		r.mu.Unlock()
		return
	}
	r.lastSeen = time.Now()
	r.mu.Unlock()
	drv := r.sql
	names := make([]string, 0, len(r.reg.Subscribers()))
	for _, s := range r.reg.Subscribers() {
		names = append(names, s.Name)
	}
	err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := drv.seen(ctx, tx, r.owner, names); err != nil {
			return err
		}
		return drv.forgetReplicas(ctx, tx, replicasKept)
	})
	if err != nil {
		r.log.Warn("record the replica's subscribers", "err", err)
	}
}
