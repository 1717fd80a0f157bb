package cutting

// The engine works in integer units (a tenth of a millimetre) on free
// rectangles: the pieces of a sheet not yet given to a part. Each free
// rectangle remembers the stage and direction of the cut that made it, so
// that a part is put only where the saw can still free it within the
// stages it has.

// orient is a part's footprint on the sheet in one of its allowed ways.
type orient struct {
	dx, dy int
	turned bool
}

func orientations(l, w int, g Grain) []orient {
	switch g {
	case GrainLength:
		return []orient{{l, w, false}}
	case GrainWidth:
		return []orient{{w, l, true}}
	}
	if l == w {
		return []orient{{l, w, false}}
	}
	return []orient{{l, w, false}, {w, l, true}}
}

// shape is every part of one size and grain: the search places shapes, and
// the plan hands their copies to the parts in the problem's order.
type shape struct {
	l, w        int
	short, long int // the shorter and the longer side
	area        int64
	os          []orient
	instances   []int // index of the part of each copy
}

// Cut directions inside the engine.
const (
	dirNone int8 = iota
	dirX         // a line x = c: a cross-cut, along the sheet's width
	dirY         // a line y = c: a rip, along the sheet's length
)

type freeRect struct {
	x, y, w, h int
	stage      int  // stage of the cut that made it (0: the whole usable sheet)
	dir        int8 // direction of that cut
}

func (f freeRect) area() int64 { return int64(f.w) * int64(f.h) }

type placed struct {
	shape int
	x, y  int
	o     orient
	split splitRule // the rule its free rectangle was split by: replay repeats it
}

type sheetLayout struct {
	format int
	free   []freeRect
	used   int64 // parts' area
	parts  []placed
}

type formatInfo struct {
	ux, uy, uw, uh int // usable area
	count          int // 0: unlimited
	offcut         bool
	area           int64 // the whole sheet's
}

type engine struct {
	kerf    int
	stages  int // 0: any
	shapes  []shape
	formats []formatInfo
	minSide int         // the smallest side of any part: narrower free space is dead
	work    int64       // placements tried so far
	byArea  []int       // the shapes, the largest first
	live    []liveShape // fillMore's storage
	// liveShapes is each shape as fillMore tries it (liveShapeOf)
	liveShapes []liveShape
	byShort    []int       // the shapes, the shortest short side first
	inOrder    []orderMark // per shape, its place in the order fillMore tries
	stamp      uint64      // fillMore's, for inOrder
}

func (e *engine) allowed(stage int) bool { return e.stages == 0 || stage <= e.stages }

func stageOf(f freeRect, d int8) int {
	if f.dir == d {
		return f.stage
	}
	return f.stage + 1
}

// splitRule chooses which cut comes first when a part leaves room on two sides.
type splitRule int8

const (
	splitShorterLeftover splitRule = iota // the cut across the shorter leftover first
	splitLongerLeftover
	splitMaxArea // leave one leftover as large as can be
	splitMinArea
	splitRules
)

// fits says whether o goes into f with the stages left, without splitting.
// The loops that try it count their tries in e.work, one per rectangle
// and orientation, in one sum.
func (e *engine) fits(f freeRect, o orient) bool {
	if o.dx > f.w || o.dy > f.h {
		return false
	}
	if e.stages == 0 {
		return true
	}
	needX, needY := o.dx < f.w, o.dy < f.h
	switch {
	case needX && needY:
		return e.allowed(stageOf(f, dirX)+1) || e.allowed(stageOf(f, dirY)+1)
	case needX:
		return e.allowed(stageOf(f, dirX))
	case needY:
		return e.allowed(stageOf(f, dirY))
	}
	return true
}

// split puts o at f's corner and returns the free rectangles left (at most
// two, into out). It assumes fits(f, o).
func (e *engine) split(f freeRect, o orient, rule splitRule, out *[2]freeRect) int {
	dxL, dyL := f.w-o.dx, f.h-o.dy
	n := 0
	add := func(r freeRect) {
		if r.w >= e.minSide && r.h >= e.minSide {
			out[n] = r
			n++
		}
	}
	k := e.kerf
	switch {
	case dxL == 0 && dyL == 0:
	case dyL == 0:
		add(freeRect{f.x + o.dx + k, f.y, dxL - k, f.h, stageOf(f, dirX), dirX})
	case dxL == 0:
		add(freeRect{f.x, f.y + o.dy + k, f.w, dyL - k, stageOf(f, dirY), dirY})
	default:
		sX, sY := stageOf(f, dirX), stageOf(f, dirY)
		canX, canY := e.allowed(sX+1), e.allowed(sY+1)
		xFirst := canX
		if canX && canY {
			switch rule {
			case splitShorterLeftover:
				xFirst = dxL > dyL
			case splitLongerLeftover:
				xFirst = dxL <= dyL
			case splitMaxArea, splitMinArea:
				bigX := max(int64(dxL)*int64(f.h), int64(o.dx)*int64(dyL))
				bigY := max(int64(f.w)*int64(dyL), int64(dxL)*int64(o.dy))
				xFirst = bigX > bigY
				if rule == splitMinArea {
					xFirst = bigX <= bigY
				}
			}
		}
		if xFirst {
			add(freeRect{f.x + o.dx + k, f.y, dxL - k, f.h, sX, dirX})
			add(freeRect{f.x, f.y + o.dy + k, o.dx, dyL - k, sX + 1, dirY})
		} else {
			add(freeRect{f.x, f.y + o.dy + k, f.w, dyL - k, sY, dirY})
			add(freeRect{f.x + o.dx + k, f.y, dxL - k, o.dy, sY + 1, dirX})
		}
	}
	return n
}

// place puts a copy of shape s in orientation o into free rectangle i of sh.
func (e *engine) place(sh *sheetLayout, i, s int, o orient, rule splitRule) {
	f := sh.free[i]
	var out [2]freeRect
	n := e.split(f, o, rule, &out)
	sh.parts = append(sh.parts, placed{s, f.x, f.y, o, rule})
	sh.used += e.shapes[s].area
	switch n {
	case 0:
		sh.free = append(sh.free[:i], sh.free[i+1:]...)
	case 1:
		sh.free[i] = out[0]
	default:
		sh.free[i] = out[0]
		sh.free = append(sh.free, out[1])
	}
}

// replay makes dst the layout of src's first n placements, free
// rectangles and all, reusing dst's storage: each placement goes into the
// free rectangle at its corner, split by the rule it was split by.
func (e *engine) replay(dst, src *sheetLayout, n int) {
	e.resetSheet(dst, src.format)
	for _, pl := range src.parts[:n] {
		for i, f := range dst.free {
			if f.x == pl.x && f.y == pl.y {
				e.place(dst, i, pl.shape, pl.o, pl.split)
				break
			}
		}
	}
}

func (e *engine) newSheet(fi int) sheetLayout {
	var sh sheetLayout
	e.resetSheet(&sh, fi)
	return sh
}

// resetSheet makes sh a new, empty sheet of format fi, keeping its storage.
func (e *engine) resetSheet(sh *sheetLayout, fi int) {
	f := e.formats[fi]
	sh.format, sh.used = fi, 0
	sh.free = append(sh.free[:0], freeRect{x: f.ux, y: f.uy, w: f.uw, h: f.uh})
	sh.parts = sh.parts[:0]
}

// fitRule scores a free rectangle for a part: lower is better.
type fitRule int8

const (
	fitBestArea fitRule = iota
	fitBestShortSide
	fitBestLongSide
	fitRules
)

func score(rule fitRule, f freeRect, o orient) (int64, int64) {
	dxL, dyL := int64(f.w-o.dx), int64(f.h-o.dy)
	short, long := min(dxL, dyL), max(dxL, dyL)
	switch rule {
	case fitBestShortSide:
		return short, long
	case fitBestLongSide:
		return long, short
	}
	return f.area() - int64(o.dx)*int64(o.dy), short
}

// bestRect finds the free rectangle of sh and the orientation that suit
// shape s best by rule; ok is false when it fits nowhere.
func (e *engine) bestRect(sh *sheetLayout, s int, rule fitRule) (ri int, o orient, a, b int64, ok bool) {
	ors := e.shapes[s].os
	e.work += int64(len(sh.free) * len(ors)) // one try per rectangle and orientation
	if e.stages != 0 {
		for i, f := range sh.free {
			for _, oo := range ors {
				if !e.fits(f, oo) {
					continue
				}
				sa, sb := score(rule, f, oo)
				if !ok || sa < a || (sa == a && sb < b) {
					ri, o, a, b, ok = i, oo, sa, sb, true
				}
			}
		}
		return
	}
	// Any number of stages: a part fits wherever it is not too big (fits
	// inlined, as this loop is most of a search's time).
	for i := range sh.free {
		f := &sh.free[i]
		for _, oo := range ors {
			if oo.dx > f.w || oo.dy > f.h {
				continue
			}
			sa, sb := score(rule, *f, oo)
			if !ok || sa < a || (sa == a && sb < b) {
				ri, o, a, b, ok = i, oo, sa, sb, true
			}
		}
	}
	return
}

// solution is a layout of every part.
type solution struct {
	sheets []sheetLayout
}

// cost orders solutions: less area of new sheets, then fewer new sheets,
// then more of the parts on offcuts in stock, then the least-filled new
// sheet emptier (closer to being saved). Offcuts cost nothing: they are
// cut before new sheets whenever parts fit them, and what they leave is
// kept again.
type cost struct {
	area     int64
	sheets   int
	onOffcut int64
	least    int64
}

func (c cost) less(d cost) bool {
	if c.area != d.area {
		return c.area < d.area
	}
	if c.sheets != d.sheets {
		return c.sheets < d.sheets
	}
	if c.onOffcut != d.onOffcut {
		return c.onOffcut > d.onOffcut
	}
	return c.least < d.least
}

func (e *engine) cost(s *solution) cost {
	c := cost{least: -1}
	for _, sh := range s.sheets {
		if e.formats[sh.format].offcut {
			c.onOffcut += sh.used
			continue
		}
		c.area += e.formats[sh.format].area
		c.sheets++
		if c.least < 0 || sh.used < c.least {
			c.least = sh.used
		}
	}
	return c
}

// formatFor picks the format of a new sheet for shape s: the first in the
// problem's order with sheets left that takes it. used counts the sheets of
// each format taken so far.
func (e *engine) formatFor(s int, used []int) int {
	for fi, f := range e.formats {
		if f.count > 0 && used[fi] >= f.count {
			continue
		}
		for _, o := range e.shapes[s].os {
			if o.dx <= f.uw && o.dy <= f.uh {
				return fi
			}
		}
	}
	return -1
}

// packItems places the copies in seq one by one: each into the first sheet
// that takes it (firstFit) or into the best free rectangle of all sheets,
// opening a new sheet when none does. nil means the sheets ran out.
func (e *engine) packItems(seq []int, fit fitRule, split splitRule, firstFit bool) *solution {
	sol := &solution{}
	used := make([]int, len(e.formats))
	for _, s := range seq {
		bs, bi := -1, 0
		var bo orient
		var ba, bb int64
		for si := range sol.sheets {
			ri, o, a, b, ok := e.bestRect(&sol.sheets[si], s, fit)
			if !ok {
				continue
			}
			if bs < 0 || a < ba || (a == ba && b < bb) {
				bs, bi, bo, ba, bb = si, ri, o, a, b
			}
			if firstFit {
				break
			}
		}
		if bs < 0 {
			fi := e.formatFor(s, used)
			if fi < 0 {
				return nil
			}
			used[fi]++
			sol.sheets = append(sol.sheets, e.newSheet(fi))
			bs = len(sol.sheets) - 1
			var ok bool
			bi, bo, _, _, ok = e.bestRect(&sol.sheets[bs], s, fit)
			if !ok {
				return nil
			}
		}
		e.place(&sol.sheets[bs], bi, s, bo, split)
	}
	return sol
}
