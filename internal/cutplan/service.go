package cutplan

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/cutting"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/platform/page"
	"github.com/tsekh/tsekh/internal/stock"
)

// Service makes, stores and reports cutting plans.
type Service struct {
	db    *gorm.DB
	floor *floor.Service
	stock *stock.Service
	set   Settings
}

// NewService returns the cutting-plan service over db, reading parts
// through the shop floor's service and offcuts through stock's, with the
// saw's settings.
func NewService(db *gorm.DB, f *floor.Service, st *stock.Service, set Settings) *Service {
	return &Service{db: db, floor: f, stock: st, set: set}
}

// Settings returns the saw's settings the service plans with.
func (s *Service) Settings() Settings { return s.set }

// RegisterEvents declares the cutting module's event types.
func (s *Service) RegisterEvents(r *events.Registrar) {
	r.Declare(contracts.CuttingPlanCreated, contracts.CuttingSheetCut)
}

// boardGroup is the parts of one board.
type boardGroup struct {
	board catalog.Material
	parts []floor.SawPart
}

// Create lays out every uncut part of the production orders, board by
// board, on the board's sheet formats and the offcuts of it in stock
// (offcuts first, which the plan then reserves), and stores the plan with a
// cutting_plan.created event. It returns EINVALID naming prod_orders or
// prod_orders[i] (empty, unknown, cancelled, done, closed, nothing left to
// cut) or the part that fits on no sheet of its board, the board without
// formats, or the setting that leaves no usable sheet; nothing is stored
// then.
func (s *Service) Create(ctx context.Context, ids []int64) (Plan, error) {
	return s.create(ctx, ids, nil)
}

// Rebuild lays the production orders of plan id out again, as they now are
// (a stale plan's), and stores the new plan with cutting_plan.created; the
// old one is replaced by it: the offcuts its uncut sheets reserved are free
// for the new one, and none of its sheets can be reported cut any more. It
// returns ENOTFOUND for an unknown plan, ECONFLICT for one replaced
// already, and EINVALID as Create does (an order with nothing left to cut,
// cancelled, …); nothing is stored then.
func (s *Service) Rebuild(ctx context.Context, id int64) (Plan, error) {
	old, err := s.get(ctx, s.db, id, false)
	if err != nil {
		return Plan{}, err
	}
	if old.ReplacedBy != nil {
		return Plan{}, errReplaced(id, *old.ReplacedBy)
	}
	return s.create(ctx, old.ProdOrders, &old.ID)
}

func errReplaced(id, by int64) error {
	return apperr.Conflict("cutting plan %d is replaced by plan %d already", id, by)
}

// create lays out the cut of the production orders' parts and stores it as
// a new cutting plan (replacing the plan replaces, when not nil).
func (s *Service) create(ctx context.Context, ids []int64, replaces *int64) (Plan, error) {
	return s.createWith(ctx, ids, replaces, nil, nil)
}

// createWith is create reporting each board laid out to progress (when
// not nil) and calling stored (when not nil) inside the transaction that
// stores the plan, its error rolling the plan back.
func (s *Service) createWith(ctx context.Context, ids []int64, replaces *int64, progress boardProgress,
	stored func(tx *gorm.DB, planID int64) error,
) (Plan, error) {
	// The layout is worked out before the transaction, which only stores
	// it: the offcuts it cuts are reserved there only if still available.
	p, sheets, used, err := s.layOut(ctx, ids, replaces, progress)
	if err != nil {
		return Plan{}, err
	}
	err = database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		if err := s.storePlan(ctx, tx, &p, sheets, used, replaces); err != nil {
			return err
		}
		if stored != nil {
			return stored(tx, p.ID)
		}
		return nil
	})
	if err != nil {
		return Plan{}, err
	}
	return s.get(ctx, s.db, p.ID, true)
}

// layOut works out the cut of the production orders' parts, board by board,
// on new sheets and the available offcuts (with those of the plan replaces):
// the plan's totals, its sheets and the offcuts it cuts.
func (s *Service) layOut(ctx context.Context, ids []int64, replaces *int64, progress boardProgress) (p Plan, sheets []Sheet, used []int64, err error) {
	start := time.Now()
	parts, err := s.floor.PartsToCut(ctx, ids)
	if err != nil {
		return Plan{}, nil, nil, err
	}
	db := s.db.WithContext(ctx)
	groups, err := boardsOf(ctx, db, parts, ids)
	if err != nil {
		return Plan{}, nil, nil, err
	}
	p = Plan{ProdOrders: ids, KerfMM: s.set.KerfMM, Stages: s.set.Stages, MinOffcutMM: s.set.MinOffcutMM, Boards: BoardList{}}
	for i, g := range groups {
		if err := ctx.Err(); err != nil {
			return Plan{}, nil, nil, err
		}
		offcuts, err := s.stock.AvailableOffcuts(ctx, db, g.board.Code, replaces)
		if err != nil {
			return Plan{}, nil, nil, err
		}
		cp, err := s.optimise(g, offcuts, ids, boardBudget(s.set.TimeBudget, time.Since(start), len(groups)-i))
		if err != nil {
			return Plan{}, nil, nil, err
		}
		bt := BoardTotals{Board: g.board.Code, Name: g.board.Name, Decor: g.board.Decor, ThicknessMM: g.board.ThicknessMM, Grain: g.board.Grain,
			Sheets: cp.Totals.Sheets, Parts: cp.Totals.Parts, SheetsM2: cp.Totals.SheetsM2, PartsM2: cp.Totals.PartsM2, Yield: cp.Totals.Yield,
			WasteM2: cp.Totals.WasteM2, OffcutsM2: cp.Totals.OffcutsM2, Offcuts: cp.Totals.Offcuts, LargestOffcut: cp.Totals.LargestOffcut}
		byID := map[string]floor.SawPart{}
		for _, pt := range g.parts {
			byID[strconv.FormatInt(pt.ID, 10)] = pt
		}
		for _, sh := range cp.Sheets {
			out := sheetOf(sh, g.board, byID, s.set.KerfMM)
			out.N = len(sheets) + 1
			if sh.Offcut {
				id := offcuts[sh.Format].ID
				out.OffcutID = &id
				out.Format = "offcut " + offcuts[sh.Format].Code
				used = append(used, id)
				bt.OffcutsUsed++
			}
			sheets = append(sheets, out)
		}
		p.Boards = append(p.Boards, bt)
		p.Sheets += bt.Sheets
		p.Parts += bt.Parts
		if progress != nil {
			if err := progress(ctx, i+1, len(groups), g.board.Code); err != nil {
				return Plan{}, nil, nil, err
			}
		}
	}
	return p, sheets, used, nil
}

// storePlan stores the plan laid out and its sheets, marks the plan it
// replaces, reserves the offcuts it cuts in stock (ECONFLICT when one was
// taken meanwhile), tells stock its sheets and the offcuts each leaves,
// tells the shop floor which sheet each part lies on (its board need
// becomes its share of that sheet: stock reserves the difference) and
// writes cutting_plan.created, inside tx.
func (s *Service) storePlan(ctx context.Context, tx *gorm.DB, p *Plan, sheets []Sheet, used []int64, replaces *int64) error {
	ids := p.ProdOrders
	if err := tx.Omit("ID", "CreatedAt").Create(p).Error; err != nil {
		return err
	}
	if replaces != nil {
		res := tx.Model(&Plan{}).Where("id = ? AND replaced_by IS NULL", *replaces).Update("replaced_by", p.ID)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return apperr.Conflict("cutting plan %d was replaced meanwhile", *replaces)
		}
	}
	if err := s.stock.ReserveOffcutsTx(ctx, tx, p.ID, used, replaces); err != nil {
		return err
	}
	planned := make([]stock.PlannedSheet, len(sheets))
	var as []floor.Assignment
	for i, sh := range sheets {
		b, err := json.Marshal(sh)
		if err != nil {
			return err
		}
		if err := tx.Create(&sheetRow{PlanID: p.ID, N: sh.N, Board: sh.Board, OffcutID: sh.OffcutID, Layout: string(b)}).Error; err != nil {
			return err
		}
		planned[i] = stock.PlannedSheet{N: sh.N, Board: sh.Board, OffcutID: sh.OffcutID, Keep: keptOf(sh)}
		as = append(as, assignments(sh)...)
	}
	if err := s.stock.RegisterSheetsTx(ctx, tx, p.ID, planned); err != nil {
		return err
	}
	if err := s.floor.AssignSheetsTx(ctx, tx, p.ID, as); err != nil {
		return err
	}
	payload := contracts.CuttingPlanPayload{PlanID: p.ID, ProdOrders: ids, OffcutsUsed: used, Replaces: replaces, NewSheets: newSheets(sheets)}
	if payload.OffcutsUsed == nil {
		payload.OffcutsUsed = []int64{}
	}
	for _, b := range p.Boards {
		payload.Boards = append(payload.Boards, contracts.CuttingBoardTotals{Board: b.Board, Sheets: b.Sheets, Offcuts: b.OffcutsUsed, Parts: b.Parts, Yield: b.Yield, WasteM2: b.WasteM2})
	}
	return events.Add(ctx, tx, contracts.CuttingPlanCreated.New(p.ID, payload))
}

// keptOf is the pieces the sheet leaves to keep, each with its length
// along the grain on a board with grain, along its longer side otherwise.
func keptOf(sh Sheet) []stock.Size {
	out := make([]stock.Size, len(sh.Offcuts))
	for k, o := range sh.Offcuts {
		l, w := o.DX, o.DY
		if w > l && !sh.Grain {
			l, w = w, l
		}
		out[k] = stock.Size{LengthMM: l, WidthMM: w}
	}
	return out
}

// assignments lays the sheet's parts out on it: on a new sheet each needs
// its share of the sheet by area; on an offcut (reserved whole) nothing.
func assignments(sh Sheet) []floor.Assignment {
	total := 0.0
	for _, p := range sh.Parts {
		total += p.DX * p.DY
	}
	out := make([]floor.Assignment, len(sh.Parts))
	for i, p := range sh.Parts {
		out[i] = floor.Assignment{PartID: p.PartID, N: sh.N}
		if sh.OffcutID == nil && total > 0 {
			out[i].Share = p.DX * p.DY / total
		}
	}
	return out
}

// boardsOf groups the parts by board, in board code order, with the boards
// from the catalogue: EINVALID naming the part whose board is unknown or
// has no sheet formats.
func boardsOf(ctx context.Context, db *gorm.DB, parts []floor.SawPart, ids []int64) ([]boardGroup, error) {
	var codes []string
	for _, p := range parts {
		codes = append(codes, p.Board)
	}
	boards, err := catalog.MaterialsByCode(ctx, db, codes)
	if err != nil {
		return nil, err
	}
	byCode := map[string]*boardGroup{}
	var fields []apperr.FieldError
	for _, p := range parts {
		field := partField(p, ids)
		b, ok := boards[input.CodeKey(p.Board)]
		switch {
		case p.Board == "" || !ok || b.Kind != catalog.KindBoard:
			fields = append(fields, apperr.Field(field, "part %d %q of production order %d names no board of the catalogue (%q)", p.ID, p.Name, p.ProdOrderID, p.Board))
			continue
		case len(b.Formats) == 0:
			fields = append(fields, apperr.Field(field, "board %s of part %d %q has no sheet formats to lay it out on", b.Code, p.ID, p.Name))
			continue
		}
		g := byCode[b.Code]
		if g == nil {
			g = &boardGroup{board: b}
			byCode[b.Code] = g
		}
		g.parts = append(g.parts, p)
	}
	if len(fields) > 0 {
		return nil, apperr.Invalid("the parts cannot be laid out", fields...)
	}
	out := make([]boardGroup, 0, len(byCode))
	for _, g := range byCode {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b boardGroup) int { return cmp.Compare(a.board.Code, b.board.Code) })
	return out, nil
}

// partField names a part as a field of the request: the production order
// it belongs to, by its place in the list, and the part's id.
func partField(p floor.SawPart, ids []int64) string {
	return fmt.Sprintf("prod_orders[%d].parts[%d]", slices.Index(ids, p.ProdOrderID), p.ID)
}

// grainOf is the part's grain as the optimiser takes it: none unless the
// board has a grain direction.
func grainOf(b catalog.Material, g string) cutting.Grain {
	if !b.Grain {
		return cutting.GrainNone
	}
	switch g {
	case catalog.GrainLength:
		return cutting.GrainLength
	case catalog.GrainWidth:
		return cutting.GrainWidth
	}
	return cutting.GrainNone
}

var problemField = regexp.MustCompile(`^(parts|formats)\[(\d+)\](.*)$`)

// optimise lays out one board's parts: the offcuts first (one each, trims
// not applied), then the board's formats as many as needed. The
// optimiser's field errors are renamed to what the request can change.
func (s *Service) optimise(g boardGroup, offcuts []stock.Offcut, ids []int64, limit time.Duration) (cutting.Plan, error) {
	pr := s.problem(g, offcuts, limit)
	cp, err := cutting.Optimise(pr)
	var ae *apperr.Error
	if err == nil || !errors.As(err, &ae) || ae.Code != apperr.EINVALID {
		return cp, err
	}
	fields := make([]apperr.FieldError, 0, len(ae.Fields))
	for _, f := range ae.Fields {
		name := f.Field
		switch m := problemField.FindStringSubmatch(f.Field); {
		case m != nil && m[1] == "parts":
			i, _ := strconv.Atoi(m[2])
			if i < len(g.parts) {
				name = partField(g.parts[i], ids)
			}
		case m != nil && m[1] == "formats":
			i, _ := strconv.Atoi(m[2])
			if i < len(offcuts) {
				name = fmt.Sprintf("offcuts[%d]", offcuts[i].ID)
			} else {
				name = fmt.Sprintf("boards[%s].formats[%d]", g.board.Code, i-len(offcuts))
			}
		case f.Field == "kerf_mm":
			name = "CUTTING_KERF_MM"
		case strings.HasPrefix(f.Field, "trims_mm"):
			name = fmt.Sprintf("boards[%s].trim", g.board.Code)
		}
		fields = append(fields, apperr.Field(name, "board %s: %s", g.board.Code, f.Message))
	}
	return cp, apperr.Invalid("the parts cannot be laid out", fields...)
}

// problem is the optimiser's problem for one board's parts: the offcuts
// first (one each, trims not applied), then the board's formats; the
// plan's settings (kerf, stages, offcuts, effort per part) and the time
// the board is given.
func (s *Service) problem(g boardGroup, offcuts []stock.Offcut, limit time.Duration) cutting.Problem {
	pr := cutting.Defaults()
	pr.Kerf = s.set.KerfMM
	pr.Stages = s.set.Stages
	pr.MinOffcut = cutting.Size{Length: float64(s.set.MinOffcutMM), Width: float64(s.set.MinOffcutMM)}
	pr.OffcutWeight = s.set.OffcutWeight
	pr.TimeLimit = limit
	pr.Effort = cutting.Effort(len(g.parts), s.set.EffortPerPart)
	t := g.board.Trim
	pr.Trims = cutting.Trims{Left: float64(t.W1), Right: float64(t.W2), Bottom: float64(t.L1), Top: float64(t.L2)}
	for _, o := range offcuts {
		pr.Formats = append(pr.Formats, cutting.Format{Name: "offcut " + o.Code, Length: o.LengthMM, Width: o.WidthMM, Count: 1, Offcut: true})
	}
	for _, f := range g.board.Formats {
		pr.Formats = append(pr.Formats, cutting.Format{Name: fmt.Sprintf("%d × %d", f.LengthMM, f.WidthMM), Length: float64(f.LengthMM), Width: float64(f.WidthMM)})
	}
	for _, p := range g.parts {
		pr.Parts = append(pr.Parts, cutting.Part{ID: strconv.FormatInt(p.ID, 10), Name: p.Name, Length: float64(p.LengthMM), Width: float64(p.WidthMM), Qty: 1,
			Grain: grainOf(g.board, p.Grain)})
	}
	return pr
}

// sheetOf turns the optimiser's sheet into a stored one, with each part's
// production order and the order the saw frees it in.
func sheetOf(sh cutting.Sheet, b catalog.Material, byID map[string]floor.SawPart, kerf float64) Sheet {
	out := Sheet{Board: b.Code, Decor: b.Decor, ThicknessMM: b.ThicknessMM, Grain: b.Grain, Format: sh.Name, LengthMM: sh.Length, WidthMM: sh.Width,
		Usable: sh.Usable, Stages: sh.Stages, Cuts: sh.Cuts, Yield: sh.Yield, WasteM2: sh.WasteM2, Offcuts: sh.Offcuts}
	if out.Cuts == nil {
		out.Cuts = []cutting.Cut{}
	}
	if out.Offcuts == nil {
		out.Offcuts = []cutting.Rect{}
	}
	freed := make([]int, len(sh.Parts))
	for i, pl := range sh.Parts {
		freed[i] = freedBy(pl.Rect, sh.Cuts, kerf)
		p := byID[pl.ID]
		out.Parts = append(out.Parts, SheetPart{PartID: p.ID, Code: partCode(p), Name: p.Name, ProdOrderID: p.ProdOrderID, ItemID: p.ItemID,
			LengthMM: p.LengthMM, WidthMM: p.WidthMM, X: pl.X, Y: pl.Y, DX: pl.DX, DY: pl.DY, Turned: pl.Turned})
	}
	order := make([]int, len(out.Parts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(freed[a], freed[b]), cmp.Compare(out.Parts[a].X, out.Parts[b].X), cmp.Compare(out.Parts[a].Y, out.Parts[b].Y))
	})
	for rank, i := range order {
		out.Parts[i].CutOrder = rank + 1
	}
	return out
}

// partCode is how the saw's drawings name a physical part: the code its
// label carries, or its id for a part stored before parts had codes.
func partCode(p floor.SawPart) string {
	if p.Code != "" {
		return p.Code
	}
	return "#" + strconv.FormatInt(p.ID, 10)
}

// freedBy is the index of the last cut, in saw order, that runs along an
// edge of the part inside a piece that holds it: the cut that frees it.
func freedBy(r cutting.Rect, cuts []cutting.Cut, kerf float64) int {
	const eps = 0.05
	inside := func(p cutting.Rect) bool {
		return r.X >= p.X-eps && r.Y >= p.Y-eps && r.X+r.DX <= p.X+p.DX+eps && r.Y+r.DY <= p.Y+p.DY+eps
	}
	last := -1
	for i, c := range cuts {
		if !inside(c.Piece) {
			continue
		}
		lo, hi := r.Y, r.Y+r.DY
		if c.Direction == cutting.AlongWidth {
			lo, hi = r.X, r.X+r.DX
		}
		if math.Abs(c.Pos-hi) < eps || math.Abs(c.Pos+kerf-lo) < eps {
			last = i
		}
	}
	return last
}

// Plans returns a page of the plans in id order, with their totals.
func (s *Service) Plans(ctx context.Context, pr page.Request) ([]Plan, string, error) {
	var ps []Plan
	if err := s.db.WithContext(ctx).Where("id > ?", pr.After).Order("id").Limit(pr.Limit + 1).Find(&ps).Error; err != nil {
		return nil, "", err
	}
	ps, next := page.Next(ps, pr.Limit, func(p Plan) int64 { return p.ID })
	for i := range ps {
		if err := s.describe(ctx, s.db, &ps[i], false); err != nil {
			return nil, "", err
		}
	}
	return ps, next, nil
}

// Get returns a plan with its sheets: ENOTFOUND when there is none.
func (s *Service) Get(ctx context.Context, id int64) (Plan, error) {
	return s.get(ctx, s.db, id, true)
}

func (s *Service) get(ctx context.Context, db *gorm.DB, id int64, sheets bool) (Plan, error) {
	var p Plan
	err := db.WithContext(ctx).First(&p, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return p, apperr.NotFound("cutting plan %d does not exist", id)
	}
	if err != nil {
		return p, err
	}
	return p, s.describe(ctx, db, &p, sheets)
}

// describe fills in what is read, not stored: the sheets, how many are
// cut, and whether the plan is stale.
func (s *Service) describe(ctx context.Context, db *gorm.DB, p *Plan, withSheets bool) error {
	var rows []sheetRow
	if err := db.WithContext(ctx).Where("plan_id = ?", p.ID).Order("n").Find(&rows).Error; err != nil {
		return err
	}
	var ids []int64
	cutOn := map[int64]bool{}
	names := map[int64]SheetPart{}
	type offcutSheet struct {
		n      int
		offcut int64
	}
	var offcutSheets []offcutSheet
	for _, r := range rows {
		if r.OffcutID != nil && r.CutAt == nil {
			offcutSheets = append(offcutSheets, offcutSheet{r.N, *r.OffcutID})
		}
		sh, err := r.sheet()
		if err != nil {
			return err
		}
		if r.CutAt != nil {
			p.Cut++
		}
		for _, pt := range sh.Parts {
			ids = append(ids, pt.PartID)
			cutOn[pt.PartID] = r.CutAt != nil
			names[pt.PartID] = pt
		}
		if withSheets {
			p.SheetList = append(p.SheetList, sh)
		}
	}
	states, err := s.floor.SawStates(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		pt, st := names[id], states[id]
		_, live := states[id]
		on := st.SheetPlanID != nil && *st.SheetPlanID == p.ID
		switch {
		case cutOn[id]:
		case !live:
			p.Why = append(p.Why, fmt.Sprintf("part %s %q of production order %d no longer waits for the saw (scrapped, released, or its order cancelled or closed)", pt.Code, pt.Name, pt.ProdOrderID))
		case st.SheetPlanID != nil && !on:
			p.Why = append(p.Why, fmt.Sprintf("part %s %q of production order %d is laid out by cutting plan %d now", pt.Code, pt.Name, pt.ProdOrderID, *st.SheetPlanID))
		case !st.Waits && !on:
			p.Why = append(p.Why, fmt.Sprintf("part %s %q of production order %d was cut without this plan", pt.Code, pt.Name, pt.ProdOrderID))
		}
	}
	for _, sh := range offcutSheets {
		off, err := s.stock.OffcutByID(ctx, sh.offcut)
		if err != nil {
			return err
		}
		if off.Status == stock.OffcutWrittenOff {
			p.Why = append(p.Why, fmt.Sprintf("sheet %d is offcut %s, which was written off (%s)", sh.n, off.Code, off.Reason))
		}
	}
	if p.ReplacedBy != nil {
		p.Why = append([]string{fmt.Sprintf("replaced by cutting plan %d", *p.ReplacedBy)}, p.Why...)
	}
	if len(p.Why) > 20 {
		p.Why = append(p.Why[:20], fmt.Sprintf("and %d more", len(p.Why)-20))
	}
	p.Stale = len(p.Why) > 0
	return nil
}

// newSheets counts the new sheets (not offcuts) per production order and
// board, each for the first production order with a part on it, in board
// and order id order: what the plan cuts, told to those who read its
// event (stock reserves each part's share of its sheet).
func newSheets(sheets []Sheet) []contracts.CuttingOrderSheets {
	type key struct {
		board string
		order int64
	}
	count := map[key]int{}
	for _, sh := range sheets {
		if sh.OffcutID != nil || len(sh.Parts) == 0 {
			continue
		}
		count[key{sh.Board, sh.Parts[0].ProdOrderID}]++
	}
	out := make([]contracts.CuttingOrderSheets, 0, len(count))
	for k, n := range count {
		out = append(out, contracts.CuttingOrderSheets{ProdOrderID: k.order, Board: k.board, Sheets: n})
	}
	slices.SortFunc(out, func(a, b contracts.CuttingOrderSheets) int {
		if c := strings.Compare(a.Board, b.Board); c != 0 {
			return c
		}
		return cmp.Compare(a.ProdOrderID, b.ProdOrderID)
	})
	return out
}
