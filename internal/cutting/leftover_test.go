package cutting

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A wall cabinet's parts take a quarter of a sheet. Laid out as the search
// leaves them, the sheet keeps a 1775 × 2050 mm offcut; with the default
// weight for larger offcuts, the parts go into one strip along the sheet's
// length and the rest of it, its whole length, is one offcut.
func TestOptimise_LeftoverInOnePiece(t *testing.T) {
	t.Parallel()
	p := Defaults()
	p.Formats = []Format{{Name: "ЛДСП", Length: 2800, Width: 2070}}
	p.Trims = Trims{10, 10, 10, 10}
	for _, prod := range furniture {
		if prod.product == "Шкаф навесной 600" {
			p.Parts = prod.parts
		}
	}
	require.NotEmpty(t, p.Parts)
	p.TimeLimit = time.Hour // the effort bounds the search, not a busy machine's clock
	before, after, err := optimiseTwice(p)
	require.NoError(t, err)
	checkPlan(t, p, before)
	plan, err := Optimise(p)
	require.NoError(t, err)
	checkPlan(t, p, plan)
	require.Equal(t, after, plan, "Optimise lays each sheet out again as optimiseTwice does")

	require.Equal(t, 1, plan.Totals.Sheets)
	require.Len(t, plan.Sheets[0].Offcuts, 1)
	require.Equal(t, 2780.0, plan.Totals.LargestOffcut.Length, "the offcut runs the usable sheet's whole length")
	area := func(s Size) float64 { return s.Length * s.Width }
	require.Greater(t, area(plan.Totals.LargestOffcut), area(before.Totals.LargestOffcut)+0.1e6, "0.1 m² larger at least")

	p.OffcutWeight = 0
	plan, err = Optimise(p)
	require.NoError(t, err)
	require.Equal(t, before, plan, "weight 0: the layout as the search leaves it")
}
