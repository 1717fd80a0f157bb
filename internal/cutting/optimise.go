package cutting

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// Effort per part by default, in placements tried: about a fifth of a
// second of CPU for a hundred parts on this project's bench machine, and a
// budget that grows with the list; the cap keeps a week's list (2,000
// parts) at about six seconds.
const (
	effortPerPart = 300_000
	effortCap     = 300_000_000
	timeLimit     = time.Minute
)

// newEngine validates a problem and sets the engine up for it.
func newEngine(p *Problem) (*engine, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	e := &engine{kerf: toUnits(p.Kerf), stages: p.Stages}
	for _, f := range p.Formats {
		w, h := p.usable(f)
		x, y := p.trimOrigin(f)
		count := f.Count
		if f.Offcut && count == 0 {
			count = 1
		}
		e.formats = append(e.formats, formatInfo{ux: x, uy: y, uw: w, uh: h, count: count, offcut: f.Offcut,
			area: int64(toUnits(f.Length)) * int64(toUnits(f.Width))})
	}
	byKey := map[[3]int]int{}
	e.minSide = 1 << 30
	for i, pt := range p.Parts {
		g, _ := grainOf(pt.Grain)
		l, w := toUnits(pt.Length), toUnits(pt.Width)
		gi := map[Grain]int{GrainNone: 0, GrainLength: 1, GrainWidth: 2}[g]
		if g == GrainNone && w > l {
			l, w = w, l // the same shape, however the list gives it
		}
		key := [3]int{l, w, gi}
		si, ok := byKey[key]
		if !ok {
			si = len(e.shapes)
			byKey[key] = si
			e.shapes = append(e.shapes, shape{l: l, w: w, area: int64(l) * int64(w), os: orientations(l, w, g)})
		}
		for range pt.Qty {
			e.shapes[si].instances = append(e.shapes[si].instances, i)
		}
		e.minSide = min(e.minSide, l, w)
	}
	return e, nil
}

// Optimise lays the problem's parts out on its sheets. It returns an
// apperr.EINVALID error naming the field when the problem cannot be
// planned: a part that fits no format, trims or a kerf that leave no
// usable sheet, too few sheets for the parts.
func Optimise(p Problem) (Plan, error) {
	e, err := newEngine(&p)
	if err != nil {
		return Plan{}, err
	}
	sol := e.search(&p)
	if sol == nil {
		return Plan{}, errTooFewSheets()
	}
	return e.plan(&p, sol), nil
}

func errTooFewSheets() error {
	return apperr.Invalid("the cutting problem cannot be planned",
		apperr.Field("formats", "the sheets given are too few for the parts; allow more sheets (count 0 is as many as needed)"))
}

// orders are the shapes in the orders the constructions try them.
func (e *engine) orders() [][]int {
	keys := []func(s shape) int64{
		func(s shape) int64 { return s.area },
		func(s shape) int64 { return int64(max(s.l, s.w)) },
		func(s shape) int64 { return int64(min(s.l, s.w)) },
		func(s shape) int64 { return int64(s.l + s.w) },
		func(s shape) int64 { return int64(s.os[0].dx) },
		func(s shape) int64 { return int64(s.os[0].dy) },
	}
	var out [][]int
	for _, key := range keys {
		out = append(out, e.sortedBy(func(i int) float64 { return float64(key(e.shapes[i])) }))
	}
	return out
}

// sortedBy is the shapes in decreasing key, the larger area first on a tie.
func (e *engine) sortedBy(key func(i int) float64) []int {
	idx := make([]int, len(e.shapes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(key(b), key(a)); c != 0 {
			return c
		}
		return cmp.Compare(e.shapes[b].area, e.shapes[a].area)
	})
	return idx
}

func (e *engine) expand(order []int) []int {
	var seq []int
	for _, s := range order {
		for range e.shapes[s].instances {
			seq = append(seq, s)
		}
	}
	return seq
}

func (e *engine) counts() []int {
	c := make([]int, len(e.shapes))
	for i, s := range e.shapes {
		c[i] = len(s.instances)
	}
	return c
}

// search runs the constructions, then perturbs the best and tries to empty
// its least-filled sheet, until the effort is spent.
func (e *engine) search(p *Problem) *solution {
	parts := 0
	for _, s := range e.shapes {
		parts += len(s.instances)
	}
	effort := p.Effort
	if effort <= 0 {
		effort = min(int64(parts)*effortPerPart, effortCap)
	}
	limit := p.TimeLimit
	if limit <= 0 {
		limit = timeLimit
	}
	deadline := time.Now().Add(limit)
	calls := 0
	stop := func() bool {
		calls++
		return e.work > effort || (calls%64 == 0 && time.Now().After(deadline))
	}
	var best *solution
	var bestCost cost
	offer := func(s *solution) {
		if s == nil {
			return
		}
		if c := e.cost(s); best == nil || c.less(bestCost) {
			best, bestCost = s, c
		}
	}
	orders := e.orders()
	fits, variants := []fitRule{fitBestArea, fitBestShortSide, fitBestLongSide}, allFillVariants()
	if parts > 500 {
		// a long list: fewer rules at first, more time for the shaken orders
		fits, variants = fits[:1], variants[:len(variants)/2]
	}
	// One pass of every order and rule, one part at a time: quick, and
	// a solution to fall back on whatever the effort.
	for _, order := range orders {
		seq := e.expand(order)
		for _, fr := range fits {
			for _, sp := range []splitRule{splitShorterLeftover, splitMaxArea} {
				offer(e.packItems(seq, fr, sp, true))
			}
		}
		if best != nil && stop() {
			return best
		}
	}
	// Sheet by sheet, each sheet the fullest of every order × variant.
	offer(e.packSheets(e.counts(), orders, variants, stop))
	// Then with the orders shaken: each key randomised by up to ±30 %.
	rng := rand.New(rand.NewPCG(uint64(parts), 22))
	// Most of the effort on shaken orders, the rest on emptying the best
	// layout's least-filled sheet.
	shakeUntil := e.work + (effort-e.work)*3/4
	for !stop() && e.work < shakeUntil {
		var shaken [][]int
		for range 3 {
			noise := make([]float64, len(e.shapes))
			for i := range noise {
				noise[i] = 1 + 0.6*(rng.Float64()-0.5)
			}
			base := rng.IntN(4)
			shaken = append(shaken, e.sortedBy(func(i int) float64 {
				return noise[i] * float64(orderKey(base, e.shapes[i]))
			}))
		}
		offer(e.packSheets(e.counts(), shaken, variants, stop))
	}
	if best != nil && !stop() {
		offer(e.improve(best, orders[:2], variants, stop))
	}
	return best
}

func orderKey(k int, s shape) int64 {
	switch k {
	case 1:
		return int64(max(s.l, s.w))
	case 2:
		return int64(min(s.l, s.w))
	case 3:
		return int64(s.l + s.w)
	}
	return s.area
}
