package events_test

// The dispatcher behind a fault proxy (faultnet) on PostgreSQL: a flapping
// link between the dispatcher and the database.

import (
	"bytes"
	"context"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/platform/faultnet"
)

// viaProxy returns the URL with its host replaced by the proxy's address.
func viaProxy(t *testing.T, raw string, p *faultnet.Proxy) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	u.Host = p.Addr()
	return u.String()
}

// The dispatcher's link flaps (silent, then cut, then back, in turn) while
// events are written; once it is steady again, the dispatcher catches up:
// every event reaches the local subscriber, once, and no session of the
// dispatcher is left waiting on a lock or idle in a transaction.
func TestFaults_FlappingLinkThenCatchUp(t *testing.T) {
	t.Parallel()
	opts, f := faultFixture(t)
	db := f.db

	u, err := url.Parse(opts.PostgresURL)
	require.NoError(t, err)
	p := faultnet.New(t, u.Host)
	dopts := opts
	app := "tsekh-flap-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	dopts.PostgresURL = viaProxy(t, opts.PostgresURL, p) + "&application_name=" + app
	dopts.MaxConns = 4
	dopts.StatementTimeout, dopts.LockTimeout, dopts.IdleInTxTimeout, dopts.ConnectTimeout = 30*time.Second, 10*time.Second, time.Minute, 2*time.Second
	ddb, err := database.Open(context.Background(), dopts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = database.Close(ddb) })
	d := events.NewDispatcher(ddb, f.reg, events.DispatcherOptions{BatchSize: 100, Timeout: 5 * time.Second, Lease: 10 * time.Second,
		BackoffBase: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond, MaxAttempts: 100})
	r := events.NewRunner(d, events.RunnerOptions{Interval: time.Second, ListenURL: dopts.PostgresURL})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); r.Wait() })
	require.NoError(t, r.Start(ctx))

	var written atomic.Int64
	stopWriting := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for i := int64(0); ; i++ {
			select {
			case <-stopWriting:
				return
			default:
			}
			add(t, db, "thing.created", i%50)
			written.Add(1)
			time.Sleep(2 * time.Millisecond)
		}
	}()
	time.Sleep(time.Second)
	for end := time.Now().Add(6 * time.Second); time.Now().Before(end); {
		p.Silence()
		time.Sleep(400 * time.Millisecond)
		p.Restore()
		time.Sleep(300 * time.Millisecond)
		p.Cut()
		time.Sleep(100 * time.Millisecond)
		p.Restore()
		time.Sleep(200 * time.Millisecond)
	}
	p.Restore()
	restored := time.Now()
	time.Sleep(time.Second)
	close(stopWriting)
	<-writerDone
	n := written.Load()
	var waiting int64
	require.NoError(t, database.Scan(db.Raw(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = ?`, app), &waiting))
	var idleInTx int64
	require.NoError(t, database.Scan(db.Raw(`SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%' AND application_name = ?`, app), &idleInTx))
	t.Logf("%d sessions idle in a transaction", idleInTx)
	t.Logf("%d events written; %d sessions waiting on locks at the end of the writes", n, waiting)
	require.Eventually(t, func() bool { return effects(t, db, "recorder") >= n }, 60*time.Second, 20*time.Millisecond,
		"every event reaches the local subscriber")
	t.Logf("caught up %s after the link was restored", time.Since(restored))
	requireOnce(t, db)
	require.Eventually(t, func() bool {
		var n int64
		return database.Scan(db.Raw(`SELECT count(*) FROM pg_stat_activity WHERE application_name = ? AND (wait_event_type = 'Lock' OR state LIKE 'idle in transaction%')`, app),
			&n) ==
			nil && n == 0
	}, 30*time.Second, 50*time.Millisecond, "no session waits on a lock or in an open transaction")
}

// The listener's link goes silent: the notifications of the commits
// meanwhile are lost, and no error says so. The listener finds out, while
// the link is still silent, when its connection does not answer its check,
// and connects again; once the link is back, the dispatcher catches up,
// with no tick to rescue it.
func TestFaults_SilentListenerReconnects(t *testing.T) {
	t.Parallel()
	opts, f := faultFixture(t)
	db := f.db
	u, err := url.Parse(opts.PostgresURL)
	require.NoError(t, err)
	p := faultnet.New(t, u.Host)
	var logs syncBuffer
	d := events.NewDispatcher(db, f.reg, events.DispatcherOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	r := events.NewRunner(d, events.RunnerOptions{Interval: time.Hour, ListenURL: viaProxy(t, opts.PostgresURL, p), ListenCheck: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); r.Wait() })
	require.NoError(t, r.Start(ctx))
	add(t, db, "thing.created", 1)
	require.Eventually(t, func() bool { return effects(t, db, "recorder") == 1 }, 30*time.Second, 10*time.Millisecond, "woken by NOTIFY")

	p.Silence()
	add(t, db, "thing.created", 2) // its NOTIFY goes nowhere
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "event listener disconnected") }, 30*time.Second, 20*time.Millisecond,
		"the listener gave up its silent connection while the link was still silent")
	p.Restore()
	require.Eventually(t, func() bool { return effects(t, db, "recorder") == 2 }, 60*time.Second, 10*time.Millisecond,
		"the listener connected again and woke the dispatcher")
}

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// faultFixture opens a PostgreSQL test database of its own (the fault
// proxy stands between it and its dispatcher) with the events fixture.
func faultFixture(t *testing.T) (database.Options, *fixture) {
	t.Helper()
	opts := dbtest.Options(t, database.Postgres)
	db, err := database.Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = database.Close(db) })
	return opts, newFixture(t, db)
}
