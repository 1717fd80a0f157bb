package cutting

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// Effort per part by default, in placements tried: about half a second of
// CPU a run for a hundred parts on this project's bench machine (most lists
// stop sooner, at their lower bound; a short list above it runs up to
// searchRuns times), and a budget that grows with the list; the cap keeps a
// week's list (2,000 parts) at a few seconds.
const (
	// DefaultEffortPerPart is the effort per part a problem gets when it
	// sets none.
	DefaultEffortPerPart = 1_000_000
	effortCap            = 300_000_000
	// reduceRounds is how many fresh starts the ruin and recreate makes.
	reduceRounds = 3
	// searchRuns is how many times the whole search runs on a short list
	// (at most runsUpTo parts), each from random numbers of its own,
	// while its best is above the lower bound: one run settles in a
	// layout it cannot leave, another from other random numbers may not.
	// A longer list runs once: four runs of a week's list would take
	// half a minute.
	searchRuns = len(runEfforts)
	runsUpTo   = 100
	timeLimit  = time.Minute
)

// runEfforts is the effort of each run of a short list, as a multiple of
// the problem's: four short runs, which settle most lists that their bound
// does not stop, then a long one for the few still above it.
var runEfforts = [...]int64{1, 1, 1, 1, 8}

// Effort is the search's effort for a list of parts at perPart
// placements each, capped so that a week's list stays at seconds.
func Effort(parts int, perPart int64) int64 {
	return min(int64(parts)*perPart, effortCap)
}

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
			e.shapes = append(e.shapes, shape{l: l, w: w, short: min(l, w), long: max(l, w), area: int64(l) * int64(w), os: orientations(l, w, g)})
		}
		for range pt.Qty {
			e.shapes[si].instances = append(e.shapes[si].instances, i)
		}
		e.minSide = min(e.minSide, l, w)
	}
	e.byArea = e.sortedBy(func(i int) float64 { return float64(e.shapes[i].area) })
	for s := range e.shapes {
		e.liveShapes = append(e.liveShapes, e.liveShapeOf(s))
		e.byShort = append(e.byShort, s)
	}
	slices.SortStableFunc(e.byShort, func(a, b int) int { return cmp.Compare(e.shapes[a].short, e.shapes[b].short) })
	e.inOrder = make([]orderMark, len(e.shapes))
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
	if p.OffcutWeight > 0 {
		e.keepLargeOffcuts(sol, p.OffcutWeight, toUnits(p.MinOffcut.Length), toUnits(p.MinOffcut.Width))
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

// parts is how many parts (copies counted) the problem has.
func (e *engine) parts() int {
	n := 0
	for _, s := range e.shapes {
		n += len(s.instances)
	}
	return n
}

func (e *engine) counts() []int {
	c := make([]int, len(e.shapes))
	for i, s := range e.shapes {
		c[i] = len(s.instances)
	}
	return c
}

// search runs the whole search (up to searchRuns times on a short list),
// each run from random numbers of its own with its runEfforts, while the
// best layout is above the lower bound, and keeps the best layout.
func (e *engine) search(p *Problem) *solution {
	runs := 1
	if e.parts() <= runsUpTo {
		runs = searchRuns
		if p.Runs > 0 {
			runs = min(p.Runs, searchRuns)
		}
	}
	limit := p.TimeLimit
	if limit <= 0 {
		limit = timeLimit
	}
	deadline := time.Now().Add(limit)
	lb := e.lowerBound()
	var best *solution
	var bestCost cost
	for run := range runs {
		sol := e.searchRun(p, run, lb, deadline)
		if sol == nil {
			break
		}
		if c := e.cost(sol); best == nil || c.less(bestCost) {
			best, bestCost = sol, c
		}
		if bestCost.sheets <= lb || time.Now().After(deadline) {
			break
		}
	}
	return best
}

// searchRun runs the constructions, then perturbs the best and tries to
// empty its least-filled sheet, until the effort is spent.
func (e *engine) searchRun(p *Problem, run int, lb int, deadline time.Time) *solution {
	parts := e.parts()
	effort := p.Effort
	if effort <= 0 {
		effort = Effort(parts, DefaultEffortPerPart)
	}
	if run < len(runEfforts) {
		effort = min(effort, math.MaxInt64/64) * runEfforts[run] // a huge effort given stays huge, never negative
	}
	effort += e.work // each run its own
	calls := 0
	var best *solution
	var bestCost cost
	// a layout on as many sheets as the lower bound needs no more search
	stop := func() bool {
		calls++
		return e.work > effort || (best != nil && bestCost.sheets <= lb) || (calls%64 == 0 && time.Now().After(deadline))
	}
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
	rng := rand.New(rand.NewPCG(uint64(parts), uint64(22+run))) //nolint:gosec // run is small and not negative
	// Most of the effort on shaken orders, the rest on emptying the best
	// layout's least-filled sheet.
	shakeUntil := e.work + (effort-e.work)/4
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
	// The ruin and recreate in rounds, each from the best layout yet with
	// a goal of its own: a round that settles in a layout it cannot leave
	// gives its effort up to a fresh start.
	for r := range reduceRounds {
		if best == nil || len(best.sheets) <= lb || stop() {
			break
		}
		until := e.work + (effort-e.work)/int64(reduceRounds-r)
		e.reduce(best, lb, rng, func() bool { return e.work > until || stop() }, offer)
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
