package purchasing

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/stock"
)

// NeededOn is the first day a live production order starts the step that
// uses a material up, and the working days of the work centre it starts
// on, by which a supplier's lead time is counted back.
type NeededOn struct {
	Day      time.Time // midnight UTC
	Weekdays []int     // ISO weekdays; none: Monday to Friday
	Holidays []string
}

// Proposal is what to buy from one supplier (none: the materials no
// supplier sells).
type Proposal struct {
	SupplierID *int64         `json:"supplier_id" extensions:"x-nullable" example:"1"`
	Supplier   string         `json:"supplier" example:"ООО «Плита»"`
	Lines      []ProposalLine `json:"lines"`
	// Total is the sum of the lines' quantities times their prices.
	Total float64 `json:"total" example:"47250"`
}

// ProposalLine is one material to buy.
type ProposalLine struct {
	Code string `json:"code" example:"LDSP16-SONOMA"`
	Name string `json:"name" example:"ЛДСП 16 мм Дуб сонома"`
	Unit string `json:"unit" enums:"sheet,m,pcs" example:"sheet"`
	// Short is what the shortages say to buy (backlog + reorder point −
	// available), less what open purchase orders still bring (OnOrder).
	Short   float64 `json:"short" example:"7"`
	OnOrder float64 `json:"on_order" example:"0"`
	// Qty is Short brought up to the supplier's minimum order and rounded
	// up to whole packs.
	Qty          float64 `json:"qty" example:"10"`
	SupplierCode string  `json:"supplier_code" example:"EG-H1145-16"`
	Price        float64 `json:"price" example:"3150"`
	LeadDays     int     `json:"lead_days" example:"5"`
	MinQty       float64 `json:"min_qty" example:"10"`
	PackQty      float64 `json:"pack_qty" example:"5"`
	// NeededOn is the day the first live production order needing it
	// starts the step that uses it up (cutting for boards, edge banding for
	// bands, assembly for fittings); null when no live order needs it (the
	// backlog or the reorder point does).
	NeededOn *database.Date `json:"needed_on" swaggertype:"string" format:"date" extensions:"x-nullable" example:"2026-12-14"`
	// OrderBy is NeededOn less the lead time in working days (of the work
	// centre of that step): the day to order by; today when no live order
	// needs it.
	OrderBy database.Date `json:"order_by" swaggertype:"string" format:"date" example:"2026-12-07"`
	// ExpectedOn is the day to expect it: NeededOn, or today plus the lead
	// time when that is later (Late) or nothing needs it yet.
	ExpectedOn database.Date `json:"expected_on" swaggertype:"string" format:"date" example:"2026-12-14"`
	// Late: OrderBy is before today, so it arrives after the order needing it starts.
	Late bool `json:"late" example:"false"`
}

// Proposals turns the shortages into what to buy per supplier: each
// material's to_buy, less what open purchase orders (draft, ordered,
// partially received) still bring, is bought from the supplier with the
// shortest lead time for it (then the lowest price, then the oldest),
// brought up to its minimum order and rounded up to whole packs, and due
// by needed (NeededOn) less the lead time. Suppliers in id order, the
// materials no supplier sells last; lines in the catalogue's order.
func (s *Service) Proposals(ctx context.Context, short []stock.ShortageLine, needed map[string]NeededOn, today time.Time) ([]Proposal, error) {
	return proposalsTx(ctx, s.db, short, needed, today)
}

func proposalsTx(ctx context.Context, db *gorm.DB, short []stock.ShortageLine, needed map[string]NeededOn, today time.Time) ([]Proposal, error) {
	onOrder, err := dueOnOpenOrders(ctx, db)
	if err != nil {
		return nil, err
	}
	var terms []Terms
	if err := db.WithContext(ctx).Order("supplier_id").Find(&terms).Error; err != nil {
		return nil, err
	}
	best := map[string]Terms{}
	for _, t := range terms {
		b, ok := best[t.Code]
		if !ok || cmp.Or(cmp.Compare(t.LeadDays, b.LeadDays), cmp.Compare(t.Price, b.Price)) < 0 {
			best[t.Code] = t
		}
	}
	var sups []Supplier
	if err := db.WithContext(ctx).Order("id").Find(&sups).Error; err != nil {
		return nil, err
	}
	names := map[int64]string{}
	for _, sp := range sups {
		names[sp.ID] = sp.Name
	}
	by := map[int64]*Proposal{}
	var none *Proposal
	for _, m := range short {
		buy := clean(m.ToBuy - onOrder[m.Code])
		if buy <= epsilon {
			continue
		}
		t, ok := best[m.Code]
		l := ProposalLine{Code: m.Code, Name: m.Name, Unit: m.Unit, Short: buy, OnOrder: clean(onOrder[m.Code]), Qty: buy}
		if ok {
			l.SupplierCode, l.Price, l.LeadDays, l.MinQty, l.PackQty = t.SupplierCode, t.Price, t.LeadDays, t.MinQty, t.PackQty
			l.Qty = RoundToPacks(buy, t.MinQty, t.PackQty, m.Unit)
		}
		dateLine(&l, needed[m.Code], today)
		var p *Proposal
		switch {
		case !ok && none == nil:
			none = &Proposal{Supplier: "", Lines: []ProposalLine{}}
			p = none
		case !ok:
			p = none
		default:
			if by[t.SupplierID] == nil {
				id := t.SupplierID
				by[id] = &Proposal{SupplierID: &id, Supplier: names[id], Lines: []ProposalLine{}}
			}
			p = by[t.SupplierID]
		}
		p.Lines = append(p.Lines, l)
		p.Total = clean(p.Total + l.Qty*l.Price)
	}
	out := []Proposal{}
	ids := make([]int64, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		out = append(out, *by[id])
	}
	if none != nil {
		out = append(out, *none)
	}
	return out, nil
}

// RoundToPacks brings qty up to min and then up to whole packs of pack (0
// or less: no packs; on the unit's step: whole sheets and pieces, metres to
// the centimetre).
func RoundToPacks(qty, minQty, pack float64, unit string) float64 {
	q := math.Max(qty, minQty)
	if pack > epsilon {
		q = math.Ceil(q/pack-epsilon) * pack
	}
	if unit == catalog.UnitMetre {
		return clean(math.Ceil(q*100-epsilon) / 100)
	}
	return clean(math.Ceil(q - epsilon))
}

// dateLine sets the line's dates: needed on the day, ordered the lead time
// in working days before it, expected on it, or today plus the lead time
// when that is later or nothing needs it yet.
func dateLine(l *ProposalLine, n NeededOn, today time.Time) {
	soonest := AddWorkingDays(today, l.LeadDays, n.Weekdays, n.Holidays)
	if n.Day.IsZero() {
		l.OrderBy, l.ExpectedOn = database.DateOf(today), database.DateOf(soonest)
		return
	}
	d := database.DateOf(n.Day)
	l.NeededOn = &d
	orderBy := AddWorkingDays(n.Day, -l.LeadDays, n.Weekdays, n.Holidays)
	l.OrderBy, l.ExpectedOn = database.DateOf(orderBy), d
	if orderBy.Before(today) {
		l.Late, l.ExpectedOn = true, database.DateOf(soonest)
	}
}

// AddWorkingDays moves from day by n working days (back when n < 0): days
// whose ISO weekday is one of weekdays (none: Monday to Friday) and which
// are not holidays. 0 is day itself.
func AddWorkingDays(day time.Time, n int, weekdays []int, holidays []string) time.Time {
	if len(weekdays) == 0 {
		weekdays = []int{1, 2, 3, 4, 5}
	}
	step := 1
	if n < 0 {
		step, n = -1, -n
	}
	works := func(d time.Time) bool {
		wd := int(d.Weekday())
		if wd == 0 {
			wd = 7
		}
		return slices.Contains(weekdays, wd) && !slices.Contains(holidays, d.Format(time.DateOnly))
	}
	for guard := 0; n > 0 && guard < 3*366; guard++ {
		day = day.AddDate(0, 0, step)
		if works(day) {
			n--
		}
	}
	return day
}

// dueOnOpenOrders is what open purchase orders (draft, ordered, partially
// received) still bring, per material.
func dueOnOpenOrders(ctx context.Context, db *gorm.DB) (map[string]float64, error) {
	var rows []struct {
		Code string
		Due  float64
	}
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT l.code, sum(CASE WHEN l.qty > l.received THEN l.qty - l.received ELSE 0 END) AS due
		FROM purchasing_order_lines l JOIN purchasing_orders o ON o.id = l.order_id
		WHERE o.status IN ? GROUP BY l.code`, []string{StatusDraft, StatusOrdered, StatusPartiallyReceived}), &rows)
	out := map[string]float64{}
	for _, r := range rows {
		out[r.Code] = r.Due
	}
	return out, err
}

// DraftProposals drafts a purchase order per supplier of the proposals (of
// the one supplier when supplierID is set), each line expected on its
// ExpectedOn, and writes purchase_order.created for each, in one
// transaction. The materials no supplier sells are left out. EINVALID
// naming supplier_id when the proposals have nothing for that supplier.
func (s *Service) DraftProposals(ctx context.Context, ps []Proposal, supplierID int64) ([]Order, error) {
	out := []Order{}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, p := range ps {
			if p.SupplierID == nil || (supplierID != 0 && *p.SupplierID != supplierID) {
				continue
			}
			in := OrderInput{SupplierID: *p.SupplierID, Note: "по предложению закупки"}
			for _, l := range p.Lines {
				price := l.Price
				in.Lines = append(in.Lines, LineInput{Code: l.Code, Qty: l.Qty, Price: &price, ExpectedOn: l.ExpectedOn.String()})
			}
			o, err := createOrderTx(ctx, tx, in)
			if err != nil {
				return err
			}
			out = append(out, o)
		}
		if supplierID != 0 && len(out) == 0 {
			return errNothingFor(supplierID)
		}
		return nil
	})
	return out, err
}

func errNothingFor(supplierID int64) error {
	return apperr.Invalid("nothing to draft", apperr.Field("supplier_id", "the proposals have nothing to buy from supplier %d", supplierID))
}
