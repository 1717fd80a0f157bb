package cutting

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// A short list above its bound after one run of the search is searched
// again from other random numbers, and the best of the runs is kept:
// standard instance 9 of class III with 40 items takes 8 sheets after
// the first run and 7 (its bound) after the runs that follow.
func TestSearch_ShortListRunsAgain(t *testing.T) {
	t.Parallel()
	p, e, lb := standardBounded(t, 2, 40, 9)
	first := e.searchRun(&p, 0, lb, time.Now().Add(time.Minute))
	require.NotNil(t, first)
	require.Greater(t, e.cost(first).sheets, lb, "the first run stays above the bound")

	plan, err := Optimise(p)
	require.NoError(t, err)
	require.Equal(t, lb, plan.Totals.Sheets, "a later run reaches it")
	checkPlan(t, p, plan)

	// Runs: 1 is the first run alone (an estimate's); more than five, or
	// fewer than none, is refused.
	p.Runs = 1
	once, err := Optimise(p)
	require.NoError(t, err)
	require.Equal(t, e.cost(first).sheets, once.Totals.Sheets)
	for _, bad := range []int{-1, searchRuns + 1} {
		p.Runs = bad
		_, err = Optimise(p)
		require.Equal(t, "runs", apperr.As(err).Fields[0].Field, "runs %d", bad)
	}
}

// The four short runs leave a few lists above their bound that a longer
// run from random numbers of its own brings down: standard instance 4 of
// class VII with 40 items takes 13 sheets after four runs and 12 (its
// bound) after the fifth, with eight times the effort.
func TestSearch_LongLastRun(t *testing.T) {
	t.Parallel()
	p, _, lb := standardBounded(t, 6, 40, 4)

	p.Runs = searchRuns - 1
	short, err := Optimise(p)
	require.NoError(t, err)
	require.Equal(t, lb+1, short.Totals.Sheets, "four short runs stay above the bound")

	p.Runs = 0
	plan, err := Optimise(p)
	require.NoError(t, err)
	require.Equal(t, lb, plan.Totals.Sheets, "the long run reaches it")
	checkPlan(t, p, plan)
}

// standardBounded is standard instance k of class c with n items, its
// search bounded by its effort alone (the default minute cut the runs
// short once beside stress-ng), its engine and its lower bound.
func standardBounded(t *testing.T, c, n, k int) (Problem, *engine, int) {
	t.Helper()
	p := StandardInstance(c, n, k)
	p.TimeLimit = time.Hour
	e, err := newEngine(&p)
	require.NoError(t, err)
	return p, e, e.lowerBound()
}
