package cutting

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// The checker below knows nothing of the optimiser's code: it reads the
// problem and the plan as a saw operator would, in millimetres.

const eps = 1e-6

type box struct{ x0, y0, x1, y1 float64 }

func boxOf(r Rect) box { return box{r.X, r.Y, r.X + r.DX, r.Y + r.DY} }

// gap is how far apart two intervals are (negative when they overlap).
func gap(a0, a1, b0, b1 float64) float64 { return math.Max(b0-a1, a0-b1) }

// checkPlan fails t unless plan is a sound layout of p.
func checkPlan(t *testing.T, p Problem, plan Plan) {
	t.Helper()
	placedCount := make([]int, len(p.Parts))
	// no format used more often than it is there (an offcut once, unless
	// its count says otherwise)
	perFormat := make([]int, len(p.Formats))
	for _, s := range plan.Sheets {
		perFormat[s.Format]++
	}
	for i, f := range p.Formats {
		limit := f.Count
		if f.Offcut && limit == 0 {
			limit = 1
		}
		require.True(t, limit == 0 || perFormat[i] <= limit, "format %d (%q) used %d times, there are %d", i, f.Name, perFormat[i], limit)
	}
	var partsArea, sheetsArea float64
	maxStages := 0
	for si, s := range plan.Sheets {
		require.Equal(t, si+1, s.N)
		require.GreaterOrEqual(t, s.Format, 0)
		f := p.Formats[s.Format]
		require.Equal(t, f.Length, s.Length)
		require.Equal(t, f.Width, s.Width)
		tr := p.Trims
		if f.Offcut {
			tr = Trims{}
		}
		inside := box{tr.Left, tr.Bottom, f.Length - tr.Right, f.Width - tr.Top}
		sheetsArea += f.Length * f.Width
		var boxes []box
		for _, pl := range s.Parts {
			require.Less(t, pl.Part, len(p.Parts))
			pt := p.Parts[pl.Part]
			placedCount[pl.Part]++
			// its size, turned or not, and never against the grain
			if pl.Turned {
				require.InDelta(t, pt.Width, pl.DX, 0.05, "sheet %d part %q turned", s.N, pt.Name)
				require.InDelta(t, pt.Length, pl.DY, 0.05, "sheet %d part %q turned", s.N, pt.Name)
				require.NotEqual(t, GrainLength, pt.Grain, "sheet %d: part %q turned across its grain", s.N, pt.Name)
			} else {
				require.InDelta(t, pt.Length, pl.DX, 0.05, "sheet %d part %q", s.N, pt.Name)
				require.InDelta(t, pt.Width, pl.DY, 0.05, "sheet %d part %q", s.N, pt.Name)
				require.NotEqual(t, GrainWidth, pt.Grain, "sheet %d: part %q not turned though its grain runs along its width", s.N, pt.Name)
			}
			b := boxOf(pl.Rect)
			require.True(t, b.x0 >= inside.x0-eps && b.y0 >= inside.y0-eps && b.x1 <= inside.x1+eps && b.y1 <= inside.y1+eps,
				"sheet %d: part %q at %+v outside the trims %+v", s.N, pt.Name, b, inside)
			partsArea += pl.DX * pl.DY
			boxes = append(boxes, b)
		}
		// no overlap, and the kerf between every two parts
		for i := range boxes {
			for j := i + 1; j < len(boxes); j++ {
				a, b := boxes[i], boxes[j]
				sep := math.Max(gap(a.x0, a.x1, b.x0, b.x1), gap(a.y0, a.y1, b.y0, b.y1))
				require.GreaterOrEqual(t, sep, p.Kerf-eps, "sheet %d: parts %d and %d closer than the kerf: %+v %+v", s.N, i, j, a, b)
			}
		}
		// cuttable in the stages claimed, and no more than the saw makes
		need := minStages(inside, boxes, p.Kerf)
		require.Less(t, need, 1000, "sheet %d is not a guillotine layout", s.N)
		require.LessOrEqual(t, need, s.Stages, "sheet %d", s.N)
		if p.Stages > 0 {
			require.LessOrEqual(t, s.Stages, p.Stages, "sheet %d", s.N)
		}
		maxStages = max(maxStages, s.Stages)
		// the listed cuts cross no part and stay in the saw's stages
		for _, c := range s.Cuts {
			require.GreaterOrEqual(t, c.Stage, 1)
			if p.Stages > 0 {
				require.LessOrEqual(t, c.Stage, p.Stages)
			}
			pc := boxOf(c.Piece)
			var blade box
			switch c.Direction {
			case AlongWidth:
				blade = box{c.Pos, pc.y0, c.Pos + p.Kerf, pc.y1}
			case AlongLength:
				blade = box{pc.x0, c.Pos, pc.x1, c.Pos + p.Kerf}
			default:
				t.Fatalf("sheet %d: a cut's direction %q", s.N, c.Direction)
			}
			for _, b := range boxes {
				overlapX := math.Min(blade.x1, b.x1) - math.Max(blade.x0, b.x0)
				overlapY := math.Min(blade.y1, b.y1) - math.Max(blade.y0, b.y0)
				require.False(t, overlapX > eps && overlapY > eps || (p.Kerf == 0 && overlapY > eps && c.Direction == AlongWidth && c.Pos > b.x0+eps && c.Pos < b.x1-eps) ||
					(p.Kerf == 0 && overlapX > eps && c.Direction == AlongLength && c.Pos > b.y0+eps && c.Pos < b.y1-eps),
					"sheet %d: cut %+v crosses a part %+v", s.N, c, b)
			}
		}
		// offcuts are large enough, and on waste
		for _, o := range s.Offcuts {
			long, short := math.Max(o.DX, o.DY), math.Min(o.DX, o.DY)
			require.GreaterOrEqual(t, long, math.Max(p.MinOffcut.Length, p.MinOffcut.Width)-eps)
			require.GreaterOrEqual(t, short, math.Min(p.MinOffcut.Length, p.MinOffcut.Width)-eps)
			ob := boxOf(o)
			for _, b := range boxes {
				sep := math.Max(gap(ob.x0, ob.x1, b.x0, b.x1), gap(ob.y0, ob.y1, b.y0, b.y1))
				require.GreaterOrEqual(t, sep, -eps, "sheet %d: offcut %+v on a part %+v", s.N, ob, b)
			}
		}
	}
	for i, pt := range p.Parts {
		require.Equal(t, pt.Qty, placedCount[i], "part %d %q placed %d times, not %d", i, pt.Name, placedCount[i], pt.Qty)
	}
	tt := plan.Totals
	// the offcuts' totals: their count and area, and the largest
	offcuts, offcutsArea, largest := 0, 0.0, Size{}
	for _, s := range plan.Sheets {
		for _, o := range s.Offcuts {
			offcuts++
			offcutsArea += o.DX * o.DY
			if o.DX*o.DY > largest.Length*largest.Width {
				largest = Size{o.DX, o.DY}
			}
		}
	}
	require.Equal(t, offcuts, tt.Offcuts)
	require.InDelta(t, offcutsArea/1e6, tt.OffcutsM2, 1e-3)
	require.InDelta(t, largest.Length*largest.Width, tt.LargestOffcut.Length*tt.LargestOffcut.Width, 1e-6)
	require.Equal(t, len(plan.Sheets), tt.Sheets)
	require.InDelta(t, partsArea/sheetsArea, tt.Yield, 1e-3)
	require.InDelta(t, (sheetsArea-partsArea)/1e6, tt.WasteM2, 1e-3)
	require.Equal(t, maxStages, tt.Stages)
}

// minStages is the fewest stages that free every box from the area: a
// guillotine split, the first stage either way. 1000 and more: no
// guillotine split frees them.
func minStages(area box, boxes []box, kerf float64) int {
	return min(stagesFrom(area, boxes, kerf, true), stagesFrom(area, boxes, kerf, false))
}

// stagesFrom counts the stages when the first one cuts across x (alongX:
// lines x = c) or across y.
func stagesFrom(area box, boxes []box, kerf float64, acrossX bool) int {
	if len(boxes) == 0 {
		return 0
	}
	if len(boxes) == 1 && math.Abs(boxes[0].x0-area.x0) < eps && math.Abs(boxes[0].x1-area.x1) < eps &&
		math.Abs(boxes[0].y0-area.y0) < eps && math.Abs(boxes[0].y1-area.y1) < eps {
		return 0
	}
	lo := func(b box) float64 {
		if acrossX {
			return b.x0
		}
		return b.y0
	}
	hi := func(b box) float64 {
		if acrossX {
			return b.x1
		}
		return b.y1
	}
	sorted := append([]box(nil), boxes...)
	sort.SliceStable(sorted, func(i, j int) bool { return lo(sorted[i]) < lo(sorted[j]) })
	// bands: runs of boxes no blade can pass between
	var bands [][]box
	var bandHi []float64
	for _, b := range sorted {
		n := len(bands)
		if n > 0 && lo(b) < bandHi[n-1]+kerf-eps {
			bands[n-1] = append(bands[n-1], b)
			bandHi[n-1] = math.Max(bandHi[n-1], hi(b))
			continue
		}
		bands = append(bands, []box{b})
		bandHi = append(bandHi, hi(b))
	}
	first := lo(bands[0][0])
	if len(bands) == 1 && math.Abs(first-lo(area)) < eps && math.Abs(bandHi[0]-hi(area)) < eps {
		// nothing to cut this way at this stage: the piece passes on
		if other := stagesFrom(area, boxes, kerf, !acrossX); other < 1000 {
			return 1 + other
		}
		return 1000
	}
	worst := 0
	for i, band := range bands {
		sub := area
		if acrossX {
			sub.x0, sub.x1 = lo(band[0]), bandHi[i]
		} else {
			sub.y0, sub.y1 = lo(band[0]), bandHi[i]
		}
		worst = max(worst, stagesFrom(sub, band, kerf, !acrossX))
	}
	return min(1+worst, 1000)
}

// randomProblem is a seeded cutting list of furniture-like parts.
func randomProblem(seed uint64, kerf, trim float64, stages int) Problem {
	rng := rand.New(rand.NewPCG(seed, 7))
	p := Defaults()
	p.Kerf, p.Trims, p.Stages = kerf, Trims{trim, trim, trim, trim}, stages
	p.Formats = []Format{{Name: "2800×2070", Length: 2800, Width: 2070}}
	if rng.IntN(2) == 0 {
		p.Formats = append([]Format{{Name: "остаток", Length: 1200, Width: 700, Offcut: true, Count: 2}}, p.Formats...)
	}
	grains := []Grain{GrainNone, GrainLength, GrainWidth, ""}
	for i := range 5 + rng.IntN(30) {
		l := 50 + float64(rng.IntN(2500))
		w := 40 + float64(rng.IntN(1000))
		g := grains[rng.IntN(len(grains))]
		if g == GrainWidth {
			l = min(l, 2000)
		}
		if rng.IntN(3) == 0 {
			w += 0.5
		}
		p.Parts = append(p.Parts, Part{ID: fmt.Sprint(i + 1), Name: fmt.Sprintf("деталь %d", i+1),
			Length: l, Width: w, Qty: 1 + rng.IntN(4), Grain: g})
	}
	p.Effort = 3_000_000
	return p
}

// newSheetsM2 is the area of the plan's sheets that are not offcuts.
func newSheetsM2(p Plan) float64 {
	a := 0.0
	for _, s := range p.Sheets {
		if !s.Offcut {
			a += s.Length * s.Width / 1e6
		}
	}
	return a
}

func TestOptimise_RandomInstancesPassTheChecker(t *testing.T) {
	t.Parallel()
	seed := uint64(0)
	for _, kerf := range []float64{0, 4.4} {
		for _, trim := range []float64{0, 10} {
			for _, stages := range []int{2, 3, 0} {
				for range 4 {
					seed++
					p := randomProblem(seed, kerf, trim, stages)
					name := fmt.Sprintf("seed%d_kerf%g_trim%g_stages%d", seed, kerf, trim, stages)
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						plan, err := Optimise(p)
						require.NoError(t, err, "%+v", apperr.As(err))
						checkPlan(t, p, plan)
						base, err := Baseline(p)
						require.NoError(t, err)
						checkPlan(t, p, base)
						// offcuts in stock cost nothing: new sheets are what is compared
						require.LessOrEqual(t, newSheetsM2(plan), newSheetsM2(base)+eps)
					})
				}
			}
		}
	}
}

func TestOptimise_ClassInstancesPassTheChecker(t *testing.T) {
	t.Parallel()
	for c := range ClassNames {
		p := ClassInstance(c, 40, 3)
		p.Kerf, p.Stages, p.Effort = 0, 0, 2_000_000
		plan, err := Optimise(p)
		require.NoError(t, err)
		checkPlan(t, p, plan)
		require.GreaterOrEqual(t, plan.Totals.Sheets, LowerBound(p))
	}
}

func TestOptimise_FurnitureWeekPassesTheChecker(t *testing.T) {
	t.Parallel()
	p := FurnitureWeek(400)
	p.Effort = 5_000_000
	plan, err := Optimise(p)
	require.NoError(t, err)
	checkPlan(t, p, plan)
	require.LessOrEqual(t, plan.Totals.Stages, 3)
	base, err := Baseline(p)
	require.NoError(t, err)
	checkPlan(t, p, base)
	require.LessOrEqual(t, plan.Totals.Sheets, base.Totals.Sheets)
}

func TestOptimise_Deterministic(t *testing.T) {
	t.Parallel()
	p := randomProblem(99, 4.4, 10, 3)
	// every step of the default search (its runs from random numbers of
	// their own, the shaken orders, the ruin and recreate), at a tenth of
	// its effort per part
	p.Effort = Effort(len(p.Parts), DefaultEffortPerPart/10)
	p.TimeLimit = time.Hour // the effort bounds the search, not a busy machine's clock
	require.Greater(t, LowerBound(p), 0)
	a, err := Optimise(p)
	require.NoError(t, err)
	b, err := Optimise(p)
	require.NoError(t, err)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	require.Equal(t, string(ja), string(jb))
}

func TestOptimise_GrainAndTurning(t *testing.T) {
	t.Parallel()
	// A 1000 × 500 part on a 600 × 1100 sheet fits only turned.
	p := Defaults()
	p.Formats = []Format{{Length: 600, Width: 1100}}
	p.Trims, p.Kerf = Trims{}, 0
	p.Parts = []Part{{Name: "без текстуры", Length: 1000, Width: 500, Qty: 1}}
	plan, err := Optimise(p)
	require.NoError(t, err)
	require.True(t, plan.Sheets[0].Parts[0].Turned)
	checkPlan(t, p, plan)

	p.Parts[0].Grain = GrainWidth // its width along the sheet's grain: turned, as it must
	plan, err = Optimise(p)
	require.NoError(t, err)
	require.True(t, plan.Sheets[0].Parts[0].Turned)

	p.Parts[0].Grain = GrainLength
	_, err = Optimise(p)
	require.Equal(t, apperr.EINVALID, apperr.Code(err))
	require.Equal(t, "parts[0]", apperr.As(err).Fields[0].Field)
	require.Contains(t, apperr.As(err).Fields[0].Message, `"без текстуры"`)
}

func TestOptimise_KerfTrimsAndOffcuts(t *testing.T) {
	t.Parallel()
	// Two 1000 × 1000 parts on a 2020 × 1020 sheet: 10 mm trims leave
	// 2000 mm, too little for two parts and a 4.4 mm kerf.
	p := Defaults()
	p.Formats = []Format{{Length: 2020, Width: 1020}}
	p.Trims = Trims{10, 10, 10, 10}
	p.Parts = []Part{{Name: "квадрат", Length: 1000, Width: 1000, Qty: 2}}
	plan, err := Optimise(p)
	require.NoError(t, err)
	require.Equal(t, 2, plan.Totals.Sheets)
	checkPlan(t, p, plan)
	// 2000 mm of usable length hold 1000 + 4.4 kerf + a 995.6 mm offcut
	require.Len(t, plan.Sheets[0].Offcuts, 1)
	require.InDelta(t, 995.6, plan.Sheets[0].Offcuts[0].DX, 1e-9)

	p.Formats[0].Length = 2024.4
	plan, err = Optimise(p)
	require.NoError(t, err)
	require.Equal(t, 1, plan.Totals.Sheets)
	checkPlan(t, p, plan)
	require.Equal(t, []Cut{{Stage: 1, Direction: AlongWidth, Pos: 1010, Piece: Rect{10, 10, 2004.4, 1000}}}, plan.Sheets[0].Cuts)
}

func TestOptimise_Errors(t *testing.T) {
	t.Parallel()
	base := func() Problem {
		p := Defaults()
		p.Formats = []Format{{Length: 2800, Width: 2070}}
		p.Trims = Trims{10, 10, 10, 10}
		p.Parts = []Part{{Name: "Боковина", Length: 2200, Width: 600, Qty: 2, Grain: GrainLength}}
		return p
	}
	for name, tc := range map[string]struct {
		change func(p *Problem)
		field  string
	}{
		"PartTooLarge": {func(p *Problem) { p.Parts[0].Length = 2790 }, "parts[0]"},
		"AcrossGrain": {func(p *Problem) {
			p.Parts[0].Length, p.Parts[0].Width = 600, 2200
			p.Parts[0].Grain = GrainLength
			p.Formats[0].Length = 2000
		}, "parts[0]"},
		"TrimsEatSheet":  {func(p *Problem) { p.Trims.Top, p.Trims.Bottom = 1100, 1000 }, "formats[0]"},
		"KerfNegative":   {func(p *Problem) { p.Kerf = -1 }, "kerf_mm"},
		"NoParts":        {func(p *Problem) { p.Parts = nil }, "parts"},
		"NoFormats":      {func(p *Problem) { p.Formats = nil }, "formats"},
		"BadGrain":       {func(p *Problem) { p.Parts[0].Grain = "diagonal" }, "parts[0].grain"},
		"ZeroQty":        {func(p *Problem) { p.Parts[0].Qty = 0 }, "parts[0].qty"},
		"TooFewSheets":   {func(p *Problem) { p.Formats[0].Count = 1; p.Parts[0].Qty = 5 }, "formats"},
		"NegativeStages": {func(p *Problem) { p.Stages = -1 }, "stages"},
		"TooManyParts":   {func(p *Problem) { p.Parts[0].Qty = MaxParts + 1 }, "parts"},
		"TooThin":        {func(p *Problem) { p.Parts[0].Width = 0.01 }, "parts[0]"},
		"OffcutWeight":   {func(p *Problem) { p.OffcutWeight = -1 }, "offcut_weight"},
	} {
		t.Run("Err"+name, func(t *testing.T) {
			t.Parallel()
			p := base()
			tc.change(&p)
			_, err := Optimise(p)
			require.Equal(t, apperr.EINVALID, apperr.Code(err), "%v", err)
			require.Equal(t, tc.field, apperr.As(err).Fields[0].Field, "%v", apperr.As(err).Fields)
		})
	}
}
