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
	j := NewJournal(db, nil)
	subs, lanes, err := j.subscribersOf(ctx)
	if err != nil {
		return 0, err
	}
	c := compaction{drv: j.drv, subs: subs, lanes: lanes, maxEvents: maxEvents}
	var removed int64
	for p := range Partitions {
		if ctx.Err() != nil {
			return removed, ctx.Err() // the rest next time
		}
		var n int64
		err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			n, err = c.partition(ctx, tx, p)
			return err
		})
		if err != nil {
			return removed, err
		}
		removed += n
	}
	return removed, nil
}

// compaction is one call of CompactBatches: the subscribers the journal
// waits for and their lanes, as they stood when it began.
type compaction struct {
	drv       driver
	subs      []waitedSubscriber
	lanes     map[laneKey]laneState
	maxEvents int
}

// eventRun is a run of a partition's events, first to last, with one time.
type eventRun struct {
	first, last int64
	at          time.Time
}

// partition compacts one partition, in one transaction: it finds the
// events every lane has passed since the last compaction, writes their
// batch time on them and removes the batches they no longer need.
func (c compaction) partition(ctx context.Context, tx *gorm.DB, p int) (int64, error) {
	low, err := c.drv.compactedUpTo(ctx, tx, p)
	if err != nil {
		return 0, err
	}
	high, ok := c.passedByAll(p)
	if !ok || high <= low {
		return 0, nil
	}
	evs, err := c.drv.eventTypesIn(ctx, tx, p, low, high, c.maxEvents)
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	if len(evs) == c.maxEvents {
		high = evs[len(evs)-1].ID // the rest next time
	}
	runs, err := c.settledRuns(ctx, tx, p, low, high, evs)
	if err != nil {
		return 0, err
	}
	for _, r := range runs {
		// Events in a run without a time of their own take the run's:
		// the journal never reads it for them (no subscriber's batch).
		if err := c.drv.settle(ctx, tx, p, r.first, r.last, r.at); err != nil {
			return 0, err
		}
	}
	removed, err := c.drv.dropBatches(ctx, tx, p, low, high)
	if err != nil {
		return 0, err
	}
	return removed, c.drv.markCompacted(ctx, tx, p, high)
}

// passedByAll returns up to where every lane of the partition has come;
// false when a subscriber has no lanes yet (nothing is final for it).
func (c compaction) passedByAll(p int) (int64, bool) {
	high := int64(-1)
	for _, s := range c.subs {
		l, ok := c.lanes[laneKey{s.name, p}]
		if !ok {
			return 0, false
		}
		if high < 0 || l.position < high {
			high = l.position
		}
	}
	return high, true
}

// settledRuns gives each event the time the journal derives from the
// batches (sqlBase.processedAt): the latest of its subscribers' batches,
// those without a delivery row. Runs of events with the same time come out
// as one run, to be written with one statement.
func (c compaction) settledRuns(ctx context.Context, tx *gorm.DB, p int, low, high int64, evs []eventType) ([]eventRun, error) {
	rows, err := c.drv.subscriberBatches(ctx, tx, p, low, high)
	if err != nil {
		return nil, err
	}
	own := map[string][]eventRun{}
	for _, r := range rows {
		own[r.Subscriber] = append(own[r.Subscriber], eventRun{r.FirstID, r.LastID, r.DispatchedAt.t})
	}
	recorded, err := c.drv.recordedIn(ctx, tx, p, low, high)
	if err != nil {
		return nil, err
	}
	var runs []eventRun
	for _, e := range evs {
		at := c.batchTime(p, e, own, recorded)
		if at.IsZero() {
			continue // no batch time to keep: no subscriber's, or only recorded deliveries
		}
		if n := len(runs); n > 0 && runs[n-1].at.Equal(at) {
			runs[n-1].last = e.ID
			continue
		}
		runs = append(runs, eventRun{e.ID, e.ID, at})
	}
	return runs, nil
}

// batchTime is the latest time of the batches of the event's subscribers
// that delivered it in a batch (no delivery row); zero when there is none.
func (c compaction) batchTime(p int, e eventType, own map[string][]eventRun, recorded map[deliveryKey]bool) time.Time {
	var at time.Time
	for _, s := range c.subs {
		l := c.lanes[laneKey{s.name, p}]
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
	return at
}
