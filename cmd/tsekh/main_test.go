package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestRun_Help(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"help"}, env(nil), &out, io.Discard))
	require.Contains(t, out.String(), "tsekh serve")
	for _, cmd := range []string{"serve", "migrate", "seed", "dispatch"} {
		var stderr bytes.Buffer
		err := run(context.Background(), []string{cmd, "--help"}, env(nil), io.Discard, &stderr)
		require.Error(t, err, cmd)
		require.Contains(t, stderr.String(), "Usage: tsekh "+cmd, cmd)
	}
	require.Error(t, run(context.Background(), []string{"frobnicate"}, env(nil), io.Discard, io.Discard))
}

func TestRun_RefusesBadConfig(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"migrate"}, env(map[string]string{"DISPATCH_INTERVAL": "soon", "LOG_FORMAT": "xml"}), io.Discard, io.Discard)
	require.Error(t, err)
	require.Contains(t, err.Error(), "DISPATCH_INTERVAL")
}

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The start-up hint names a URL that works for every form of HTTP_ADDR.
func TestLocalURL(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		":8080":          "http://localhost:8080",
		"127.0.0.1:1":    "http://127.0.0.1:1",
		"[::1]:8080":     "http://[::1]:8080",
		"0.0.0.0:80":     "http://localhost",
		"[::]:8443":      "http://localhost:8443",
		"api.local:9000": "http://api.local:9000",
		"[::1]:80":       "http://[::1]",
		":80":            "http://localhost",
	} {
		require.Equal(t, want, localURL(addr), addr)
	}
}

// serveComesUp is how long serve may take to answer on a fresh SQLite
// file: its migrations take about 5 s under the race detector alone, and
// several times that beside the rest of the suite on two cores.
const serveComesUp = 90 * time.Second

// A newcomer's first run: serve on a fresh SQLite file prints an admin token
// that works, the demo catalog is there, and the server stops cleanly.
func TestRun_ServeOnFreshSQLite(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	vars := map[string]string{"SQLITE_PATH": filepath.Join(t.TempDir(), "tsekh.db"), "HTTP_ADDR": addr, "DISPATCH_INTERVAL": "1s", "SHOP_WEBHOOK_SECRET": "s3cret-value-of-at-least-32-bytes"}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, env(vars), &stdout, io.Discard) }()

	token := regexp.MustCompile(`tsk_[a-z0-9]+`)
	var tok string
	require.Eventually(t, func() bool {
		tok = token.FindString(stdout.String())
		if tok == "" {
			return false
		}
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, serveComesUp, 20*time.Millisecond, "serve did not come up")
	require.NotContains(t, stdout.String(), "s3cret-value-of-at-least-32-bytes", "secrets are masked when the configuration is printed")
	require.Contains(t, stdout.String(), "Try: curl -H 'Authorization: Bearer "+tok+"' http://"+addr+"/api/v1/me")

	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/products", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	require.Contains(t, string(body), "SHK-KUPE-1600")
	require.Eventually(t, func() bool {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer func() { _ = res.Body.Close() }()
		m, _ := io.ReadAll(res.Body)
		return strings.Contains(string(m), `tsekh_maintenance_runs_total{outcome="ok",task="expire_idempotency_keys"} 1`)
	}, 20*time.Second, 20*time.Millisecond, "serve runs the maintenance job at start")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}

	// The same database again: no new token, and dispatch --once finds nothing to do.
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"dispatch", "--once"}, env(vars), &out, io.Discard))
	require.True(t, strings.HasPrefix(out.String(), "dispatched "), out.String())
	out.Reset()
	require.NoError(t, run(context.Background(), []string{"seed", "--demo"}, env(vars), &out, io.Discard))
	require.Contains(t, out.String(), "nothing loaded")
	out.Reset()
	require.NoError(t, run(context.Background(), []string{"migrate"}, env(vars), &out, io.Discard))
	require.Contains(t, out.String(), "up to date")
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	return res.StatusCode, string(body)
}

// With METRICS_ADDR, serve answers /metrics (the dispatcher's included) on
// that address only, and stops that listener with the API.
func TestRun_ServeMetricsOnTheirOwnAddress(t *testing.T) {
	t.Parallel()
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	vars := map[string]string{"SQLITE_PATH": filepath.Join(t.TempDir(), "tsekh.db"), "HTTP_ADDR": addr, "METRICS_ADDR": metricsAddr,
		"BOOTSTRAP_ADMIN_TOKEN": "metrics-admin-token-0123456789"}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, env(vars), &stdout, io.Discard) }()
	require.Eventually(t, func() bool {
		res, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, serveComesUp, 20*time.Millisecond, "serve did not come up")

	status, body := get(t, "http://"+metricsAddr+"/metrics", "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "tsekh_events_pending")
	status, _ = get(t, "http://"+addr+"/metrics", vars["BOOTSTRAP_ADMIN_TOKEN"])
	require.Equal(t, http.StatusNotFound, status, "not on the API port, not even for an administrator")
	status, _ = get(t, "http://"+metricsAddr+"/api/v1/me", vars["BOOTSTRAP_ADMIN_TOKEN"])
	require.Equal(t, http.StatusNotFound, status, "nothing but the metrics on their address")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	_, err := net.DialTimeout("tcp", metricsAddr, time.Second)
	require.Error(t, err, "the metrics listener is closed")
}
