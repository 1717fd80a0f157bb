package cutting

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The ruin and recreate lays a layout's parts on fewer sheets, and every
// layout it offers is sound: the parts all there, each once, on sheets the
// saw can cut (the last one too, which it offers when its effort runs out
// with parts left over, those on a sheet of their own).
func TestReduce_LaysThePartsOnFewerSheets(t *testing.T) {
	t.Parallel()
	for _, in := range [][3]int{{2, 60, 3}, {4, 60, 1}, {6, 60, 8}, {7, 40, 7}} { // III, V, VII, VIII
		c := in[0]
		p := StandardInstance(c, in[1], in[2])
		e, err := newEngine(&p)
		require.NoError(t, err)
		start := e.packSheets(e.counts(), e.orders(), allFillVariants(), func() bool { return false })
		require.NotNil(t, start)
		lb := e.lowerBound()
		require.Greater(t, len(start.sheets), lb, "class %s: the sheet-by-sheet fill leaves room to gain", ClassNames[c])

		var offered []*solution
		e.work = 0
		e.reduce(start, lb, rand.New(rand.NewPCG(1, 2)), func() bool { return e.work > 10_000_000 },
			func(s *solution) { offered = append(offered, s) })
		require.NotEmpty(t, offered)
		require.Len(t, offered[0].sheets, len(start.sheets)-1, "class %s: the first layout offered has a sheet fewer", ClassNames[c])
		for i, s := range offered {
			if i > 0 {
				// a sheet fewer each time; the last, out of effort, may
				// have as many as the one before
				require.Contains(t, []int{len(offered[i-1].sheets) - 1, len(offered[i-1].sheets)}, len(s.sheets))
				require.False(t, i < len(offered)-1 && len(s.sheets) == len(offered[i-1].sheets))
			}
			checkPlan(t, p, e.plan(&p, s))
		}
	}
}
