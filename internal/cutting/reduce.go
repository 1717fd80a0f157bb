package cutting

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// reduce is a goal-driven ruin and recreate at the scale of sheets, after
// Gardeyn & Wauters (EJOR 2022): it takes the best layout's least-filled
// sheet away, its parts left over, and then, again and again, empties a few
// sheets at random, whole or (mostly) of the parts placed after their
// first few, and fills them afresh, each the fullest it goes from their
// parts and the leftovers, what does not fit left over in turn; the parts
// left over are also tried in the other sheets' free space. A step is kept
// when what is left over is no harder to place than a step of some while
// ago (late acceptance): its cost weighs the larger parts more, so that
// the search leaves small parts over, which find room more easily. When
// nothing is left over, the layout has a sheet fewer: it is offered, and
// the next least-filled sheet is taken away. lb is a lower bound on the
// sheets: a layout on that many (or one) is not reduced further.
func (e *engine) reduce(start *solution, lb int, rng *rand.Rand, stop func() bool, offer func(*solution)) {
	cur := cloneSolution(start)
	lb = max(lb, 1)
	pool := make([]int, len(e.shapes))
	weight := make([]float64, len(e.shapes))
	for i, s := range e.shapes {
		weight[i] = math.Pow(float64(s.area), 1.2)
	}
	poolCost := func(p []int) float64 {
		c := 0.0
		for s, n := range p {
			c += float64(n) * weight[s]
		}
		return c
	}
	// drop takes the least-filled new sheet away (offcuts in stock cost
	// nothing to keep), its parts left over; false when there is none to
	// take, or the layout is at the bound
	drop := func() bool {
		l := -1
		for i, sh := range cur.sheets {
			if e.formats[sh.format].offcut {
				continue
			}
			if l < 0 || sh.used*e.formats[cur.sheets[l].format].area < cur.sheets[l].used*e.formats[sh.format].area {
				l = i
			}
		}
		if l < 0 || len(cur.sheets) <= lb {
			return false
		}
		for _, pl := range cur.sheets[l].parts {
			pool[pl.shape]++
		}
		cur.sheets = append(cur.sheets[:l], cur.sheets[l+1:]...)
		return true
	}
	if !drop() {
		return
	}
	// the layout of the current goal with the least cost left over
	var least *solution
	var leastPool []int
	leastCost := math.Inf(1)
	const history = 16
	var hist [history]float64
	curCost := poolCost(pool)
	for i := range hist {
		hist[i] = curCost
	}
	fill := filler{e: e}
	variants := allFillVariants()
	items := make([]int, len(e.shapes))
	var chosen, present []int
	var fresh []sheetLayout
	var keep [3]int // per sheet chosen, the placements kept
	var base sheetLayout
	for iter := 0; !stop(); iter++ {
		if curCost == 0 {
			offer(cloneSolution(cur))
			if !drop() {
				return
			}
			least, leastCost = nil, math.Inf(1)
			curCost = poolCost(pool)
			for i := range hist {
				hist[i] = curCost
			}
			continue
		}
		if len(cur.sheets) == 0 {
			return // nothing left to lay out again
		}
		// ruin: one to three sheets at random
		m := 1 + rng.IntN(min(3, len(cur.sheets)))
		chosen = chosen[:0]
		for len(chosen) < m {
			k := rng.IntN(len(cur.sheets))
			dup := false
			for _, c := range chosen {
				dup = dup || c == k
			}
			if !dup {
				chosen = append(chosen, k)
			}
		}
		// each sheet emptied whole, or (three times in four) of the parts
		// it took after its first few: the first stay where they are
		copy(items, pool)
		for i, k := range chosen {
			sh := &cur.sheets[k]
			keep[i] = 0
			if len(sh.parts) > 1 && rng.IntN(4) != 0 {
				keep[i] = rng.IntN(len(sh.parts))
			}
			for _, pl := range sh.parts[keep[i]:] {
				items[pl.shape]++
			}
		}
		// recreate: each sheet the fullest of a few shaken orders (of the
		// shapes in play alone: the fills go through the orders for every
		// free rectangle) and variants
		present = present[:0]
		for s, n := range items {
			if n > 0 {
				present = append(present, s)
			}
		}
		orders := [][]int{e.shaken(rng, present), e.shaken(rng, present)}
		vs := make([]fillVariant, 0, 8)
		for range 8 {
			vs = append(vs, variants[rng.IntN(len(variants))])
		}
		fresh = fresh[:0]
		for i, k := range chosen {
			var from *sheetLayout
			if keep[i] > 0 {
				e.replay(&base, &cur.sheets[k], keep[i])
				from = &base
			}
			sh, left, ok := fill.fullestFrom(from, cur.sheets[k].format, items, orders, vs)
			if !ok {
				sh = e.newSheet(cur.sheets[k].format)
			} else {
				copy(items, left)
			}
			fresh = append(fresh, sh)
		}
		c := poolCost(items)
		if c <= curCost || c <= hist[iter%history] {
			for i, k := range chosen {
				cur.sheets[k] = fresh[i]
			}
			// sheets left empty go
			kept := cur.sheets[:0]
			for _, sh := range cur.sheets {
				if len(sh.parts) > 0 {
					kept = append(kept, sh)
				}
			}
			cur.sheets = kept
			copy(pool, items)
			e.insertPool(cur, pool)
			curCost = poolCost(pool)
			if curCost < leastCost {
				least, leastPool, leastCost = cloneSolution(cur), append(leastPool[:0], pool...), curCost
			}
		}
		hist[iter%history] = curCost
	}
	// Out of effort with parts left over: the layout with the fewest left
	// over, those on a sheet of their own, is as many sheets as the one the
	// search began from, and its last sheet is the emptiest yet: its
	// leftover is one large piece, worth keeping.
	if least != nil {
		if rest := e.packSheetsAfter(least, leastPool, [][]int{e.byArea}, allFillVariants(), func() bool { return false }); rest != nil {
			least.sheets = append(least.sheets, rest.sheets...)
			offer(least)
		}
	}
}

// insertPool puts what it can of pool (copies per shape) into the free
// rectangles of s's sheets, the largest parts first, each where it fits
// best by area.
func (e *engine) insertPool(s *solution, pool []int) {
	for _, sidx := range e.byArea {
		for pool[sidx] > 0 {
			bs, bi := -1, 0
			var bo orient
			var ba, bb int64
			for si := range s.sheets {
				ri, o, a, b, ok := e.bestRect(&s.sheets[si], sidx, fitBestArea)
				if ok && (bs < 0 || a < ba || (a == ba && b < bb)) {
					bs, bi, bo, ba, bb = si, ri, o, a, b
				}
			}
			if bs < 0 {
				break
			}
			e.place(&s.sheets[bs], bi, sidx, bo, splitShorterLeftover)
			pool[sidx]--
		}
	}
}

// shaken is the shapes of ids in one of the orders' keys, in decreasing
// key, each key shaken by up to ±30 %.
func (e *engine) shaken(rng *rand.Rand, ids []int) []int {
	base := rng.IntN(4)
	type keyed struct {
		s   int
		key float64
	}
	ks := make([]keyed, len(ids))
	for i, s := range ids {
		ks[i] = keyed{s, (1 + 0.6*(rng.Float64()-0.5)) * float64(orderKey(base, e.shapes[s]))}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return cmp.Compare(b.key, a.key) })
	out := make([]int, len(ks))
	for i, k := range ks {
		out[i] = k.s
	}
	return out
}
