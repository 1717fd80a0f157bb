package catalog

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// Material kinds.
const (
	KindBoard   = "board"   // a board (плита: ЛДСП, МДФ, ХДФ…) in a decor and thickness, bought in sheets
	KindBand    = "band"    // an edge band (кромка), bought in metres
	KindFitting = "fitting" // a fitting (фурнитура: hinges, slides, handles), bought in pieces
)

// MaterialKinds are the kinds of material, in the order the API names them.
var MaterialKinds = []string{KindBoard, KindBand, KindFitting}

// Units materials are counted in, by kind.
const (
	UnitSheet  = "sheet" // boards: sheets (a part cut without a cutting plan uses a fraction of one)
	UnitMetre  = "m"     // edge bands: metres
	UnitPieces = "pcs"   // fittings: pieces
)

// UnitOf is the unit a material of the kind is counted in.
func UnitOf(kind string) string {
	switch kind {
	case KindBoard:
		return UnitSheet
	case KindBand:
		return UnitMetre
	}
	return UnitPieces
}

// MetreStep is the step of a quantity counted in metres (an edge band) and
// the smallest one there is but 0: a centimetre, as a roll is measured.
// Sheets and pieces are counted whole.
const MetreStep = 0.01

// OnStep returns the quantity q of the unit on the unit's step (whole
// sheets and pieces, metres in MetreStep), and whether q is on it: less
// than a step's millionth off (0.07 m read as 0.07000000000000001), so that
// 1e-300 or 4e-7 m is not a quantity, while 100.5 m is. -0 is 0.
func OnStep(unit string, q float64) (float64, bool) {
	per := 1.0 // steps a unit
	if unit == UnitMetre {
		per = 1 / MetreStep
	}
	steps := math.Round(q * per)
	if math.Abs(q*per-steps) > 1e-6 || (steps == 0 && q != 0) {
		return q, false
	}
	return steps/per + 0, true
}

// StepText says what quantities of the unit are, for a message: "whole
// sheets", "metres to the centimetre (at least 0.01 m but 0)".
func StepText(unit string) string {
	switch unit {
	case UnitSheet:
		return "whole sheets"
	case UnitMetre:
		return fmt.Sprintf("metres to the centimetre (at least %g m but 0)", MetreStep)
	}
	return "whole pieces"
}

// Limits of a material.
const (
	MaxFormats      = 20
	MaxMatchBands   = 20
	MaxThicknessMM  = 200
	MaxBandWidthMM  = 200
	MaxTrimMM       = 100
	MaxReorderPoint = 1_000_000
	MaxSheetMM      = MaxDimension
)

// Material is a board, an edge band or a fitting of the catalogue.
type Material struct {
	ID   int64  `json:"id" gorm:"primaryKey"`
	Kind string `json:"kind" enums:"board,band,fitting" example:"board"`
	// Code is unique regardless of case, and never changes: parts, stock and
	// labels name the material by it.
	Code  string `json:"code" example:"LDSP16-SONOMA"`
	Name  string `json:"name" example:"ЛДСП 16 мм Дуб сонома"`
	Decor string `json:"decor" example:"Дуб сонома"`
	// ThicknessMM: a board's or an edge band's thickness (0.4, 2 …); 0 for a fitting.
	ThicknessMM float64 `json:"thickness_mm" example:"16"`
	// WidthMM: an edge band's width; 0 otherwise.
	WidthMM int `json:"width_mm" example:"0"`
	// Unit is what it is counted in: sheet (boards), m (edge bands), pcs (fittings).
	Unit string `json:"unit" enums:"sheet,m,pcs" example:"sheet"`
	// Grain: a board whose decor has a grain direction, along the sheet's length.
	Grain bool `json:"grain" example:"true"`
	// Formats are the sheet formats a board is bought in.
	Formats SheetFormats `json:"formats"`
	// Trim is what is cut off each edge of a board's sheet before parts are cut.
	Trim Trim `json:"trim" gorm:"embedded;embeddedPrefix:trim_"`
	// Bands are a board's matching edge bands, by code: a part's side banded
	// "match" (or "match:2", of that thickness) takes one of them.
	Bands StringList `json:"bands" example:"PVC04-SONOMA,PVC2-SONOMA"`
	// ReorderPoint: when what is available falls below it, buy (in the unit).
	ReorderPoint float64 `json:"reorder_point" example:"10"`
}

// TableName is the catalog's material table.
func (Material) TableName() string { return "catalog_materials" }

// SheetFormat is a sheet size a board is bought in.
type SheetFormat struct {
	LengthMM int `json:"length_mm" example:"2800"`
	WidthMM  int `json:"width_mm" example:"2070"`
}

// SheetFormats is a list of sheet formats stored as a JSON array.
type SheetFormats []SheetFormat

// Value implements driver.Valuer.
func (l SheetFormats) Value() (driver.Value, error) { return jsonValue(l) }

// Scan implements sql.Scanner.
func (l *SheetFormats) Scan(src any) error { return jsonScan(src, l) }

// Trim is what is cut off each edge of a sheet: along its length (l1, l2)
// and along its width (w1, w2), in millimetres.
type Trim struct {
	L1 int `json:"l1" gorm:"column:l1_mm" example:"10"`
	L2 int `json:"l2" gorm:"column:l2_mm" example:"10"`
	W1 int `json:"w1" gorm:"column:w1_mm" example:"10"`
	W2 int `json:"w2" gorm:"column:w2_mm" example:"10"`
}

// Usable is the part of the format left once the trim is cut off.
func (t Trim) Usable(f SheetFormat) SheetFormat {
	return SheetFormat{LengthMM: f.LengthMM - t.W1 - t.W2, WidthMM: f.WidthMM - t.L1 - t.L2}
}

// UsableAreaM2 is the largest usable area of the board's formats in m²; 0
// when it names none.
func (m Material) UsableAreaM2() float64 {
	best := 0.0
	for _, f := range m.Formats {
		u := m.Trim.Usable(f)
		best = math.Max(best, float64(u.LengthMM)*float64(u.WidthMM)/1e6)
	}
	return best
}

// Fits reports whether a part of the size fits a usable sheet of the board:
// along the length when the part's grain follows the sheet's, turned freely
// when neither has a grain. A board without formats fits everything.
func (m Material) Fits(lengthMM, widthMM int, grain string) bool {
	if len(m.Formats) == 0 {
		return true
	}
	for _, f := range m.Formats {
		u := m.Trim.Usable(f)
		along := lengthMM <= u.LengthMM && widthMM <= u.WidthMM
		across := lengthMM <= u.WidthMM && widthMM <= u.LengthMM
		switch {
		case m.Grain && grain == GrainLength:
			if along {
				return true
			}
		case m.Grain && grain == GrainWidth:
			if across {
				return true
			}
		default:
			if along || across {
				return true
			}
		}
	}
	return false
}

// MaterialInput is the content of a material, for creating or replacing one.
type MaterialInput struct {
	Kind         string
	Code         string
	Name         string
	Decor        string
	ThicknessMM  float64
	WidthMM      int
	Grain        bool
	Formats      []SheetFormat
	Trim         Trim
	Bands        []string
	ReorderPoint float64
}

// validate normalises the input and returns the fields at fault; the bands
// named must be edge bands of the catalogue, read through tx. stored is the
// code of the material replaced ("" for a new one): a code the same as it
// (input.CodeKey) is taken as it is stored, so that a material whose code
// came before codes had their character set can still be replaced.
func (in *MaterialInput) validate(ctx context.Context, tx *gorm.DB, stored string) error {
	var fields []apperr.FieldError
	in.Name, in.Decor = strings.TrimSpace(in.Name), strings.TrimSpace(in.Decor)
	if !slices.Contains(MaterialKinds, in.Kind) {
		fields = append(fields, apperr.Field("kind", "must be %s", strings.Join(MaterialKinds, ", ")))
	}
	if stored != "" && input.CodeKey(in.Code) == input.CodeKey(stored) {
		in.Code = stored
	} else {
		var more []apperr.FieldError
		in.Code, more = input.Code("code", in.Code, MaxCodeLen)
		fields = append(fields, more...)
	}
	if strings.HasPrefix(input.CodeKey(in.Code), "match") {
		fields = append(fields, apperr.Field("code", "must not start with \"match\": a part's side banded \"match\" means its board's matching band"))
	}
	fields = append(fields, checkName("name", in.Name)...)
	fields = append(fields, input.Line("decor", in.Decor, MaxNameLen)...)
	if in.ReorderPoint < 0 || in.ReorderPoint > MaxReorderPoint || math.IsNaN(in.ReorderPoint) {
		fields = append(fields, apperr.Field("reorder_point", "must be from 0 to %d", MaxReorderPoint))
	} else if q, ok := OnStep(UnitOf(in.Kind), in.ReorderPoint); !ok && slices.Contains(MaterialKinds, in.Kind) {
		fields = append(fields, apperr.Field("reorder_point", "a %s's reorder point is counted in %s", in.Kind, StepText(UnitOf(in.Kind))))
	} else {
		in.ReorderPoint = q
	}
	switch in.Kind {
	case KindBoard:
		if in.ThicknessMM <= 0 || in.ThicknessMM > MaxThicknessMM {
			fields = append(fields, apperr.Field("thickness_mm", "a board's thickness must be more than 0 and at most %d mm", MaxThicknessMM))
		}
		if in.WidthMM != 0 {
			fields = append(fields, apperr.Field("width_mm", "is an edge band's width; a board has formats"))
		}
		if len(in.Formats) > MaxFormats {
			fields = append(fields, apperr.Field("formats", "must list at most %d formats", MaxFormats))
		}
		for _, t := range []struct {
			f string
			v int
		}{{"trim.l1", in.Trim.L1}, {"trim.l2", in.Trim.L2}, {"trim.w1", in.Trim.W1}, {"trim.w2", in.Trim.W2}} {
			if t.v < 0 || t.v > MaxTrimMM {
				fields = append(fields, apperr.Field(t.f, "must be from 0 to %d mm", MaxTrimMM))
			}
		}
		for i, f := range in.Formats {
			at := fmt.Sprintf("formats[%d]", i)
			if f.LengthMM < 1 || f.LengthMM > MaxSheetMM || f.WidthMM < 1 || f.WidthMM > MaxSheetMM {
				fields = append(fields, apperr.Field(at, "length_mm and width_mm must be from 1 to %d mm", MaxSheetMM))
				continue
			}
			if u := in.Trim.Usable(f); u.LengthMM < 1 || u.WidthMM < 1 {
				fields = append(fields, apperr.Field(at, "leaves nothing once the trim is cut off"))
			}
			if slices.Contains(in.Formats[:i], f) {
				fields = append(fields, apperr.Field(at, "repeats %d × %d", f.LengthMM, f.WidthMM))
			}
		}
		more, err := checkMatchBands(ctx, tx, in.Bands)
		if err != nil {
			return err
		}
		fields = append(fields, more...)
	case KindBand:
		if in.ThicknessMM <= 0 || in.ThicknessMM > MaxThicknessMM {
			fields = append(fields, apperr.Field("thickness_mm", "an edge band's thickness must be more than 0 and at most %d mm", MaxThicknessMM))
		}
		if in.WidthMM < 1 || in.WidthMM > MaxBandWidthMM {
			fields = append(fields, apperr.Field("width_mm", "an edge band's width must be from 1 to %d mm", MaxBandWidthMM))
		}
		fields = append(fields, notForKind(in, "edge band")...)
	case KindFitting:
		if in.ThicknessMM != 0 {
			fields = append(fields, apperr.Field("thickness_mm", "a fitting has no thickness"))
		}
		if in.WidthMM != 0 {
			fields = append(fields, apperr.Field("width_mm", "a fitting has no width"))
		}
		fields = append(fields, notForKind(in, "fitting")...)
	}
	if len(fields) > 0 {
		return apperr.Invalid("the material is not valid", fields...)
	}
	if in.Formats == nil {
		in.Formats = []SheetFormat{}
	}
	if in.Bands == nil {
		in.Bands = []string{}
	}
	return nil
}

// notForKind names the board-only fields set on another kind of material.
func notForKind(in *MaterialInput, what string) []apperr.FieldError {
	var fields []apperr.FieldError
	if in.Grain {
		fields = append(fields, apperr.Field("grain", "is a board's; an %s has none", what))
	}
	if len(in.Formats) > 0 {
		fields = append(fields, apperr.Field("formats", "are a board's sheet formats; an %s has none", what))
	}
	if in.Trim != (Trim{}) {
		fields = append(fields, apperr.Field("trim", "is a board's; an %s has none", what))
	}
	if len(in.Bands) > 0 {
		fields = append(fields, apperr.Field("bands", "are a board's matching edge bands; an %s has none", what))
	}
	return fields
}

// checkMatchBands checks that the codes name edge bands of the catalogue,
// once each.
func checkMatchBands(ctx context.Context, tx *gorm.DB, codes []string) ([]apperr.FieldError, error) {
	var fields []apperr.FieldError
	if len(codes) > MaxMatchBands {
		return []apperr.FieldError{apperr.Field("bands", "must list at most %d edge bands", MaxMatchBands)}, nil
	}
	known, err := MaterialsByCode(ctx, tx, codes)
	if err != nil {
		return nil, err
	}
	for i, c := range codes {
		at := fmt.Sprintf("bands[%d]", i)
		m, ok := known[input.CodeKey(c)]
		switch {
		case !ok:
			fields = append(fields, apperr.Field(at, "no material has the code %q", c))
		case m.Kind != KindBand:
			fields = append(fields, apperr.Field(at, "%q is a %s, not an edge band", c, m.Kind))
		case slices.ContainsFunc(codes[:i], func(o string) bool { return input.CodeKey(o) == input.CodeKey(c) }):
			fields = append(fields, apperr.Field(at, "repeats %q", c))
		}
	}
	return fields, nil
}

// MaterialFilter selects materials for Materials.
type MaterialFilter struct {
	Kind  string // "" for every kind
	Decor string // exact, regardless of case; "" for every decor
	Query string // a part of the code or name, regardless of case
}

// Materials returns a page of the materials the filter selects, in id order;
// EINVALID naming kind when it is none of MaterialKinds.
func (s *Service) Materials(ctx context.Context, f MaterialFilter, pr page.Request) ([]Material, string, error) {
	if f.Kind != "" && !slices.Contains(MaterialKinds, f.Kind) {
		return nil, "", apperr.Invalid("invalid query", apperr.Field("kind", "must be %s", strings.Join(MaterialKinds, ", ")))
	}
	q := s.db.WithContext(ctx).Where("id > ?", pr.After)
	if f.Kind != "" {
		q = q.Where("kind = ?", f.Kind)
	}
	var ms []Material
	if err := q.Order("id").Find(&ms).Error; err != nil {
		return nil, "", err
	}
	// Decor and text are matched here, with Unicode case folding, so that
	// both databases answer alike for Cyrillic.
	out := make([]Material, 0, min(len(ms), pr.Limit+1))
	for _, m := range ms {
		if f.Decor != "" && !strings.EqualFold(m.Decor, f.Decor) {
			continue
		}
		if f.Query != "" && !strings.Contains(strings.ToLower(m.Code+"\x00"+m.Name), strings.ToLower(f.Query)) {
			continue
		}
		out = append(out, m)
		if len(out) > pr.Limit {
			break
		}
	}
	out, next := page.Next(out, pr.Limit, func(m Material) int64 { return m.ID })
	return out, next, nil
}

// Material returns the material with the id, or ENOTFOUND.
func (s *Service) Material(ctx context.Context, id int64) (Material, error) {
	var m Material
	err := s.db.WithContext(ctx).First(&m, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return m, apperr.NotFound("material %d does not exist", id)
	}
	return m, err
}

// MaterialByCode returns the material with the code (as people type it);
// ok is false when there is none.
func (s *Service) MaterialByCode(ctx context.Context, code string) (m Material, ok bool, err error) {
	ms, err := MaterialsByCode(ctx, s.db, []string{code})
	m, ok = ms[input.CodeKey(code)]
	return m, ok, err
}

// MaterialsByCode returns the materials with the codes, keyed by their
// input.CodeKey (for a code of input.CodeChars, its lower case), read
// through db (which may be the caller's transaction); unknown codes are
// absent. The codes may be as people type them (any case, fullwidth).
func MaterialsByCode(ctx context.Context, db *gorm.DB, codes []string) (map[string]Material, error) {
	out := map[string]Material{}
	if len(codes) == 0 {
		return out, nil
	}
	keys := make([]string, len(codes))
	for i, c := range codes {
		keys[i] = input.CodeKey(c)
	}
	var ms []Material
	if err := db.WithContext(ctx).Where("lower(code) IN ?", keys).Find(&ms).Error; err != nil {
		return nil, err
	}
	for _, m := range ms {
		keyMaterial(out, m)
	}
	// lower() of SQLite folds ASCII only, and neither database reads NFKC:
	// match codes kept from before codes had their character set here.
	if len(out) < len(codes) {
		var all []Material
		if err := db.WithContext(ctx).Find(&all).Error; err != nil {
			return nil, err
		}
		for _, m := range all {
			keyMaterial(out, m)
		}
	}
	return out, nil
}

// AllMaterials returns every material keyed by its input.CodeKey (for a
// code of input.CodeChars, its lower case), read through db.
func AllMaterials(ctx context.Context, db *gorm.DB) (map[string]Material, error) {
	var all []Material
	if err := db.WithContext(ctx).Find(&all).Error; err != nil {
		return nil, err
	}
	out := make(map[string]Material, len(all))
	for _, m := range all {
		keyMaterial(out, m)
	}
	return out, nil
}

// keyMaterial puts m in a map of materials by code: under its
// input.CodeKey, and, for a code kept from before codes were normalised
// whose key is not its lower case, under its lower case too, as the rows
// that name it look it up.
func keyMaterial(out map[string]Material, m Material) {
	out[input.CodeKey(m.Code)] = m
	if lower := strings.ToLower(m.Code); lower != input.CodeKey(m.Code) {
		out[lower] = m
	}
}

// CreateMaterial validates and stores a material with its material.created
// event. It returns EINVALID for bad input (a matching band that is not an
// edge band of the catalogue included) and ECONFLICT when the code is taken.
func (s *Service) CreateMaterial(ctx context.Context, in MaterialInput) (Material, error) {
	var m Material
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := in.validate(ctx, tx, ""); err != nil {
			return err
		}
		if err := materialCodeFree(ctx, tx, 0, in.Code); err != nil {
			return err
		}
		m = in.material()
		if err := tx.Omit("ID").Create(&m).Error; err != nil {
			return materialCodeTaken(err, in.Code)
		}
		return events.Add(ctx, tx, contracts.MaterialCreated.New(m.ID, materialPayload(m)))
	})
	return m, err
}

// UpdateMaterial replaces the material's content and writes
// material.updated. It returns ENOTFOUND, or EINVALID for bad input, a code
// or kind other than the material's (parts, stock and labels name it by
// code), or a change that leaves a product's part as its product's check
// would refuse it (specStillHolds).
func (s *Service) UpdateMaterial(ctx context.Context, id int64, in MaterialInput) (Material, error) {
	var m Material
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := database.LockName(tx, specLock); err != nil {
			return err
		}
		if err := tx.First(&m, id).Error; errors.Is(err, gorm.ErrRecordNotFound) {
			return apperr.NotFound("material %d does not exist", id)
		} else if err != nil {
			return err
		}
		if err := in.validate(ctx, tx, m.Code); err != nil {
			return err
		}
		var fields []apperr.FieldError
		if in.Code != m.Code {
			fields = append(fields, apperr.Field("code", "is %q and cannot change: parts, stock and labels name the material by it; create a new material instead", m.Code))
		}
		if in.Kind != m.Kind {
			fields = append(fields, apperr.Field("kind", "is %s and cannot change", m.Kind))
		}
		if len(fields) > 0 {
			return apperr.Invalid("the material is not valid", fields...)
		}
		next := in.material()
		next.ID = m.ID
		if err := specStillHolds(ctx, tx, m, next); err != nil {
			return err
		}
		m = next
		if err := tx.Save(&m).Error; err != nil {
			return err
		}
		return events.Add(ctx, tx, contracts.MaterialUpdated.New(m.ID, materialPayload(m)))
	})
	return m, err
}

// specLock is the lock that changes of materials and of products' parts
// take in turns (PostgreSQL; SQLite has one writer at a time): each checks
// the other's rows, which a transaction running beside it would not see
// until it commits, so that a board shrunk while a product is made of it
// could leave a part that fits no sheet.
const specLock = "catalog.spec"

// specStillHolds refuses a change of a material (old, as it is; next, as
// it would be) that would leave a product's part as the product's own check
// (PartInput.checkMaterials) refuses it: a board's formats, trim or grain
// that leave a part made of it (or of a slot allowing it) no sheet it fits,
// or no format at all; a board's matching bands, or a band's thickness or
// width, that leave a banded side of such a part without its band or with
// one narrower than the part is thick. The member named is the one that
// broke it: formats, bands, thickness_mm or width_mm.
func specStillHolds(ctx context.Context, tx *gorm.DB, old, next Material) error {
	if next.Kind == KindFitting {
		return nil
	}
	var slots []Slot
	if err := tx.WithContext(ctx).Find(&slots).Error; err != nil {
		return err
	}
	type slotKey struct {
		product int64
		name    string
	}
	slotBoards := map[slotKey][]string{}
	for _, sl := range slots {
		slotBoards[slotKey{sl.ProductID, strings.ToLower(sl.Name)}] = sl.Boards
	}
	var parts []Part
	if err := tx.WithContext(ctx).Order("product_id, seq").Find(&parts).Error; err != nil {
		return err
	}
	before, err := AllMaterials(ctx, tx)
	if err != nil {
		return err
	}
	after := maps.Clone(before)
	keyMaterial(after, next)
	key := input.CodeKey(next.Code)
	refuse := func(field, format string, args ...any) error {
		return apperr.Invalid("the material is not valid", apperr.Field(field, format, args...))
	}
	for _, p := range parts {
		boards := []string{p.Board}
		if p.Slot != "" {
			boards = slotBoards[slotKey{p.ProductID, strings.ToLower(p.Slot)}]
		}
		for _, code := range boards {
			if input.CodeKey(code) == key && next.Kind == KindBoard {
				if len(next.Formats) == 0 && len(old.Formats) > 0 {
					return refuse("formats", "part %q of product %d is cut from the board: it keeps at least one sheet format", p.Name, p.ProductID)
				}
				if !next.Fits(p.LengthMM, p.WidthMM, p.Grain) {
					return refuse("formats", "part %q (%d × %d mm, grain %s) of product %d would fit no sheet of the board", p.Name, p.LengthMM, p.WidthMM, p.Grain, p.ProductID)
				}
			}
			for _, side := range p.Edges.Sides() {
				if side.Band == "" {
					continue
				}
				was, errBefore := EdgeBand(side.Band, before[input.CodeKey(code)], before)
				is, errAfter := EdgeBand(side.Band, after[input.CodeKey(code)], after)
				held := errBefore == nil && was.WidthMM >= p.ThicknessMM
				involved := input.CodeKey(code) == key || (errBefore == nil && input.CodeKey(was.Code) == key) || (errAfter == nil && input.CodeKey(is.Code) == key)
				if !held || !involved {
					continue // what did not hold is not this change's doing
				}
				field := "bands"
				if next.Kind == KindBand {
					field = "thickness_mm"
				}
				if errAfter != nil {
					return refuse(field, "side %s of part %q of product %d (cut from %s) would have no band: %s", side.Side, p.Name, p.ProductID, code, errAfter)
				}
				if next.Kind == KindBand {
					field = "width_mm"
				}
				if is.WidthMM < p.ThicknessMM {
					return refuse(field, "band %q would be %d mm wide, narrower than part %q (%d mm thick) of product %d whose side %s it edges",
						is.Code, is.WidthMM, p.Name, p.ThicknessMM, p.ProductID, side.Side)
				}
			}
		}
	}
	return nil
}

func (in MaterialInput) material() Material {
	return Material{Kind: in.Kind, Code: in.Code, Name: in.Name, Decor: in.Decor, ThicknessMM: in.ThicknessMM, WidthMM: in.WidthMM,
		Unit: UnitOf(in.Kind), Grain: in.Grain, Formats: in.Formats, Trim: in.Trim, Bands: in.Bands, ReorderPoint: in.ReorderPoint}
}

func materialCodeTaken(err error, code string) error {
	if database.IsUniqueViolation(err) {
		return apperr.Conflict("a material with the code %q exists already (codes are one regardless of case)", code)
	}
	return err
}

// materialCodeFree returns ECONFLICT when a material other than id has the
// same code by input.CodeKey.
func materialCodeFree(ctx context.Context, tx *gorm.DB, id int64, code string) error {
	var rows []struct {
		ID   int64
		Code string
	}
	if err := tx.WithContext(ctx).Table("catalog_materials").Select("id, code").Where("id <> ?", id).Find(&rows).Error; err != nil {
		return err
	}
	for _, r := range rows {
		if input.CodeKey(r.Code) == input.CodeKey(code) {
			return apperr.Conflict("material %d has the code %q already: codes are one regardless of case (and of fullwidth forms)", r.ID, r.Code)
		}
	}
	return nil
}

func materialPayload(m Material) contracts.MaterialPayload {
	p := contracts.MaterialPayload{MaterialID: m.ID, Kind: m.Kind, Code: m.Code, Name: m.Name, Decor: m.Decor, ThicknessMM: m.ThicknessMM,
		WidthMM: m.WidthMM, Unit: m.Unit, Grain: m.Grain, Bands: append([]string{}, m.Bands...), ReorderPoint: m.ReorderPoint,
		Formats: []contracts.SheetFormat{}}
	for _, f := range m.Formats {
		p.Formats = append(p.Formats, contracts.SheetFormat{LengthMM: f.LengthMM, WidthMM: f.WidthMM})
	}
	p.Trim = contracts.SheetTrim{L1: m.Trim.L1, L2: m.Trim.L2, W1: m.Trim.W1, W2: m.Trim.W2}
	return p
}
