package floor

import (
	"context"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/stock"
)

// ScrapReason is one of the factory's scrap reasons: the code a scrap names
// and the label the shop floor reads.
type ScrapReason struct {
	Code  string `json:"code" example:"chipped"`
	Label string `json:"label" example:"Скол"`
}

// DefaultScrapReasons are the scrap reasons when none are set: the
// defaults of FLOOR_SCRAP_REASONS.
var DefaultScrapReasons = []ScrapReason{
	{"chipped", "Скол"}, {"wrong_size", "Не тот размер"}, {"drilling_error", "Ошибка присадки"}, {"edge_defect", "Дефект кромки"},
	{"damaged", "Повреждение"}, {"material_defect", "Брак материала"}, {"other", "Другое"},
}

// MaxScrapNote bounds the free text of a scrap, in characters.
const MaxScrapNote = 1000

// SetScrapReasons sets the reasons the factory keeps for scrap
// (FLOOR_SCRAP_REASONS); a scrap names one of them. Call it before the
// service is used.
func (s *Service) SetScrapReasons(reasons []ScrapReason) { s.scrapReasons = slices.Clone(reasons) }

// ScrapReasonLabels returns the reasons a scrap may name, with their labels.
func (s *Service) ScrapReasonLabels() []ScrapReason {
	if len(s.scrapReasons) == 0 {
		return slices.Clone(DefaultScrapReasons)
	}
	return slices.Clone(s.scrapReasons)
}

// ScrapReasons returns the codes a scrap may name.
func (s *Service) ScrapReasons() []string {
	reasons := s.ScrapReasonLabels()
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		codes[i] = r.Code
	}
	return codes
}

// reasonList lists the reasons for a refusal: "chipped (Скол), …".
func (s *Service) reasonList() string {
	var b strings.Builder
	for i, r := range s.ScrapReasonLabels() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.Code)
		if r.Label != r.Code {
			b.WriteString(" (" + r.Label + ")")
		}
	}
	return b.String()
}

// ScrapInput is the input of ScrapPart: the part, by its code or its id,
// where and why it was spoilt.
type ScrapInput struct {
	Code   string
	PartID int64
	Step   int    // the route step it was spoilt at; 0: the step it is at
	Reason string // one of ScrapReasons
	Note   string // free text
}

// ScrapResult is the scrapped part and the part cut again in its place.
type ScrapResult struct {
	Scrapped Part `json:"scrapped"`
	Recut    Part `json:"recut"`
}

func (s *Service) validateScrap(in *ScrapInput) error {
	in.Code, in.Reason, in.Note = normalCode(in.Code), strings.TrimSpace(in.Reason), strings.TrimSpace(in.Note)
	var fields []apperr.FieldError
	switch {
	case in.Code == "" && in.PartID == 0:
		fields = append(fields, apperr.Field("code", "is required: the code on the part's label (or give part_id)"))
	case in.Code != "" && in.PartID != 0:
		fields = append(fields, apperr.Field("part_id", "give the part's code or its id, not both"))
	case len(in.Code) > plan.MaxCode:
		fields = append(fields, apperr.Field("code", "must be at most %d characters", plan.MaxCode))
	case in.PartID < 0:
		fields = append(fields, apperr.Field("part_id", "must be a positive part id"))
	}
	if in.Step < 0 {
		fields = append(fields, apperr.Field("step", "must be the positive seq of a part-scope step of the route"))
	}
	reasons := s.ScrapReasons()
	switch {
	case in.Reason == "":
		fields = append(fields, apperr.Field("reason", "is required: one of %s", s.reasonList()))
	case !slices.Contains(reasons, in.Reason):
		fields = append(fields, apperr.Field("reason", "must be one of %s (FLOOR_SCRAP_REASONS); say more in note", s.reasonList()))
	}
	fields = append(fields, input.Note("note", in.Note, MaxScrapNote)...)
	if len(fields) > 0 {
		return apperr.Invalid("the scrap is not valid", fields...)
	}
	return nil
}

// ScrapPart scraps one physical part, named by its code (or id), at a route
// step, with a reason of the factory's list and free text, in one
// transaction with part.scrapped and part.recut: the part is kept,
// scrapped, with the step, reason, note, who and when; its operations not
// done are dropped; a re-cut part takes its place (code: the old one's with
// ".<generation>", recut_of: the old one) with every part-scope operation of
// the route pending again, so that it is on the saw's re-cut list and in
// the next cutting list, and goes through the steps again.
//
// It returns EINVALID naming the field for a bad input (no reason, a reason
// not on the list, an unknown code, a step the route has not at part scope,
// or one after the step the part is at); ECONFLICT when the part was
// scrapped already, its unit is made, or its order is not launched or in
// progress; ENOTFOUND for an unknown part id.
func (s *Service) ScrapPart(ctx context.Context, in ScrapInput) (ScrapResult, error) {
	if err := s.validateScrap(&in); err != nil {
		return ScrapResult{}, err
	}
	var out ScrapResult
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		var part plan.Part
		if in.Code != "" {
			x, err := findCode(ctx, tx, in.Code)
			if err != nil {
				return err
			}
			if x.part == nil {
				return apperr.Invalid("the scrap is not valid", apperr.Field("code", "%s is a unit's code: scrap names a part (the code on the part's label)", in.Code))
			}
			part = *x.part
		} else {
			p, err := partByID(ctx, tx, in.PartID)
			if err != nil {
				return err
			} else if p == nil {
				return apperr.NotFound("part %d does not exist", in.PartID)
			}
			part = *p
		}
		o, err := plan.LockOrder(ctx, tx, part.ProdOrderID)
		if err != nil {
			return err
		}
		out, err = s.scrapAt(ctx, tx, &o, part.ID, in.Step, in.Reason, in.Note, "")
		return err
	})
	return out, err
}

// scrapStep is the step a part is at: its first operation not done; the
// last when every one is done.
func scrapStep(ops []plan.Operation) int {
	for _, op := range ops {
		if op.Status != plan.OpDone {
			return op.Seq
		}
	}
	if len(ops) == 0 {
		return 0
	}
	return ops[len(ops)-1].Seq
}

// scrapAt scraps part partID of order o (its row locked by the caller) at
// route step step (0: the step it is at), in tx, for ScrapPart and for a
// report's scrap alike; at names the request's field of the part in its
// errors ("" for ScrapPart's own fields). It checks the part as it is under
// the lock, then does the scrap (scrap).
func (s *Service) scrapAt(ctx context.Context, tx *gorm.DB, o *plan.ProdOrder, partID int64, step int, reason, note, at string) (ScrapResult, error) {
	p, err := partByID(ctx, tx, partID)
	if err != nil {
		return ScrapResult{}, err
	} else if p == nil {
		return ScrapResult{}, apperr.NotFound("part %d does not exist", partID)
	}
	part := *p
	if part.Status == plan.PartScrapped {
		return ScrapResult{}, apperr.Conflict("part %s was scrapped already at step %d", part.Code, deref(part.ScrapSeq))
	}
	if o.Status != plan.StatusLaunched && o.Status != plan.StatusInProgress {
		return ScrapResult{}, apperr.Conflict("%s is %s: nothing on it can be scrapped", o.Describe(), o.Status)
	}
	made, err := unitIsMade(ctx, tx, o.ID, part.ItemID, part.Unit)
	if err != nil {
		return ScrapResult{}, err
	}
	if made {
		return ScrapResult{}, apperr.Conflict("part %s is of a unit that is made: nothing of it can be scrapped", part.Code)
	}
	ops, err := partOperations(ctx, tx, part.ID)
	if err != nil {
		return ScrapResult{}, err
	}
	now := scrapStep(ops)
	if step == 0 {
		step = now
	}
	i := slices.IndexFunc(ops, func(op plan.Operation) bool { return op.Seq == step })
	switch {
	case i < 0:
		return ScrapResult{}, apperr.Invalid("the scrap is not valid", apperr.Field(at+"step", "part %s has no step %d: its part-scope steps are %s", part.Code, step, seqsText(ops)))
	case now > 0 && step > now:
		return ScrapResult{}, apperr.Invalid("the scrap is not valid", apperr.Field(at+"step", "part %s is at step %d: it cannot have been spoilt at step %d, after it", part.Code, now, step))
	}
	return s.scrap(ctx, tx, *o, part, ops, ops[i], reason, note)
}

// scrap does the scrap in tx, the order locked and the input checked:
//   - the part is kept, scrapped at step at with the reason, note, who and
//     when, and its operations not done are dropped (part.scrapped);
//   - what it used is booked: its board when the saw had not finished it
//     (spoilt at cutting: the sheet it lay on, or its own area), its
//     edges' bands when it was spoilt at banding; what it still needed is
//     released (stock, naming the part);
//   - a re-cut takes its place with its own code, every part-scope
//     operation of the route pending and its own needs reserved: its
//     board's share estimated from its shape, its bands (part.recut).
func (s *Service) scrap(ctx context.Context, tx *gorm.DB, o plan.ProdOrder, part plan.Part, ops []plan.Operation, at plan.Operation, reason, note string) (ScrapResult, error) {
	var out ScrapResult
	var by *events.Actor
	if a, ok := events.ActorFrom(ctx); ok {
		by = &a
	}
	scrapped, err := markScrapped(ctx, tx, part.ID, at.Seq, reason, note, by)
	if err != nil {
		return out, err
	}
	if !scrapped {
		return out, apperr.Conflict("part %s changed at the same time; read it again", part.Code)
	}
	// The re-cut's operations take the slots of the part's (read before
	// those not done leave its order's schedule).
	if err := plan.FillSlots(ctx, tx, ops); err != nil {
		return out, err
	}
	if err := dropOpenOperationsOfPart(ctx, tx, o.ID, part.ID); err != nil {
		return out, err
	}
	used, err := s.scrapBooking(ctx, tx, o, part, ops, at)
	if err != nil {
		return out, err
	}
	recut := part
	recut.ID, recut.Code, recut.Status, recut.RecutOf, recut.Scrap = 0, recutCode(part.Code), plan.PartLive, &part.ID, plan.Scrap{}
	recut.SheetPlanID, recut.SheetN = nil, nil
	shares, err := s.stock.BoardShares(ctx, tx, []stock.PartShape{recut.Shape()})
	if err != nil {
		return out, err
	}
	recut.BoardNeed = shares[0]
	if err := insertPart(ctx, tx, &recut); err != nil {
		if database.IsUniqueViolation(err) {
			return out, apperr.Conflict("part %s was re-cut at the same time; read it again", part.Code)
		}
		return out, err
	}
	// Every part-scope step again, in this order: a part carried over from
	// an order closed short had some of its steps done in that one.
	again := make([]plan.Operation, len(ops))
	for i, op := range ops {
		op.ID, op.PartID, op.Status = 0, &recut.ID, plan.OpPending
		op.ProdOrderID, op.ItemID, op.Unit = o.ID, part.ItemID, part.Unit
		op.StartedAt, op.CompletedAt, op.CompletedByID, op.CompletedBy = nil, nil, nil, nil
		again[i] = op
	}
	if err := insertOperations(ctx, tx, again); err != nil {
		return out, err
	}
	steps, err := materialSteps(ctx, tx, o.ID)
	if err != nil {
		return out, err
	}
	needs := stock.Booking{ProdOrderID: o.ID, Source: stock.Source{What: stock.ForRecut, Parts: []string{recut.Code}}}
	if steps.Cut > 0 && recut.BoardNeed > 0 {
		needs.Needs = append(needs.Needs, stock.Move{Code: recut.Board, Qty: recut.BoardNeed})
	}
	if steps.Band > 0 {
		needs.Needs = append(needs.Needs, stock.BandMetres(recut.Shape(), o.EdgeOverhangMM)...)
	}
	if err := s.stock.BookTx(ctx, tx, append(used, needs)...); err != nil {
		return out, err
	}
	err = events.Add(ctx, tx, contracts.PartScrapped.New(o.ID, contracts.PartScrappedPayload{ProdOrderID: o.ID, PartID: part.ID, Code: part.Code,
		Part: part.Name, ItemID: part.ItemID, Unit: part.Unit, Seq: at.Seq, Operation: at.Name, Reason: reason, Note: note,
		RecutID: recut.ID, RecutCode: recut.Code}))
	if err != nil {
		return out, err
	}
	b := recut.CutFrom()
	err = events.Add(ctx, tx, contracts.PartRecut.New(o.ID, contracts.PartRecutPayload{ProdOrderID: o.ID, PartID: recut.ID, Code: recut.Code,
		RecutOf: part.ID, RecutOfCode: part.Code, Part: recut.Name, Material: b.Material, ThicknessMM: b.ThicknessMM,
		LengthMM: recut.LengthMM, WidthMM: recut.WidthMM, Operations: len(again)}))
	if err != nil {
		return out, err
	}
	both, err := partsByID(ctx, tx, []int64{part.ID, recut.ID})
	if err != nil {
		return out, err
	}
	fps, err := floorParts(ctx, tx, o, both)
	if err != nil {
		return out, err
	}
	out.Scrapped, out.Recut = fps[0], fps[1]
	return out, nil
}

// scrapBooking is what a part scrapped at step at used and no longer
// needs: spoilt at or after cutting with its cutting not done (the saw
// spoilt it), it used its board as a part cut does; spoilt at banding with
// its banding not done, its edges' bands; whatever it still needed of
// either is released.
func (s *Service) scrapBooking(ctx context.Context, tx *gorm.DB, o plan.ProdOrder, part plan.Part, ops []plan.Operation, at plan.Operation) ([]stock.Booking, error) {
	steps, err := materialSteps(ctx, tx, o.ID)
	if err != nil {
		return nil, err
	}
	notDone := func(seq int) bool {
		return slices.ContainsFunc(ops, func(op plan.Operation) bool { return op.Seq == seq && op.Status != plan.OpDone })
	}
	b := stock.Booking{ProdOrderID: o.ID, Source: stock.Source{What: stock.ForScrapped, Parts: []string{part.Code}}}
	var others []stock.Booking
	if steps.Cut > 0 && notDone(steps.Cut) {
		if at.Seq >= steps.Cut {
			cut, mates, err := s.cutBooking(ctx, tx, o.ID, []plan.Part{part}, stock.ForScrapped)
			if err != nil {
				return nil, err
			}
			b.Consumed, b.Sheets, b.Needs, others = cut.Consumed, cut.Sheets, cut.Needs, mates
		} else {
			needs, err := takeBoardNeeds(ctx, tx, []int64{part.ID}, nil)
			if err != nil {
				return nil, err
			}
			for _, n := range needs {
				b.Needs = append(b.Needs, stock.Move{Code: n.Board, Qty: -n.BoardNeed})
			}
		}
	}
	if steps.Band > 0 && notDone(steps.Band) {
		for _, m := range stock.BandMetres(part.Shape(), o.EdgeOverhangMM) {
			if at.Seq == steps.Band {
				b.Consumed = append(b.Consumed, m)
			}
			b.Needs = append(b.Needs, stock.Move{Code: m.Code, Qty: -m.Qty})
		}
	}
	return append([]stock.Booking{b}, others...), nil
}

// Recut is a part the saw must cut again: a re-cut not yet through its
// first step, with the part it replaces and why that one was scrapped.
type Recut struct {
	Code        string `json:"code" example:"P12-5.1"`
	PartID      int64  `json:"part_id"`
	ProdOrderID int64  `json:"prod_order_id"`
	ItemID      int64  `json:"item_id"`
	Unit        int    `json:"unit"`
	Name        string `json:"name"`
	LengthMM    int    `json:"length_mm"`
	WidthMM     int    `json:"width_mm"`
	Edging      string `json:"edging"`
	RecutOf     string `json:"recut_of"` // the scrapped part's code
	Reason      string `json:"reason"`   // why it was scrapped
	Note        string `json:"note"`
}

// RecutBoard is the re-cuts of one board: its material, thickness and decor.
type RecutBoard struct {
	Board       string  `json:"board" example:"LDSP16-SONOMA"` // its code in the materials catalogue; "" before materials existed
	Material    string  `json:"material"`
	ThicknessMM int     `json:"thickness_mm"`
	Decor       string  `json:"decor"`
	Qty         int     `json:"qty"`
	Parts       []Recut `json:"parts"`
}

// MaxRecuts bounds the re-cuts listed at once.
const MaxRecuts = 5000

// Recuts returns what the saw must cut again, by board: the re-cut parts of
// launched and in-progress production orders whose first step (cutting) is
// not done, oldest first.
func (s *Service) Recuts(ctx context.Context) ([]RecutBoard, error) {
	parts, err := waitingRecuts(ctx, s.db, MaxRecuts)
	if err != nil {
		return nil, err
	}
	ids := []int64{}
	for _, p := range parts {
		ids = append(ids, *p.RecutOf)
	}
	old, err := partsByID(ctx, s.db, ids)
	if err != nil {
		return nil, err
	}
	byID := map[int64]plan.Part{}
	for _, p := range old {
		byID[p.ID] = p
	}
	out := []RecutBoard{}
	for _, p := range parts {
		b := p.CutFrom()
		i := slices.IndexFunc(out, func(rb RecutBoard) bool {
			return rb.Board == b.Code && rb.Material == b.Material && rb.ThicknessMM == b.ThicknessMM && rb.Decor == b.Decor
		})
		if i < 0 {
			out = append(out, RecutBoard{Board: b.Code, Material: b.Material, ThicknessMM: b.ThicknessMM, Decor: b.Decor})
			i = len(out) - 1
		}
		was := byID[*p.RecutOf]
		out[i].Qty++
		out[i].Parts = append(out[i].Parts, Recut{Code: p.Code, PartID: p.ID, ProdOrderID: p.ProdOrderID, ItemID: p.ItemID, Unit: p.Unit,
			Name: p.Name, LengthMM: p.LengthMM, WidthMM: p.WidthMM, Edging: p.Edging, RecutOf: was.Code, Reason: was.ScrapReason, Note: was.ScrapNote})
	}
	return out, nil
}
