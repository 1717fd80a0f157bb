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
	scratch   []int // what is left while a fill is tried
	bestLeft  []int // what the fullest fill left
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
	for _, order := range orders {
		for _, v := range variants {
			copy(f.scratch, from)
			if base == nil {
				f.e.fillSheet(&f.try, fi, f.scratch, order, v)
			} else {
				f.try.format, f.try.used = base.format, base.used
				f.try.free = append(f.try.free[:0], base.free...)
				f.try.parts = append(f.try.parts[:0], base.parts...)
				f.e.fillMore(&f.try, f.scratch, order, v)
			}
			if f.try.used > f.best.used {
				f.try, f.best = f.best, f.try
				f.bestLeft = append(f.bestLeft[:0], f.scratch...)
			}
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
		return
	}
	// the shapes of order with copies left, in order: a shape leaves the
	// list when its last copy is placed
	live := e.live[:0]
	for _, s := range order {
		if left[s] > 0 {
			live = append(live, s)
		}
	}
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
		bi := -1
		var bo orient
		var ba, bb int64
		for i, s := range live {
			sp := &e.shapes[s]
			e.work += 1 + int64(len(sp.os)) // the shape, and a try per orientation
			if sp.short > fShort || sp.long > fLong {
				continue // fits no way round
			}
			for _, o := range sp.os {
				if !e.fits(f, o) {
					continue
				}
				var a, b int64
				if v.itemBestFit {
					a, b = int64(min(f.w-o.dx, f.h-o.dy)), -sp.area
				} else {
					a, b = -sp.area, int64(min(f.w-o.dx, f.h-o.dy))
				}
				if bi < 0 || a < ba || (a == ba && b < bb) {
					bi, bo, ba, bb = i, o, a, b
				}
			}
		}
		if bi < 0 {
			sh.free = append(sh.free[:r], sh.free[r+1:]...)
			continue
		}
		bs := live[bi]
		e.place(sh, r, bs, bo, v.split)
		left[bs]--
		if left[bs] == 0 {
			live = append(live[:bi], live[bi+1:]...)
		}
	}
	// with no part left, no free rectangle takes one
	sh.free = sh.free[:0]
	e.live = live[:0]
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
