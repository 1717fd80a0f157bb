package cutting

import "slices"

// lowerBound is a bound on the new sheets of a problem of one format, as
// many sheets as needed and no offcuts; 0 for other problems: the largest
// of the parts' area over the usable area's (rounded up), Martello &
// Vigo's L2 and the bound by dual feasible functions. The search stops
// when it reaches it.
func (e *engine) lowerBound() int {
	if len(e.formats) != 1 || e.formats[0].offcut || e.formats[0].count != 0 {
		return 0
	}
	f := e.formats[0]
	return max(e.areaBound(f), e.l2Bound(f), e.dffBound(f))
}

// areaBound is the parts' area over the usable area of a sheet of format
// f, rounded up.
func (e *engine) areaBound(f formatInfo) int {
	var area int64
	for _, s := range e.shapes {
		area += s.area * int64(len(s.instances))
	}
	usable := int64(f.uw) * int64(f.uh)
	return int((area + usable - 1) / usable)
}

// l2Bound is Martello & Vigo's L2 by each part's shorter side, on a square
// sheet without kerf whose parts may all be turned (0 otherwise): for a
// width q up to half the sheet, the parts whose shorter side is over the
// sheet's side less q have a sheet each, and so have those over half of
// it; the parts whose shorter side is at least q fit in no sheet of the
// first kind, and only in the space the second kind leave.
func (e *engine) l2Bound(f formatInfo) int {
	square := f.uw == f.uh && e.kerf == 0
	for _, s := range e.shapes {
		square = square && (len(s.os) == 2 || s.l == s.w)
	}
	if !square {
		return 0
	}
	usable := int64(f.uw) * int64(f.uh)
	side, lb := f.uw, 0
	for q := 1; 2*q <= side; q++ {
		big, over := 0, int64(0) // parts over half the side; the room they leave
		var small int64          // the area of those from q to half the side
		for _, s := range e.shapes {
			n := int64(len(s.instances))
			short := min(s.l, s.w)
			switch {
			case 2*short > side:
				big += int(n)
				if short <= side-q {
					over += n * (usable - s.area)
				}
			case short >= q:
				small += n * s.area
			}
		}
		lb = max(lb, big+int((max(small-over, 0)+usable-1)/usable))
	}
	return lb
}

// The bound by dual feasible functions (Fekete & Schepers, "A general
// framework for bounds for higher-dimensional orthogonal packing
// problems", 2004): a function f on [0, W] is dual feasible when any sizes
// that fit side by side in W still do once each is mapped by f, measured
// against f(W). For two such functions, f1 along the sheet's length and f2
// along its width, the parts of any one sheet's layout (guillotine or not)
// add up to at most f1(W)·f2(H) of f1(length)·f2(width); a part that may
// be turned counts the lesser of its two ways, which no layout beats. The
// sheets needed are then at least the parts' sum over f1(W)·f2(H),
// rounded up, for every pair of functions tried; with f1 and f2 the
// identity it is the area bound.
//
// The functions tried are the identity and two families: f0 of ε (a size
// over W−ε counts as W, one under ε as nothing, the rest as itself) for
// every ε up to W/2 at which a size of the parts crosses ε or W−ε, and
// u of k (k = 1 … dffSteps: a size is rounded down to a multiple of
// W/(k+1), unless it is one), which give Martello & Vigo's and Carlier,
// Clautiaux & Moukrim's bounds much of their strength. A kerf is a
// relaxation away: each part and the sheet grown by one kerf.

// dffSteps is the largest k of the u(k) family tried.
const dffSteps = 20

// dffWork bounds the bound's work: the pairs of functions tried times the
// ways of the parts each sums. The standard set's instances (at most 200
// ways) and a furniture week (a few dozen shapes) try every function; a
// list of thousands of different parts tries fewer, spread over the
// families, so that the bound stays at milliseconds whatever the list.
const dffWork = 5_000_000

// dffPerSide is how many functions each side tries for parts of nways
// ways in all: at least the identity.
func dffPerSide(nways int) int {
	n := 1
	for (n+1)*(n+1)*max(nways, 1) <= dffWork {
		n++
	}
	return n
}

// spread is at most n of fs, evenly spread and the first (the identity)
// among them.
func spread(fs [][]int64, n int) [][]int64 {
	if len(fs) <= n {
		return fs
	}
	out := make([][]int64, n)
	for i := range out {
		out[i] = fs[i*(len(fs)-1)/max(n-1, 1)]
	}
	return out
}

// dffBound is the bound on the sheets of format f for the parts of e, by
// every pair of the dual feasible functions above. It is 0 when no part
// fits the sheet at all (the problem's validation refuses it anyway).
func (e *engine) dffBound(f formatInfo) int {
	w, h := f.uw+e.kerf, f.uh+e.kerf
	// each way of each shape that fits the sheet: its sizes with the kerf,
	// then as indexes into the sizes that occur along each side
	type way struct{ x, y int }
	ways := make([][]way, len(e.shapes))
	var xs, ys []int
	nways := 0
	for i, s := range e.shapes {
		for _, o := range s.os {
			if o.dx <= f.uw && o.dy <= f.uh {
				ways[i] = append(ways[i], way{o.dx + e.kerf, o.dy + e.kerf})
				xs, ys = append(xs, o.dx+e.kerf), append(ys, o.dy+e.kerf)
				nways++
			}
		}
	}
	if nways == 0 {
		return 0
	}
	xs, ys = sortedSizes(append(xs, w)), sortedSizes(append(ys, h))
	for _, ws := range ways {
		for j, wy := range ws {
			ws[j].x, _ = slices.BinarySearch(xs, wy.x)
			ws[j].y, _ = slices.BinarySearch(ys, wy.y)
		}
	}
	per := dffPerSide(nways)
	fx, fy := spread(dualFeasible(xs, w), per), spread(dualFeasible(ys, h), per)
	best := 0
	for _, f1 := range fx {
		for _, f2 := range fy {
			var sum int64
			for i, s := range e.shapes {
				least := int64(-1)
				for _, wy := range ways[i] {
					if v := f1[wy.x] * f2[wy.y]; least < 0 || v < least {
						least = v
					}
				}
				sum += max(least, 0) * int64(len(s.instances))
			}
			if sheet := f1[len(xs)-1] * f2[len(ys)-1]; sheet > 0 {
				best = max(best, int((sum+sheet-1)/sheet))
			}
		}
	}
	return best
}

// sortedSizes is the sizes sorted, each once.
func sortedSizes(s []int) []int {
	slices.Sort(s)
	return slices.Compact(s)
}

// dualFeasible is the functions tried along a side of length w, each as
// its values at the sizes given (sorted, distinct, the last w).
func dualFeasible(sizes []int, w int) [][]int64 {
	var out [][]int64
	eval := func(f func(x int) int64) {
		v := make([]int64, len(sizes))
		for i, x := range sizes {
			v[i] = f(x)
		}
		out = append(out, v)
	}
	eval(func(x int) int64 { return int64(x) })
	var eps []int
	for _, x := range sizes {
		if 2*x <= w {
			eps = append(eps, x)
		} else if e := w - x + 1; 2*e <= w {
			eps = append(eps, e)
		}
	}
	for _, e := range sortedSizes(eps) {
		eval(func(x int) int64 {
			switch {
			case x > w-e:
				return int64(w)
			case x >= e:
				return int64(x)
			}
			return 0
		})
	}
	for k := int64(1); k <= dffSteps; k++ {
		// scaled by k·w to stay in integers: x·k when (k+1)·x is a
		// multiple of w, else ⌊(k+1)·x / w⌋·w
		eval(func(x int) int64 {
			if (k+1)*int64(x)%int64(w) == 0 {
				return int64(x) * k
			}
			return (k + 1) * int64(x) / int64(w) * int64(w)
		})
	}
	return out
}
