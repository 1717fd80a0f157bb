package cutting

import "slices"

// A sheet-by-sheet construction: each new sheet is filled as fully as the
// fills tried can, from the parts still to place, before the next is opened.

// fillVariant is one way of filling a sheet.
type fillVariant struct {
	rectFirst   bool // take free rectangles one by one and find each a part; else parts one by one
	rectByArea  bool // rect-first: the smallest free rectangle first; else the lowest, then leftmost
	itemBestFit bool // rect-first: the part that leaves the shortest side; else the largest
	fit         fitRule
	split       splitRule
}

func allFillVariants() []fillVariant {
	var vs []fillVariant
	for sp := splitRule(0); sp < splitRules; sp++ {
		for _, byArea := range []bool{true, false} {
			for _, bestFit := range []bool{false, true} {
				vs = append(vs, fillVariant{rectFirst: true, rectByArea: byArea, itemBestFit: bestFit, split: sp})
			}
		}
		for fr := fitRule(0); fr < fitRules; fr++ {
			vs = append(vs, fillVariant{fit: fr, split: sp})
		}
	}
	return vs
}

// filler tries every order × variant of filling a sheet and keeps the
// fullest fill. The tries reuse the storage of two layouts (the one being
// tried and the fullest so far), so that the thousands of fills tried per
// sheet of a week's list allocate nothing; only the fill kept is copied
// out.
type filler struct {
	e         *engine
	try, best sheetLayout
	scratch   []int   // what is left while a fill is tried
	bestLeft  []int   // what the fullest fill left
	same      []int   // per variant, the first of the variants equal to it
	work      []int64 // per variant, the work its fill counted in this order
	// live and liveWork are the shapes a rectangle-first fill of the
	// order being tried starts from, and their work (liveList's)
	live     []liveShape
	liveWork int64
}

// fullest fills a sheet of format fi from from (copies left per shape) in
// every order × variant and returns the fullest fill (the first of equals)
// and what it leaves; ok is false when nothing fits.
func (f *filler) fullest(fi int, from []int, orders [][]int, variants []fillVariant) (sh sheetLayout, left []int, ok bool) {
	return f.fullestFrom(nil, fi, from, orders, variants)
}

// fullestFrom is fullest starting from the layout base (nil: an empty
// sheet of format fi): what base holds stays where it is.
func (f *filler) fullestFrom(base *sheetLayout, fi int, from []int, orders [][]int, variants []fillVariant) (sh sheetLayout, left []int, ok bool) {
	f.scratch = append(f.scratch[:0], from...)
	f.best.used = 0
	// A variant drawn twice fills the sheet the same way again in the same
	// order: its work is counted as if it were tried, and nothing else
	// changes.
	f.same = f.same[:0]
	for j, v := range variants {
		f.same = append(f.same, j)
		for i := range j {
			if variants[i] == v {
				f.same[j] = i
				break
			}
		}
	}
	f.work = slices.Grow(f.work[:0], len(variants))[:len(variants)] // each set in an order before it is read
	for _, order := range orders {
		// the shapes a rectangle-first fill tries, the same for every
		// variant of this order: listed once
		listed := false
		for j, v := range variants {
			if i := f.same[j]; i != j {
				f.e.work += f.work[i]
				continue
			}
			before := f.e.work
			copy(f.scratch, from)
			if base == nil {
				f.e.resetSheet(&f.try, fi)
			} else {
				f.try.format, f.try.used = base.format, base.used
				f.try.free = append(f.try.free[:0], base.free...)
				f.try.parts = append(f.try.parts[:0], base.parts...)
			}
			if v.rectFirst {
				if !listed {
					f.live, f.liveWork = f.e.liveList(f.live[:0], from, order)
					listed = true
				}
				f.e.live = append(f.e.live[:0], f.live...)
				f.e.fillRects(&f.try, f.scratch, f.e.live, f.liveWork, v)
			} else {
				f.e.fillParts(&f.try, f.scratch, order, v)
			}
			if f.try.used > f.best.used {
				f.try, f.best = f.best, f.try
				f.bestLeft = append(f.bestLeft[:0], f.scratch...)
			}
			f.work[j] = f.e.work - before
		}
	}
	if f.best.used == 0 {
		return sheetLayout{}, nil, false
	}
	sh = f.best
	sh.free, sh.parts = slices.Clone(sh.free), slices.Clone(sh.parts)
	return sh, slices.Clone(f.bestLeft), true
}

// fillSheet makes sh a new sheet of format fi (reusing its storage) and
// fills it from left (copies left per shape, taken from as parts are
// placed), trying shapes in order.
func (e *engine) fillSheet(sh *sheetLayout, fi int, left []int, order []int, v fillVariant) {
	e.resetSheet(sh, fi)
	e.fillMore(sh, left, order, v)
}

// fillMore fills sh's free rectangles from left, trying shapes in order.
func (e *engine) fillMore(sh *sheetLayout, left []int, order []int, v fillVariant) {
	if !v.rectFirst {
		e.fillParts(sh, left, order, v)
		return
	}
	live, work := e.liveList(e.live[:0], left, order)
	e.fillRects(sh, left, live, work, v)
	e.live = live[:0]
}

// fillParts fills sh part by part, each shape of order in turn, each copy
// where it fits best by the variant's rule.
func (e *engine) fillParts(sh *sheetLayout, left []int, order []int, v fillVariant) {
	for _, s := range order {
		for left[s] > 0 {
			ri, o, _, _, ok := e.bestRect(sh, s, v.fit)
			if !ok {
				break
			}
			e.place(sh, ri, s, o, v.split)
			left[s]--
		}
	}
}

// liveList appends to dst the shapes of order with copies in left, each
// with its sizes at hand and its place in order, the shortest short side
// first (so that fillRects's search for a rectangle's part stops at the
// first too wide), and returns it with the work a rectangle's search
// counts: a try per shape and per orientation of each.
func (e *engine) liveList(dst []liveShape, left []int, order []int) ([]liveShape, int64) {
	e.stamp++
	for i, s := range order {
		if e.inOrder[s].stamp != e.stamp { // its first place, should it have two
			e.inOrder[s] = orderMark{stamp: e.stamp, pos: int32(i)} //nolint:gosec // a list of shapes is far below 2³¹
		}
	}
	var work int64
	for _, s := range e.byShort {
		if m := e.inOrder[s]; m.stamp == e.stamp && left[s] > 0 {
			ls := e.liveShapes[s]
			ls.pos = m.pos
			dst = append(dst, ls)
			work += 1 + int64(ls.n)
		}
	}
	return dst, work
}

// fillRects fills sh rectangle by rectangle (the smallest or the lowest
// first, as the variant says), each with the best of the shapes of live
// (liveList's, with its work) that fits it; live is used up.
func (e *engine) fillRects(sh *sheetLayout, left []int, live []liveShape, liveWork int64, v fillVariant) {
	anyStage := e.stages == 0
	for len(sh.free) > 0 && len(live) > 0 {
		r := 0
		for i, f := range sh.free[1:] {
			g := sh.free[r]
			if v.rectByArea {
				if f.area() < g.area() {
					r = i + 1
				}
			} else if f.y < g.y || (f.y == g.y && f.x < g.x) {
				r = i + 1
			}
		}
		f := sh.free[r]
		fShort, fLong := min(f.w, f.h), max(f.w, f.h)
		fw, fh := int32(f.w), int32(f.h) //nolint:gosec // sizes are in engine units, far below 2³¹
		bi, bk := -1, 0
		var ba, bb int64
		var bp int32
		e.work += liveWork
		for i := range live {
			ls := &live[i]
			if int(ls.short) > fShort {
				break // nor does any shape after it
			}
			if int(ls.long) > fLong {
				continue // fits no way round
			}
			for k := range int(ls.n) {
				dx, dy := ls.dx[k], ls.dy[k]
				if dx > fw || dy > fh || (!anyStage && !e.fits(f, e.shapes[ls.s].os[k])) {
					continue
				}
				var a, b int64
				if v.itemBestFit {
					a, b = int64(min(fw-dx, fh-dy)), -ls.area
				} else {
					a, b = -ls.area, int64(min(fw-dx, fh-dy))
				}
				// the first in order of the best
				if bi < 0 || a < ba || (a == ba && (b < bb || (b == bb && ls.pos < bp))) {
					bi, bk, ba, bb, bp = i, k, a, b, ls.pos
				}
			}
		}
		if bi < 0 {
			sh.free = append(sh.free[:r], sh.free[r+1:]...)
			continue
		}
		bs := int(live[bi].s)
		e.place(sh, r, bs, e.shapes[bs].os[bk], v.split)
		left[bs]--
		if left[bs] == 0 {
			liveWork -= 1 + int64(live[bi].n)
			live = append(live[:bi], live[bi+1:]...)
		}
	}
	// with no part left, no free rectangle takes one
	sh.free = sh.free[:0]
}

// orderMark marks a shape in the order a fill tries (stamp: the fill's).
type orderMark struct {
	stamp uint64
	pos   int32
}

// liveShape is a shape as a rectangle-first fill tries it: its sizes and
// ways round side by side, without the shape's slices to follow.
type liveShape struct {
	s           int32
	short, long int32
	n           int32    // its ways round: 1 or 2
	pos         int32    // its place in the order the fill tries
	dx, dy      [2]int32 // each way round, as shape.os
	area        int64
}

func (e *engine) liveShapeOf(s int) liveShape {
	sp := &e.shapes[s]
	ls := liveShape{s: int32(s), short: int32(sp.short), long: int32(sp.long), n: int32(len(sp.os)), area: sp.area} //nolint:gosec // sizes are in engine units, far below 2³¹
	for k, o := range sp.os {
		ls.dx[k], ls.dy[k] = int32(o.dx), int32(o.dy) //nolint:gosec // as above
	}
	return ls
}

// packSheets builds a solution sheet by sheet: for each sheet, every order
// × variant is tried and the fullest fill kept. Offcuts come first, in
// their order, while they take anything; then, of the new-sheet formats
// with sheets left, the one the parts fill best. nil means the sheets ran
// out, or the budget did (stop reports it).
func (e *engine) packSheets(remain []int, orders [][]int, variants []fillVariant, stop func() bool) *solution {
	return e.packSheetsAfter(nil, remain, orders, variants, stop)
}

// packSheetsAfter is packSheets with the sheets of before already taken
// (nil: none): an offcut or a format of a limited count that before uses
// up is not used again.
func (e *engine) packSheetsAfter(before *solution, remain []int, orders [][]int, variants []fillVariant, stop func() bool) *solution {
	left := append([]int(nil), remain...)
	fill := filler{e: e}
	total := 0
	for _, c := range left {
		total += c
	}
	usedFormats := make([]int, len(e.formats))
	if before != nil {
		for _, sh := range before.sheets {
			usedFormats[sh.format]++
		}
	}
	dead := make([]bool, len(e.formats))
	sol := &solution{}
	available := func(fi int) bool {
		f := e.formats[fi]
		return !dead[fi] && (f.count == 0 || usedFormats[fi] < f.count)
	}
	tryFormat := func(fi int) (sheetLayout, bool) {
		sh, _, ok := fill.fullest(fi, left, orders, variants)
		return sh, ok
	}
	for total > 0 {
		var best sheetLayout
		found := false
		for fi, f := range e.formats {
			if !f.offcut || !available(fi) {
				continue
			}
			if best, found = tryFormat(fi); found {
				break
			}
			dead[fi] = true // nothing left fits it, nor will
		}
		for fi, f := range e.formats {
			if found && e.formats[best.format].offcut {
				break
			}
			if f.offcut || !available(fi) {
				continue
			}
			// the fullest sheet, as a share of its area
			if sh, ok := tryFormat(fi); ok && (!found || sh.used*e.formats[best.format].area > best.used*f.area) {
				best, found = sh, true
			}
		}
		if !found || stop() {
			return nil
		}
		for _, pl := range best.parts {
			left[pl.shape]--
			total--
		}
		usedFormats[best.format]++
		sol.sheets = append(sol.sheets, best)
	}
	return sol
}
