package cutting

// improve tries to empty a solution's least-filled sheet: first by putting
// its parts into the free rectangles of the other sheets, then by filling
// another sheet afresh from both sheets' parts, as full as it goes, the rest
// back on the least-filled one. Each step that is kept leaves that sheet
// emptier, or gone.
func (e *engine) improve(sol *solution, orders [][]int, variants []fillVariant, stop func() bool) *solution {
	cur := cloneSolution(sol)
	for len(cur.sheets) > 1 && !stop() {
		l := 0
		for i, sh := range cur.sheets {
			if sh.used*e.formats[cur.sheets[l].format].area < cur.sheets[l].used*e.formats[sh.format].area {
				l = i
			}
		}
		if next := e.moveOut(cur, l); next != nil {
			cur = next
			continue
		}
		improved := false
		for j := range cur.sheets {
			if j == l {
				continue
			}
			if next := e.repackPair(cur, l, j, orders, variants); next != nil {
				cur, improved = next, true
				break
			}
			if stop() {
				return cur
			}
		}
		if !improved {
			break
		}
	}
	return cur
}

func cloneSolution(s *solution) *solution {
	out := &solution{sheets: make([]sheetLayout, len(s.sheets))}
	for i, sh := range s.sheets {
		sh.free = append([]freeRect(nil), sh.free...)
		sh.parts = append([]placed(nil), sh.parts...)
		out.sheets[i] = sh
	}
	return out
}

// moveOut puts every part of sheet l into the free rectangles of the
// others, or returns nil.
func (e *engine) moveOut(s *solution, l int) *solution {
	next := cloneSolution(s)
	parts := append([]placed(nil), next.sheets[l].parts...)
	for i := 1; i < len(parts); i++ {
		for j := i; j > 0 && e.shapes[parts[j].shape].area > e.shapes[parts[j-1].shape].area; j-- {
			parts[j], parts[j-1] = parts[j-1], parts[j]
		}
	}
	for _, pl := range parts {
		bs, bi := -1, 0
		var bo orient
		var ba, bb int64
		for si := range next.sheets {
			if si == l {
				continue
			}
			ri, o, a, b, ok := e.bestRect(&next.sheets[si], pl.shape, fitBestArea)
			if ok && (bs < 0 || a < ba || (a == ba && b < bb)) {
				bs, bi, bo, ba, bb = si, ri, o, a, b
			}
		}
		if bs < 0 {
			return nil
		}
		e.place(&next.sheets[bs], bi, pl.shape, bo, splitShorterLeftover)
	}
	next.sheets = append(next.sheets[:l], next.sheets[l+1:]...)
	return next
}

// repackPair fills sheet j afresh from the parts of sheets l and j; when it
// holds more than before and the rest fits on sheet l's format, or nothing
// is left, the new solution; else nil.
func (e *engine) repackPair(s *solution, l, j int, orders [][]int, variants []fillVariant) *solution {
	pool := make([]int, len(e.shapes))
	var poolArea int64
	for _, k := range []int{l, j} {
		for _, pl := range s.sheets[k].parts {
			pool[pl.shape]++
			poolArea += e.shapes[pl.shape].area
		}
	}
	fill := filler{e: e}
	first, rest, _ := fill.fullest(s.sheets[j].format, pool, orders, variants)
	if first.used <= s.sheets[j].used {
		return nil
	}
	next := cloneSolution(s)
	next.sheets[j] = first
	if first.used == poolArea {
		next.sheets = append(next.sheets[:l], next.sheets[l+1:]...)
		return next
	}
	second, _, _ := fill.fullest(s.sheets[l].format, rest, orders, variants)
	if second.used != poolArea-first.used {
		return nil
	}
	next.sheets[l] = second
	return next
}
