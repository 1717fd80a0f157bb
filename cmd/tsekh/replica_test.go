package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// An API-only replica (serve --no-dispatch) accepts writes and leaves their
// events to the dispatching replicas (here: dispatch --once).
func TestServe_NoDispatchReplica(t *testing.T) {
	t.Parallel()
	url := dbtest.Options(t, database.Postgres).PostgresURL
	const token = "no-dispatch-admin-token"
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	vars := map[string]string{"DATABASE_URL": url, "HTTP_ADDR": addr, "DISPATCH_INTERVAL": "1s", "BOOTSTRAP_ADMIN_TOKEN": token, "LOG_LEVEL": "error"}
	require.NoError(t, run(context.Background(), []string{"seed", "--demo"}, env(vars), io.Discard, io.Discard))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--no-dispatch"}, env(vars), io.Discard, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
		}
	})
	c := client{base: "http://" + addr, token: token, http: &http.Client{Timeout: 20 * time.Second}}
	require.Eventually(t, func() bool {
		st, _, err := c.do(http.MethodGet, "/readyz", nil)
		return err == nil && st == http.StatusOK
	},
		60*time.Second, 20*time.Millisecond, "serve did not come up")

	st, body, err := c.do(http.MethodPost, "/api/v1/orders", testOrder)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, st, "%s", body)
	eventStatus := func() string {
		st, body, err := c.do(http.MethodGet, "/api/v1/events?type=order.received", nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, st, "%s", body)
		var l struct{ Items []struct{ Status string } }
		require.NoError(t, json.Unmarshal(body, &l))
		require.Len(t, l.Items, 1)
		return l.Items[0].Status
	}
	time.Sleep(2500 * time.Millisecond) // past two ticks of a dispatcher, were one running
	require.Equal(t, "pending", eventStatus(), "the API-only replica does not dispatch")
	st, body, err = c.do(http.MethodGet, "/metrics", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, st)
	require.Contains(t, string(body), `tsekh_maintenance_runs_total{outcome="ok",task="expire_idempotency_keys"} 0`,
		"nor does it run the maintenance job (which runs at once when started)")

	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"dispatch", "--once"}, env(vars), &out, io.Discard))
	require.Contains(t, out.String(), ": 1 deliveries", "the order's event reached the plan (catalog events have no subscriber)")
	require.Equal(t, "processed", eventStatus())
}
