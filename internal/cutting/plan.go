package cutting

import (
	"math"
	"slices"
)

// The plan is written from the placements alone: the cuts are found again
// by splitting each sheet's usable area the guillotine way, every stage
// making all the cuts it can, tight around the groups of parts it frees.

type prect struct {
	x, y, w, h int
	pi         int // index into the sheet's placements
}

func (r prect) start(d int8) int {
	if d == dirX {
		return r.x
	}
	return r.y
}

func (r prect) end(d int8) int {
	if d == dirX {
		return r.x + r.w
	}
	return r.y + r.h
}

func other(d int8) int8 {
	if d == dirX {
		return dirY
	}
	return dirX
}

// slab is the part of r between lo and hi along d.
func slab(r prect, d int8, lo, hi int) prect {
	if d == dirX {
		return prect{lo, r.y, hi - lo, r.h, -1}
	}
	return prect{r.x, lo, r.w, hi - lo, -1}
}

type group struct {
	lo, hi int
	parts  []prect
}

// groups splits parts into the runs a cut along d can separate: two parts
// closer than the kerf along d, or overlapping, stay together.
func groups(parts []prect, d int8, kerf int) []group {
	ps := slices.Clone(parts)
	slices.SortStableFunc(ps, func(a, b prect) int { return a.start(d) - b.start(d) })
	var gs []group
	for _, p := range ps {
		if n := len(gs); n > 0 && p.start(d) < gs[n-1].hi+kerf {
			gs[n-1].hi = max(gs[n-1].hi, p.end(d))
			gs[n-1].parts = append(gs[n-1].parts, p)
			continue
		}
		gs = append(gs, group{p.start(d), p.end(d), []prect{p}})
	}
	return gs
}

const unCuttable = 1 << 20

type cutter struct {
	kerf     int
	cuts     []Cut
	waste    []prect
	emitting bool
}

// stages splits region with cuts along d first and returns how many stages
// it takes; emitting, it writes the cuts and waste pieces, numbering the
// first stage stage.
func (c *cutter) stages(region prect, parts []prect, d int8, stage int) int {
	if len(parts) == 0 {
		if c.emitting {
			c.waste = append(c.waste, region)
		}
		return 0
	}
	if len(parts) == 1 && parts[0].x == region.x && parts[0].y == region.y && parts[0].w == region.w && parts[0].h == region.h {
		return 0
	}
	lo, hi := region.start(d), region.end(d)
	gs := groups(parts, d, c.kerf)
	if len(gs) == 1 && gs[0].lo == lo && gs[0].hi == hi {
		if og := groups(parts, other(d), c.kerf); len(og) == 1 && og[0].lo == region.start(other(d)) && og[0].hi == region.end(other(d)) {
			return unCuttable
		}
		return 1 + c.stages(region, parts, other(d), stage+1)
	}
	if c.emitting {
		dir := AlongWidth
		if d == dirY {
			dir = AlongLength
		}
		piece := c.rect(region)
		at := lo
		for _, g := range gs {
			if g.lo > at {
				pos := g.lo - c.kerf
				if pos > at {
					c.waste = append(c.waste, slab(region, d, at, pos))
				}
				c.cuts = append(c.cuts, Cut{Stage: stage, Direction: dir, Pos: toMM(pos), Piece: piece})
			}
			if g.hi < hi {
				c.cuts = append(c.cuts, Cut{Stage: stage, Direction: dir, Pos: toMM(g.hi), Piece: piece})
				at = g.hi + c.kerf
			} else {
				at = hi
			}
		}
		if at < hi {
			c.waste = append(c.waste, slab(region, d, at, hi))
		}
	}
	most := 0
	for _, g := range gs {
		most = max(most, c.stages(slab(region, d, g.lo, g.hi), g.parts, other(d), stage+1))
	}
	return 1 + most
}

func (c *cutter) rect(r prect) Rect { return Rect{toMM(r.x), toMM(r.y), toMM(r.w), toMM(r.h)} }

// sheetCuts finds the cuts of a sheet: the first stage along whichever
// direction takes fewer stages (rips first on a tie).
func sheetCuts(kerf int, usable prect, parts []prect) (stages int, cuts []Cut, waste []prect) {
	probe := &cutter{kerf: kerf}
	d := int8(dirY)
	n := probe.stages(usable, parts, dirY, 1)
	if m := probe.stages(usable, parts, dirX, 1); m < n {
		d, n = dirX, m
	}
	c := &cutter{kerf: kerf, emitting: true}
	c.stages(usable, parts, d, 1)
	return n, c.cuts, c.waste
}

func m2(units2 int64) float64 { return round4(float64(units2) / 1e8) }

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// plan writes a solution out for the problem's parts.
func (e *engine) plan(p *Problem, sol *solution) Plan {
	next := make([]int, len(e.shapes)) // next copy of each shape to hand out
	var out Plan
	minL, minW := toUnits(p.MinOffcut.Length), toUnits(p.MinOffcut.Width)
	var largest int64
	for n, sh := range sol.sheets {
		f := p.Formats[sh.format]
		fi := e.formats[sh.format]
		parts := slices.Clone(sh.parts)
		slices.SortStableFunc(parts, func(a, b placed) int {
			if a.x != b.x {
				return a.x - b.x
			}
			return a.y - b.y
		})
		s := Sheet{N: n + 1, Format: sh.format, Name: f.Name, Length: f.Length, Width: f.Width, Offcut: f.Offcut,
			Usable: Rect{toMM(fi.ux), toMM(fi.uy), toMM(fi.uw), toMM(fi.uh)}, Parts: []Placement{}, Offcuts: []Rect{}}
		rects := make([]prect, len(parts))
		var used int64
		for i, pl := range parts {
			pi := e.shapes[pl.shape].instances[next[pl.shape]]
			next[pl.shape]++
			pt := p.Parts[pi]
			s.Parts = append(s.Parts, Placement{Part: pi, ID: pt.ID, Name: pt.Name,
				Rect: Rect{toMM(pl.x), toMM(pl.y), toMM(pl.o.dx), toMM(pl.o.dy)},
				// a shape without grain may have been listed either way round
				Turned: pl.o.dx != toUnits(pt.Length) || pl.o.dy != toUnits(pt.Width)})
			rects[i] = prect{pl.x, pl.y, pl.o.dx, pl.o.dy, i}
			used += int64(pl.o.dx) * int64(pl.o.dy)
		}
		var waste []prect
		s.Stages, s.Cuts, waste = sheetCuts(e.kerf, prect{fi.ux, fi.uy, fi.uw, fi.uh, -1}, rects)
		if s.Cuts == nil {
			s.Cuts = []Cut{}
		}
		for _, w := range waste {
			long, short := max(w.w, w.h), min(w.w, w.h)
			if long >= max(minL, minW) && short >= min(minL, minW) {
				s.Offcuts = append(s.Offcuts, Rect{toMM(w.x), toMM(w.y), toMM(w.w), toMM(w.h)})
				out.Totals.Offcuts++
				out.Totals.OffcutsM2 += float64(int64(w.w)*int64(w.h)) / 1e8
				if int64(w.w)*int64(w.h) > largest {
					largest = int64(w.w) * int64(w.h)
					out.Totals.LargestOffcut = Size{toMM(w.w), toMM(w.h)}
				}
			}
		}
		s.Yield = round4(float64(used) / float64(fi.area))
		s.WasteM2 = m2(fi.area - used)
		out.Sheets = append(out.Sheets, s)
		out.Totals.Sheets++
		out.Totals.Parts += len(parts)
		out.Totals.SheetsM2 += float64(fi.area) / 1e8
		out.Totals.PartsM2 += float64(used) / 1e8
		out.Totals.Stages = max(out.Totals.Stages, s.Stages)
	}
	t := &out.Totals
	if t.SheetsM2 > 0 {
		t.Yield = round4(t.PartsM2 / t.SheetsM2)
	}
	t.WasteM2 = round4(t.SheetsM2 - t.PartsM2)
	t.SheetsM2, t.PartsM2, t.OffcutsM2 = round4(t.SheetsM2), round4(t.PartsM2), round4(t.OffcutsM2)
	if out.Sheets == nil {
		out.Sheets = []Sheet{}
	}
	return out
}
