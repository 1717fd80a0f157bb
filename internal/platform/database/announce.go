package database

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"sync"
	"time"

	"gorm.io/gorm"
)

// Commit announcements (PostgreSQL). A transaction that wrote to the journal
// asks, with AnnounceCommit, to be announced once it has committed:
//
//   - at once, in this process, to the functions given to WatchCommits (its
//     dispatcher, its live journal), called by the committing goroutine;
//   - to every other process, by a NOTIFY on CommitChannel that the pool
//     sends after the commit, on a connection of its own, carrying the
//     pool's AnnouncerID (so that the pool's own watchers can tell their
//     announcements from another writer's).
//
// The NOTIFYs are coalesced: the first commit after a quiet spell is
// announced at once, and the commits of the next AnnounceSpacing share one
// NOTIFY at its end, so a pool sends at most one every AnnounceSpacing
// however fast it commits. A NOTIFY inside each writing transaction (a
// trigger, until migration 00032) took a lock held across the commit, one
// for the whole server: eight writers of events at once made 0.6 times the
// commits they make without it (docs/performance.md, "Write overhead").
//
// Another process thus learns of a commit within AnnounceSpacing of it and
// one round trip; this process at once. A process that ends without Close
// (kill -9) may leave its last commits unannounced: the other processes
// find them at their next wake-up or tick (DISPATCH_INTERVAL), and every
// listener looks at the journal when it connects.

// CommitChannel is the PostgreSQL channel that commits of the journal are
// announced on.
const CommitChannel = "tsekh_events"

// AnnounceSpacing is the least time between two NOTIFYs of one pool.
const AnnounceSpacing = 2 * time.Millisecond

// announceTimeout bounds the sending of one NOTIFY; a NOTIFY that fails is
// not sent again (the next commit's, the listeners' reconnection or the
// tick make up for it).
const announceTimeout = 5 * time.Second

// announcer announces one pool's commits.
type announcer struct {
	db *sql.DB
	id string

	mu       sync.Mutex
	watchers map[uint64]func()
	nextID   uint64
	pending  bool          // a commit not yet covered by a NOTIFY sent after it
	sending  bool          // the goroutine of run is sending and spacing NOTIFYs
	closed   bool          // the pool is closing: no NOTIFY from now on
	closing  chan struct{} // closed by close, to cut the spacing short
	idle     sync.WaitGroup
	notifies func() // sends one NOTIFY; a field so that tests can count them
}

func newAnnouncer(db *sql.DB) *announcer {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	a := &announcer{db: db, id: hex.EncodeToString(b), watchers: map[uint64]func(){}, closing: make(chan struct{})}
	a.notifies = a.notify
	return a
}

// committed is called after the commit of a transaction that asked to be
// announced: it calls the watchers and sees that a NOTIFY follows.
func (a *announcer) committed() {
	a.mu.Lock()
	watchers := make([]func(), 0, len(a.watchers))
	for _, w := range a.watchers {
		watchers = append(watchers, w)
	}
	start := false
	if !a.closed {
		a.pending = true
		if !a.sending {
			a.sending, start = true, true
			a.idle.Add(1)
		}
	}
	a.mu.Unlock()
	for _, w := range watchers {
		w()
	}
	if start {
		go a.run()
	}
}

// run sends a NOTIFY for the commits pending, waits AnnounceSpacing, and
// again while commits came in meanwhile; it returns after a spacing with
// none.
func (a *announcer) run() {
	defer a.idle.Done()
	for {
		a.mu.Lock()
		if !a.pending {
			a.sending = false
			a.mu.Unlock()
			return
		}
		a.pending = false
		a.mu.Unlock()
		a.notifies()
		t := time.NewTimer(AnnounceSpacing)
		select {
		case <-t.C:
		case <-a.closing:
			t.Stop()
		}
	}
}

// notify sends one NOTIFY, in a transaction that does not wait for the
// write-ahead log to reach the disk (a NOTIFY takes a transaction id, and a
// lost announcement costs a wake-up, not data).
func (a *announcer) notify() {
	ctx, cancel := context.WithTimeout(context.Background(), announceTimeout)
	defer cancel()
	_, _ = a.db.ExecContext(ctx, "BEGIN; SET LOCAL synchronous_commit = off; NOTIFY "+CommitChannel+", '"+a.id+"'; COMMIT")
}

// close sends what is pending at once and waits until it is sent; no NOTIFY
// follows (the watchers are still called).
func (a *announcer) close() {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.closing)
	}
	a.mu.Unlock()
	a.idle.Wait()
}

// watch adds fn to the watchers until the returned function is called.
func (a *announcer) watch(fn func()) (stop func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := a.nextID
	a.nextID++
	a.watchers[id] = fn
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		delete(a.watchers, id)
	}
}

// announcerOf returns the announcer of gdb's pool, or nil (SQLite).
func announcerOf(gdb *gorm.DB) *announcer {
	switch p := gdb.Statement.ConnPool.(type) {
	case pgPool:
		return p.ann
	case *pgTx:
		return p.ann
	}
	if p, ok := gdb.ConnPool.(pgPool); ok {
		return p.ann
	}
	return nil
}

// AnnounceCommit asks that tx be announced once it commits (see above). It
// reports false, and nothing is announced, when tx is not a PostgreSQL
// transaction of this package: on SQLite the runner learns of commits by
// the HTTP layer's wake-ups and its poll of the journal (events.RunnerOptions).
func AnnounceCommit(tx *gorm.DB) bool {
	t, ok := tx.Statement.ConnPool.(*pgTx)
	if !ok || t.ann == nil {
		return false
	}
	t.mu.Lock()
	t.announce = true
	t.mu.Unlock()
	return true
}

// WatchCommits calls fn after every commit announced through gdb's pool,
// from the committing goroutine (fn must not block), until stop is called.
// On SQLite it does nothing.
func WatchCommits(gdb *gorm.DB, fn func()) (stop func()) {
	a := announcerOf(gdb)
	if a == nil {
		return func() {}
	}
	return a.watch(fn)
}

// AnnouncerID is the payload of the NOTIFYs of gdb's pool ("" on SQLite):
// a listener that watches the pool's commits in process can skip them.
func AnnouncerID(gdb *gorm.DB) string {
	if a := announcerOf(gdb); a != nil {
		return a.id
	}
	return ""
}
