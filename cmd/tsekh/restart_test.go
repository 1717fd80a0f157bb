package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// pgCluster is a throwaway PostgreSQL server of the test's own, which the
// test may stop and start (the shared server of the other tests must not be).
type pgCluster struct {
	t    *testing.T
	bin  string
	dir  string
	data string
	port int
}

// freePort returns a TCP port nobody listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// newPGCluster runs initdb into a fresh directory and starts the server on a
// free port, as the postgres OS user when the test runs as root. It fails
// when PostgreSQL's server binaries are not installed.
func newPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	require.NotEmpty(t, bins, "PostgreSQL's server binaries (/usr/lib/postgresql/*/bin) are needed to restart a database under load")
	dir, err := os.MkdirTemp("", "tsekh-pg-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	c := &pgCluster{t: t, bin: filepath.Dir(bins[len(bins)-1]), dir: dir, data: filepath.Join(dir, "data"), port: freePort(t)}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		require.NoError(t, err, "running as root: the postgres OS user runs the server")
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		require.NoError(t, os.Chown(dir, uid, gid))
	}
	c.pg("initdb", "-D", c.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	c.start()
	t.Cleanup(func() { _ = c.command("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop").Run() })
	return c
}

func (c *pgCluster) command(tool string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, tool)
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func (c *pgCluster) pg(tool string, args ...string) {
	c.t.Helper()
	out, err := c.command(tool, args...).CombinedOutput()
	require.NoError(c.t, err, "%s: %s", tool, out)
}

func (c *pgCluster) start() {
	c.t.Helper()
	c.pg("pg_ctl", "-D", c.data, "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60",
		"-o", fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", c.port, c.dir), "start")
}

// crash stops the server the way a crash does: no checkpoint, and the WAL
// not yet written (asynchronous commits among it) is lost.
func (c *pgCluster) crash() {
	c.t.Helper()
	c.pg("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "-t", "60", "stop")
}

func (c *pgCluster) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// client talks to a served tsekh.
type client struct {
	base, token string
	http        *http.Client
}

func (c client) do(method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

var testOrder = map[string]any{"customer": map[string]any{"name": "Иван Петров"}, "items": []map[string]any{{"sku": "SHK-KUPE-1600", "qty": 1}}}

// PostgreSQL crashes while orders keep coming: the service answers 503
// (readiness and API alike) while it is away, recovers by itself once it is
// back, and every order it accepted is dispatched. The crash also loses the
// dispatcher's lease bookkeeping that was committed without waiting for the
// disk, which must change nothing.
func TestServe_PostgresRestartUnderLoad(t *testing.T) {
	t.Parallel()
	pg := newPGCluster(t)
	const token = "restart-test-admin-token"
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	vars := map[string]string{"DATABASE_URL": pg.url(), "HTTP_ADDR": addr, "DISPATCH_INTERVAL": "1s", "BOOTSTRAP_ADMIN_TOKEN": token, "LOG_LEVEL": "error"}
	require.NoError(t, run(context.Background(), []string{"seed", "--demo"}, env(vars), io.Discard, io.Discard))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, env(vars), io.Discard, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
		}
	})
	c := client{base: "http://" + addr, token: token, http: &http.Client{Timeout: 20 * time.Second}}
	ready := func() int {
		st, _, err := c.do(http.MethodGet, "/readyz", nil)
		if err != nil {
			return 0
		}
		return st
	}
	require.Eventually(t, func() bool { return ready() == http.StatusOK }, 60*time.Second, 20*time.Millisecond, "serve did not come up")

	// Load: orders one after another until told to stop.
	var (
		mu         sync.Mutex
		accepted   []int64
		statuses   = map[int]int{}
		unexpected []string
	)
	stopLoad := make(chan struct{})
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		for {
			select {
			case <-stopLoad:
				return
			default:
			}
			st, body, err := c.do(http.MethodPost, "/api/v1/orders", testOrder)
			mu.Lock()
			switch {
			case err != nil:
				unexpected = append(unexpected, err.Error())
			case st == http.StatusCreated:
				var o struct{ ID int64 }
				_ = json.Unmarshal(body, &o)
				accepted = append(accepted, o.ID)
			case st != http.StatusServiceUnavailable:
				unexpected = append(unexpected, fmt.Sprintf("%d %s", st, body))
			}
			statuses[st]++
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	acceptedCount := func() int { mu.Lock(); defer mu.Unlock(); return len(accepted) }
	require.Eventually(t, func() bool { return acceptedCount() >= 10 }, 60*time.Second, 10*time.Millisecond, "no orders accepted")

	pg.crash()
	require.Eventually(t, func() bool { return ready() == http.StatusServiceUnavailable }, 30*time.Second, 20*time.Millisecond, "readyz while PostgreSQL is down")
	st, body, err := c.do(http.MethodGet, "/api/v1/orders", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, st, "%s", body)
	require.Contains(t, string(body), "urn:tsekh:problem:unavailable")
	st, _, err = c.do(http.MethodPost, "/api/v1/orders", testOrder)
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, st)
	time.Sleep(time.Second) // the dispatcher, too, meets the outage

	pg.start()
	require.Eventually(t, func() bool { return ready() == http.StatusOK }, 60*time.Second, 50*time.Millisecond, "no recovery after PostgreSQL came back")
	before := acceptedCount()
	require.Eventually(t, func() bool { return acceptedCount() >= before+10 }, 60*time.Second, 10*time.Millisecond, "orders are accepted again")
	close(stopLoad)
	<-loadDone

	mu.Lock()
	t.Logf("responses by status: %v", statuses)
	require.Empty(t, unexpected, "only 201 and 503 while PostgreSQL restarts")
	ids := append([]int64(nil), accepted...)
	mu.Unlock()
	require.Positive(t, statuses[http.StatusServiceUnavailable])

	// Nothing lost: every accepted order's event reaches the plan's backlog.
	db, err := database.Open(context.Background(), database.Options{PostgresURL: pg.url(), MaxConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = database.Close(db) })
	require.Eventually(t, func() bool {
		var missing int64
		err := database.Scan(db.Raw(`SELECT count(*) FROM sales_orders o WHERE o.id IN ? AND NOT EXISTS (SELECT 1 FROM plan_backlog b WHERE b.order_id = o.id)`, ids), &missing)
		return err == nil && missing == 0
	}, 60*time.Second, 50*time.Millisecond, "every accepted order reached the plan's backlog")
	var events, orders int64
	require.NoError(t, database.Scan(db.Raw(`SELECT count(*) FROM events WHERE type = 'order.received'`), &events))
	require.NoError(t, database.Scan(db.Raw(`SELECT count(*) FROM sales_orders`), &orders))
	require.Equal(t, orders, events, "each order with its event")
	require.GreaterOrEqual(t, orders, int64(len(ids)))
	var pending int64
	require.Eventually(t, func() bool {
		return database.Scan(db.Raw(`SELECT count(*) FROM events e JOIN events_lanes l ON l.partition = e.partition WHERE e.id > l.position`), &pending) == nil && pending == 0
	}, 60*time.Second, 50*time.Millisecond, "nothing pending")
}
