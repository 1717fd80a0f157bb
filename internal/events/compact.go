package events

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// CompactBatches removes the subscribers' batch rows of the events that every
// lane has passed, without changing any event's status or processed_at: the
// time the journal derives from those rows (when the event's last subscriber
// handled it) is written on the event itself (settled_at), and the rows go.
// A subscriber's rows that reach beyond what is compacted stay. At most
// maxEvents events per partition are compacted in one call; it returns how
// many batch rows it removed.
func CompactBatches(ctx context.Context, db *gorm.DB, maxEvents int) (int64, error) {
	if maxEvents <= 0 {
		maxEvents = 5000
	}
	j := &Journal{db: db}
	subs, lanes, err := j.subscribersOf(ctx)
	if err != nil {
		return 0, err
	}
	var removed int64
	for p := range Partitions {
		if ctx.Err() != nil {
			return removed, ctx.Err() // the rest next time
		}
		n, err := compactPartition(ctx, db, p, subs, lanes, maxEvents)
		if err != nil {
			return removed, err
		}
		removed += n
	}
	return removed, nil
}

func compactPartition(ctx context.Context, db *gorm.DB, p int, subs []waitedSubscriber, lanes map[laneKey]laneState, maxEvents int) (int64, error) {
	var removed int64
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var done []int64
		if err := tx.Raw(`SELECT upto FROM events_compaction WHERE partition = ?`, p).Scan(&done).Error; err != nil {
			return err
		}
		var low int64
		if len(done) > 0 {
			low = done[0]
		}
		// Up to where every lane of the partition has come.
		high := int64(-1)
		for _, s := range subs {
			l, ok := lanes[laneKey{s.name, p}]
			if !ok {
				return nil // a subscriber without lanes yet: nothing is final for it
			}
			if high < 0 || l.position < high {
				high = l.position
			}
		}
		if high <= low {
			return nil
		}
		var evs []struct {
			ID   int64
			Type string
		}
		if err := tx.Raw(`SELECT id, type FROM events WHERE (partition, id) > (?, ?) AND (partition, id) <= (?, ?) ORDER BY partition, id LIMIT ?`,
			p, low, p, high, maxEvents).Scan(&evs).Error; err != nil {
			return err
		}
		if len(evs) == 0 {
			return nil
		}
		if len(evs) == maxEvents {
			high = evs[len(evs)-1].ID // the rest next time
		}
		var rows []struct {
			Subscriber   string
			FirstID      int64
			LastID       int64
			DispatchedAt nullTime
		}
		if err := tx.Raw(`SELECT subscriber, first_id, last_id, dispatched_at FROM events_batches
WHERE partition = ? AND subscriber <> '' AND last_id > ? AND first_id <= ? ORDER BY subscriber, first_id`, p, low, high).Scan(&rows).Error; err != nil {
			return err
		}
		type span struct {
			first, last int64
			at          time.Time
		}
		own := map[string][]span{}
		for _, r := range rows {
			own[r.Subscriber] = append(own[r.Subscriber], span{r.FirstID, r.LastID, r.DispatchedAt.t})
		}
		recorded := map[deliveryKey]bool{}
		var recs []struct {
			EventID    int64
			Subscriber string
		}
		if err := tx.Raw(`SELECT event_id, subscriber FROM events_deliveries WHERE partition = ? AND event_id > ? AND event_id <= ?`, p, low, high).
			Scan(&recs).Error; err != nil {
			return err
		}
		for _, r := range recs {
			recorded[deliveryKey{r.EventID, r.Subscriber}] = true
		}
		// Each event's time as the journal derives it from the batches: the
		// latest of its subscribers' batches (those without a delivery row).
		// Runs of events with the same time are written with one statement.
		var runs []span
		for _, e := range evs {
			var at time.Time
			for _, s := range subs {
				l := lanes[laneKey{s.name, p}]
				if !s.types[e.Type] || e.ID <= l.start || recorded[deliveryKey{e.ID, s.name}] {
					continue
				}
				for _, sp := range own[s.name] {
					if sp.first <= e.ID && e.ID <= sp.last {
						if sp.at.After(at) {
							at = sp.at
						}
						break
					}
				}
			}
			if at.IsZero() {
				continue // no batch time to keep: no subscriber's, or only recorded deliveries
			}
			if n := len(runs); n > 0 && runs[n-1].at.Equal(at) {
				runs[n-1].last = e.ID
				continue
			}
			runs = append(runs, span{e.ID, e.ID, at})
		}
		for _, r := range runs {
			// Events in a run without a time of their own take the run's:
			// the journal never reads it for them (no subscriber's batch).
			if err := tx.Exec(`UPDATE events SET settled_at = ? WHERE (partition, id) >= (?, ?) AND (partition, id) <= (?, ?)`,
				r.at, p, r.first, p, r.last).Error; err != nil {
				return err
			}
		}
		res := tx.Exec(`DELETE FROM events_batches WHERE partition = ? AND subscriber <> '' AND first_id > ? AND last_id <= ?`, p, low, high)
		if res.Error != nil {
			return res.Error
		}
		removed = res.RowsAffected
		return tx.Exec(`INSERT INTO events_compaction (partition, upto) VALUES (?, ?)
ON CONFLICT (partition) DO UPDATE SET upto = excluded.upto`, p, high).Error
	})
	return removed, err
}
