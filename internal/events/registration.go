package events

import (
	"context"
	"encoding/json"
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

// register records this process's subscribers and gives each one seen for
// the first time its lanes: at the journal's end (the safe horizon), or at
// its beginning on a database where no subscriber was ever registered (so
// that a new installation's first events, such as its demo data, are
// delivered). A subscriber from before lanes continues from the old shared
// position; a retired one that comes back starts again at the end.
func (d *Dispatcher) register(ctx context.Context, horizon int64) error {
	drv := d.sql
	err := d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		known, err := drv.subscribersKnown(ctx, tx)
		if err != nil {
			return err
		}
		start := horizon
		if known == 0 {
			start = 0
		}
		for _, s := range d.reg.Subscribers() {
			if err := registerOne(ctx, drv, tx, s, start, horizon); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.registered = true
	d.mu.Unlock()
	d.heartbeat(ctx, true)
	return nil
}

// registerOne records one subscriber and, when it is seen for the first
// time or comes back from retirement, gives it its lanes at start (at
// horizon, for one that comes back).
func registerOne(ctx context.Context, drv driver, tx *gorm.DB, s *Subscriber, start, horizon int64) error {
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
	d.heartbeat(ctx, true)
	if d.isRegistered() {
		d.takeBackFromDead(ctx)
	}
}

func (d *Dispatcher) heartbeat(ctx context.Context, force bool) {
	d.mu.Lock()
	if !d.registered || (!force && time.Since(d.lastSeen) < HeartbeatEvery) || len(d.reg.Subscribers()) == 0 {
		d.mu.Unlock()
		return
	}
	d.lastSeen = time.Now()
	d.mu.Unlock()
	drv := d.sql
	names := make([]string, 0, len(d.reg.Subscribers()))
	for _, s := range d.reg.Subscribers() {
		names = append(names, s.Name)
	}
	err := d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := drv.seen(ctx, tx, d.opt.Owner, names); err != nil {
			return err
		}
		return drv.forgetReplicas(ctx, tx, replicasKept)
	})
	if err != nil {
		d.opt.Logger.Warn("record the replica's subscribers", "err", err)
	}
}
