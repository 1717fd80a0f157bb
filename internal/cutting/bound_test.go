package cutting

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// perfectPacking is k sheets of w × h mm, each cut by random guillotine
// cuts (a kerf wide) into pieces, the pieces as the parts: k sheets take
// them all, so no bound may say more. Grain along the length keeps a piece
// the way it was cut; otherwise it may be turned.
func perfectPacking(rng *rand.Rand, k, w, h int, kerf float64, grain bool) Problem {
	p := Problem{Kerf: kerf, Formats: []Format{{Name: fmt.Sprintf("%d×%d", w, h), Length: float64(w), Width: float64(h)}}}
	g := GrainNone
	if grain {
		g = GrainLength
	}
	kf := int(kerf)
	var cut func(w, h, depth int)
	cut = func(w, h, depth int) {
		if depth > 0 && (rng.IntN(4) == 0 || (w < 4*kf+20 && h < 4*kf+20)) {
			p.Parts = append(p.Parts, Part{ID: fmt.Sprint(len(p.Parts) + 1), Length: float64(w), Width: float64(h), Qty: 1, Grain: g})
			return
		}
		if (rng.IntN(2) == 0 && w >= 2*kf+20) || h < 2*kf+20 {
			c := 10 + rng.IntN(w-2*kf-19)
			cut(c, h, depth+1)
			cut(w-c-kf, h, depth+1)
			return
		}
		c := 10 + rng.IntN(h-2*kf-19)
		cut(w, c, depth+1)
		cut(w, h-c-kf, depth+1)
	}
	for range k {
		cut(w, h, 0)
	}
	return p
}

// The bound never says more sheets than a layout needs: on sheets cut
// into pieces at random (perfect packings: as many sheets as were cut
// take them), square or not, with a kerf or without, the pieces turnable
// or not; on most of them it says exactly as many as were cut.
func TestLowerBound_NeverAboveAPerfectPacking(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	exact := 0
	for i := range 400 {
		k := 1 + rng.IntN(4)
		w, h := 100+rng.IntN(300), 100+rng.IntN(300)
		if i%3 == 0 {
			h = w
		}
		kerf := float64([]int{0, 0, 3}[rng.IntN(3)])
		p := perfectPacking(rng, k, w, h, kerf, rng.IntN(3) == 0)
		e, err := newEngine(&p)
		require.NoError(t, err)
		lb := e.lowerBound()
		require.LessOrEqual(t, lb, k, "case %d: %d sheets cut into %d pieces (%d×%d, kerf %v)", i, k, len(p.Parts), w, h, kerf)
		if lb == k {
			exact++
		}
	}
	require.Greater(t, exact, 200, "the bound is tight on most perfect packings")
}

// On the standard set the bound by dual feasible functions is what proves
// a layout cannot have fewer sheets: class I's instance 4 with 40 items
// needs more sheets than its area or Martello & Vigo's L2 say, and the
// search reaches that many.
func TestLowerBound_DualFeasibleFunctions(t *testing.T) {
	t.Parallel()
	p := StandardInstance(0, 40, 4)
	e, err := newEngine(&p)
	require.NoError(t, err)
	f := e.formats[0]
	dff := e.dffBound(f)
	require.Greater(t, dff, e.areaBound(f))
	require.Greater(t, dff, e.l2Bound(f))
	require.Equal(t, dff, e.lowerBound())

	plan, err := Optimise(p)
	require.NoError(t, err)
	checkPlan(t, p, plan)
	require.Equal(t, dff, plan.Totals.Sheets)
}

// The bound's work is bounded whatever the list: thousands of different
// parts try fewer functions (the identity always among them, so that it
// is never below the area's), a short list tries every one.
func TestLowerBound_WorkBounded(t *testing.T) {
	t.Parallel()
	require.GreaterOrEqual(t, dffPerSide(200), 150, "the standard set's instances try every function")
	for _, nways := range []int{1, 200, 5_000, 100_000} {
		n := dffPerSide(nways)
		require.GreaterOrEqual(t, n, 1)
		require.True(t, n == 1 || n*n*nways <= dffWork, "%d ways: %d functions a side", nways, n)
	}
	fs := dualFeasible([]int{10, 20, 30, 40, 1000}, 1000)
	picked := spread(fs, 3)
	require.Len(t, picked, 3)
	require.Equal(t, fs[0], picked[0], "the identity stays")
	require.Equal(t, fs, spread(fs, len(fs)+1))

	// 20,000 parts of different sizes: the bound is still the area's at
	// least, and within its work
	rng := rand.New(rand.NewPCG(8, 9))
	p := Problem{Formats: []Format{{Name: "2800×2070", Length: 2800, Width: 2070}}}
	for i := range 20_000 {
		p.Parts = append(p.Parts, Part{ID: fmt.Sprint(i + 1), Length: float64(100 + rng.IntN(2600)), Width: float64(50 + rng.IntN(1900)), Qty: 1})
	}
	e, err := newEngine(&p)
	require.NoError(t, err)
	f := e.formats[0]
	require.GreaterOrEqual(t, e.dffBound(f), e.areaBound(f))
}
