package events

import (
	"context"
	"errors"

	"gorm.io/gorm"
)

// mine returns the events of the batch the subscriber receives: the batch
// itself when they all are (it is shared with the partition's other lanes,
// and read only), a copy of those it receives otherwise.
func mine(s *Subscriber, batch []Event) []Event {
	receives := func(ev *Event) bool {
		for _, t := range s.Types {
			if ev.Type == t {
				return true
			}
		}
		return false
	}
	n := 0
	for i := range batch {
		if receives(&batch[i]) {
			n++
		}
	}
	if n == len(batch) {
		return batch
	}
	out := make([]Event, 0, n)
	for i := range batch {
		if receives(&batch[i]) {
			out = append(out, batch[i])
		}
	}
	return out
}

// dispatchBatch hands the lane's subscriber its events of a batch, the
// journal's events of the partition in (lr.pos, next], and commits the
// lane's new position with what did not simply succeed.
func (d *Dispatcher) dispatchBatch(ctx context.Context, lr *lane, batch []Event, next int64, release bool) (PassStats, error) {
	var st PassStats
	evs := mine(lr.sub, batch)
	st.Events = len(evs)
	move := laneMove{key: lr.key, owner: d.opt.Owner, pos: lr.pos, next: next, batch: len(evs) > 0, release: release, lease: d.opt.Lease}
	blocked := map[objectKey]int64{}
	if lr.open && len(evs) > 0 {
		var err error
		if blocked, err = d.blockedObjects(ctx, lr.key); err != nil {
			return st, err
		}
	}
	var outcomes []outcome
	var err error
	if lr.sub.Local() {
		outcomes, err = d.dispatchLocal(ctx, lr, evs, blocked, move)
	} else {
		outcomes = d.callOutside(ctx, lr.sub, evs, blocked)
		// The slot is taken once the calls are done: a slow subscriber holds
		// none while it is called.
		d.ownSlots <- struct{}{}
		err = d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := d.sql.moveLane(tx, move); err != nil {
				return err
			}
			return d.recordOutcomes(tx, lr.sub, outcomes)
		})
		<-d.ownSlots
	}
	if err != nil {
		return st, err
	}
	for _, oc := range outcomes {
		if oc.status != StatusHeld {
			st.Failed++
		}
	}
	st.Delivered = len(evs) - len(outcomes)
	if lr.sub.Local() {
		d.countLocal(lr.sub, st.Delivered, outcomes)
	}
	d.metrics.observeBatch(evs)
	lr.pos = next
	lr.committed.Store(next)
	lr.open = lr.open || len(outcomes) > 0
	return st, nil
}

// dispatchLocal runs a local subscriber over its events in the lane's batch
// transaction, so that its effects, the exceptions and the lane's new
// position commit together. The fast path runs without savepoints; when the
// subscriber fails, the batch is run again with one savepoint per event.
func (d *Dispatcher) dispatchLocal(ctx context.Context, lr *lane, evs []Event, blocked map[objectKey]int64, move laneMove) ([]outcome, error) {
	d.dbSlots <- struct{}{}
	defer func() { <-d.dbSlots }()
	var outcomes []outcome
	run := func(savepoints bool) error {
		outcomes = nil
		return d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			// The fence first: a dispatcher whose lease has run out (and
			// whose lane someone else has dispatched meanwhile) applies no
			// effect at all. It also locks the lane's row until the commit.
			if err := d.sql.moveLane(tx, move); err != nil {
				return err
			}
			b := cloneBlocked(blocked)
			for i := range evs {
				oc, ok := d.deliverOrHold(ctx, tx, lr.sub, &evs[i], b, savepoints, nil)
				if ok {
					continue
				}
				if oc.stuck {
					return errStuck
				}
				if oc.status == StatusRetrying && !savepoints {
					return errSlowPath
				}
				outcomes = append(outcomes, oc)
			}
			return d.recordOutcomes(tx, lr.sub, outcomes)
		})
	}
	err := run(false)
	// Each run that hit a stuck subscriber marked it, so this ends.
	for errors.Is(err, errSlowPath) || errors.Is(err, errStuck) {
		err = run(true)
	}
	for i := range evs {
		d.stuck.take(deliveryKey{evs[i].ID, lr.sub.Name})
	}
	return outcomes, err
}

var errSlowPath = errors.New("events: a local subscriber failed; retry the batch with savepoints")

func cloneBlocked(m map[objectKey]int64) map[objectKey]int64 {
	out := make(map[objectKey]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// blockedObjects returns, per object of the lane, its oldest delivery that is
// still open (retrying, held or failed): later events of the object are held
// behind it.
func (d *Dispatcher) blockedObjects(ctx context.Context, k laneKey) (map[objectKey]int64, error) {
	rows, err := d.db.WithContext(ctx).Raw(`SELECT aggregate_type, aggregate_id, min(event_id) FROM events_deliveries
WHERE partition = ? AND subscriber = ? AND status <> 'processed' GROUP BY aggregate_type, aggregate_id`, k.part, k.sub).Rows()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := map[objectKey]int64{}
	for rows.Next() {
		var o objectKey
		var id int64
		if err := rows.Scan(&o.aggType, &o.aggID, &id); err != nil {
			return nil, err
		}
		out[o] = id
	}
	return out, rows.Err()
}

// countLocal counts the committed outcomes of a local subscriber's batch.
func (d *Dispatcher) countLocal(s *Subscriber, delivered int, outcomes []outcome) {
	if d.metrics == nil {
		return
	}
	for range delivered {
		d.metrics.countDelivery(s.Name, nil)
	}
	for _, oc := range outcomes {
		if oc.status != StatusHeld {
			d.metrics.countDelivery(s.Name, oc.err)
		}
	}
}
