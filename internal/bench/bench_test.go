package bench_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/bench"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// TestBench_Run runs every measurement at a toy size: it checks that the
// bench works end to end and leaves nothing behind, not the figures.
func TestBench_Run(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		var progress bytes.Buffer
		res, err := bench.Run(context.Background(), bench.Options{
			DatabaseURL: dbtest.PostgresURL(), Events: 300, Journal: 5000, LatencyEvents: 20, Writes: 10, Rounds: 1,
			Progress: &progress,
		})
		require.NoError(t, err)
		require.Positive(t, res.WriteOverheadRatio)
		require.Positive(t, res.DispatchPerS)
		require.Equal(t, int64(600), res.Dispatch.Deliveries)
		require.Positive(t, res.LatencyP99Ms)
		require.GreaterOrEqual(t, res.LatencyP99Ms, res.LatencyP50Ms)
		require.Positive(t, res.JournalPageMs)
		require.Positive(t, res.DispatchHeapPeakMB)
		require.Contains(t, res.Claim.Plan, "events_partition_id", "the batch read must use the (partition, id) index")
		require.Contains(t, progress.String(), "bench: dispatch")
		require.NotContains(t, progress.String(), "\r", "not on a terminal: plain lines")
		require.Contains(t, bench.Summary(res), "write overhead")

		db := dbtest.New(t, database.Postgres)
		var schemas int64
		require.NoError(t, db.Raw("SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?", res.Schema).Scan(&schemas).Error)
		require.Zero(t, schemas, "the bench schema must be dropped")
	})
	t.Run("ErrSQLite", func(t *testing.T) {
		t.Parallel()
		_, err := bench.Run(context.Background(), bench.Options{})
		require.ErrorContains(t, err, "needs PostgreSQL")
	})
}
