package events

import (
	"context"
	"sync"
)

// batchCache shares reads of the journal between lanes: lanes of one
// partition that stand at the same position are served by one read, whether
// they ask at the same moment (the second waits for the first's read) or one
// after the other while the batch is still held. A lane that has fallen
// behind reads alone. What it holds is bounded by a number of events, oldest
// batch out first.
//
// Only final events are cached: a read covers (from, covered], where covered
// is the last event read when the batch is full and the horizon (beyond
// which nothing may be read yet) otherwise; no transaction can commit an
// event inside that range any more.
type batchCache struct {
	read      func(ctx context.Context, part int, from, horizon int64) ([]Event, error)
	batchSize int
	maxEvents int

	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry
	order   []cacheKey // oldest first
	held    int        // events held
}

type cacheKey struct {
	part int
	from int64
}

type cacheEntry struct {
	ready   chan struct{} // closed when the read is done
	events  []Event
	covered int64
	err     error
}

func newBatchCache(batchSize int, read func(ctx context.Context, part int, from, horizon int64) ([]Event, error)) *batchCache {
	return &batchCache{read: read, batchSize: batchSize, maxEvents: 8 * batchSize, entries: map[cacheKey]*cacheEntry{}}
}

// get returns the events of the partition after from, up to the horizon (at
// most a batch), and the id up to which they cover the journal.
func (c *batchCache) get(ctx context.Context, part int, from, horizon int64) ([]Event, int64, error) {
	k := cacheKey{part, from}
	c.mu.Lock()
	if e, ok := c.entries[k]; ok {
		c.mu.Unlock()
		<-e.ready
		if e.err == nil && (e.covered > from || horizon <= from) {
			return e.events, e.covered, nil
		}
		// A failed read, or one made before the horizon moved and that found
		// nothing: read again.
		c.mu.Lock()
		if c.entries[k] == e {
			c.drop(k)
		}
		c.mu.Unlock()
		return c.get(ctx, part, from, horizon)
	}
	e := &cacheEntry{ready: make(chan struct{})}
	c.entries[k] = e
	c.order = append(c.order, k)
	c.mu.Unlock()

	events, err := c.read(ctx, part, from, horizon)
	covered := horizon
	if len(events) >= c.batchSize {
		covered = events[len(events)-1].ID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e.events, e.covered, e.err = events, covered, err
	close(e.ready)
	if err != nil || len(events) == 0 {
		if c.entries[k] == e {
			c.drop(k)
		}
		return events, covered, err
	}
	c.held += len(events)
	c.evict()
	return events, covered, nil
}

// put holds a batch read elsewhere (by a claim) for the lanes that follow.
func (c *batchCache) put(part int, from, horizon int64, events []Event) {
	if len(events) == 0 {
		return
	}
	e := &cacheEntry{ready: make(chan struct{}), events: events, covered: horizon}
	if len(events) >= c.batchSize {
		e.covered = events[len(events)-1].ID
	}
	close(e.ready)
	k := cacheKey{part, from}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; ok {
		return
	}
	c.entries[k] = e
	c.order = append(c.order, k)
	c.held += len(events)
	c.evict()
}

// evict drops the oldest finished batches while more than maxEvents are held.
func (c *batchCache) evict() {
	for c.held > c.maxEvents && len(c.order) > 1 {
		k := c.order[0]
		e := c.entries[k]
		if e != nil {
			select {
			case <-e.ready:
			default:
				return // the oldest is still being read
			}
		}
		c.drop(k)
	}
}

// drop forgets an entry; c.mu is held.
func (c *batchCache) drop(k cacheKey) {
	if e, ok := c.entries[k]; ok {
		select {
		case <-e.ready:
			c.held -= len(e.events)
		default:
		}
		delete(c.entries, k)
	}
	for i, o := range c.order {
		if o == k {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}
