package events

import (
	"context"
	"encoding/json"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
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

// register records this process's subscribers and gives each one seen for
// the first time its lanes: at the journal's end (the safe horizon), or at
// its beginning on a database where no subscriber was ever registered (so
// that a new installation's first events, such as its demo data, are
// delivered). A subscriber from before lanes continues from the old shared
// position; a retired one that comes back starts again at the end.
func (d *Dispatcher) register(ctx context.Context, horizon int64) error {
	err := d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var known int64
		if err := tx.Raw(`SELECT count(*) FROM events_subscribers`).Scan(&known).Error; err != nil {
			return err
		}
		start := horizon
		if known == 0 {
			start = 0
		}
		now := database.Now(tx)
		for _, s := range d.reg.Subscribers() {
			types, err := json.Marshal(s.Types)
			if err != nil {
				return err
			}
			var rows []struct {
				ID           int64
				RegisteredAt nullTime
				RetiredAt    nullTime
			}
			if err := tx.Raw(`SELECT id, registered_at, retired_at FROM events_subscribers WHERE name = ?`, s.Name).Scan(&rows).Error; err != nil {
				return err
			}
			fresh := false
			switch {
			case len(rows) == 0:
				res := tx.Exec(`INSERT INTO events_subscribers (name, types, description, local, replayable, registered_at, updated_at)
VALUES (?, ?, ?, ?, ?, `+now+`, `+now+`) ON CONFLICT (name) DO NOTHING`, s.Name, string(types), s.Description, s.Local(), s.Replayable)
				if res.Error != nil {
					return res.Error
				}
				fresh = res.RowsAffected == 1
			case rows[0].RetiredAt.valid:
				if err := tx.Exec(`DELETE FROM events_lanes WHERE subscriber = ?`, s.Name).Error; err != nil {
					return err
				}
				start, fresh = horizon, true
			case !rows[0].RegisteredAt.valid:
				fresh = true // from before lanes: its lanes are there already
			}
			if err := tx.Exec(`UPDATE events_subscribers SET types = ?, description = ?, local = ?, replayable = ?, retired_at = NULL,
registered_at = coalesce(registered_at, `+now+`), updated_at = `+now+` WHERE name = ?`,
				string(types), s.Description, s.Local(), s.Replayable, s.Name).Error; err != nil {
				return err
			}
			if !fresh {
				continue
			}
			for p := range Partitions {
				if err := tx.Exec(`INSERT INTO events_lanes (subscriber, partition, position, start_position) VALUES (?, ?, ?, ?)
ON CONFLICT (subscriber, partition) DO NOTHING`, s.Name, p, start, start).Error; err != nil {
					return err
				}
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
	now := database.Now(d.db)
	err := d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, s := range d.reg.Subscribers() {
			if err := tx.Exec(`INSERT INTO events_replicas (subscriber, replica, seen_at) VALUES (?, ?, `+now+`)
ON CONFLICT (subscriber, replica) DO UPDATE SET seen_at = excluded.seen_at`, s.Name, d.opt.Owner).Error; err != nil {
				return err
			}
		}
		return tx.Exec(`DELETE FROM events_replicas WHERE seen_at < ` + database.NowPlus(tx, -24*time.Hour)).Error
	})
	if err != nil {
		d.opt.Logger.Warn("record the replica's subscribers", "err", err)
	}
}
