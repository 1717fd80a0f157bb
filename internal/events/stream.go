package events

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/page"
)

// StreamOptions shape a replica's live journal.
type StreamOptions struct {
	// MaxClients bounds the clients connected at once
	// (EVENTS_STREAM_MAX_CLIENTS); Join refuses more with ErrStreamFull.
	MaxClients int
	// Poll is how often the stream looks at the journal when nothing woke
	// it (a commit's NOTIFY or Wake): the fallback. Default 1s.
	Poll time.Duration
	// Keep is how many of the latest events are held in memory for the
	// clients that are caught up. Default 4096.
	Keep   int
	Logger *slog.Logger
	// Frame, when set, encodes an event as a client receives it. The
	// events held in memory are encoded once, for every client.
	Frame func(Entry) ([]byte, error)
}

// StreamReadLimit is the most events a client reads from the database at
// once while it catches up.
const StreamReadLimit = 500

var (
	// ErrStreamFull is Join's answer when the replica serves MaxClients
	// stream clients already.
	ErrStreamFull = errors.New("events: the stream has as many clients as it may serve")
	// ErrStreamClosed is Join's answer once the stream is closed (the
	// replica shuts down).
	ErrStreamClosed = errors.New("events: the stream is closed")
)

// Stream is a replica's live journal: the events as they become final, in
// id order, for clients that each read from a position of their own.
//
// Commit order is not id order on PostgreSQL, so the stream moves by the
// commit horizon (horizon.go), surveyed on its own (a commitHorizon of its
// own, as the dispatcher's is advanced by its passes alone): an event is
// handed to a client only once no transaction still in flight can commit a
// lower id. A client behind the events held in memory catches up from the
// database, its filter applied there; one that is caught up takes the new
// events from memory, its filter applied in memory, so that every commit
// costs one read of the journal whatever the number of clients.
//
// The stream runs a goroutine while it has clients: woken by Wake (the
// runner's LISTEN/NOTIFY and the HTTP layer's commits call it) and, as the
// fallback, every Poll.
type Stream struct {
	db  *gorm.DB
	drv driver
	j   *Journal
	opt StreamOptions

	wake chan struct{}

	mu       sync.Mutex
	clients  int
	running  bool
	closed   bool
	done     chan struct{} // closed by Close
	stopLoop context.CancelFunc
	horizon  *commitHorizon
	ready    bool       // from and to are known
	from, to int64      // recent holds every event with an id in (from, to]
	recent   []streamed // oldest first
	changed  chan struct{}
}

// NewStream returns the live journal over db.
func NewStream(db *gorm.DB, j *Journal, opt StreamOptions) *Stream {
	if opt.Poll <= 0 {
		opt.Poll = time.Second
	}
	if opt.Keep <= 0 {
		opt.Keep = 4096
	}
	if opt.MaxClients <= 0 {
		opt.MaxClients = 100
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	drv := driverFor(db)
	return &Stream{db: db, drv: drv, j: j, opt: opt,
		wake: make(chan struct{}, 1), done: make(chan struct{}), changed: make(chan struct{})}
}

// Wake asks the stream to look at the journal now; it never blocks.
func (s *Stream) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Clients returns how many clients are connected.
func (s *Stream) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients
}

// Close ends every client's stream (their Done channel closes) and refuses
// new ones: the server's graceful shutdown calls it, as a stream never ends
// by itself.
func (s *Stream) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	close(s.done)
	if s.stopLoop != nil {
		s.stopLoop()
	}
}

// streamed is an event held in memory, with its frame (StreamOptions.Frame).
type streamed struct {
	Entry
	frame []byte
}

// StreamClient is one connected client.
type StreamClient struct {
	s    *Stream
	once sync.Once
}

// Join connects a client. It returns ErrStreamFull beyond MaxClients and
// ErrStreamClosed once the stream is closed. The client must Leave.
func (s *Stream) Join() (*StreamClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrStreamClosed
	}
	if s.clients >= s.opt.MaxClients {
		return nil, ErrStreamFull
	}
	s.clients++
	if !s.running {
		s.running, s.ready, s.recent = true, false, nil
		s.horizon = &commitHorizon{}
		ctx, cancel := context.WithCancel(context.Background())
		s.stopLoop = cancel
		go s.loop(ctx)
	}
	return &StreamClient{s: s}, nil
}

// Leave disconnects the client.
func (c *StreamClient) Leave() {
	c.once.Do(func() {
		c.s.mu.Lock()
		c.s.clients--
		c.s.mu.Unlock()
		c.s.Wake() // the loop stops when it was the last
	})
}

// Done is closed when the stream closes.
func (c *StreamClient) Done() <-chan struct{} { return c.s.done }

// Position waits until the stream knows its horizon and returns it: where a
// client that wants no history starts.
func (c *StreamClient) Position(ctx context.Context) (int64, error) {
	s := c.s
	for {
		s.mu.Lock()
		ready, to, changed := s.ready, s.to, s.changed
		s.mu.Unlock()
		if ready {
			return to, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-s.done:
			return 0, ErrStreamClosed
		}
	}
}

// StreamRead is what one Read found.
type StreamRead struct {
	Entries []Entry // the events after the position that the filter selects, oldest first
	// Frames, when not nil, holds each entry's frame (StreamOptions.Frame),
	// or nil for one to be encoded by the caller.
	Frames [][]byte
	// Position is how far the client has read: every final event up to it
	// that the filter selects is in Entries or was in an earlier read.
	Position int64
	// Wait, when not nil, means the client is caught up: it is closed once
	// more events are final.
	Wait <-chan struct{}
}

// Read returns the events with an id above after that f selects and that are
// final (see Stream), at most StreamReadLimit of them from the database, or
// all those held in memory. f's AfterID, UpToID and Oldest are the stream's.
func (c *StreamClient) Read(ctx context.Context, f Filter, after int64) (StreamRead, error) {
	s := c.s
	s.mu.Lock()
	ready, from, to, changed := s.ready, s.from, s.to, s.changed
	var held []Entry
	var frames [][]byte
	if ready && after >= from {
		for _, e := range s.recent {
			if e.ID > after && f.matches(e.Entry) {
				held = append(held, e.Entry)
				frames = append(frames, e.frame)
			}
		}
	}
	s.mu.Unlock()
	switch {
	case !ready:
		return StreamRead{Position: after, Wait: changed}, nil
	case after >= from:
		return StreamRead{Entries: held, Frames: frames, Position: max(after, to), Wait: changed}, nil
	}
	// Behind what memory holds: from the database, up to where memory starts.
	f.AfterID, f.UpToID, f.Oldest = after, from, true
	es, next, err := s.j.List(ctx, f, page.Request{Limit: StreamReadLimit})
	if err != nil {
		return StreamRead{}, err
	}
	r := StreamRead{Entries: es, Position: from}
	if next != "" {
		r.Position = es[len(es)-1].ID
	}
	return r, nil
}

// matches tells whether the filter selects the entry, as List would; the
// status is not looked at (a streamed event's status is the one it had
// when it became final).
func (f Filter) matches(e Entry) bool {
	switch {
	case f.Type != "" && e.Type != f.Type,
		f.AggregateType != "" && e.AggregateType != f.AggregateType,
		f.AggregateID != 0 && e.AggregateID != f.AggregateID,
		f.ActorID != 0 && (e.Actor == nil || e.Actor.ID != f.ActorID),
		!f.Since.IsZero() && e.CreatedAt.Before(f.Since),
		!f.Until.IsZero() && !e.CreatedAt.Before(f.Until),
		slices.Contains(f.HideAggregateTypes, e.AggregateType),
		f.AfterID != 0 && e.ID <= f.AfterID,
		f.UpToID != 0 && e.ID > f.UpToID,
		f.CausedBy != 0 && (e.CausedBy == nil || *e.CausedBy != f.CausedBy),
		f.CorrelationID != "" && (e.CorrelationID == nil || *e.CorrelationID != f.CorrelationID):
		return false
	}
	return true
}

// loop follows the horizon while the stream has clients.
func (s *Stream) loop(ctx context.Context) {
	t := time.NewTicker(s.opt.Poll)
	defer t.Stop()
	s.advance(ctx)
	for {
		select {
		case <-ctx.Done():
			s.stopped()
			return
		case <-s.wake:
		case <-t.C:
		}
		s.mu.Lock()
		if s.clients == 0 {
			// The last client left: stop, and start afresh with the next,
			// so that nothing is read while no one listens.
			s.running, s.ready, s.recent = false, false, nil
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.advance(ctx)
	}
}

func (s *Stream) stopped() {
	s.mu.Lock()
	s.running = false
	s.mu.Unlock()
}

// advance surveys the horizon and takes in the events that became final.
func (s *Stream) advance(ctx context.Context) {
	s.mu.Lock()
	h := s.horizon
	s.mu.Unlock()
	sv, err := s.survey(ctx, h.pendingXIDs())
	if err != nil {
		if ctx.Err() == nil {
			s.opt.Logger.Warn("event stream: survey failed", "err", err)
			s.wakeAfter(ctx, time.Second)
		}
		return
	}
	safe, visible := h.advance(sv)
	if visible > safe {
		// A transaction that may commit below the events visible is in
		// flight: look again shortly, as the dispatcher does.
		s.wakeAfter(ctx, 2*time.Millisecond)
	}
	if _, known := h.current(); !known {
		return
	}
	s.mu.Lock()
	if !s.ready {
		// The first horizon: the stream starts there; a client behind it
		// catches up from the database.
		s.ready, s.from, s.to, s.recent = true, safe, safe, nil
		s.broadcastLocked()
		s.mu.Unlock()
		return
	}
	to := s.to
	s.mu.Unlock()
	if safe <= to {
		return
	}
	fresh, ok := s.read(ctx, to, safe)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recent = append(s.recent, fresh...)
	s.to = safe
	if n := len(s.recent) - s.opt.Keep; n > 0 {
		s.from = s.recent[n-1].ID
		s.recent = slices.Clone(s.recent[n:])
	}
	s.broadcastLocked()
}

// read reads the journal's entries in (from, to], oldest first, with their
// frames; false when the journal could not be read (it is looked at again
// in a second).
func (s *Stream) read(ctx context.Context, from, to int64) ([]streamed, bool) {
	var fresh []streamed
	for pos := from; pos < to; {
		es, next, err := s.j.List(ctx, Filter{AfterID: pos, UpToID: to, Oldest: true}, page.Request{Limit: StreamReadLimit})
		if err != nil {
			if ctx.Err() == nil {
				s.opt.Logger.Warn("event stream: reading the journal failed", "err", err)
				s.wakeAfter(ctx, time.Second)
			}
			return nil, false
		}
		for _, e := range es {
			st := streamed{Entry: e}
			if s.opt.Frame != nil {
				if st.frame, err = s.opt.Frame(e); err != nil {
					st.frame = nil // the client encodes it
				}
			}
			fresh = append(fresh, st)
		}
		if next == "" {
			break
		}
		pos = es[len(es)-1].ID
	}
	return fresh, true
}

func (s *Stream) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Stream) wakeAfter(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	go func() {
		defer t.Stop()
		select {
		case <-t.C:
			s.Wake()
		case <-ctx.Done():
		}
	}()
}

// survey reads what the horizon needs: the highest id visible and, on
// PostgreSQL, the transactions writing events and which of pending still
// run (as the dispatcher's survey does, in one snapshot).
func (s *Stream) survey(ctx context.Context, pending []string) (surveyed, error) {
	return s.drv.streamSurvey(ctx, s.db, pending)
}

// NewestID returns the highest event id visible, 0 for an empty journal.
func (s *Stream) NewestID(ctx context.Context) (int64, error) {
	return s.drv.newestID(ctx, s.db)
}
