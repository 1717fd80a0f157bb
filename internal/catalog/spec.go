package catalog

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// Limits of a product's slots and fittings.
const (
	MaxSlots       = 20
	MaxSlotBoards  = 50
	MaxFittings    = 100
	MaxFittingQty  = 1000
	EdgeMatch      = "match" // a side banded with its board's matching band
	edgeMatchThick = EdgeMatch + ":"
)

// SlotInput is a decor slot of a ProductInput.
type SlotInput struct {
	Name    string
	Boards  []string // the boards' codes
	Default string   // "": the first of Boards
}

// FittingInput is a fitting of a ProductInput, per unit.
type FittingInput struct {
	Code string
	Qty  int
}

// checkMaterials resolves and checks what the product is made of against
// the materials catalogue: the slots' boards, each part's board or slot (a
// part naming neither is matched to a board by its material text, code or
// name), thickness, grain, edges and size, and the fittings. It fills in
// what the input leaves out (thickness, grain, material text, edging).
func (in *ProductInput) checkMaterials(ctx context.Context, tx *gorm.DB) ([]apperr.FieldError, error) {
	all, err := AllMaterials(ctx, tx)
	if err != nil {
		return nil, err
	}
	var fields []apperr.FieldError
	if len(in.Slots) > MaxSlots {
		fields = append(fields, apperr.Field("slots", "must list at most %d decor slots", MaxSlots))
		return fields, nil
	}
	slots := map[string][]Material{} // by name in lower case: the allowed boards, the default first
	for i := range in.Slots {
		sl := &in.Slots[i]
		at := func(f string) string { return fmt.Sprintf("slots[%d].%s", i, f) }
		sl.Name, sl.Default = strings.TrimSpace(sl.Name), strings.TrimSpace(sl.Default)
		fields = append(fields, checkName(at("name"), sl.Name)...)
		if _, dup := slots[strings.ToLower(sl.Name)]; dup {
			fields = append(fields, apperr.Field(at("name"), "repeats the slot %q", sl.Name))
		}
		if len(sl.Boards) == 0 || len(sl.Boards) > MaxSlotBoards {
			fields = append(fields, apperr.Field(at("boards"), "must list from 1 to %d boards", MaxSlotBoards))
			continue
		}
		if sl.Default == "" {
			sl.Default = sl.Boards[0]
		}
		var boards []Material
		for j, code := range sl.Boards {
			b, ok := all[input.CodeKey(code)]
			switch {
			case !ok:
				fields = append(fields, apperr.Field(fmt.Sprintf("slots[%d].boards[%d]", i, j), "no material has the code %q", code))
				continue
			case b.Kind != KindBoard:
				fields = append(fields, apperr.Field(fmt.Sprintf("slots[%d].boards[%d]", i, j), "%q is a %s, not a board", code, b.Kind))
				continue
			case len(boards) > 0 && b.ThicknessMM != boards[0].ThicknessMM:
				fields = append(fields, apperr.Field(fmt.Sprintf("slots[%d].boards[%d]", i, j),
					"%q is %s mm thick, %q %s mm: a slot's boards have one thickness", code, mm(b.ThicknessMM), boards[0].Code, mm(boards[0].ThicknessMM)))
				continue
			}
			sl.Boards[j] = b.Code
			boards = append(boards, b)
		}
		d := slices.IndexFunc(boards, func(b Material) bool { return input.CodeKey(b.Code) == input.CodeKey(sl.Default) })
		if d < 0 {
			fields = append(fields, apperr.Field(at("default"), "%q is not one of the slot's boards", sl.Default))
			continue
		}
		sl.Default = boards[d].Code
		boards[0], boards[d] = boards[d], boards[0]
		slots[strings.ToLower(sl.Name)] = boards
	}
	for i := range in.Parts {
		fields = append(fields, in.Parts[i].checkMaterials(i, all, slots, in.Slots)...)
	}
	if len(in.Fittings) > MaxFittings {
		fields = append(fields, apperr.Field("fittings", "must list at most %d fittings", MaxFittings))
	}
	for i := range in.Fittings {
		f := &in.Fittings[i]
		at := func(n string) string { return fmt.Sprintf("fittings[%d].%s", i, n) }
		m, ok := all[input.CodeKey(f.Code)]
		switch {
		case !ok:
			fields = append(fields, apperr.Field(at("code"), "no material has the code %q", f.Code))
		case m.Kind != KindFitting:
			fields = append(fields, apperr.Field(at("code"), "%q is a %s, not a fitting", f.Code, m.Kind))
		case slices.ContainsFunc(in.Fittings[:i], func(o FittingInput) bool { return input.CodeKey(o.Code) == input.CodeKey(m.Code) }):
			fields = append(fields, apperr.Field(at("code"), "repeats %q: give its quantity once", m.Code))
		default:
			f.Code = m.Code
		}
		if f.Qty < 1 || f.Qty > MaxFittingQty {
			fields = append(fields, apperr.Field(at("qty"), "must be a whole number of pieces from 1 to %d", MaxFittingQty))
		}
	}
	return fields, nil
}

// checkMaterials resolves one part's board or slot and checks it.
func (p *PartInput) checkMaterials(i int, all map[string]Material, slots map[string][]Material, slotInputs []SlotInput) []apperr.FieldError {
	at := func(f string) string { return fmt.Sprintf("parts[%d].%s", i, f) }
	p.Board, p.Slot = strings.TrimSpace(p.Board), strings.TrimSpace(p.Slot)
	var boards []Material // the boards the part may be cut from, the default first
	switch {
	case p.Board != "" && p.Slot != "":
		return []apperr.FieldError{apperr.Field(at("slot"), "name a board or a decor slot, not both")}
	case p.Slot != "":
		boards = slots[strings.ToLower(p.Slot)]
		if boards == nil {
			if !slices.ContainsFunc(slotInputs, func(s SlotInput) bool { return strings.EqualFold(s.Name, p.Slot) }) {
				return []apperr.FieldError{apperr.Field(at("slot"), "the product has no decor slot %q", p.Slot)}
			}
			return nil // the slot's own fault is named already
		}
		for _, s := range slotInputs {
			if strings.EqualFold(s.Name, p.Slot) {
				p.Slot = s.Name
			}
		}
	case p.Board != "":
		b, ok := all[input.CodeKey(p.Board)]
		if !ok {
			return []apperr.FieldError{apperr.Field(at("board"), "no material has the code %q", p.Board)}
		}
		if b.Kind != KindBoard {
			return []apperr.FieldError{apperr.Field(at("board"), "%q is a %s, not a board", p.Board, b.Kind)}
		}
		boards = []Material{b}
	case p.Material != "":
		b, err := boardNamed(p.Material, p.ThicknessMM, all)
		if err != nil {
			return []apperr.FieldError{apperr.Field(at("material"), "%s", err)}
		}
		boards = []Material{b}
	default:
		return []apperr.FieldError{apperr.Field(at("material"), "is required: name the part's board (board, its code), a decor slot of the product (slot), or a board by its name (material)")}
	}
	if p.Board != "" || p.Slot == "" {
		p.Board = boards[0].Code
	}
	var fields []apperr.FieldError
	thickness := int(math.Round(boards[0].ThicknessMM))
	switch {
	case p.ThicknessMM == 0:
		p.ThicknessMM = max(thickness, 1)
	case math.Abs(float64(p.ThicknessMM)-boards[0].ThicknessMM) >= 1:
		fields = append(fields, apperr.Field(at("thickness_mm"), "is %d mm, but board %q is %s mm thick", p.ThicknessMM, boards[0].Code, mm(boards[0].ThicknessMM)))
	}
	if p.Material == "" {
		p.Material = boards[0].Name
	}
	anyGrain := slices.ContainsFunc(boards, func(b Material) bool { return b.Grain })
	switch {
	case p.Grain == "" && anyGrain:
		p.Grain = GrainLength
	case p.Grain == "":
		p.Grain = GrainNone
	case !slices.Contains(Grains, p.Grain):
		fields = append(fields, apperr.Field(at("grain"), "must be %s", strings.Join(Grains, ", ")))
	}
	for _, b := range boards {
		if !b.Fits(p.LengthMM, p.WidthMM, p.Grain) {
			fields = append(fields, apperr.Field(at("length_mm"), "%d × %d mm (grain %s) fits no sheet format of board %q once trimmed",
				p.LengthMM, p.WidthMM, p.Grain, b.Code))
			break
		}
	}
	sides := []*string{&p.Edges.L1, &p.Edges.L2, &p.Edges.W1, &p.Edges.W2}
	for k, side := range p.Edges.Sides() {
		spec := strings.TrimSpace(side.Band)
		if strings.EqualFold(spec, "none") {
			spec = ""
		}
		*sides[k] = spec
		if spec == "" {
			continue
		}
		for _, b := range boards {
			band, err := EdgeBand(spec, b, all)
			if err != nil {
				fields = append(fields, apperr.Field(at("edges."+side.Side), "%s", err))
				break
			}
			if !isMatch(spec) {
				*sides[k] = band.Code
			}
			if band.WidthMM < p.ThicknessMM {
				fields = append(fields, apperr.Field(at("edges."+side.Side), "band %q is %d mm wide, narrower than the part's %d mm thickness",
					band.Code, band.WidthMM, p.ThicknessMM))
				break
			}
		}
	}
	if p.Edging == "" {
		p.Edging = edgingText(p.Edges)
	}
	return fields
}

// boardNamed finds the board a free-text material names: by code, or by
// name (of that thickness when given), regardless of case.
func boardNamed(text string, thickness int, all map[string]Material) (Material, error) {
	if b, ok := all[input.CodeKey(text)]; ok && b.Kind == KindBoard {
		return b, nil
	}
	var found []Material
	for _, m := range all {
		if m.Kind == KindBoard && strings.EqualFold(m.Name, text) && (thickness == 0 || math.Abs(m.ThicknessMM-float64(thickness)) < 1) {
			found = append(found, m)
		}
	}
	switch len(found) {
	case 0:
		return Material{}, fmt.Errorf("no board of the catalogue has the code or name %q%s: name a board by its code (board)", text, ofThickness(thickness))
	case 1:
		return found[0], nil
	}
	slices.SortFunc(found, func(a, b Material) int { return strings.Compare(a.Code, b.Code) })
	return Material{}, fmt.Errorf("boards %q and %q are both named %q: name one by its code (board)", found[0].Code, found[1].Code, text)
}

func ofThickness(t int) string {
	if t == 0 {
		return ""
	}
	return fmt.Sprintf(" %d mm thick", t)
}

func isMatch(spec string) bool {
	return strings.EqualFold(spec, EdgeMatch) || strings.HasPrefix(strings.ToLower(spec), edgeMatchThick)
}

// EdgeBand resolves a side's edge for a part cut from the board: a band's
// code, "match" (the board's first matching band) or "match:T" (its
// matching band T mm thick). The error says why it cannot.
func EdgeBand(spec string, board Material, all map[string]Material) (Material, error) {
	if !isMatch(spec) {
		b, ok := all[input.CodeKey(spec)]
		switch {
		case !ok:
			return Material{}, fmt.Errorf("no material has the code %q (an edge is a band's code, %q, %q or empty)", spec, EdgeMatch, edgeMatchThick+"2")
		case b.Kind != KindBand:
			return Material{}, fmt.Errorf("%q is a %s, not an edge band", spec, b.Kind)
		}
		return b, nil
	}
	want := -1.0
	if t, ok := strings.CutPrefix(strings.ToLower(spec), edgeMatchThick); ok {
		v, err := strconv.ParseFloat(strings.ReplaceAll(t, ",", "."), 64)
		if err != nil || v <= 0 {
			return Material{}, fmt.Errorf("%q: after %q comes the band's thickness in mm, e.g. match:2", spec, edgeMatchThick)
		}
		want = v
	}
	for _, code := range board.Bands {
		b, ok := all[input.CodeKey(code)]
		if ok && b.Kind == KindBand && (want < 0 || math.Abs(b.ThicknessMM-want) < 1e-9) {
			return b, nil
		}
	}
	if want < 0 {
		return Material{}, fmt.Errorf("board %q has no matching edge band", board.Code)
	}
	return Material{}, fmt.Errorf("board %q has no matching edge band %s mm thick", board.Code, mm(want))
}

// edgingText describes edges as text: "l1, l2: match:2; w1: PVC04".
func edgingText(e Edges) string {
	var order []string
	sides := map[string][]string{}
	for _, s := range e.Sides() {
		if s.Band == "" {
			continue
		}
		if sides[s.Band] == nil {
			order = append(order, s.Band)
		}
		sides[s.Band] = append(sides[s.Band], s.Side)
	}
	out := make([]string, len(order))
	for i, band := range order {
		out[i] = strings.Join(sides[band], ", ") + ": " + band
	}
	return strings.Join(out, "; ")
}

// mm writes millimetres without trailing zeros: 16, 0.4.
func mm(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// saveSpec stores the product's parts, slots and fittings.
func (in ProductInput) saveSpec(tx *gorm.DB, p *Product) error {
	p.Parts = in.parts(p.ID)
	if err := tx.Create(&p.Parts).Error; err != nil {
		return err
	}
	p.Slots, p.Fittings = []Slot{}, []ProductFitting{}
	for i, s := range in.Slots {
		p.Slots = append(p.Slots, Slot{ProductID: p.ID, Seq: i + 1, Name: s.Name, Boards: StringList(s.Boards), Default: s.Default})
	}
	for i, f := range in.Fittings {
		p.Fittings = append(p.Fittings, ProductFitting{ProductID: p.ID, Seq: i + 1, Code: f.Code, Qty: f.Qty})
	}
	if len(p.Slots) > 0 {
		if err := tx.Create(&p.Slots).Error; err != nil {
			return err
		}
	}
	if len(p.Fittings) > 0 {
		if err := tx.Create(&p.Fittings).Error; err != nil {
			return err
		}
	}
	return nil
}

// SlotBoards returns the codes of the boards an item may choose for the
// product's slot, the default first; nil when it has no such slot.
func (p Product) SlotBoards(slot string) []string {
	for _, s := range p.Slots {
		if strings.EqualFold(s.Name, slot) {
			out := []string{s.Default}
			for _, b := range s.Boards {
				if !strings.EqualFold(b, s.Default) {
					out = append(out, b)
				}
			}
			return out
		}
	}
	return nil
}
