package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A PostgreSQL server takes max_connections sessions (100 by default) from
// all its clients together. When two instances of the service overlap (a
// deploy), or other programs share the server, a new session can be
// refused for want of room (SQLSTATE 53300, "sorry, too many clients
// already"), though sessions end every moment. A pool's connection is then
// asked for again, with a short jittered back-off, for as long as the
// statement that needs it may wait (its context), and at most RoomWait:
// the request waits for a session as it waits for its pool's, rather than
// failing on a busy moment of the server's.

// RoomWait bounds how long the opening of a connection waits for the
// server to have room for it.
const RoomWait = time.Minute

// roomRetryBase is the first back-off; it doubles up to roomRetryMax.
const (
	roomRetryBase = 10 * time.Millisecond
	roomRetryMax  = 250 * time.Millisecond
)

// IsServerFull tells whether err is the server refusing a session because
// it has as many as it takes (53300).
func IsServerFull(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "53300"
}

// WaitForRoom runs connect until it succeeds or fails for another reason
// than a full server, ctx ends, or RoomWait has passed; it returns
// connect's last result.
func WaitForRoom[T any](ctx context.Context, connect func(context.Context) (T, error)) (T, error) {
	deadline := time.Now().Add(RoomWait)
	delay := roomRetryBase
	for {
		c, err := connect(ctx)
		if err == nil || !IsServerFull(err) || time.Now().After(deadline) {
			return c, err
		}
		half := delay / 2
		t := time.NewTimer(half + rand.N(half+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return c, err
		case <-t.C:
		}
		delay = min(2*delay, roomRetryMax)
	}
}

// roomConnector opens its connector's connections, waiting for room on a
// full server (WaitForRoom).
type roomConnector struct{ driver.Connector }

func (r roomConnector) Connect(ctx context.Context) (driver.Conn, error) {
	return WaitForRoom(ctx, r.Connector.Connect)
}
