package sales

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// How an order changed: order.changed's via.
const (
	ViaPatch = "patch" // PATCH /api/v1/orders/{id}
	ViaShop  = "shop"  // the shop's newer re-delivery
	ViaCRM   = "crm"   // a CRM row that differs
)

// Edit is a change of an order. A nil field stays as it is; a zero date
// clears the date.
type Edit struct {
	CustomerName  *string
	CustomerPhone *string
	CustomerEmail *string
	DueDate       *database.Date
	Note          *string
	Items         []ItemEdit

	// The shop's fields, changed by its re-deliveries only.
	DeliveryAddress *string
	DeliveryDate    *database.Date
	Currency        *string
	Total           *Amount

	optionsResolved bool // resolveOptions has run over Items
}

// ItemEdit changes, removes or adds one item: with ID, the order's item ID
// takes the fields given (nil: unchanged) or, with Remove, leaves the order;
// without, a new item of SKU is added (Qty required).
type ItemEdit struct {
	ID        int64
	Remove    bool
	SKU       string
	Qty       *int
	Note      *string
	UnitPrice *Amount
	LineTotal *Amount
	// Options, when not nil, are the item's choices of board per decor
	// slot, by decor or board code, in place of those it has ({}: each
	// slot's default).
	Options map[string]string

	options catalog.Options // Options resolved to board codes (resolveOptions)
}

// Validate trims and checks an edit's own fields (not its item ids or SKUs,
// which need the order and the catalog), naming the fields at fault as a
// PATCH body names them ("items[0].qty").
func (e *Edit) Validate() error {
	var fields []apperr.FieldError
	trim := func(p *string) {
		if p != nil {
			*p = strings.TrimSpace(*p)
		}
	}
	trim(e.CustomerName)
	trim(e.CustomerPhone)
	trim(e.CustomerEmail)
	if e.CustomerName != nil {
		fields = append(fields, input.RequiredLine("customer.name", *e.CustomerName, input.MaxName)...)
	}
	if e.CustomerPhone != nil {
		fields = append(fields, input.Line("customer.phone", *e.CustomerPhone, input.MaxPhone)...)
	}
	if e.CustomerEmail != nil {
		if f := input.Line("customer.email", *e.CustomerEmail, input.MaxEmail); len(f) > 0 {
			fields = append(fields, f...)
		} else if *e.CustomerEmail != "" && !strings.Contains(*e.CustomerEmail, "@") {
			fields = append(fields, apperr.Field("customer.email", "is not an email address"))
		}
	}
	if e.Note != nil {
		fields = append(fields, input.Note("note", *e.Note, input.MaxNote)...)
	}
	if len(e.Items) > MaxItems {
		fields = append(fields, apperr.Field("items", "must list at most %d items", MaxItems))
	}
	for i := range e.Items {
		it := &e.Items[i]
		at := func(name string) string { return fmt.Sprintf("items[%d].%s", i, name) }
		it.SKU = strings.TrimSpace(it.SKU)
		switch {
		case it.ID < 0:
			fields = append(fields, apperr.Field(at("id"), "must be a positive item id"))
		case it.ID > 0 && it.SKU != "":
			fields = append(fields, apperr.Field(at("sku"), "an item's SKU does not change: remove the item and add another"))
		case it.ID > 0 && slices.ContainsFunc(e.Items[:i], func(o ItemEdit) bool { return o.ID == it.ID }):
			fields = append(fields, apperr.Field(at("id"), "repeats item %d", it.ID))
		case it.ID == 0 && it.Remove:
			fields = append(fields, apperr.Field(at("id"), "is required to remove an item"))
		case it.ID == 0 && it.SKU == "":
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d]", i), "needs id (to change or remove an item) or sku (to add one)"))
		case it.ID == 0:
			fields = append(fields, input.RequiredLine(at("sku"), it.SKU, input.MaxSKU)...)
			if it.Qty == nil {
				fields = append(fields, apperr.Field(at("qty"), "is required for a new item"))
			}
		}
		if it.Remove && (it.Qty != nil || it.Note != nil || it.Options != nil) {
			fields = append(fields, apperr.Field(at("remove"), "removes the item: send no qty, note or options with it"))
		}
		if it.Qty != nil && (*it.Qty < 1 || *it.Qty > 10000) {
			fields = append(fields, apperr.Field(at("qty"), "must be a whole number from 1 to 10000"))
		}
		if it.Note != nil {
			fields = append(fields, input.Note(at("note"), *it.Note, input.MaxNote)...)
		}
		if it.UnitPrice != nil {
			fields = append(fields, it.UnitPrice.validate(at("unit_price"))...)
		}
		if it.LineTotal != nil {
			fields = append(fields, it.LineTotal.validate(at("line_total"))...)
		}
	}
	if len(fields) > 0 {
		return apperr.Invalid("the change is not valid", fields...)
	}
	return nil
}

// ChangeOrder applies a manager's change to an order and writes
// order.changed with what changed, before and after (and
// order.status_changed when the order's state follows, e.g. ready once
// its last item not made is removed). A change that alters nothing writes
// nothing and returns changed false.
//
// It returns ENOTFOUND for an unknown order; EINVALID naming the fields at
// fault (an item id not of the order, an unknown SKU, no item left);
// ECONFLICT when the order is cancelled or shipped, when an item it touches
// is in production (naming those items), or when items are added to an
// order that is ready or partially shipped.
func (s *Service) ChangeOrder(ctx context.Context, id int64, e Edit) (o Order, changed bool, err error) {
	if err := e.Validate(); err != nil {
		return Order{}, false, err
	}
	err = database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		if err := lockOrder(ctx, tx, id); err != nil {
			return err
		}
		if o, err = order(ctx, tx, id); err != nil {
			return err
		}
		o, changed, err = applyEdit(ctx, tx, o, e, ViaPatch)
		return err
	})
	return o, changed, err
}

// lockOrdersOf takes, before items change, the locks of their orders in the
// package's lock order: the orders by id, each its row and then its items.
func lockOrdersOf(ctx context.Context, tx *gorm.DB, items []int64) error {
	if !database.LocksRows(tx) || len(items) == 0 {
		return nil
	}
	orderIDs, err := ordersOfItems(ctx, tx, items)
	if err != nil {
		return err
	}
	for _, id := range orderIDs {
		if err := lockOrder(ctx, tx, id); err != nil {
			return err
		}
	}
	return nil
}

// editPlan is what an edit changes of an order: the payload of its
// order.changed and the writes that make it.
type editPlan struct {
	payload  contracts.OrderChangedPayload
	customer *Customer
	columns  []string // of sales_orders, "name = ?"
	args     []any
	updates  []Item    // the items' new values
	touched  []int64   // of updates, those whose quantity, note or options change (not only prices): production must not have them
	removes  []Item    // as they were
	adds     []NewItem // aligned with Edit.Items; SKU "" where not an addition
	added    int
}

func (p *editPlan) isTouched(id int64) bool { return slices.Contains(p.touched, id) }

func (p *editPlan) empty() bool {
	return len(p.payload.Fields) == 0 && len(p.payload.Items) == 0 && p.added == 0
}

// diffEdit compares the edit with the order: only what differs is in the
// plan. It returns EINVALID naming an item id that is not the order's.
func diffEdit(o Order, e Edit) (editPlan, error) {
	p := editPlan{payload: contracts.OrderChangedPayload{OrderID: o.ID, SyncID: o.SyncID, CRMOrderID: contracts.CRMOrderIDOf(o.CRMOrderID),
		Fields: []contracts.FieldChange{}, Items: []contracts.ItemChange{}}}
	field := func(name, before string, after *string, column string, value any) {
		if after != nil && *after != before {
			p.payload.Fields = append(p.payload.Fields, contracts.FieldChange{Field: name, Before: before, After: *after})
			if column != "" {
				p.columns = append(p.columns, column+" = ?")
				p.args = append(p.args, value)
			}
		}
	}
	c := o.Customer
	field("customer.name", o.Customer.Name, e.CustomerName, "", nil)
	field("customer.phone", o.Customer.Phone, e.CustomerPhone, "", nil)
	field("customer.email", o.Customer.Email, e.CustomerEmail, "", nil)
	if len(p.payload.Fields) > 0 {
		for _, f := range []struct {
			to   *string
			from *string
		}{{&c.Name, e.CustomerName}, {&c.Phone, e.CustomerPhone}, {&c.Email, e.CustomerEmail}} {
			if f.from != nil {
				*f.to = *f.from
			}
		}
		p.customer = &c
	}
	dateField := func(name string, before database.Date, after *database.Date, column string) {
		if after != nil {
			s := after.String()
			field(name, before.String(), &s, column, *after)
		}
	}
	dateField("due_date", o.DueDate, e.DueDate, "due_date")
	field("note", o.Note, e.Note, "note", ptrValue(e.Note))
	field("delivery_address", o.DeliveryAddress, e.DeliveryAddress, "delivery_address", ptrValue(e.DeliveryAddress))
	dateField("delivery_date", o.DeliveryDate, e.DeliveryDate, "delivery_date")
	field("currency", o.Currency, e.Currency, "currency", ptrValue(e.Currency))
	if e.Total != nil && !sameAmount(*e.Total, o.Total) {
		s := string(*e.Total)
		field("total", string(o.Total), &s, "total", s)
	}
	p.payload.DueDate = o.DueDate.String()
	if e.DueDate != nil {
		p.payload.DueDate = e.DueDate.String()
	}

	var fields []apperr.FieldError
	p.adds = make([]NewItem, len(e.Items))
	for i, ie := range e.Items {
		if ie.ID == 0 {
			p.adds[i] = NewItem{SKU: ie.SKU, Qty: ptrValue(ie.Qty), Note: ptrValue(ie.Note), UnitPrice: ptrValue(ie.UnitPrice), LineTotal: ptrValue(ie.LineTotal),
				Options: ie.options}
			p.added++
			continue
		}
		j := slices.IndexFunc(o.Items, func(it Item) bool { return it.ID == ie.ID })
		if j < 0 {
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d].id", i), "order %d has no item %d", o.ID, ie.ID))
			continue
		}
		it := o.Items[j]
		if ie.Remove {
			p.removes = append(p.removes, it)
			p.payload.Items = append(p.payload.Items, contracts.ItemChange{ItemID: it.ID, SKU: it.SKU, Change: "removed",
				Qty: &contracts.QtyChange{Before: it.Qty, After: 0}})
			continue
		}
		ch := contracts.ItemChange{ItemID: it.ID, SKU: it.SKU, Change: "changed"}
		next := it
		if ie.Qty != nil && *ie.Qty != it.Qty {
			ch.Qty = &contracts.QtyChange{Before: it.Qty, After: *ie.Qty}
			next.Qty = *ie.Qty
		}
		if ie.Note != nil && *ie.Note != it.Note {
			ch.Fields = append(ch.Fields, contracts.FieldChange{Field: "note", Before: it.Note, After: *ie.Note})
			next.Note = *ie.Note
		}
		if ie.UnitPrice != nil && !sameAmount(*ie.UnitPrice, it.UnitPrice) {
			ch.Fields = append(ch.Fields, contracts.FieldChange{Field: "unit_price", Before: string(it.UnitPrice), After: string(*ie.UnitPrice)})
			next.UnitPrice = *ie.UnitPrice
		}
		if ie.LineTotal != nil && !sameAmount(*ie.LineTotal, it.LineTotal) {
			ch.Fields = append(ch.Fields, contracts.FieldChange{Field: "line_total", Before: string(it.LineTotal), After: string(*ie.LineTotal)})
			next.LineTotal = *ie.LineTotal
		}
		if ie.Options != nil && !sameOptions(ie.options, it.Options) {
			ch.Fields = append(ch.Fields, contracts.FieldChange{Field: "options", Before: optionsText(it.Options), After: optionsText(ie.options)})
			next.Options = ie.options
		}
		if ch.Qty != nil || len(ch.Fields) > 0 {
			p.payload.Items = append(p.payload.Items, ch)
			p.updates = append(p.updates, next)
			if next.Qty != it.Qty || next.Note != it.Note || !sameOptions(next.Options, it.Options) {
				p.touched = append(p.touched, it.ID)
			}
		}
	}
	if len(fields) > 0 {
		return p, apperr.Invalid("the change names items the order does not have", fields...)
	}
	return p, nil
}

// resolveOptions resolves, once, the options of e's items that send them
// (see itemOptions) to board codes, by the product of the order's item or
// of the SKU added: EINVALID naming items[i].options.<slot> for a choice
// the product does not have. Items of ids not of the order, or of unknown
// SKUs, are left to diffEdit and productsOf.
func resolveOptions(ctx context.Context, tx *gorm.DB, o Order, e *Edit) error {
	if e.optionsResolved {
		return nil
	}
	lines := make([]NewItem, len(e.Items))
	some := false
	for i, ie := range e.Items {
		if ie.Options == nil || ie.Remove {
			continue
		}
		some = true
		sku := ie.SKU
		if ie.ID != 0 {
			sku = itemSKU(o, ie.ID)
		}
		lines[i] = NewItem{SKU: sku, Options: ie.Options}
	}
	if some {
		out, err := itemOptions(ctx, tx, lines, "items")
		if err != nil {
			return err
		}
		for i := range e.Items {
			if e.Items[i].Options != nil {
				e.Items[i].options = out[i]
				if e.Items[i].options == nil {
					e.Items[i].options = catalog.Options{}
				}
			}
		}
	}
	e.optionsResolved = true
	return nil
}

// sameOptions tells whether two items' choices, by board code, are the same.
func sameOptions(a, b catalog.Options) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !strings.EqualFold(v, w) {
			return false
		}
	}
	return true
}

// optionsText is an item's choices as order.changed gives them: a JSON
// object of board codes by slot ({"корпус":"LDSP16-SONOMA"}), "" for none.
func optionsText(o catalog.Options) string {
	if len(o) == 0 {
		return ""
	}
	b, _ := json.Marshal(map[string]string(o))
	return string(b)
}

func ptrValue[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// checkEdit refuses a plan the order cannot take: EINVALID when no item or
// too many would be left; ECONFLICT when the order is cancelled or shipped,
// an item the plan changes or removes is in production (named), or items
// are added to an order that production has finished.
func checkEdit(o Order, p editPlan) error {
	left := len(o.Items) - len(p.removes) + p.added
	switch {
	case left == 0:
		return apperr.Invalid("the change is not valid", apperr.Field("items", "would leave order %d without items; cancel the order instead", o.ID))
	case left > MaxItems:
		return apperr.Invalid("the change is not valid", apperr.Field("items", "would leave order %d with %d items; at most %d", o.ID, left, MaxItems))
	}
	switch o.Status {
	case StatusCancelled, StatusShipped:
		return apperr.Conflict("order %d is %s; it cannot change any more", o.ID, o.Status)
	}
	var busy []string
	for _, it := range append(slices.Clone(p.updates), p.removes...) {
		// p.updates hold the new values, in the state the item is in. A
		// change of its prices alone does not touch production.
		// An item back in the backlog with units made (its production
		// order closed short) is production's too: what was made stays.
		if (it.Status != ItemNew || it.MadeQty > 0) && (p.isTouched(it.ID) || slices.ContainsFunc(p.removes, func(r Item) bool { return r.ID == it.ID })) {
			s := fmt.Sprintf("%d (%s, %s", it.ID, it.SKU, it.Status)
			if it.MadeQty > 0 && it.Status == ItemNew {
				s += fmt.Sprintf(", %d made", it.MadeQty)
			}
			if it.ProdOrderID != nil {
				s += fmt.Sprintf(", production order %d", *it.ProdOrderID)
			}
			busy = append(busy, s+")")
		}
	}
	if len(busy) > 0 {
		e := apperr.Conflict("order %d: production has taken up its items %s; only items not in production can change or be removed",
			o.ID, strings.Join(busy, ", "))
		e.Err = errInProduction
		return e
	}
	if p.added > 0 && o.Status != StatusReceived && o.Status != StatusInProduction {
		return apperr.Conflict("order %d is %s; items can be added while it is received or in production", o.ID, o.Status)
	}
	return nil
}

// applyEdit changes the order o (read under lockOrder in tx) as e says,
// and writes order.changed (via says how the change came) and, when the
// order's state follows, order.status_changed. When nothing differs it
// writes nothing and returns changed false.
func applyEdit(ctx context.Context, tx *gorm.DB, o Order, e Edit, via string) (Order, bool, error) {
	if err := resolveOptions(ctx, tx, o, &e); err != nil {
		return o, false, err
	}
	p, err := diffEdit(o, e)
	if err != nil {
		return o, false, err
	}
	if p.empty() {
		return o, false, nil
	}
	var products map[string]catalog.Product
	if p.added > 0 {
		if products, err = productsOf(ctx, tx, p.adds, "items"); err != nil {
			return o, false, err
		}
	}
	if err := checkEdit(o, p); err != nil {
		return o, false, err
	}
	p.payload.Via = via
	if p.customer != nil {
		if err := setCustomer(ctx, tx, o.ID, *p.customer); err != nil {
			return o, false, err
		}
	}
	if len(p.columns) > 0 {
		if err := setOrderColumns(ctx, tx, o.ID, p.columns, p.args, true); err != nil {
			return o, false, err
		}
	}
	for _, it := range p.updates {
		if err := takenUp(updateItem(ctx, tx, it, p.isTouched(it.ID))); err != nil {
			return o, false, err
		}
	}
	for _, it := range p.removes {
		if err := takenUp(deleteNewItem(ctx, tx, it.ID)); err != nil {
			return o, false, err
		}
	}
	for _, a := range p.adds {
		if a.SKU == "" {
			continue
		}
		it := Item{OrderID: o.ID, ProductID: products[a.SKU].ID, SKU: a.SKU, Qty: a.Qty, Note: a.Note, Status: ItemNew,
			UnitPrice: a.UnitPrice, LineTotal: a.LineTotal, Options: catalog.Options(a.Options)}
		if err := insertItems(ctx, tx, []*Item{&it}); err != nil {
			return o, false, err
		}
		ch := contracts.ItemChange{ItemID: it.ID, SKU: it.SKU, Change: "added", Qty: &contracts.QtyChange{Before: 0, After: it.Qty}}
		for _, f := range []contracts.FieldChange{{Field: "note", After: it.Note}, {Field: "unit_price", After: string(it.UnitPrice)},
			{Field: "line_total", After: string(it.LineTotal)}, {Field: "options", After: optionsText(it.Options)}} {
			if f.After != "" {
				ch.Fields = append(ch.Fields, f)
			}
		}
		p.payload.Items = append(p.payload.Items, ch)
	}
	v, err := advanceVersion(ctx, tx, o.ID)
	if err != nil {
		return o, false, err
	}
	p.payload.Version, p.payload.Status, p.payload.ETA = v, o.Status, o.ETA.String()
	if via != ViaShop {
		if err := recordOfficeChanges(ctx, tx, o, p.payload, v); err != nil {
			return o, false, err
		}
	}
	if err := events.Add(ctx, tx, contracts.OrderChanged.New(o.ID, p.payload)); err != nil {
		return o, false, err
	}
	// Removed or added items may move the order (ready once nothing is left
	// to make); followItems writes order.status_changed when they do.
	if err := followItems(ctx, tx, o.ID); err != nil {
		return o, false, err
	}
	o, err = order(ctx, tx, o.ID)
	return o, true, err
}

// takenUp is the conflict of an item whose guarded update found it no
// longer new: production took it up after the order was read.
func takenUp(res *gorm.DB, id int64) error {
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		e := apperr.Conflict("item %d was taken up by production at the same time; read the order again", id)
		e.Err = errInProduction
		return e
	}
	return nil
}
