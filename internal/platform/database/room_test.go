package database_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// A server with no room for another session (here: a role allowed one
// session, which refuses a second with the same SQLSTATE, 53300, as a full
// server) makes a pool that needs a new connection wait for one, not fail:
// its statement runs as soon as the other session ends. A wait whose
// context ends first fails with the server's refusal.
func TestOpen_WaitsForRoomOnAFullServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := dbtest.New(t, database.Postgres)
	role := fmt.Sprintf("room_%d", time.Now().UnixNano())
	require.NoError(t, admin.Exec(`CREATE ROLE `+role+` LOGIN CONNECTION LIMIT 1`).Error)
	t.Cleanup(func() {
		require.NoError(t, admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = ?`, role).Error)
		require.NoError(t, admin.Exec(`DROP ROLE `+role).Error)
	})
	u, err := url.Parse(dbtest.PostgresURL())
	require.NoError(t, err)
	u.User = url.User(role)
	roleURL := u.String()

	connect := func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, roleURL) }
	held, err := database.WaitForRoom(ctx, connect) // the server may be full too
	require.NoError(t, err)
	_, err = pgx.Connect(ctx, roleURL)
	require.True(t, database.IsServerFull(err), "the role's second session is refused as on a full server: %v", err)

	// Open pings, which needs a connection, while there is no room.
	type opened struct {
		db  interface{ Close() error }
		err error
	}
	done := make(chan opened, 1)
	go func() {
		gdb, err := database.Open(ctx, database.Options{PostgresURL: roleURL, MaxConns: 1})
		if err != nil {
			done <- opened{err: err}
			return
		}
		sqlDB, err := gdb.DB()
		done <- opened{db: sqlDB, err: err}
	}()
	select {
	case o := <-done:
		t.Fatalf("the pool did not wait for room: %v", o.err)
	case <-time.After(500 * time.Millisecond): // several of its attempts
	}
	require.NoError(t, held.Close(ctx))
	var o opened
	select {
	case o = <-done:
	case <-time.After(database.RoomWait):
		t.Fatal("the pool still waits though the server has room")
	}
	require.NoError(t, o.err, "the pool's connection is made once the server has room")
	defer func() { require.NoError(t, o.db.Close()) }()

	// Now the pool's session holds the role's one place: a wait ends with
	// its context, with the server's refusal (or, when the context ended
	// during an attempt, its deadline).
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	calls := 0
	_, err = database.WaitForRoom(short, func(ctx context.Context) (*pgx.Conn, error) {
		calls++
		return pgx.Connect(ctx, roleURL)
	})
	require.True(t, database.IsServerFull(err) || errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err), "%v", err)
	require.Greater(t, calls, 1, "the server was asked again while the context lived")
}

// WaitForRoom does not ask again when the server refuses for another
// reason than a full house (the first refusals may be a full server's: the
// other tests share it).
func TestWaitForRoom_OnlyOnAFullServer(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(dbtest.PostgresURL())
	require.NoError(t, err)
	u.User = url.User(fmt.Sprintf("room_nobody_%d", time.Now().UnixNano()))
	var errs []error
	_, err = database.WaitForRoom(context.Background(), func(ctx context.Context) (*pgx.Conn, error) {
		c, err := pgx.Connect(ctx, u.String())
		errs = append(errs, err)
		return c, err
	})
	require.Error(t, err, "an unknown role is refused")
	require.False(t, database.IsServerFull(err))
	for _, e := range errs[:len(errs)-1] {
		require.True(t, database.IsServerFull(e), "asked again only after a full server's refusal: %v", e)
	}
}
