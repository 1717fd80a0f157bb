package dbtest

import (
	"context"
	"database/sql/driver"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// A new session costs the server a backend's start (about 20 ms of CPU on
// a two-core machine) and then the warming of its caches: the catalogue's
// entries and the plans of every table and statement it touches. Each
// test's service opens several (its requests, its dispatcher's lanes). So a
// schema the pool keeps (pool.go) keeps its sessions too, and the next test
// that takes the schema opens its connections from them. In the API
// package alone (2026-12-04) the server's CPU went from 103-121 s to 81-91 s
// a run, and the sessions opened from about 850 to about 480:
//
//   - each test still has a connection pool (a *sql.DB) of its own, closed
//     when its test ends: a goroutine a test left behind finds it closed,
//     never the next test's data. Only the sessions under it carry on;
//   - a session is kept only when it is idle, outside any transaction, and
//     answers a reset of what a session may hold (its settings, advisory
//     locks, LISTENs, cursors, temporary tables, sequences' state); its
//     prepared statements stay, as the schema's structure is the copy's
//     (the pool drops a schema whose structure changed, and its sessions
//     with it);
//   - only dbtest.New's pools use them: a test that opens its own pool
//     (Options) with other settings gets sessions of its own;
//   - a binary keeps at most maxKept idle sessions, ends those idle longer
//     than keptFor (a kept session is worth keeping for the next test, which
//     starts at once or not soon), and ends them all when the server
//     refuses a connection for having too many; the connection is then
//     asked for again until the server has room (database.WaitForRoom):
//     make test runs four test binaries at once, and the server takes 100
//     sessions in all by default.

// maxKept bounds the idle sessions a test binary keeps, for all its
// schemas.
const maxKept = 12

// keptFor is how long a session is kept idle.
const keptFor = 2 * time.Second

// kept counts the binary's idle kept sessions.
var kept struct {
	mu sync.Mutex
	n  int
}

// reserve takes a place for an idle session, if one is left.
func reserve() bool {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if kept.n >= maxKept {
		return false
	}
	kept.n++
	return true
}

// unreserve gives n places back.
func unreserve(n int) {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	kept.n -= n
}

// sessionReset puts a session back as it started, but for its prepared
// statements (DISCARD ALL would deallocate them under pgx's cache).
const sessionReset = "RESET ALL; SELECT pg_advisory_unlock_all(); UNLISTEN *; CLOSE ALL; DISCARD TEMP; DISCARD SEQUENCES"

// sessions are the idle sessions of one pooled schema.
type sessions struct {
	mu     sync.Mutex
	idle   []idleSession
	closed bool
}

// idleSession is a kept session and when it was kept.
type idleSession struct {
	conn  *stdlib.Conn
	since time.Time
}

// wrap is a database.Options.WrapConnector: the pool's connections come
// from the idle sessions first, and go back to them when the pool closes
// them.
func (s *sessions) wrap(c driver.Connector) driver.Connector {
	return keepingConnector{Connector: c, s: s}
}

// take returns an idle session, if there is one.
func (s *sessions) take() *stdlib.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.idle) == 0 {
		return nil
	}
	c := s.idle[len(s.idle)-1]
	s.idle = s.idle[:len(s.idle)-1]
	unreserve(1)
	return c.conn
}

// keep resets the session and keeps it; it reports false when the session
// is not fit to be kept, for the caller to close.
func (s *sessions) keep(c *stdlib.Conn) bool {
	pc := c.Conn()
	if pc.IsClosed() || pc.PgConn().TxStatus() != 'I' {
		return false
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed || !reserve() {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := pc.PgConn().Exec(ctx, sessionReset).ReadAll(); err != nil {
		unreserve(1)
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		unreserve(1)
		return false
	}
	s.idle = append(s.idle, idleSession{conn: c, since: time.Now()})
	return true
}

// close ends the idle sessions; sessions given back later are ended too.
func (s *sessions) close() {
	s.endIdle(true)
}

// endIdle ends the idle sessions, and, when closing, those given back
// later.
func (s *sessions) endIdle(closing bool) {
	s.mu.Lock()
	idle := s.idle
	s.idle = nil
	s.closed = s.closed || closing
	s.mu.Unlock()
	unreserve(len(idle))
	for _, c := range idle {
		_ = c.conn.Close()
	}
}

// endStale ends the sessions kept idle since before t.
func (s *sessions) endStale(t time.Time) {
	s.mu.Lock()
	var stale []idleSession
	fresh := s.idle[:0]
	for _, c := range s.idle { // oldest first
		if c.since.Before(t) {
			stale = append(stale, c)
		} else {
			fresh = append(fresh, c)
		}
	}
	s.idle = fresh
	s.mu.Unlock()
	unreserve(len(stale))
	for _, c := range stale {
		_ = c.conn.Close()
	}
}

// keepingConnector opens a pool's connections from the kept sessions.
type keepingConnector struct {
	driver.Connector
	s *sessions
}

func (k keepingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if c := k.s.take(); c != nil {
		return keptConn{stdConn: c, s: k.s}, nil
	}
	c, err := k.Connector.Connect(ctx)
	if database.IsServerFull(err) {
		// The binary's idle sessions go first; the pool's connector asks
		// again (database.WaitForRoom).
		pool.endIdleSessions()
	}
	if err != nil {
		return nil, err
	}
	return keptConn{stdConn: c.(*stdlib.Conn), s: k.s}, nil // pgx's connector's
}

// keptConn is a pool's connection whose session outlives the pool. It
// embeds pgx's connection under another name (stdConn), so that the
// methods the pool and the database package call on it (Conn among them)
// stay its own.
type keptConn struct {
	*stdConn
	s *sessions
}

type stdConn = stdlib.Conn

// Close gives the session back to be kept, or ends it.
func (c keptConn) Close() error {
	if c.s.keep(c.stdConn) {
		return nil
	}
	return c.stdConn.Close()
}
