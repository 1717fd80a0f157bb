package plan

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// This file is the identity of what the shop floor handles: every physical
// part and every unit has a short printable code from launch, unique in the
// database, that its label carries and a scan names.
//
//	part      P<production order>-<n>     P12-5   (n: 1 to the order's parts)
//	unit      U<production order>-<n>     U12-2   (n: 1 to the order's units)
//	re-cut    <the part's code>.<g>       P12-5.1 (g: its generation of re-cuts)

// MaxCode bounds a code as a client sends it, in characters.
const MaxCode = 40

func partCode(order int64, n int) string { return fmt.Sprintf("P%d-%d", order, n) }
func unitCode(order int64, n int) string { return fmt.Sprintf("U%d-%d", order, n) }

// recutCode is the code of the part cut again in place of the part with the
// code given: P12-5 → P12-5.1, P12-5.1 → P12-5.2.
func recutCode(code string) string {
	base, gen, ok := strings.Cut(code, ".")
	n, err := strconv.Atoi(gen)
	if !ok || err != nil {
		return code + ".1"
	}
	return base + "." + strconv.Itoa(n+1)
}

// normalCode is a code as it is stored: scanners and people may send it in
// lower case or with blanks around it.
func normalCode(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }

// Unit is one unit of an item in a production order (unit n of its
// quantity), with its code and when it was made: every operation of it
// done.
type Unit struct {
	ID          int64      `json:"-" gorm:"primaryKey"`
	Code        string     `json:"code" example:"U12-1"`
	ProdOrderID int64      `json:"prod_order_id"`
	ItemID      int64      `json:"item_id"`
	Unit        int        `json:"unit"`
	MadeAt      *time.Time `json:"made_at" extensions:"x-nullable" format:"date-time"`
	// ClosedBack: its order was closed short before it was made and it
	// went back to the backlog with its parts; CarriedTo is the production
	// order that took them over.
	ClosedBack bool   `json:"closed_back"`
	CarriedTo  *int64 `json:"carried_to" extensions:"x-nullable"`
}

// TableName is the plan module's unit table.
func (Unit) TableName() string { return "plan_units" }

// createUnits writes the units of a production order being launched, in
// the order their operations come, numbered from 1.
func createUnits(tx *gorm.DB, orderID int64, _ []Part, ops []Operation) error {
	seen := map[unitKey]bool{}
	var units []Unit
	for _, op := range ops {
		k := unitKey{op.ItemID, op.Unit}
		if seen[k] {
			continue
		}
		seen[k] = true
		units = append(units, Unit{Code: unitCode(orderID, len(units)+1), ProdOrderID: orderID, ItemID: op.ItemID, Unit: op.Unit})
	}
	if len(units) == 0 {
		return nil
	}
	return tx.Omit("ID", "MadeAt", "CarriedTo").CreateInBatches(&units, insertBatch).Error
}

// Board is what a part is cut from and edged with, as labels and the
// re-cut list show it. It is read from the part's columns in one place
// (boardOf), so that the part's board fields can grow without touching
// those who show them.
type Board struct {
	// Code is the board of the materials catalogue the part is cut from
	// ("" for a part launched before materials existed), Decor its decor.
	Code        string `json:"board" example:"LDSP16-SONOMA"`
	Material    string `json:"material"`
	ThicknessMM int    `json:"thickness_mm"`
	Decor       string `json:"decor"`
	Grain       string `json:"grain" enums:"length,width,none"`
	// Edges are each side's edge band code ("" for none); Edging the
	// product line's text.
	Edges  catalog.Edges `json:"edges"`
	Edging string        `json:"edging"`
}

// CutFrom is the board the part is cut from and edged with.
func (p Part) CutFrom() Board {
	return Board{Code: p.Board, Material: p.Material, ThicknessMM: p.ThicknessMM, Decor: p.Decor, Grain: p.Grain, Edges: p.Edges, Edging: p.Edging}
}

// Label is the board as a label or a list shows it: its code and decor,
// or the material's text for a part launched before materials existed.
func (b Board) Label() string {
	name := b.Material
	if b.Code != "" {
		name = b.Code
	}
	if b.Decor != "" {
		name += ", " + b.Decor
	}
	return name
}

// EdgesText is the part's edge bands, each with the sides it goes on
// ("PVC2-SONOMA l1 l2, PVC04-SONOMA w1"), or the product line's text when no
// band is named.
func (b Board) EdgesText() string {
	var bands []string
	sides := map[string][]string{}
	for _, sd := range b.Edges.Sides() {
		if sd.Band == "" {
			continue
		}
		if _, ok := sides[sd.Band]; !ok {
			bands = append(bands, sd.Band)
		}
		sides[sd.Band] = append(sides[sd.Band], sd.Side)
	}
	if len(bands) == 0 {
		return b.Edging
	}
	out := make([]string, len(bands))
	for i, band := range bands {
		out[i] = band + " " + strings.Join(sides[band], " ")
	}
	return strings.Join(out, ", ")
}

// Part states on the shop floor, over its part-scope steps.
const (
	StatePending    = "pending"     // no step started
	StateInProgress = "in_progress" // some steps done or started
	StateDone       = "done"        // through every part-scope step
	StateScrapped   = "scrapped"    // spoilt; see its re-cut
)

// FloorPart is a physical part as the shop floor sees it: its code, its
// unit's, where it comes from, its state and each of its route steps with
// who did it and when.
type FloorPart struct {
	Part
	UnitCode string `json:"unit_code" example:"U12-1"`
	OrderID  int64  `json:"order_id"` // the sales order
	SKU      string `json:"sku"`
	Customer string `json:"customer"`
	// State is pending, in_progress or done over its part-scope steps, or scrapped.
	State string `json:"state" enums:"pending,in_progress,done,scrapped"`
	// AtSeq is the first of its steps not done (null when through them all, or scrapped).
	AtSeq *int `json:"at_seq" extensions:"x-nullable"`
	// RecutCode is the code of the part cut again in its place, once scrapped.
	RecutCode *string    `json:"recut_code" extensions:"x-nullable"`
	Steps     []PartStep `json:"steps"`
}

// PartStep is a route step of a part: its operation, its state, and who
// completed it when.
type PartStep struct {
	Seq           int        `json:"seq"`
	Name          string     `json:"name"`
	OperationID   int64      `json:"operation_id"`
	Status        string     `json:"status" enums:"pending,in_progress,done"`
	StartedAt     *time.Time `json:"started_at" extensions:"x-nullable" format:"date-time"`
	CompletedAt   *time.Time `json:"completed_at" extensions:"x-nullable" format:"date-time"`
	CompletedByID *int64     `json:"completed_by_id" extensions:"x-nullable"`
	CompletedBy   *string    `json:"completed_by" extensions:"x-nullable"`
}

// PartFilter selects the parts of a production order; zero fields do not filter.
type PartFilter struct {
	Step  int    // with State: parts whose operation at this step is in that state; alone: parts that have the step
	State string // pending, in_progress, done or scrapped
	Unit  int    // unit n of its item
}

// Parts returns a page of the physical parts of the production order
// selected by f, in id order, with their steps. It returns ENOTFOUND for an
// unknown order, EINVALID for a step its route has not at part scope, a
// state that does not exist, or a unit below 1.
func (s *Service) Parts(ctx context.Context, orderID int64, pr page.Request, f PartFilter) ([]FloorPart, string, error) {
	if err := pr.Unsorted(); err != nil {
		return nil, "", err
	}
	db := s.db.WithContext(ctx)
	o, err := prodOrder(ctx, db, orderID, false)
	if err != nil {
		return nil, "", err
	}
	var fields []apperr.FieldError
	switch f.State {
	case "", StatePending, StateInProgress, StateDone, StateScrapped:
	default:
		fields = append(fields, apperr.Field("state", "must be pending, in_progress, done or scrapped"))
	}
	if f.Unit < 0 {
		fields = append(fields, apperr.Field("unit", "must be a unit number from 1"))
	}
	if f.Step < 0 {
		fields = append(fields, apperr.Field("step", "must be the positive seq of a part-scope step of the order's route"))
	}
	if len(fields) > 0 {
		return nil, "", apperr.Invalid("invalid query", fields...)
	}
	q := db.Model(&Part{}).Where("prod_order_id = ? AND id > ?", orderID, pr.After).Order("id").Limit(pr.Limit + 1)
	if f.Unit > 0 {
		q = q.Where("unit = ?", f.Unit)
	}
	if f.Step > 0 {
		var scope []string
		if err := db.Model(&Operation{}).Where("prod_order_id = ? AND seq = ?", orderID, f.Step).Distinct().Pluck("scope", &scope).Error; err != nil {
			return nil, "", err
		}
		if len(scope) == 0 || scope[0] != catalog.ScopePart {
			return nil, "", apperr.Invalid("invalid query", apperr.Field("step", "route %q of production order %d has no part-scope step %d", o.Route.Name, orderID, f.Step))
		}
	}
	const opAt = "EXISTS (SELECT 1 FROM plan_operations po WHERE po.part_id = plan_parts.id AND po.seq = ? AND po.status = ?)"
	switch {
	case f.Step > 0 && f.State == StateScrapped:
		q = q.Where("status = ? AND scrap_seq = ?", PartScrapped, f.Step)
	case f.Step > 0 && f.State != "":
		q = q.Where("status = ? AND "+opAt, PartLive, f.Step, f.State)
	case f.Step > 0:
		q = q.Where("EXISTS (SELECT 1 FROM plan_operations po WHERE po.part_id = plan_parts.id AND po.seq = ?)", f.Step)
	case f.State == StateScrapped:
		q = q.Where("status = ?", PartScrapped)
	case f.State == StateDone:
		q = q.Where("status = ? AND NOT EXISTS (SELECT 1 FROM plan_operations po WHERE po.part_id = plan_parts.id AND po.status <> ?)", PartLive, OpDone)
	case f.State == StatePending:
		q = q.Where("status = ? AND NOT EXISTS (SELECT 1 FROM plan_operations po WHERE po.part_id = plan_parts.id AND po.status <> ?)", PartLive, OpPending)
	case f.State == StateInProgress:
		q = q.Where(`status = ? AND EXISTS (SELECT 1 FROM plan_operations po WHERE po.part_id = plan_parts.id AND po.status <> ?)
AND EXISTS (SELECT 1 FROM plan_operations po WHERE po.part_id = plan_parts.id AND po.status <> ?)`, PartLive, OpDone, OpPending)
	}
	var parts []Part
	if err := q.Find(&parts).Error; err != nil {
		return nil, "", err
	}
	parts, next := page.Next(parts, pr.Limit, func(p Part) int64 { return p.ID })
	out, err := floorParts(ctx, db, o, parts)
	return out, next, err
}

// floorParts describes the parts of order o for the shop floor.
func floorParts(ctx context.Context, db *gorm.DB, o ProdOrder, parts []Part) ([]FloorPart, error) {
	out := make([]FloorPart, len(parts))
	if len(parts) == 0 {
		return out, nil
	}
	ids := make([]int64, len(parts))
	for i, p := range parts {
		ids[i] = p.ID
	}
	var ops []Operation
	if err := db.WithContext(ctx).Where("part_id IN ?", ids).Order("seq, id").Find(&ops).Error; err != nil {
		return nil, err
	}
	byPart := map[int64][]Operation{}
	for _, op := range ops {
		byPart[*op.PartID] = append(byPart[*op.PartID], op)
	}
	var units []Unit
	if err := db.WithContext(ctx).Where("prod_order_id = ?", o.ID).Find(&units).Error; err != nil {
		return nil, err
	}
	unitCodes := map[unitKey]string{}
	for _, u := range units {
		unitCodes[unitKey{u.ItemID, u.Unit}] = u.Code
	}
	var recuts []Part
	if err := db.WithContext(ctx).Select("id, code, recut_of").Where("recut_of IN ?", ids).Find(&recuts).Error; err != nil {
		return nil, err
	}
	recutOf := map[int64]string{}
	for _, r := range recuts {
		recutOf[*r.RecutOf] = r.Code
	}
	items := map[int64]ProdItem{}
	for _, it := range o.Items {
		items[it.ItemID] = it
	}
	for i, p := range parts {
		it := items[p.ItemID]
		fp := FloorPart{Part: p, UnitCode: unitCodes[unitKey{p.ItemID, p.Unit}], OrderID: it.OrderID, SKU: it.SKU, Customer: it.Customer,
			Steps: []PartStep{}}
		if c, ok := recutOf[p.ID]; ok {
			fp.RecutCode = &c
		}
		done, started := 0, 0
		for _, op := range byPart[p.ID] {
			fp.Steps = append(fp.Steps, PartStep{Seq: op.Seq, Name: op.Name, OperationID: op.ID, Status: op.Status,
				StartedAt: op.StartedAt, CompletedAt: op.CompletedAt, CompletedByID: op.CompletedByID, CompletedBy: op.CompletedBy})
			switch op.Status {
			case OpDone:
				done++
			case OpInProgress:
				started++
			}
			if op.Status != OpDone && fp.AtSeq == nil {
				seq := op.Seq
				fp.AtSeq = &seq
			}
		}
		switch {
		case p.Status == PartScrapped:
			fp.State, fp.AtSeq = StateScrapped, nil
		case done == len(fp.Steps):
			fp.State = StateDone
		case done+started == 0:
			fp.State = StatePending
		default:
			fp.State = StateInProgress
		}
		out[i] = fp
	}
	return out, nil
}
