// Package cutting lays parts out on board sheets in layouts a panel saw can
// cut: guillotine cuts only, in at most a given number of stages, with the
// blade's kerf between every two pieces and the board's trims at the
// sheet's edges. It knows no database and no HTTP: a problem goes in, a
// plan comes out, and the same problem always gives the same plan.
//
// Geometry. A sheet lies with its length along x and its width along y,
// the origin at a corner of the sheet; every position and size is in
// millimetres. The sheet's length is its grain direction (the direction of
// the decor's texture). A part's grain says which of its own sides the
// texture runs along: GrainLength (along its length) keeps the part's
// length along the sheet's length, GrainWidth keeps the part's width along
// the sheet's length (the part is always placed turned), and GrainNone lets
// the optimiser place the part either way. "Turned" means the part's length
// runs along the sheet's width (y).
//
// Stages. The saw first rips the sheet into strips (stage 1, every cut
// through the whole piece, all parallel), then cross-cuts each strip
// (stage 2, perpendicular to stage 1), then cuts the pieces again (stage 3,
// parallel to stage 1), and so on. A piece that needs no cut at a stage
// passes on to the next one. Trimming the sheet's edges is not a stage:
// the usable area is what lies inside the trims, and each trim includes the
// blade that cut it.
package cutting

import (
	"fmt"
	"time"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// Grain is the direction of a part's texture, relative to the part's own sides.
type Grain string

// The grains a part can have.
const (
	GrainNone   Grain = "none"   // no texture: the part may be turned
	GrainLength Grain = "length" // along the part's length: placed with its length along the sheet's length
	GrainWidth  Grain = "width"  // along the part's width: placed with its width along the sheet's length
)

// Defaults of a problem's settings, as the cutting work centre has them
// unless told otherwise.
const (
	DefaultKerf      = 4.4 // mm
	DefaultStages    = 3   // rip, cross-cut, trim
	DefaultMinOffcut = 300 // mm, both sides
	// DefaultOffcutWeight makes one offcut worth more than two of half its
	// area: each sheet's leftover is gathered into as large a piece as its
	// parts allow.
	DefaultOffcutWeight = 1.0
	// MaxOffcutWeight is the largest OffcutWeight a problem takes.
	MaxOffcutWeight = 10.0
	// MaxParts is the most parts (copies counted) one problem takes.
	MaxParts = 50_000
)

// Format is a sheet size of the board, or an offcut in stock.
type Format struct {
	Name   string  `json:"name,omitempty"`
	Length float64 `json:"length_mm"` // along x and along the grain
	Width  float64 `json:"width_mm"`
	// Count is how many such sheets are available; 0 means as many as needed.
	Count int `json:"count,omitempty"`
	// Offcut marks a piece left from an earlier plan: offcuts are used
	// before new sheets, in the order given. Trims do not apply to offcuts,
	// whose edges were cut by the saw.
	Offcut bool `json:"offcut,omitempty"`
}

// Part is one line of the cutting list.
type Part struct {
	ID     string  `json:"id,omitempty"`
	Name   string  `json:"name"`
	Length float64 `json:"length_mm"`
	Width  float64 `json:"width_mm"`
	Qty    int     `json:"qty"`
	Grain  Grain   `json:"grain,omitempty"` // "" is GrainNone
}

// Trims are the strips cut off each edge of a new sheet (its edges are not
// straight or clean enough for a part), in mm. Left and right are the
// sheet's ends along its length; bottom and top its sides.
type Trims struct {
	Left   float64 `json:"left"`
	Right  float64 `json:"right"`
	Bottom float64 `json:"bottom"`
	Top    float64 `json:"top"`
}

// Size is a rectangle's length (along x) and width (along y), in mm.
type Size struct {
	Length float64 `json:"length_mm"`
	Width  float64 `json:"width_mm"`
}

// Problem is one board's cutting problem. Defaults gives one with the
// settings' defaults, to fill in.
type Problem struct {
	Formats []Format `json:"formats"`
	Kerf    float64  `json:"kerf_mm"`
	Trims   Trims    `json:"trims_mm"`
	// Stages is how many stages the saw makes; 0 means any number.
	Stages int `json:"stages"`
	// MinOffcut is the smallest waste piece worth keeping (turned too).
	MinOffcut Size `json:"min_offcut"`
	// OffcutWeight says how much a larger offcut is worth against
	// smaller ones of the same area: a sheet's leftover is worth the sum,
	// over its offcuts (pieces of at least MinOffcut), of the offcut's
	// share of the sheet raised to 1 + OffcutWeight. Each sheet of the
	// plan is laid out again, its parts unchanged, in the way its
	// leftover is worth the most. 0 leaves the layouts as the search
	// makes them; 1 (the default) makes one offcut worth twice two of
	// half its area.
	OffcutWeight float64 `json:"offcut_weight"`
	Parts        []Part  `json:"parts"`
	// Effort bounds the search in work units (placements tried); 0 is a
	// default proportional to the number of parts. The search is
	// deterministic for a given effort.
	Effort int64 `json:"effort,omitempty"`
	// Runs bounds how many times the search runs on a short list (at
	// most 100 parts), each from random numbers of its own, while its
	// best is above the lower bound: four with the whole effort, then a
	// fifth with eight times as much. 0 is the default (up to 5), 1 a
	// single run, for an estimate that needs no more.
	Runs int `json:"runs,omitempty"`
	// TimeLimit stops the search early when it takes longer (0: a minute).
	// Only a search cut short by it depends on the machine's speed.
	TimeLimit time.Duration `json:"-"`
}

// Defaults is a problem with every setting at its default and no formats
// or parts yet.
func Defaults() Problem {
	return Problem{Kerf: DefaultKerf, Stages: DefaultStages, MinOffcut: Size{DefaultMinOffcut, DefaultMinOffcut},
		OffcutWeight: DefaultOffcutWeight}
}

// Plan is a problem's layout: the sheets in the order they are cut.
type Plan struct {
	Sheets []Sheet `json:"sheets"`
	Totals Totals  `json:"totals"`
}

// Totals sum up a plan.
type Totals struct {
	Sheets   int     `json:"sheets"`
	Parts    int     `json:"parts"`
	SheetsM2 float64 `json:"sheets_m2"`
	PartsM2  float64 `json:"parts_m2"`
	Yield    float64 `json:"yield"` // parts' area ÷ sheets' area
	WasteM2  float64 `json:"waste_m2"`
	Offcuts  int     `json:"offcuts"`
	// OffcutsM2 is the area kept in offcuts: the waste pieces of at least
	// the minimum offcut.
	OffcutsM2 float64 `json:"offcuts_m2"`
	// LargestOffcut is the plan's largest offcut by area (zero when it
	// keeps none).
	LargestOffcut Size `json:"largest_offcut"`
	// Stages is the most stages any sheet takes.
	Stages int `json:"stages"`
}

// Sheet is one sheet of a plan.
type Sheet struct {
	N       int         `json:"n"`      // 1, 2, …
	Format  int         `json:"format"` // index into the problem's formats
	Name    string      `json:"name,omitempty"`
	Length  float64     `json:"length_mm"`
	Width   float64     `json:"width_mm"`
	Offcut  bool        `json:"offcut,omitempty"`
	Usable  Rect        `json:"usable"` // inside the trims
	Stages  int         `json:"stages"` // stages its cuts take
	Parts   []Placement `json:"parts"`
	Cuts    []Cut       `json:"cuts"`
	Yield   float64     `json:"yield"`
	WasteM2 float64     `json:"waste_m2"`
	Offcuts []Rect      `json:"offcuts"`
}

// Rect is an axis-parallel rectangle on a sheet: X, Y its corner nearest
// the origin, DX along the sheet's length, DY along its width (mm).
type Rect struct {
	X  float64 `json:"x_mm"`
	Y  float64 `json:"y_mm"`
	DX float64 `json:"dx_mm"`
	DY float64 `json:"dy_mm"`
}

// Placement is one part on a sheet.
type Placement struct {
	Part int    `json:"part"` // index into the problem's parts
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	Rect
	Turned bool `json:"turned"` // its length along the sheet's width
}

// Directions of a cut.
const (
	// AlongLength is a rip: a cut line parallel to the sheet's length, at y = Pos.
	AlongLength = "along_length"
	// AlongWidth is a cross-cut: a cut line parallel to the sheet's width, at x = Pos.
	AlongWidth = "along_width"
)

// Cut is one pass of the blade, in the order the saw makes them: all the
// cuts of a piece at its stage, then each piece they make in turn. The
// blade takes [Pos, Pos+kerf) across the piece.
type Cut struct {
	Stage     int     `json:"stage"`
	Direction string  `json:"direction"`
	Pos       float64 `json:"pos_mm"`
	Piece     Rect    `json:"piece"` // the piece the cut crosses, whole
}

// unit is the internal length unit: a tenth of a millimetre.
const unitsPerMM = 10

func toUnits(mm float64) int {
	if mm >= 0 {
		return int(mm*unitsPerMM + 0.5)
	}
	return -int(-mm*unitsPerMM + 0.5)
}

func toMM(u int) float64 { return float64(u) / unitsPerMM }

func grainOf(g Grain) (Grain, bool) {
	switch g {
	case "", GrainNone:
		return GrainNone, true
	case GrainLength, GrainWidth:
		return g, true
	}
	return g, false
}

// usable is a format's area inside the trims, in units.
func (p *Problem) usable(f Format) (w, h int) {
	if f.Offcut {
		return toUnits(f.Length), toUnits(f.Width)
	}
	return toUnits(f.Length - p.Trims.Left - p.Trims.Right), toUnits(f.Width - p.Trims.Bottom - p.Trims.Top)
}

func (p *Problem) trimOrigin(f Format) (x, y int) {
	if f.Offcut {
		return 0, 0
	}
	return toUnits(p.Trims.Left), toUnits(p.Trims.Bottom)
}

// validate checks a problem and says what is wrong with which field.
func (p *Problem) validate() error {
	var errs []apperr.FieldError
	add := func(field, format string, args ...any) { errs = append(errs, apperr.Field(field, format, args...)) }
	if p.Kerf < 0 || p.Kerf > 20 {
		add("kerf_mm", "must be between 0 and 20 mm, not %g", p.Kerf)
	}
	for _, t := range []struct {
		name string
		v    float64
	}{{"left", p.Trims.Left}, {"right", p.Trims.Right}, {"bottom", p.Trims.Bottom}, {"top", p.Trims.Top}} {
		if t.v < 0 {
			add("trims_mm."+t.name, "must not be negative, not %g", t.v)
		}
	}
	if p.Effort < 0 {
		add("effort", "must be 0 (the default) or more, not %d", p.Effort)
	}
	if p.Runs < 0 || p.Runs > searchRuns {
		add("runs", "must be between 0 (the default) and %d, not %d", searchRuns, p.Runs)
	}
	if p.Stages < 0 {
		add("stages", "must be 0 (any number) or more, not %d", p.Stages)
	}
	if p.MinOffcut.Length < 0 || p.MinOffcut.Width < 0 {
		add("min_offcut", "must not be negative")
	}
	if !(p.OffcutWeight >= 0 && p.OffcutWeight <= MaxOffcutWeight) {
		add("offcut_weight", "must be between 0 and %g, not %g", MaxOffcutWeight, p.OffcutWeight)
	}
	if len(p.Formats) == 0 {
		add("formats", "give at least one sheet format")
	}
	usableAny := false
	for i, f := range p.Formats {
		field := fmt.Sprintf("formats[%d]", i)
		if f.Length <= 0 || f.Width <= 0 {
			add(field, "a sheet's length and width must be positive, not %g × %g mm", f.Length, f.Width)
			continue
		}
		if f.Count < 0 {
			add(field+".count", "must be 0 (as many as needed) or more, not %d", f.Count)
		}
		w, h := p.usable(f)
		if w <= 0 || h <= 0 {
			add(field, "the trims leave no usable area of this %g × %g mm sheet", f.Length, f.Width)
			continue
		}
		if k := toUnits(p.Kerf); k >= w || k >= h {
			add("kerf_mm", "a %g mm kerf leaves no usable piece of formats[%d] (%g × %g mm inside the trims)", p.Kerf, i, toMM(w), toMM(h))
			continue
		}
		usableAny = true
	}
	if len(p.Parts) == 0 {
		add("parts", "give at least one part")
	}
	total := 0
	for i, pt := range p.Parts {
		field := fmt.Sprintf("parts[%d]", i)
		label := partLabel(i, pt)
		if pt.Length <= 0 || pt.Width <= 0 {
			add(field, "%s: length and width must be positive, not %g × %g mm", label, pt.Length, pt.Width)
			continue
		}
		if toUnits(pt.Length) < 1 || toUnits(pt.Width) < 1 {
			add(field, "%s: length and width must be at least 0.1 mm, not %g × %g mm", label, pt.Length, pt.Width)
			continue
		}
		if pt.Qty <= 0 {
			add(field+".qty", "%s: the quantity must be positive, not %d", label, pt.Qty)
		}
		if pt.Qty > 0 {
			total += pt.Qty
		}
		g, ok := grainOf(pt.Grain)
		if !ok {
			add(field+".grain", "%s: grain must be length, width or none, not %q", label, pt.Grain)
			continue
		}
		if !usableAny {
			continue
		}
		fits := false
		for _, f := range p.Formats {
			w, h := p.usable(f)
			for _, o := range orientations(toUnits(pt.Length), toUnits(pt.Width), g) {
				if o.dx <= w && o.dy <= h {
					fits = true
				}
			}
		}
		if !fits {
			how := "turned or not"
			switch g {
			case GrainLength:
				how = "with its length along the grain"
			case GrainWidth:
				how = "with its width along the grain"
			}
			add(field, "%s (%g × %g mm) fits on no sheet format inside its trims, %s", label, pt.Length, pt.Width, how)
		}
	}
	if total > MaxParts {
		add("parts", "%d parts are more than one plan takes (%d); split the list", total, MaxParts)
	}
	if len(errs) > 0 {
		return apperr.Invalid("the cutting problem cannot be planned", errs...)
	}
	return nil
}

func partLabel(i int, pt Part) string {
	switch {
	case pt.Name != "" && pt.ID != "":
		return fmt.Sprintf("part %q (%s)", pt.Name, pt.ID)
	case pt.Name != "":
		return fmt.Sprintf("part %q", pt.Name)
	case pt.ID != "":
		return fmt.Sprintf("part %s", pt.ID)
	}
	return fmt.Sprintf("part %d", i+1)
}
