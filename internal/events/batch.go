package events

import (
	"context"
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
// journal's events of the partition in (l.pos, next], has the completer
// commit the lane's new position with what did not simply succeed
// (batchCompletion), and then moves the lane there.
func (l *lane) dispatchBatch(ctx context.Context, batch []Event, next int64, release bool) (PassStats, error) {
	var st PassStats
	evs := mine(l.sub, batch)
	st.Events = len(evs)
	move := laneMove{key: l.key, owner: l.cfg.owner, pos: l.pos, next: next, batch: len(evs) > 0, release: release, lease: l.cfg.lease}
	// The objects whose events are held behind an earlier open delivery,
	// read only when the lane may have one.
	blocked := map[objectKey]int64{}
	if l.open && len(evs) > 0 {
		var err error
		if blocked, err = l.deps.openObjects(ctx, l.key); err != nil {
			return st, err
		}
	}
	outcomes, err := l.deps.deliver(ctx, l.sub, evs, blocked, batchCompletion{s: l.sub, move: move})
	if err != nil {
		return st, err
	}
	for _, oc := range outcomes {
		if oc.status != StatusHeld {
			st.Failed++
		}
	}
	st.Delivered = len(evs) - len(outcomes)
	l.deps.observeBatch(evs)
	l.pos = next
	l.committed.Store(next)
	l.open = l.open || len(outcomes) > 0
	return st, nil
}
