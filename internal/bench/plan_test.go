package bench_test

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/bench"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// TestBench_Plan runs tsekh bench plan at a toy size: it checks that it
// works end to end (the copies of the wardrobe make the live work asked
// for, every launch at once succeeds), not the figures.
func TestBench_Plan(t *testing.T) {
	t.Parallel()
	res, err := bench.RunPlan(context.Background(), bench.PlanOptions{DatabaseURL: dbtest.PostgresURL(), Sizes: []int{600},
		Launches: 3, Concurrent: 3, Replans: 1, Priorities: 1, ShortageItems: 300, ShortageRuns: 2, Progress: io.Discard})
	require.NoError(t, err)
	require.Len(t, res.Sizes, 1)
	f := res.Sizes[0]
	require.InDelta(t, 600, f.LiveOps, 56, "copies of a 56-operation wardrobe")
	require.Equal(t, f.LiveOps/56, f.LiveOrders)
	require.Equal(t, 3, f.ConcurrentOK)
	require.Positive(t, f.LaunchP99ms)
	require.Positive(t, f.ReplanMedianMs)
	require.Positive(t, f.PriorityLastMs)
	require.NotNil(t, res.Shortages)
	require.Equal(t, 300, res.Shortages.Items)
	require.Positive(t, res.Shortages.MaterialsOut)
	require.Positive(t, res.Shortages.P50ms)
}
