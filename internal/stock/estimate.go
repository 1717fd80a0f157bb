package stock

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/cutting"
)

// This file counts what physical things need of materials, the same way
// wherever they are counted (a launch, the floor, a re-cut, the backlog):
//
//   - a part needs sheets of its board until it is cut: before a cutting
//     plan lays it out, its share of what the optimiser lays the parts
//     counted with it out on (BoardShares); once a plan does, its share of
//     the sheet it lies on (the plan's parts by area);
//   - a part needs, until it is banded, each banded side's length plus the
//     overhang of its side's band (BandMetres);
//   - a unit needs its product's fittings until it is assembled.

// PartShape is a physical part as stock counts its materials.
type PartShape struct {
	Board    string // the board's code
	LengthMM int
	WidthMM  int
	Grain    string // catalog.GrainLength, GrainWidth or GrainNone
	Edges    catalog.Edges
}

// BandMetres is what the part's edges need of each band, in metres: each
// banded side's length plus overhangMM.
func BandMetres(p PartShape, overhangMM int) []Move {
	var out []Move
	for _, side := range p.Edges.Sides() {
		if side.Band == "" {
			continue
		}
		length := p.LengthMM
		if side.Side == "w1" || side.Side == "w2" {
			length = p.WidthMM
		}
		out = addMove(out, Move{Code: side.Band, Qty: float64(length+overhangMM) / 1000})
	}
	return out
}

// SheetsOfArea is the part of a sheet of the board that the area (m²)
// takes: the area over the board's largest usable format; 0 for a board
// without formats.
func SheetsOfArea(board catalog.Material, areaM2 float64) float64 {
	if u := board.UsableAreaM2(); u > 0 && areaM2 > 0 {
		return areaM2 / u
	}
	return 0
}

// BoardShares returns, for each part, the sheets of its board it needs
// until it is cut, estimated from the parts' shapes: per board, the parts
// are laid out by the cutting optimiser (its quick first constructions) on
// the board's formats with the saw's kerf and stages and the board's
// trims; every sheet but the last counts whole, the last by the share of
// its usable length or width (the lesser) that the layout takes, and the
// sum is shared among the parts by their area. The estimate is never fewer
// sheets than a cutting plan of the same parts lays out, once rounded up.
// A board that is not in the catalogue or has no formats needs nothing
// (its parts cannot be laid out; the plan refuses them). Parts that fit no
// format of their board count their area.
func (s *Service) BoardShares(ctx context.Context, db *gorm.DB, parts []PartShape) ([]float64, error) {
	out := make([]float64, len(parts))
	byBoard := map[string][]int{}
	var codes []string
	for i, p := range parts {
		key := strings.ToLower(p.Board)
		if _, ok := byBoard[key]; !ok {
			codes = append(codes, p.Board)
		}
		byBoard[key] = append(byBoard[key], i)
	}
	boards, err := catalog.MaterialsByCode(ctx, db, codes)
	if err != nil {
		return nil, err
	}
	for key, idx := range byBoard {
		b, ok := boards[key]
		if !ok || b.Kind != catalog.KindBoard || len(b.Formats) == 0 {
			continue
		}
		group := make([]PartShape, len(idx))
		for j, i := range idx {
			group[j] = parts[i]
		}
		shares := s.est.shares(b, s.set, group)
		for j, i := range idx {
			out[i] = shares[j]
		}
	}
	return out, nil
}

// estimates keeps the optimiser's estimates of the part lists asked again
// (the backlog's items of one product and decor come again and again).
type estimates struct {
	mu    sync.Mutex
	cache map[string][]float64
}

// maxEstimates bounds the estimates kept; past it the cache starts again.
const maxEstimates = 20_000

func newEstimates() *estimates { return &estimates{cache: map[string][]float64{}} }

func (e *estimates) shares(b catalog.Material, set Settings, parts []PartShape) []float64 {
	key := estimateKey(b, set, parts)
	e.mu.Lock()
	if v, ok := e.cache[key]; ok {
		e.mu.Unlock()
		return slices.Clone(v)
	}
	e.mu.Unlock()
	v := layOutShares(b, set, parts)
	e.mu.Lock()
	if len(e.cache) >= maxEstimates {
		e.cache = map[string][]float64{}
	}
	e.cache[key] = slices.Clone(v)
	e.mu.Unlock()
	return v
}

func estimateKey(b catalog.Material, set Settings, parts []PartShape) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s|%v|%v|%v|%g|%d|%d|", b.Code, b.Formats, b.Trim, b.Grain, set.KerfMM, set.Stages, set.MinOffcutMM)
	for _, p := range parts {
		sb.WriteString(strconv.Itoa(p.LengthMM))
		sb.WriteByte('x')
		sb.WriteString(strconv.Itoa(p.WidthMM))
		sb.WriteString(p.Grain)
		sb.WriteByte(';')
	}
	return sb.String()
}

// layOutShares is BoardShares for the parts of one board.
func layOutShares(b catalog.Material, set Settings, parts []PartShape) []float64 {
	out := make([]float64, len(parts))
	area := make([]float64, len(parts))
	total := 0.0
	for i, p := range parts {
		area[i] = float64(p.LengthMM) * float64(p.WidthMM) / 1e6
		total += area[i]
	}
	if total <= 0 {
		return out
	}
	sheets := estimateSheets(b, set, parts)
	if sheets < 0 { // the optimiser refused them: their area
		sheets = SheetsOfArea(b, total)
	}
	for i := range parts {
		out[i] = sheets * area[i] / total
	}
	return out
}

// The optimiser's effort for an estimate, in its work units (placements
// tried: deterministic, unlike a time limit), in one run of its search: a
// tenth of a plan's per part (cutting's default is 1,000,000 a part), up
// to 5,000,000, so that a launch's few parts of a board cost milliseconds
// of CPU under the plan's lock. A week's 2,000 parts (cutting.FurnitureWeek)
// take 62 ms for 146.39 sheets, what 2 and 10 million placements find too
// (2026-12-05; 30 million find 138.98 in 0.32 s).
const (
	estimateEffortPerPart = 100_000
	estimateEffort        = 5_000_000
)

// estimateSheets lays the parts out and counts the sheets, the last by the
// share of it taken; -1 when the optimiser cannot lay them out.

func estimateSheets(b catalog.Material, set Settings, parts []PartShape) float64 {
	pr := cutting.Defaults()
	pr.Kerf, pr.Stages = set.KerfMM, set.Stages
	pr.MinOffcut = cutting.Size{Length: float64(set.MinOffcutMM), Width: float64(set.MinOffcutMM)}
	// Never fewer whole sheets than the plan's fuller search of the same
	// parts (TestEstimate_NoFewerSheetsThanThePlan).
	pr.Effort = min(int64(len(parts))*estimateEffortPerPart, estimateEffort)
	pr.OffcutWeight = 0 // the sheets count, not how the leftovers lie
	pr.Runs = 1         // an estimate: one run of the search is enough
	t := b.Trim
	pr.Trims = cutting.Trims{Left: float64(t.W1), Right: float64(t.W2), Bottom: float64(t.L1), Top: float64(t.L2)}
	for _, f := range b.Formats {
		pr.Formats = append(pr.Formats, cutting.Format{Length: float64(f.LengthMM), Width: float64(f.WidthMM)})
	}
	for i, p := range parts {
		g := cutting.GrainNone
		if b.Grain {
			switch p.Grain {
			case catalog.GrainLength:
				g = cutting.GrainLength
			case catalog.GrainWidth:
				g = cutting.GrainWidth
			}
		}
		pr.Parts = append(pr.Parts, cutting.Part{ID: strconv.Itoa(i), Length: float64(p.LengthMM), Width: float64(p.WidthMM), Qty: 1, Grain: g})
	}
	plan, err := cutting.Optimise(pr)
	if err != nil || len(plan.Sheets) == 0 {
		return -1
	}
	last := plan.Sheets[len(plan.Sheets)-1]
	return float64(len(plan.Sheets)-1) + usedShare(last)
}

// usedShare is the share of the sheet's usable area that its layout takes
// up to where the rest is one clean piece: the parts' extent along the
// sheet's length or across it, whichever leaves the larger rest.
func usedShare(sh cutting.Sheet) float64 {
	u := sh.Usable
	if u.DX <= 0 || u.DY <= 0 || len(sh.Parts) == 0 {
		return 1
	}
	var x, y float64
	for _, p := range sh.Parts {
		x = math.Max(x, p.X+p.DX-u.X)
		y = math.Max(y, p.Y+p.DY-u.Y)
	}
	return math.Min(math.Min(x/u.DX, y/u.DY), 1)
}
