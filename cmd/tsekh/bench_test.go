package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

func TestRun_Bench(t *testing.T) {
	t.Parallel()
	t.Run("Only", func(t *testing.T) {
		t.Parallel()
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"bench", "--only", "latency,isolation", "--latency-events", "8",
			"--isolation-events", "8", "--isolation-delay", "10ms"},
			env(map[string]string{"DATABASE_URL": dbtest.PostgresURL()}), &stdout, &stderr)
		require.NoError(t, err)
		var res struct {
			Steps     []string `json:"steps"`
			Latency   struct{ Events int }
			Isolation struct {
				Events  int     `json:"events"`
				DelayMs float64 `json:"outside_delay_ms"`
			}
		}
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
		require.Equal(t, []string{"latency", "isolation"}, res.Steps)
		require.Equal(t, 8, res.Latency.Events)
		require.Equal(t, 8, res.Isolation.Events)
		require.InDelta(t, 10, res.Isolation.DelayMs, 0.001)
		require.Contains(t, stderr.String(), "isolation")
		require.NotContains(t, stderr.String(), "write overhead")
	})
	t.Run("ErrUnknownStep", func(t *testing.T) {
		t.Parallel()
		err := run(context.Background(), []string{"bench", "--only", "latency,xmn"},
			env(map[string]string{"DATABASE_URL": dbtest.PostgresURL()}), io.Discard, io.Discard)
		require.ErrorContains(t, err, `no step "xmn"`)
	})
}
