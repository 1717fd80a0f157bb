package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"gorm.io/gorm"
)

// listenerStatements are how a database announces the commits that wrote
// events, after River's driver (its SupportsListener and GetListener): the
// runner listens where the driver has a listener and polls the journal
// where it has none, and no logic file asks which database that is.
type listenerStatements interface {
	// supportsListener tells whether other sessions hear of commits
	// (PostgreSQL's NOTIFY, sent by database.AnnounceCommit's pools).
	supportsListener() bool
	// listener returns a listener on the database at url; nil when the
	// driver has none.
	listener(url string) commitListener
	// announcer is the payload of the announcements of pool's commits, ""
	// when its commits are not announced (SQLite).
	announcer(pool *gorm.DB) string
	// watchCommits calls wake after each commit of pool that wrote events,
	// in this process, from the committing goroutine, until stop is called;
	// on a pool whose commits are not announced it does nothing.
	watchCommits(pool *gorm.DB, wake func()) (stop func())
}

// commitListener hears, on a connection of its own, the announcements of
// commits that wrote events.
type commitListener interface {
	// connect opens the connection and starts listening.
	connect(ctx context.Context) error
	// wait returns the payload of the next announcement (the announcing
	// pool's id, announcer), or errNoAnnouncement when ctx's deadline
	// passes first.
	wait(ctx context.Context) (string, error)
	// ping checks that the connection answers.
	ping(ctx context.Context) error
	// close closes the connection.
	close(ctx context.Context) error
}

// errNoAnnouncement is a listener's wait that ended at its deadline.
var errNoAnnouncement = errors.New("events: no announcement before the deadline")

// ListenForCommits calls wake on every announcement of a commit that wrote
// events (database.AnnounceCommit), and once on each (re)connection, for
// what was committed while it was not listening, until ctx is cancelled;
// it reconnects after a lost connection. db names the database: where its
// driver has no listener (SQLite), ListenForCommits returns at once.
func ListenForCommits(ctx context.Context, db *gorm.DB, url string, wake func(), log *slog.Logger) {
	drv := driverFor(db)
	if !drv.supportsListener() {
		return
	}
	listenForCommits(ctx, drv.listener(url), wake, log, listenWatch{check: 30 * time.Second})
}

// listenWatch tunes listenForCommits.
type listenWatch struct {
	// check is how long the listener waits for an announcement before it
	// checks that its connection answers: a link gone silent brings no
	// error, only no announcement.
	check time.Duration
	// skip are the payloads of the pools whose commits are heard in process.
	skip []string
	// connected, when set, is told of each connection, once its first
	// wake-up has been given.
	connected func()
}

// listenForCommits is ListenForCommits on a listener, skipping the
// announcements whose payload is one of w.skip.
func listenForCommits(ctx context.Context, l commitListener, wake func(), log *slog.Logger, w listenWatch) {
	for ctx.Err() == nil {
		err := listenOnce(ctx, l, wake, w)
		if ctx.Err() != nil || err == nil {
			return
		}
		log.Warn("event listener disconnected; reconnecting", "err", ErrorText(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func listenOnce(ctx context.Context, l commitListener, wake func(), w listenWatch) error {
	if err := l.connect(ctx); err != nil {
		return err
	}
	defer func() { _ = l.close(context.Background()) }()
	wake() // events committed while we were not listening
	if w.connected != nil {
		w.connected()
	}
	for {
		// After a quiet while the connection is checked, and made again if
		// it does not answer.
		wctx, cancel := context.WithTimeout(ctx, w.check)
		payload, err := l.wait(wctx)
		cancel()
		switch {
		case err == nil:
			if !slices.Contains(w.skip, payload) {
				wake()
			}
			continue
		case ctx.Err() != nil:
			return nil
		case !errors.Is(err, errNoAnnouncement):
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = l.ping(pctx)
		cancel()
		if err != nil {
			return fmt.Errorf("the listening connection does not answer: %w", err)
		}
	}
}
