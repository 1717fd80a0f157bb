package cutting

import (
	"math"
	"math/rand/v2"
)

// Leftovers worth keeping. Of two layouts of the same parts on a sheet, a
// factory would rather keep one offcut of 1750 × 1645 mm than four strips
// of 430 × 1645: the next order finds a use for the one, rarely for the
// strips. Once the search has settled which parts go on which sheet, each
// sheet is laid out again from its own parts in every order and fill the
// search knows (and a few shaken orders), and the layout whose leftover is
// worth the most is kept, the search's own on a tie.

// offcutJudge values a sheet's leftover: the sum over its offcuts (waste
// pieces of at least the minimum offcut, turned too) of their share of the
// usable area raised to 1 + weight.
type offcutJudge struct {
	e            *engine
	weight       float64
	long, short  int // the minimum offcut's sides
	rects        []prect
	usableShares []float64 // per format: 1 ÷ its usable area
}

func (e *engine) newOffcutJudge(weight float64, minL, minW int) *offcutJudge {
	j := &offcutJudge{e: e, weight: weight, long: max(minL, minW), short: min(minL, minW)}
	for _, f := range e.formats {
		j.usableShares = append(j.usableShares, 1/(float64(f.uw)*float64(f.uh)))
	}
	return j
}

func (j *offcutJudge) value(sh *sheetLayout) float64 {
	f := j.e.formats[sh.format]
	j.rects = j.rects[:0]
	for i, pl := range sh.parts {
		j.rects = append(j.rects, prect{pl.x, pl.y, pl.o.dx, pl.o.dy, i})
	}
	_, _, waste := sheetCuts(j.e.kerf, prect{f.ux, f.uy, f.uw, f.uh, -1}, j.rects)
	v := 0.0
	for _, w := range waste {
		if max(w.w, w.h) >= j.long && min(w.w, w.h) >= j.short {
			v += math.Pow(float64(w.w)*float64(w.h)*j.usableShares[sh.format], 1+j.weight)
		}
	}
	return v
}

// keepLargeOffcuts lays each sheet of sol out again in the way its
// leftover is worth the most, its parts the same.
func (e *engine) keepLargeOffcuts(sol *solution, weight float64, minL, minW int) {
	judge := e.newOffcutJudge(weight, minL, minW)
	orders := e.orders()
	rng := rand.New(rand.NewPCG(uint64(len(sol.sheets)), 1645))
	for range 4 {
		orders = append(orders, e.shaken(rng, e.byArea))
	}
	variants := allFillVariants()
	var try, best sheetLayout
	from := make([]int, len(e.shapes))
	left := make([]int, len(e.shapes))
	for si := range sol.sheets {
		sh := &sol.sheets[si]
		clear(from)
		for _, pl := range sh.parts {
			from[pl.shape]++
		}
		bestValue := judge.value(sh)
		found := false
		for _, order := range orders {
			for _, v := range variants {
				copy(left, from)
				e.fillSheet(&try, sh.format, left, order, v)
				if try.used != sh.used {
					continue // not every part of the sheet
				}
				if value := judge.value(&try); value > bestValue {
					bestValue, found = value, true
					try, best = best, try
				}
			}
		}
		if found {
			sh.free = append(sh.free[:0], best.free...)
			sh.parts = append(sh.parts[:0], best.parts...)
		}
	}
}
