package bench_test

import (
	"bytes"
	"context"
	"testing"
	"time"

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
			DatabaseURL: dbtest.PostgresURL(), Events: 300, Journal: 5000, LatencyEvents: 20, Writes: 10, Rounds: 1, WriteBlock: 5, DataRowBlocks: 2, DataRowTx: 5, WritersTime: 200 * time.Millisecond,
			IsolationEvents: 80, IsolationDelay: 20 * time.Millisecond, XminDuration: 300 * time.Millisecond,
			StreamEvents: 20, StreamClients: 3, Progress: &progress,
		})
		require.NoError(t, err)
		require.Equal(t, bench.Steps, res.Steps)
		require.Positive(t, res.WriteOverheadRatio)
		require.Equal(t, 5, res.Write.BlockOrders)
		require.Equal(t, 2, res.Write.Pairs, "two pairs of blocks of five in the round of ten")
		require.NotZero(t, res.WriteAddedUs)
		require.Equal(t, res.Write.AddedUs, res.WriteAddedUs)
		require.Positive(t, res.Write.DataRow.DataOnlyUs)
		require.Positive(t, res.Write.DataRow.WithEventUs)
		require.Equal(t, res.Write.DataRow.AddedUs, res.DataRowAddedUs)
		require.Positive(t, res.Writers.Commits)
		require.Equal(t, 8, res.Writers.Writers)
		// Seconds is rounded to the millisecond and the rate to the unit:
		// the rate must lie between what the rounded time's two ends give.
		w := res.Writers
		require.GreaterOrEqual(t, res.ConcurrentWritesPerS, float64(w.Commits)/(w.Seconds+0.0005)-0.5)
		require.LessOrEqual(t, res.ConcurrentWritesPerS, float64(w.Commits)/(w.Seconds-0.0005)+0.5)
		require.Equal(t, w.PerS, res.ConcurrentWritesPerS)
		require.Positive(t, res.DispatchPerS)
		require.Equal(t, int64(600), res.Dispatch.Deliveries)
		require.Positive(t, res.DispatchFourPerS)
		require.Equal(t, int64(1200), res.DispatchFour.Deliveries)
		require.Positive(t, res.LatencyP99Ms)
		require.GreaterOrEqual(t, res.LatencyP99Ms, res.LatencyP50Ms)
		require.Equal(t, 20, res.Latency.Events)

		iso := res.Isolation
		require.Equal(t, []string{"alone", "slow", "slow", "alone", "alone", "slow", "slow", "alone"}, iso.Blocks)
		require.Len(t, iso.BlockP99Ms, 8)
		require.Equal(t, 40, iso.Alone.Events, "each event written reaches the local subscriber once, in its block")
		require.Equal(t, 40, iso.Slow.Events)
		require.Positive(t, iso.SlowCalls, "the outside subscriber must have been slow while the slow blocks were measured")
		require.InDelta(t, iso.Slow.P99Ms/iso.Alone.P99Ms, res.IsolationP99Ratio, 0.001)

		x := res.Xmin
		require.Positive(t, x.Before.Events)
		require.Equal(t, x.Before.Written, x.Before.Events)
		require.Positive(t, x.During.Events)
		require.Equal(t, x.During.Written, x.During.Events)
		require.Positive(t, x.SnapshotAge, "the snapshot must be held while the events are written")
		require.InDelta(t, x.During.P99Ms/x.Before.P99Ms, res.XminP99Ratio, 0.001)

		require.Equal(t, 60, res.StreamSSE.Events, "each event written reaches each SSE client once")
		require.Equal(t, 3, res.StreamSSE.Clients)
		require.Positive(t, res.StreamSSEP99Ms)

		require.Positive(t, res.JournalPageMs)
		require.Positive(t, res.DispatchHeapPeakMB)
		require.Contains(t, res.Claim.Plan, "events_partition_id", "the batch read must use the (partition, id) index")
		require.Contains(t, progress.String(), "bench: dispatch")
		require.NotContains(t, progress.String(), "\r", "not on a terminal: plain lines")
		for _, line := range []string{"write overhead", "writers", "dispatch, four", "isolation", "xmin horizon", "journal page", "stream (SSE)"} {
			require.Contains(t, bench.Summary(res), line)
		}

		db := dbtest.New(t, database.Postgres)
		var schemas int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?", res.Schema), &schemas))
		require.Zero(t, schemas, "the bench schema must be dropped")
	})
	t.Run("Only", func(t *testing.T) {
		t.Parallel()
		res, err := bench.Run(context.Background(), bench.Options{DatabaseURL: dbtest.PostgresURL(), LatencyEvents: 10, Only: []string{"latency"}})
		require.NoError(t, err)
		require.Equal(t, []string{"latency"}, res.Steps)
		require.Equal(t, 10, res.Latency.Events)
		require.Zero(t, res.DispatchPerS)
		require.NotContains(t, bench.Summary(res), "dispatch")
	})
	t.Run("ErrUnknownStep", func(t *testing.T) {
		t.Parallel()
		_, err := bench.Run(context.Background(), bench.Options{DatabaseURL: dbtest.PostgresURL(), Only: []string{"latency", "dispach"}})
		require.ErrorContains(t, err, `no step "dispach"`)
	})
	t.Run("ErrSQLite", func(t *testing.T) {
		t.Parallel()
		_, err := bench.Run(context.Background(), bench.Options{})
		require.ErrorContains(t, err, "needs PostgreSQL")
	})
}
