package cutting

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The filler reuses its storage from one fill to the next: what it hands
// out must stay as it was when the filler goes on, even when its next fill
// starts from what the last one left (as repackPair's second fill does).
func TestFiller_ResultsOutliveTheNextFill(t *testing.T) {
	t.Parallel()
	p := ClassInstance(6, 60, 0)
	e, err := newEngine(&p)
	require.NoError(t, err)
	orders, variants := e.orders(), allFillVariants()
	counts := e.counts()

	f := filler{e: e}
	first, left, ok := f.fullest(0, counts, orders, variants)
	require.True(t, ok)
	require.NotEmpty(t, first.parts)
	placed := slices.Clone(first.parts)
	free := slices.Clone(first.free)
	leftBefore := slices.Clone(left)
	for s := range counts {
		n := 0
		for _, pl := range first.parts {
			if pl.shape == s {
				n++
			}
		}
		require.Equal(t, counts[s], n+left[s], "shape %d: placed and left add up to what there was", s)
	}

	second, rest, ok := f.fullest(0, left, orders, variants)
	require.True(t, ok)
	require.Equal(t, placed, first.parts, "the first fill's parts are its own")
	require.Equal(t, free, first.free, "the first fill's free rectangles are its own")
	require.Equal(t, leftBefore, left, "what the first fill left is its own")

	fresh := filler{e: e}
	want, wantRest, ok := fresh.fullest(0, leftBefore, orders, variants)
	require.True(t, ok)
	require.Equal(t, want, second, "a fill from what the last one left is the fill a new filler makes")
	require.Equal(t, wantRest, rest)
}

// A sheet nothing fits on is no fill.
func TestFiller_NothingFits(t *testing.T) {
	t.Parallel()
	p := ClassInstance(6, 20, 0)
	e, err := newEngine(&p)
	require.NoError(t, err)
	f := filler{e: e}
	sh, left, ok := f.fullest(0, make([]int, len(e.shapes)), e.orders(), allFillVariants())
	require.False(t, ok)
	require.Zero(t, sh.used)
	require.Nil(t, left)
}

// BenchmarkOptimise_FurnitureWeek lays out a week of 2,000 parts with the
// default search, as a cutting plan does (allocations reported: the fills
// tried per sheet reuse their storage).
func BenchmarkOptimise_FurnitureWeek(b *testing.B) {
	p := FurnitureWeek(2000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Optimise(p); err != nil {
			b.Fatal(err)
		}
	}
}
