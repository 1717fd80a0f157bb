package events

import (
	"context"
	"sync"
)

// milestone is how far something long-lived has come: a count that only
// grows (lanes that began to linger, leases renewed, the wake-ups a
// runner's passes have answered). A test waits for it to reach a value
// (export_test.go), where it would otherwise sleep for a time tuned to a
// fast machine and fail on a busy one; what the code pays is a lock and a
// channel at each step, none of them on a write's path.
type milestone struct {
	mu      sync.Mutex
	n       uint64
	changed chan struct{} // closed, and replaced, when n grows
}

// add counts one more.
func (m *milestone) add() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.set(m.n + 1)
}

// raise moves the count up to n; a lower n changes nothing.
func (m *milestone) raise(n uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n > m.n {
		m.set(n)
	}
}

// set is add's and raise's; m.mu is held.
func (m *milestone) set(n uint64) {
	m.n = n
	if m.changed != nil {
		close(m.changed)
		m.changed = nil
	}
}

// load returns the count.
func (m *milestone) load() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// wait blocks until the count is at least n, or ctx ends.
func (m *milestone) wait(ctx context.Context, n uint64) error {
	for {
		m.mu.Lock()
		if m.n >= n {
			m.mu.Unlock()
			return nil
		}
		if m.changed == nil {
			m.changed = make(chan struct{})
		}
		ch := m.changed
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
