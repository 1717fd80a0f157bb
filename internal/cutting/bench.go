package cutting

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// The benchmark instances: the ten classes of two-dimensional bin packing
// of Berkey & Wang (I–VI) and Martello & Vigo (VII–X), the 500 published
// instances (standard.go) and more generated from the classes' rules with
// this package's seed, and a furniture factory's week.

// ClassNames are the benchmark classes, in order.
var ClassNames = []string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"}

// ClassInstance is instance k of class c (0 for I … 9 for X) with n items:
// unit squares of the class's bin, zero kerf and trims, turning allowed,
// any number of stages.
func ClassInstance(c, n, k int) Problem {
	rng := rand.New(rand.NewPCG(uint64(c)*1000+uint64(n), uint64(k))) //nolint:gosec // c, n and k are small and not negative
	u := func(lo, hi int) int { return lo + rng.IntN(hi-lo+1) }
	bin := []int{10, 30, 40, 100, 100, 300, 100, 100, 100, 100}[c]
	p := Problem{Formats: []Format{{Name: fmt.Sprintf("%d×%d", bin, bin), Length: float64(bin), Width: float64(bin)}}}
	for i := range n {
		var w, h int
		switch c {
		case 0, 1:
			w, h = u(1, 10), u(1, 10)
		case 2, 3:
			w, h = u(1, 35), u(1, 35)
		case 4, 5:
			w, h = u(1, 100), u(1, 100)
		default:
			// Martello & Vigo: the class's own type with probability 70 %,
			// each other type with 10 %.
			t := c - 6
			if r := rng.IntN(10); r >= 7 {
				t = (t + r - 6) % 4
			}
			const W, H = 100, 100
			switch t {
			case 0: // wide and low
				w, h = u((2*W+2)/3, W), u(1, H/2)
			case 1: // narrow and high
				w, h = u(1, W/2), u((2*H+2)/3, H)
			case 2: // large
				w, h = u(W/2, W), u(H/2, H)
			default: // small
				w, h = u(1, W/2), u(1, H/2)
			}
		}
		p.Parts = append(p.Parts, Part{ID: fmt.Sprint(i + 1), Length: float64(w), Width: float64(h), Qty: 1})
	}
	return p
}

// LowerBound is a bound on the sheets of a problem of one format: the
// parts' area over the sheet's, rounded up, the parts longer than half the
// sheet both ways, which no two share, or the bound the search stops at
// (Martello & Vigo's L2 by the parts' shorter sides, or the bound by dual
// feasible functions), whichever is largest.
func LowerBound(p Problem) int {
	search := 0
	if e, err := newEngine(&p); err == nil {
		search = e.lowerBound()
	}
	f := p.Formats[0]
	var area float64
	big := 0
	for _, pt := range p.Parts {
		area += pt.Length * pt.Width * float64(pt.Qty)
		if pt.Length > f.Length/2 && pt.Width > f.Width/2 && pt.Length > f.Width/2 && pt.Width > f.Length/2 {
			big += pt.Qty
		}
	}
	sheet := f.Length * f.Width
	lb := int(area / sheet)
	if float64(lb)*sheet < area {
		lb++
	}
	return max(lb, big, search)
}

// furniture is the demo catalogue's cabinets and wardrobes as parts of
// ЛДСП 16 mm: name, length, width, qty per product, grain.
var furniture = []struct {
	product string
	parts   []Part
}{
	{"Шкаф-купе 1600", []Part{
		{Name: "Боковина", Length: 2200, Width: 600, Qty: 2, Grain: GrainLength},
		{Name: "Крыша", Length: 1568, Width: 600, Qty: 1, Grain: GrainLength},
		{Name: "Дно", Length: 1568, Width: 600, Qty: 1, Grain: GrainLength},
		{Name: "Стойка", Length: 2068, Width: 560, Qty: 1, Grain: GrainLength},
		{Name: "Полка", Length: 768, Width: 560, Qty: 4},
		{Name: "Цоколь", Length: 1568, Width: 100, Qty: 2},
	}},
	{"Шкаф-купе 2000", []Part{
		{Name: "Боковина", Length: 2400, Width: 600, Qty: 2, Grain: GrainLength},
		{Name: "Крыша", Length: 1968, Width: 600, Qty: 1, Grain: GrainLength},
		{Name: "Дно", Length: 1968, Width: 600, Qty: 1, Grain: GrainLength},
		{Name: "Стойка", Length: 2268, Width: 560, Qty: 2, Grain: GrainLength},
		{Name: "Полка", Length: 640, Width: 560, Qty: 6},
		{Name: "Цоколь", Length: 1968, Width: 100, Qty: 2},
	}},
	{"Тумба прикроватная 450", []Part{
		{Name: "Боковина", Length: 716, Width: 560, Qty: 2, Grain: GrainLength},
		{Name: "Крышка", Length: 450, Width: 400, Qty: 1, Grain: GrainLength},
		{Name: "Дно", Length: 418, Width: 560, Qty: 1},
		{Name: "Фасад ящика", Length: 446, Width: 180, Qty: 3, Grain: GrainLength},
		{Name: "Стенка ящика", Length: 500, Width: 120, Qty: 6},
		{Name: "Задняя стенка ящика", Length: 350, Width: 120, Qty: 6},
	}},
	{"Шкаф распашной 800", []Part{
		{Name: "Боковина", Length: 2000, Width: 560, Qty: 2, Grain: GrainLength},
		{Name: "Крыша", Length: 768, Width: 560, Qty: 1},
		{Name: "Дно", Length: 768, Width: 560, Qty: 1},
		{Name: "Дверь", Length: 1996, Width: 396, Qty: 2, Grain: GrainLength},
		{Name: "Полка", Length: 764, Width: 520, Qty: 3},
		{Name: "Штанга-опора", Length: 520, Width: 100, Qty: 2},
	}},
	{"Комод 1200", []Part{
		{Name: "Боковина", Length: 850, Width: 450, Qty: 2, Grain: GrainLength},
		{Name: "Крышка", Length: 1200, Width: 460, Qty: 1, Grain: GrainLength},
		{Name: "Дно", Length: 1168, Width: 450, Qty: 1},
		{Name: "Фасад ящика", Length: 1196, Width: 196, Qty: 4, Grain: GrainLength},
		{Name: "Стенка ящика", Length: 400, Width: 150, Qty: 8},
		{Name: "Задняя стенка ящика", Length: 1100, Width: 150, Qty: 8},
	}},
	{"Шкаф навесной 600", []Part{
		{Name: "Боковина", Length: 716, Width: 300, Qty: 2, Grain: GrainLength},
		{Name: "Крыша", Length: 568, Width: 300, Qty: 2},
		{Name: "Полка", Length: 564, Width: 280, Qty: 2},
		{Name: "Дверь", Length: 712, Width: 296, Qty: 2, Grain: GrainLength},
	}},
	{"Стеллаж 400", []Part{
		{Name: "Стойка", Length: 1568, Width: 400, Qty: 2, Grain: GrainLength},
		{Name: "Полка", Length: 368, Width: 400, Qty: 5},
	}},
}

// FurnitureWeek is a week's cutting list of a furniture factory: about
// parts parts of the catalogue's products, ordered at random (a fixed
// seed), on 2800 × 2070 mm sheets of ЛДСП with a 4.4 mm kerf, 10 mm trims,
// grain on the visible parts and a three-stage saw.
func FurnitureWeek(parts int) Problem {
	p := Defaults()
	p.Formats = []Format{{Name: "ЛДСП 16 мм 2800×2070", Length: 2800, Width: 2070}}
	p.Trims = Trims{10, 10, 10, 10}
	rng := rand.New(rand.NewPCG(2070, 2800))
	orders := map[int]int{}
	total := 0
	for total < parts {
		k := rng.IntN(len(furniture))
		orders[k]++
		for _, pt := range furniture[k].parts {
			total += pt.Qty
		}
	}
	for k, prod := range furniture {
		if orders[k] == 0 {
			continue
		}
		for _, pt := range prod.parts {
			pt.ID = prod.product + " / " + pt.Name
			pt.Qty *= orders[k]
			p.Parts = append(p.Parts, pt)
		}
	}
	return p
}

// GDRRSheets is the sheets per class of the standard set that Gardeyn &
// Wauters's goal-driven ruin and recreate reports (EJOR 2022: guillotine,
// turning allowed, 600 s and 8 threads per instance), the best published
// single method: 6,986 in all. The best known solutions of all methods
// together sum to about 6,977.
var GDRRSheets = []int{972, 124, 675, 119, 862, 109, 756, 759, 2119, 491}

// BenchClass is the benchmark's figures for one class.
type BenchClass struct {
	Class          string  `json:"class"`
	Instances      int     `json:"instances"`
	LowerBound     int     `json:"lower_bound"`
	Sheets         int     `json:"sheets"`
	BaselineSheets int     `json:"baseline_sheets"`
	Ratio          float64 `json:"ratio"`          // sheets ÷ lower bound
	BaselineRatio  float64 `json:"baseline_ratio"` // the same for the baseline
	// Published is GDRR's sheets on the same instances (the whole
	// standard class only; 0 otherwise).
	Published int     `json:"published,omitempty"`
	CPUMsMean float64 `json:"cpu_ms_mean"`
	CPUMsMax  float64 `json:"cpu_ms_max"`
}

// BenchFurniture is the figures of the furniture week.
type BenchFurniture struct {
	Parts      int     `json:"parts"`
	LowerBound int     `json:"lower_bound"` // the search's bound: the parts' area over a sheet's usable area, rounded up, or more by dual feasible functions
	Sheets     int     `json:"sheets"`
	Yield      float64 `json:"yield"`
	// BoundYield is the yield on as many sheets as the lower bound.
	BoundYield     float64 `json:"bound_yield"`
	Offcuts        int     `json:"offcuts"`
	BaselineSheets int     `json:"baseline_sheets"`
	BaselineYield  float64 `json:"baseline_yield"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	// Before is what the plan keeps with OffcutWeight 0 (no preference for
	// larger offcuts), After with the default: the same search, and its
	// sheets laid out again.
	Before BenchLeftover `json:"before"`
	After  BenchLeftover `json:"after"`
	// Jobs is the catalogue's products laid out one at a time.
	Jobs BenchJobs `json:"jobs"`
}

// BenchSet is the figures of one set of instances: the standard one or
// the generated one.
type BenchSet struct {
	Name           string       `json:"name"` // "standard" or "generated"
	Sizes          []int        `json:"sizes"`
	PerSize        int          `json:"instances_per_size"`
	Classes        []BenchClass `json:"classes"`
	Sheets         int          `json:"sheets"`
	BaselineSheets int          `json:"baseline_sheets"`
	LowerBound     int          `json:"lower_bound"`
	Published      int          `json:"published,omitempty"` // GDRR's, over the whole classes measured
	Saving         float64      `json:"saving"`              // 1 − sheets ÷ baseline's
	CPUMsMean      float64      `json:"cpu_ms_mean"`
}

// BenchResult is a benchmark run.
type BenchResult struct {
	Sets      []BenchSet      `json:"sets"`
	Furniture *BenchFurniture `json:"furniture,omitempty"`
}

// The benchmark's sets.
const (
	SetStandard  = "standard"  // the 500 published instances (StandardInstance)
	SetGenerated = "generated" // the classes' rules with this package's seed (ClassInstance)
)

// BenchOptions size a benchmark run.
type BenchOptions struct {
	Sets      []string // SetStandard, SetGenerated; nil: both
	Sizes     []int    // items per instance (the standard set has 20 … 100)
	PerSize   int      // instances per class and size (the standard set has 10)
	Classes   []int    // 0 … 9; nil: all
	Furniture int      // parts of the furniture week; 0: none
	Progress  func(string)
}

// RunBench measures the optimiser against the baseline. Time is the
// process's CPU time when the platform gives it, else the wall clock.
func RunBench(o BenchOptions) (BenchResult, error) {
	var res BenchResult
	classes := o.Classes
	if classes == nil {
		classes = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	}
	sets := o.Sets
	if sets == nil {
		sets = []string{SetStandard, SetGenerated}
	}
	for _, name := range sets {
		set, err := benchSet(name, o, classes)
		if err != nil {
			return res, err
		}
		res.Sets = append(res.Sets, set)
	}
	if o.Furniture > 0 {
		fw, err := benchFurniture(o.Furniture)
		if err != nil {
			return res, err
		}
		res.Furniture = fw
		if o.Progress != nil {
			o.Progress(fmt.Sprintf("furniture week: %d parts on %d sheets (baseline %d, lower bound %d), yield %.3f (at the bound %.3f), %.1f s of CPU; "+
				"offcuts kept %.2f m² (largest %g × %g mm), %.2f m² (largest %g × %g mm) without the weight for larger ones",
				fw.Parts, fw.Sheets, fw.BaselineSheets, fw.LowerBound, fw.Yield, fw.BoundYield, fw.CPUSeconds,
				fw.After.OffcutsM2, fw.After.LargestOffcut.Length, fw.After.LargestOffcut.Width,
				fw.Before.OffcutsM2, fw.Before.LargestOffcut.Length, fw.Before.LargestOffcut.Width))
			j := fw.Jobs
			o.Progress(fmt.Sprintf("furniture jobs (%d, one product each): %d sheets, offcuts kept %.2f m², the largest of each %.2f m² in all; %.2f m² and %.2f m² without the weight for larger ones",
				j.Jobs, j.Sheets, j.After.OffcutsM2, j.After.LargestM2, j.Before.OffcutsM2, j.Before.LargestM2))
		}
	}
	return res, nil
}

// BenchLeftover is what a plan keeps of its sheets' waste: the offcuts
// (pieces of at least the minimum offcut) and the largest one.
type BenchLeftover struct {
	Offcuts       int     `json:"offcuts"`
	OffcutsM2     float64 `json:"offcuts_m2"`
	LargestOffcut Size    `json:"largest_offcut"`
	// LargestM2 is the largest offcut's area (the jobs': each job's
	// largest, added up).
	LargestM2 float64 `json:"largest_m2"`
}

func leftoverOf(t Totals) BenchLeftover {
	return BenchLeftover{Offcuts: t.Offcuts, OffcutsM2: t.OffcutsM2, LargestOffcut: t.LargestOffcut,
		LargestM2: round4(t.LargestOffcut.Length * t.LargestOffcut.Width / 1e6)}
}

// BenchJobs is the figures of small furniture jobs: each product of the
// catalogue laid out alone, as an order of one piece of furniture is.
type BenchJobs struct {
	Jobs   int     `json:"jobs"`
	Sheets int     `json:"sheets"`
	Yield  float64 `json:"yield"`
	// Before is what the plans keep with OffcutWeight 0 (no preference
	// for larger offcuts), After with the default.
	Before BenchLeftover `json:"before"`
	After  BenchLeftover `json:"after"`
}

// optimiseTwice lays p out once and writes the plan twice: as the search
// left it (OffcutWeight 0) and with each sheet laid out again for its
// leftover, as Optimise does with p's OffcutWeight.
func optimiseTwice(p Problem) (before, after Plan, err error) {
	e, err := newEngine(&p)
	if err != nil {
		return before, after, err
	}
	sol := e.search(&p)
	if sol == nil {
		return before, after, errTooFewSheets()
	}
	before = e.plan(&p, sol)
	if p.OffcutWeight > 0 {
		e.keepLargeOffcuts(sol, p.OffcutWeight, toUnits(p.MinOffcut.Length), toUnits(p.MinOffcut.Width))
	}
	return before, e.plan(&p, sol), nil
}

// benchFurniture measures the furniture week of parts parts and the
// catalogue's products one at a time.
func benchFurniture(parts int) (*BenchFurniture, error) {
	p := FurnitureWeek(parts)
	t0 := cpuTime()
	before, plan, err := optimiseTwice(p)
	if err != nil {
		return nil, err
	}
	seconds := (cpuTime() - t0).Seconds()
	base, err := Baseline(p)
	if err != nil {
		return nil, err
	}
	var area float64
	for _, pt := range p.Parts {
		area += (pt.Length * pt.Width) * float64(pt.Qty)
	}
	f := p.Formats[0]
	usable := (f.Length - p.Trims.Left - p.Trims.Right) * (f.Width - p.Trims.Bottom - p.Trims.Top)
	lb := max(int(math.Ceil(area/usable)), LowerBound(p))
	fw := &BenchFurniture{Parts: plan.Totals.Parts, LowerBound: lb, Sheets: plan.Totals.Sheets, Yield: plan.Totals.Yield,
		BoundYield: round4(area / (float64(lb) * f.Length * f.Width)),
		Offcuts:    plan.Totals.Offcuts, BaselineSheets: base.Totals.Sheets, BaselineYield: base.Totals.Yield,
		CPUSeconds: round4(seconds), Before: leftoverOf(before.Totals), After: leftoverOf(plan.Totals)}
	var sheetsM2, partsM2 float64
	for _, prod := range furniture {
		job := p
		job.Parts = append([]Part(nil), prod.parts...)
		before, after, err := optimiseTwice(job)
		if err != nil {
			return nil, err
		}
		j := &fw.Jobs
		j.Jobs++
		j.Sheets += after.Totals.Sheets
		sheetsM2 += after.Totals.SheetsM2
		partsM2 += after.Totals.PartsM2
		for _, lo := range []struct {
			sum  *BenchLeftover
			plan Plan
		}{{&j.Before, before}, {&j.After, after}} {
			l := leftoverOf(lo.plan.Totals)
			lo.sum.Offcuts += l.Offcuts
			lo.sum.OffcutsM2 = round4(lo.sum.OffcutsM2 + l.OffcutsM2)
			lo.sum.LargestM2 = round4(lo.sum.LargestM2 + l.LargestM2)
		}
	}
	if sheetsM2 > 0 {
		fw.Jobs.Yield = round4(partsM2 / sheetsM2)
	}
	return fw, nil
}

// benchSet measures one set of instances, class by class.
func benchSet(name string, o BenchOptions, classes []int) (BenchSet, error) {
	set := BenchSet{Name: name, Sizes: o.Sizes, PerSize: o.PerSize}
	instance := ClassInstance
	switch name {
	case SetStandard:
		set.Sizes, set.PerSize = nil, min(o.PerSize, StandardPerSize)
		for _, n := range o.Sizes {
			if slices.Contains(StandardSizes, n) {
				set.Sizes = append(set.Sizes, n)
			}
		}
		instance = func(c, n, k int) Problem { return StandardInstance(c, n, k+1) }
	case SetGenerated:
	default:
		return set, fmt.Errorf("no set %q (they are %s and %s)", name, SetStandard, SetGenerated)
	}
	whole := name == SetStandard && len(set.Sizes) == len(StandardSizes) && set.PerSize == StandardPerSize
	var cpuAll float64
	instances := 0
	for _, c := range classes {
		bc := BenchClass{Class: ClassNames[c]}
		var cpu float64
		for _, n := range set.Sizes {
			for k := range set.PerSize {
				p := instance(c, n, k)
				p.Kerf, p.Stages = 0, 0
				t0 := cpuTime()
				plan, err := Optimise(p)
				if err != nil {
					return set, err
				}
				ms := float64(cpuTime()-t0) / float64(time.Millisecond)
				base, err := Baseline(p)
				if err != nil {
					return set, err
				}
				cpu += ms
				bc.CPUMsMax = max(bc.CPUMsMax, ms)
				bc.Instances++
				bc.LowerBound += LowerBound(p)
				bc.Sheets += plan.Totals.Sheets
				bc.BaselineSheets += base.Totals.Sheets
			}
		}
		cpuAll += cpu
		instances += bc.Instances
		bc.CPUMsMean = round4(cpu / float64(max(bc.Instances, 1)))
		bc.CPUMsMax = round4(bc.CPUMsMax)
		if bc.LowerBound > 0 {
			bc.Ratio = round4(float64(bc.Sheets) / float64(bc.LowerBound))
			bc.BaselineRatio = round4(float64(bc.BaselineSheets) / float64(bc.LowerBound))
		}
		if whole {
			bc.Published = GDRRSheets[c]
			set.Published += bc.Published
		}
		set.Classes = append(set.Classes, bc)
		set.Sheets += bc.Sheets
		set.BaselineSheets += bc.BaselineSheets
		set.LowerBound += bc.LowerBound
		if o.Progress != nil {
			published := ""
			if whole {
				published = fmt.Sprintf(" (GDRR %d)", bc.Published)
			}
			o.Progress(fmt.Sprintf("%s class %-4s sheets %d%s, baseline %d, lower bound %d, %.0f ms a instance (max %.0f)",
				name, bc.Class, bc.Sheets, published, bc.BaselineSheets, bc.LowerBound, bc.CPUMsMean, bc.CPUMsMax))
		}
	}
	if set.BaselineSheets > 0 {
		set.Saving = round4(1 - float64(set.Sheets)/float64(set.BaselineSheets))
	}
	set.CPUMsMean = round4(cpuAll / float64(max(instances, 1)))
	return set, nil
}
