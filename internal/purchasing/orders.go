package purchasing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// Purchase order states:
//
//	draft ──order──▶ ordered ──receipt──▶ partially_received ──receipt──▶ received
//	  │                 │                        │
//	  └──────cancel─────┴─────────cancel─────────┘──▶ cancelled (with a reason)
//
// A draft's lines may change; an order sent may be received against (in
// part, and beyond what was ordered with a reason) until every line has
// come; received and cancelled are final.
const (
	StatusDraft             = "draft"
	StatusOrdered           = "ordered"
	StatusPartiallyReceived = "partially_received"
	StatusReceived          = "received"
	StatusCancelled         = "cancelled"
)

// Statuses are the purchase order states, in their order.
var Statuses = []string{StatusDraft, StatusOrdered, StatusPartiallyReceived, StatusReceived, StatusCancelled}

// MaxOrderLines is the most lines a purchase order has.
const MaxOrderLines = 200

// Order is a purchase order: materials with quantities and expected dates,
// to one supplier.
type Order struct {
	ID           int64  `json:"id" gorm:"primaryKey" example:"1"`
	SupplierID   int64  `json:"supplier_id" example:"1"`
	Status       string `json:"status" enums:"draft,ordered,partially_received,received,cancelled" example:"ordered"`
	Note         string `json:"note" example:"к заказу 1542"`
	CancelReason string `json:"cancel_reason" example:""`
	// CreatedAt and OrderedAt are RFC 3339 UTC; OrderedAt is null until the order is sent.
	CreatedAt time.Time  `json:"created_at" gorm:"->" format:"date-time"`
	OrderedAt *time.Time `json:"ordered_at" gorm:"->" format:"date-time" extensions:"x-nullable"`
	// Supplier is the supplier's name.
	Supplier string      `json:"supplier" gorm:"-" example:"ООО «Плита»"`
	Lines    []OrderLine `json:"lines" gorm:"-"`
	// Total is the sum of the lines' quantities times their prices.
	Total float64 `json:"total" gorm:"-" example:"31500"`
}

// TableName is purchasing's order table.
func (Order) TableName() string { return "purchasing_orders" }

// OrderLine is a material ordered: its quantity, price, when it is expected
// and what has been received of it.
type OrderLine struct {
	ID      int64  `json:"id" gorm:"primaryKey" example:"1"`
	OrderID int64  `json:"-"`
	N       int    `json:"n" example:"1"`
	Code    string `json:"code" example:"LDSP16-SONOMA"`
	// Name and Unit are the material's, from the catalogue.
	Name string  `json:"name" gorm:"-" example:"ЛДСП 16 мм Дуб сонома"`
	Unit string  `json:"unit" gorm:"-" enums:"sheet,m,pcs" example:"sheet"`
	Qty  float64 `json:"qty" example:"10"`
	// Received is what deliveries have brought of it so far (it may exceed qty, with a reason).
	Received   float64       `json:"received" example:"4"`
	Price      float64       `json:"price" example:"3150"`
	ExpectedOn database.Date `json:"expected_on" swaggertype:"string" format:"date" example:"2026-12-10"`
	// SupplierCode is the supplier's article for the material, from its terms.
	SupplierCode string `json:"supplier_code" gorm:"-" example:"EG-H1145-16"`
}

// TableName is purchasing's order-line table.
func (OrderLine) TableName() string { return "purchasing_order_lines" }

// Due is what is still expected of the line.
func (l OrderLine) Due() float64 { return max(0, clean(l.Qty-l.Received)) }

// LineInput is a line of a purchase order to write.
type LineInput struct {
	Code       string
	Qty        float64
	Price      *float64 // nil: the supplier's price for the material (0 without terms)
	ExpectedOn string   // "" : the order's expected_on
}

// OrderInput is a purchase order's content for creating or replacing a draft.
type OrderInput struct {
	SupplierID int64
	Note       string
	ExpectedOn string // the lines' expected date unless they give their own
	Lines      []LineInput
}

// checkOrder validates in and returns its lines as they are kept:
// supplier_id a supplier, lines[i].code a material named once, lines[i].qty
// positive and on the material's step, each line an expected date (its own
// or expected_on), prices within bounds. EINVALID naming the fields;
// nothing is written.
func checkOrder(ctx context.Context, tx *gorm.DB, in OrderInput) (Supplier, []OrderLine, error) {
	var fields []apperr.FieldError
	sup, err := supplierTx(ctx, tx, in.SupplierID)
	if apperr.Code(err) == apperr.ENOTFOUND {
		fields = append(fields, apperr.Field("supplier_id", "no supplier has the id %d", in.SupplierID))
	} else if err != nil {
		return Supplier{}, nil, err
	}
	fields = append(fields, input.Note("note", in.Note, input.MaxNote)...)
	orderDate, f := input.Date("expected_on", in.ExpectedOn)
	fields = append(fields, f...)
	switch {
	case len(in.Lines) == 0:
		fields = append(fields, apperr.Field("lines", "must list at least one material"))
	case len(in.Lines) > MaxOrderLines:
		fields = append(fields, apperr.Field("lines", "must list at most %d materials", MaxOrderLines))
	}
	codes := make([]string, len(in.Lines))
	for i, l := range in.Lines {
		codes[i] = input.NormalCode(l.Code)
	}
	known, err := catalog.MaterialsByCode(ctx, tx, codes)
	if err != nil {
		return Supplier{}, nil, err
	}
	terms := map[string]Terms{}
	for _, t := range sup.Materials {
		terms[t.Code] = t
	}
	out := make([]OrderLine, 0, len(in.Lines))
	for i, l := range in.Lines {
		at := func(f string) string { return fmt.Sprintf("lines[%d].%s", i, f) }
		m, ok := known[input.CodeKey(codes[i])]
		switch {
		case codes[i] == "":
			fields = append(fields, apperr.Field(at("code"), "is required"))
		case !ok:
			fields = append(fields, apperr.Field(at("code"), "no material has the code %q", l.Code))
		case slices.ContainsFunc(out, func(o OrderLine) bool { return o.Code == m.Code }):
			fields = append(fields, apperr.Field(at("code"), "repeats %q: give its quantity once", l.Code))
		}
		qty, onStep := catalog.OnStep(m.Unit, l.Qty)
		switch {
		case bad(l.Qty) || l.Qty <= 0:
			fields = append(fields, apperr.Field(at("qty"), "must be more than 0"))
		case l.Qty > MaxQty:
			fields = append(fields, apperr.Field(at("qty"), "must be at most %d", MaxQty))
		case ok && !onStep:
			fields = append(fields, apperr.Field(at("qty"), "%s is counted in %s", m.Code, catalog.StepText(m.Unit)))
		}
		price := terms[m.Code].Price
		if l.Price != nil {
			price = *l.Price
			if bad(price) || price < 0 || price > MaxPrice {
				fields = append(fields, apperr.Field(at("price"), "must be from 0 to %d", MaxPrice))
			}
		}
		day, f := input.Date(at("expected_on"), l.ExpectedOn)
		fields = append(fields, f...)
		if l.ExpectedOn == "" {
			day = orderDate
			if orderDate.IsZero() && in.ExpectedOn == "" {
				fields = append(fields, apperr.Field(at("expected_on"), "is required when the order gives no expected_on"))
			}
		}
		if ok {
			out = append(out, OrderLine{N: i + 1, Code: m.Code, Qty: qty, Price: price, ExpectedOn: day})
		}
	}
	if len(fields) > 0 {
		return Supplier{}, nil, apperr.Invalid("the purchase order is not valid", fields...)
	}
	return sup, out, nil
}

// CreateOrder drafts a purchase order and writes purchase_order.created;
// EINVALID as checkOrder says, nothing written then.
func (s *Service) CreateOrder(ctx context.Context, in OrderInput) (Order, error) {
	var out Order
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		out, err = createOrderTx(ctx, tx, in)
		return err
	})
	return out, err
}

func createOrderTx(ctx context.Context, tx *gorm.DB, in OrderInput) (Order, error) {
	_, lines, err := checkOrder(ctx, tx, in)
	if err != nil {
		return Order{}, err
	}
	o := Order{SupplierID: in.SupplierID, Status: StatusDraft, Note: in.Note}
	if err := tx.WithContext(ctx).Omit("ID").Create(&o).Error; err != nil {
		return Order{}, err
	}
	if err := putLines(ctx, tx, o.ID, lines); err != nil {
		return Order{}, err
	}
	out, err := orderTx(ctx, tx, o.ID, false)
	if err != nil {
		return Order{}, err
	}
	return out, events.Add(ctx, tx, contracts.PurchaseOrderCreated.New(out.ID, orderPayload(out)))
}

func putLines(ctx context.Context, tx *gorm.DB, order int64, lines []OrderLine) error {
	for i := range lines {
		lines[i].OrderID = order
	}
	return tx.WithContext(ctx).Omit("ID").Create(&lines).Error
}

// UpdateOrder replaces a draft's supplier, note and lines and writes
// purchase_order.changed; ENOTFOUND for no such order, ECONFLICT naming
// status once it is no draft, EINVALID as CreateOrder.
func (s *Service) UpdateOrder(ctx context.Context, id int64, in OrderInput) (Order, error) {
	var out Order
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		o, err := orderTx(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if o.Status != StatusDraft {
			return stateConflict(o, "only a draft's lines change")
		}
		_, lines, err := checkOrder(ctx, tx, in)
		if err != nil {
			return err
		}
		if err := tx.Model(&Order{}).Where("id = ?", id).Updates(map[string]any{"supplier_id": in.SupplierID, "note": in.Note}).Error; err != nil {
			return err
		}
		if err := tx.Where("order_id = ?", id).Delete(&OrderLine{}).Error; err != nil {
			return err
		}
		if err := putLines(ctx, tx, id, lines); err != nil {
			return err
		}
		if out, err = orderTx(ctx, tx, id, false); err != nil {
			return err
		}
		return events.Add(ctx, tx, contracts.PurchaseOrderChanged.New(id, orderPayload(out)))
	})
	return out, err
}

// stateConflict is the ECONFLICT of an order in a state that does not allow
// the change, naming status.
func stateConflict(o Order, why string) error {
	return &apperr.Error{Code: apperr.ECONFLICT, Message: fmt.Sprintf("purchase order %d is %s: %s", o.ID, strings.ReplaceAll(o.Status, "_", " "), why),
		Fields: []apperr.FieldError{apperr.Field("status", "is %s", o.Status)}}
}

// PlaceOrder sends a draft to its supplier: it becomes ordered, its lines
// expected on their dates, and writes purchase_order.ordered. ECONFLICT
// naming status when it is no draft.
func (s *Service) PlaceOrder(ctx context.Context, id int64) (Order, error) {
	return s.transition(ctx, id, func(tx *gorm.DB, o Order) (Order, events.New, error) {
		if o.Status != StatusDraft {
			return o, events.New{}, stateConflict(o, "only a draft is ordered")
		}
		err := tx.Exec("UPDATE purchasing_orders SET status = ?, ordered_at = "+database.Now(tx)+" WHERE id = ?", StatusOrdered, id).Error
		o.Status = StatusOrdered
		return o, contracts.PurchaseOrderOrdered.New(id, orderPayload(o)), err
	})
}

// CancelOrder cancels an order not received in full, for a reason, and
// writes purchase_order.cancelled: what is still due of it is expected no
// more. EINVALID naming reason when it is missing, ECONFLICT naming status
// for an order received or cancelled already.
func (s *Service) CancelOrder(ctx context.Context, id int64, reason string) (Order, error) {
	reason = strings.TrimSpace(reason)
	if f := input.RequiredLine("reason", reason, input.MaxName); len(f) > 0 {
		return Order{}, apperr.Invalid("the cancellation is not valid", f...)
	}
	return s.transition(ctx, id, func(tx *gorm.DB, o Order) (Order, events.New, error) {
		if o.Status == StatusReceived || o.Status == StatusCancelled {
			return o, events.New{}, stateConflict(o, "it can no longer be cancelled")
		}
		err := tx.Model(&Order{}).Where("id = ?", id).Updates(map[string]any{"status": StatusCancelled, "cancel_reason": reason}).Error
		o.Status, o.CancelReason = StatusCancelled, reason
		p := orderPayload(o)
		p.Reason = reason
		return o, contracts.PurchaseOrderCancelled.New(id, p), err
	})
}

func (s *Service) transition(ctx context.Context, id int64, fn func(tx *gorm.DB, o Order) (Order, events.New, error)) (Order, error) {
	var out Order
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		o, err := orderTx(ctx, tx, id, true)
		if err != nil {
			return err
		}
		_, ev, err := fn(tx, o)
		if err != nil {
			return err
		}
		if err := events.Add(ctx, tx, ev); err != nil {
			return err
		}
		out, err = orderTx(ctx, tx, id, false)
		return err
	})
	return out, err
}

// Order returns the purchase order with its lines; ENOTFOUND when there is none.
func (s *Service) Order(ctx context.Context, id int64) (Order, error) {
	return orderTx(ctx, s.db, id, false)
}

// orderTx reads the order with its lines, locked for the transaction when
// lock is set (PostgreSQL; SQLite has one writer at a time): every change
// of an order or its lines takes this lock first.
func orderTx(ctx context.Context, db *gorm.DB, id int64, lock bool) (Order, error) {
	var o Order
	q := db.WithContext(ctx)
	if lock {
		q = database.ForUpdate(q)
	}
	if err := q.Where("id = ?", id).First(&o).Error; errors.Is(err, gorm.ErrRecordNotFound) {
		return Order{}, apperr.NotFound("purchase order %d not found", id)
	} else if err != nil {
		return Order{}, err
	}
	os := []Order{o}
	if err := fillOrders(ctx, db, os); err != nil {
		return Order{}, err
	}
	return os[0], nil
}

// fillOrders reads the orders' lines, supplier names and the materials'
// names, units and the suppliers' codes for them.
func fillOrders(ctx context.Context, db *gorm.DB, os []Order) error {
	if len(os) == 0 {
		return nil
	}
	ids, sups := make([]int64, len(os)), make([]int64, len(os))
	for i, o := range os {
		ids[i], sups[i] = o.ID, o.SupplierID
	}
	var lines []OrderLine
	if err := db.WithContext(ctx).Where("order_id IN ?", ids).Order("order_id, n").Find(&lines).Error; err != nil {
		return err
	}
	var suppliers []Supplier
	if err := db.WithContext(ctx).Where("id IN ?", sups).Find(&suppliers).Error; err != nil {
		return err
	}
	var terms []Terms
	if err := db.WithContext(ctx).Where("supplier_id IN ?", sups).Find(&terms).Error; err != nil {
		return err
	}
	codes := make([]string, len(lines))
	for i, l := range lines {
		codes[i] = l.Code
	}
	ms, err := catalog.MaterialsByCode(ctx, db, codes)
	if err != nil {
		return err
	}
	name := map[int64]string{}
	for _, sp := range suppliers {
		name[sp.ID] = sp.Name
	}
	article := map[string]string{}
	for _, t := range terms {
		article[fmt.Sprint(t.SupplierID, "/", t.Code)] = t.SupplierCode
	}
	by := map[int64][]OrderLine{}
	for _, l := range lines {
		by[l.OrderID] = append(by[l.OrderID], l)
	}
	for i := range os {
		o := &os[i]
		o.Supplier = name[o.SupplierID]
		o.Lines, o.Total = []OrderLine{}, 0
		for _, l := range by[o.ID] {
			m := ms[input.CodeKey(l.Code)]
			l.Name, l.Unit, l.SupplierCode = m.Name, m.Unit, article[fmt.Sprint(o.SupplierID, "/", l.Code)]
			o.Lines = append(o.Lines, l)
			o.Total += l.Qty * l.Price
		}
		o.Total = clean(o.Total)
	}
	return nil
}

// OrderFilter selects purchase orders.
type OrderFilter struct {
	Status     string
	SupplierID int64
}

// Orders returns a page of purchase orders in id order, newest last;
// EINVALID naming status when it is none of the states.
func (s *Service) Orders(ctx context.Context, f OrderFilter, pr page.Request) ([]Order, string, error) {
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		return nil, "", apperr.Invalid("invalid query", apperr.Field("status", "must be %s", strings.Join(Statuses, ", ")))
	}
	q := s.db.WithContext(ctx).Where("id > ?", pr.After)
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.SupplierID != 0 {
		q = q.Where("supplier_id = ?", f.SupplierID)
	}
	var os []Order
	if err := q.Order("id").Limit(pr.Limit + 1).Find(&os).Error; err != nil {
		return nil, "", err
	}
	out, next := page.Next(os, pr.Limit, func(o Order) int64 { return o.ID })
	return out, next, fillOrders(ctx, s.db, out)
}

func orderPayload(o Order) contracts.PurchaseOrderPayload {
	p := contracts.PurchaseOrderPayload{PurchaseOrderID: o.ID, SupplierID: o.SupplierID, Status: o.Status, Lines: []contracts.PurchaseOrderLine{}}
	for _, l := range o.Lines {
		p.Lines = append(p.Lines, contracts.PurchaseOrderLine{LineID: l.ID, Code: l.Code, Qty: l.Qty, Received: l.Received, ExpectedOn: l.ExpectedOn.String()})
	}
	return p
}
