// Package sales owns sales orders and their items: manual orders, orders
// pushed by the online shop and orders imported from the CRM, and their life
// cycle.
//
// # Lock order
//
// Every transaction that changes a sales order or its items (a PATCH, a
// re-delivery of the shop or the CRM, a shipment, a cancellation, and the
// subscriber sales.production following production) first locks, on
// PostgreSQL, the order's row and then all its items in id order
// (lockOrder); one that touches several orders takes them by id
// (lockOrdersOf), each its row and then its items. Two such transactions
// therefore wait for each other instead of deadlocking. A deadlock or
// serialization failure that still happens (with the plan's tables, say) is
// run again, whole, by database.Transaction, the services' transaction
// helper; the dispatcher runs a subscriber's failed batch again itself.
package sales

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// Order sources.
const (
	SourceShop   = "shop"
	SourceCRM    = "crm"
	SourceManual = "manual"
)

// Order states.
const (
	StatusReceived     = "received"
	StatusInProduction = "in_production"
	StatusReady        = "ready"
	StatusShipped      = "shipped"
	StatusCancelled    = "cancelled"
)

// Item states.
const (
	ItemNew          = "new"
	ItemInProduction = "in_production"
	ItemDone         = "done"
)

// Customer is who ordered.
type Customer struct {
	Name  string `json:"name"`
	Phone string `json:"phone"`
	Email string `json:"email"`
}

// Order is a sales order with its items.
type Order struct {
	ID         int64         `json:"id" gorm:"primaryKey"`
	Status     string        `json:"status" enums:"received,in_production,ready,partially_shipped,shipped,cancelled"`
	Source     string        `json:"source" enums:"shop,crm,manual"`
	SyncID     *string       `json:"sync_id" extensions:"x-nullable"`
	CRMOrderID *string       `json:"crm_order_id" gorm:"column:crm_order_id" extensions:"x-nullable" maxLength:"64" example:"CRM-10452"`
	Customer   Customer      `json:"customer" gorm:"embedded;embeddedPrefix:customer_"`
	DueDate    database.Date `json:"due_date" swaggertype:"string" format:"date" extensions:"x-nullable"`
	ETA        database.Date `json:"eta" gorm:"column:eta" swaggertype:"string" format:"date" extensions:"x-nullable"`
	// Note is free text about the whole order.
	Note  string `json:"note"`
	Items []Item `json:"items" gorm:"foreignKey:OrderID"`

	// What the shop sent besides the lines, kept and shown as given (tsekh
	// computes no prices): where and when its customer wants the order
	// delivered, the currency and the order's total.
	DeliveryAddress string        `json:"delivery_address"`
	DeliveryDate    database.Date `json:"delivery_date" swaggertype:"string" format:"date" extensions:"x-nullable"`
	Currency        string        `json:"currency" example:"RUB"`
	Total           Amount        `json:"total" swaggertype:"number" extensions:"x-nullable" example:"25980.00"`

	// The version or updated_at of the shop's delivery (or the CRM's row)
	// last applied to the order: a later one must be newer to change it.
	SourceVersion   *int64     `json:"source_version" extensions:"x-nullable"`
	SourceUpdatedAt *time.Time `json:"source_updated_at" format:"date-time" extensions:"x-nullable"`
	// SourceHash recognises a repeat of the last delivery applied.
	SourceHash string `json:"-"`
	// SourceUpdatedNS is SourceUpdatedAt to the nanosecond, as sent (Unix
	// nanoseconds): deliveries are compared by it.
	SourceUpdatedNS *int64 `json:"-" gorm:"column:source_updated_ns"`

	// Version is tsekh's own version of the order: 1 when received, and one
	// more with every journalled change from any side (a manager's change,
	// the shop's or the CRM's re-delivery, production, a cancellation, a
	// shipment). Every shop callback carries it; the shop sends the last it
	// saw as tsekh_version, so that its delivery cannot silently undo the
	// office's changes.
	Version int64 `json:"version" example:"4"`
	// CancelReason is why the order was cancelled ("" unless cancelled).
	CancelReason string `json:"cancel_reason"`
	// Attention, when not empty, asks a manager to look at the order: a
	// shop delivery was merged around the office's changes (SHOP_CONFLICTS=shop).
	Attention string `json:"attention"`
	// ReadyToShip is true while everything left to ship is made.
	ReadyToShip bool `json:"ready_to_ship"`
	// OfficeChanges is what the office changed, at which version (JSON,
	// see officeChanges).
	OfficeChanges string `json:"-"`

	CreatedAt time.Time `json:"created_at" gorm:"->" format:"date-time"`
	UpdatedAt time.Time `json:"updated_at" gorm:"->" format:"date-time"`

	// Shipments are what has left the factory, oldest first.
	Shipments []Shipment `json:"shipments" gorm:"foreignKey:OrderID"`

	// Late is true when production's ETA is after the due date; an order
	// without either, or cancelled, is not late.
	Late bool `json:"late" gorm:"-"`

	// CustomerSearch is Customer.SearchKey of Customer, for the list's
	// customer filter: written only through customerColumns.
	CustomerSearch string `json:"-" gorm:"column:customer_search"`
}

// TableName is the sales module's order table.
func (Order) TableName() string { return "sales_orders" }

// Item is one line of an order: a product and a quantity.
type Item struct {
	ID        int64  `json:"id" gorm:"primaryKey"`
	OrderID   int64  `json:"-"`
	ProductID int64  `json:"product_id"`
	SKU       string `json:"sku" gorm:"column:sku"`
	Qty       int    `json:"qty"`
	Note      string `json:"note"`
	Status    string `json:"status" enums:"new,in_production,done,shipped,written_off"`
	// ShippedQty is how much of it has shipped.
	ShippedQty int `json:"shipped_qty"`
	// MadeQty is how much of it production has made; WrittenOffQty, how
	// much will not be made because a production order was closed short
	// with the rest written off (see the lifecycle).
	MadeQty       int `json:"made_qty"`
	WrittenOffQty int `json:"written_off_qty"`
	// ETA is the day production promised for the item, once launched.
	ETA database.Date `json:"eta" gorm:"column:eta" swaggertype:"string" format:"date" extensions:"x-nullable"`
	// ProdOrderID is the production order making the item, once launched.
	ProdOrderID *int64 `json:"prod_order_id" extensions:"x-nullable"`
	// The shop's prices, as given: per unit and for the line.
	UnitPrice Amount `json:"unit_price" swaggertype:"number" extensions:"x-nullable" example:"12990.00"`
	LineTotal Amount `json:"line_total" swaggertype:"number" extensions:"x-nullable" example:"25980.00"`
	// Options are the item's choices of board per decor slot of its product, by board code.
	Options catalog.Options `json:"options" swaggertype:"object,string"`
	// Boards are every decor slot of its product with the board its parts
	// will be cut from: the item's choice, or the slot's default; {} for a
	// product without slots. From the catalogue as it is now.
	Boards catalog.Options `json:"boards" gorm:"-" swaggertype:"object,string" example:"корпус:LDSP16-SONOMA,фасад:LDSP16-WHITE"`
}

// TableName is the sales module's item table.
func (Item) TableName() string { return "sales_order_items" }

// NewOrder is the input of CreateOrder.
type NewOrder struct {
	Customer   Customer
	Items      []NewItem
	DueDate    database.Date
	Note       string
	Source     string  // manual when empty
	SyncID     *string // shop orders
	CRMOrderID *string // CRM orders: the CRM's order id, text

	// The shop's, as given.
	DeliveryAddress string
	DeliveryDate    database.Date
	Currency        string
	Total           Amount

	// Version and UpdatedAt mark a shop delivery or CRM row, so that a later
	// one can be told newer or older (nil: not sent).
	Version   *int64
	UpdatedAt *time.Time
	// TsekhVersion is the order's tsekh version the shop's delivery was
	// built on (nil: none sent).
	TsekhVersion *int64
}

// NewItem is one line of a new order.
type NewItem struct {
	SKU       string
	Qty       int
	Note      string
	UnitPrice Amount
	LineTotal Amount
	// Options choose a board per decor slot of the product, by decor or
	// board code ({"корпус": "Дуб сонома"}); each slot's default otherwise.
	Options map[string]string
}

// MaxItems is the most lines one order may have.
const MaxItems = 200

// Service manages sales orders.
type Service struct {
	db        *gorm.DB
	conflicts string // SHOP_CONFLICTS: ConflictsOffice or ConflictsShop
	bodyLimit int    // INTAKE_BODY_LIMIT; 0: DefaultRejectionBodyLimit
	metrics   *Metrics
}

// NewService returns the sales service over db.
func NewService(db *gorm.DB) *Service { return &Service{db: db} }

// CreateOrder validates and stores an order with its items and its
// order.received event, in one transaction. It returns EINVALID naming the
// fields at fault (unknown SKUs included).
func (s *Service) CreateOrder(ctx context.Context, in NewOrder) (Order, error) {
	var o Order
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		var err error
		o, err = createOrder(ctx, tx, in)
		return err
	})
	return o, err
}

// ParseDueDate reads an order's optional due date ("YYYY-MM-DD" from
// 2000-01-01 to 2100-12-31; "" for none), naming the field when it is not
// such a date. The manual, shop and CRM intakes share it so that all three
// refuse alike.
func ParseDueDate(s string) (database.Date, []apperr.FieldError) {
	return input.Date("due_date", s)
}

// Validate checks a new order's own fields (not its SKUs, which need the
// catalog): the customer's name (required), phone and email, and each item's
// SKU, quantity and note, each text within its length in characters and
// free of control characters (a note may have tabs and line breaks).
func (in *NewOrder) Validate() error {
	fields := validateCustomer(&in.Customer)
	fields = append(fields, input.Note("note", in.Note, input.MaxNote)...)
	fields = append(fields, input.Note("delivery_address", in.DeliveryAddress, MaxDeliveryAddress)...)
	fields = append(fields, validateCurrency(in.Currency)...)
	fields = append(fields, in.Total.validate("total")...)
	if len(in.Items) == 0 {
		fields = append(fields, apperr.Field("items", "must list at least one item"))
	}
	if len(in.Items) > MaxItems {
		fields = append(fields, apperr.Field("items", "must list at most %d items", MaxItems))
	}
	for i := range in.Items {
		it := &in.Items[i]
		it.SKU = strings.TrimSpace(it.SKU)
		fields = append(fields, input.RequiredLine(fmt.Sprintf("items[%d].sku", i), it.SKU, input.MaxSKU)...)
		if it.Qty < 1 || it.Qty > 10000 {
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d].qty", i), "must be a whole number from 1 to 10000"))
		}
		fields = append(fields, input.Note(fmt.Sprintf("items[%d].note", i), it.Note, input.MaxNote)...)
		fields = append(fields, it.UnitPrice.validate(fmt.Sprintf("items[%d].unit_price", i))...)
		fields = append(fields, it.LineTotal.validate(fmt.Sprintf("items[%d].line_total", i))...)
	}
	if len(fields) > 0 {
		return apperr.Invalid("the order is not valid", fields...)
	}
	return nil
}

// MaxDeliveryAddress is the longest delivery address, in characters.
const MaxDeliveryAddress = 500

// validateCustomer trims the customer's contacts and checks them: the name
// is required; each within its length, on one line; the email has an @.
func validateCustomer(c *Customer) []apperr.FieldError {
	var fields []apperr.FieldError
	c.Name, c.Phone, c.Email = strings.TrimSpace(c.Name), strings.TrimSpace(c.Phone), strings.TrimSpace(c.Email)
	fields = append(fields, input.RequiredLine("customer.name", c.Name, input.MaxName)...)
	fields = append(fields, input.Line("customer.phone", c.Phone, input.MaxPhone)...)
	if f := input.Line("customer.email", c.Email, input.MaxEmail); len(f) > 0 {
		fields = append(fields, f...)
	} else if c.Email != "" && !strings.Contains(c.Email, "@") {
		fields = append(fields, apperr.Field("customer.email", "is not an email address"))
	}
	return fields
}

// validateCurrency checks a currency code: three capital Latin letters
// (ISO 4217, "RUB"), or none.
func validateCurrency(c string) []apperr.FieldError {
	if c == "" {
		return nil
	}
	ok := len(c) == 3
	for i := 0; ok && i < len(c); i++ {
		ok = c[i] >= 'A' && c[i] <= 'Z'
	}
	if !ok {
		return []apperr.FieldError{apperr.Field("currency", "must be a currency code of three capital letters, e.g. RUB")}
	}
	return nil
}

// createOrder does CreateOrder's work inside tx.
func createOrder(ctx context.Context, tx *gorm.DB, in NewOrder) (Order, error) {
	o, _, err := createOrderOnce(ctx, tx, in, "")
	return o, err
}

// createOrderOnce validates and stores a new order, its items and its
// order.received event inside tx. With uniqueBy ("sync_id" or
// "crm_order_id") the order is created once per value of that column: the
// caller holds lockIntakeKey for the value and has looked the order up, so
// the insert does not spend an order number on a repeat; should the key be
// taken all the same, the insert tolerates the conflict and the existing
// order is returned as it is, with created false and no event.
func createOrderOnce(ctx context.Context, tx *gorm.DB, in NewOrder, uniqueBy string) (o Order, created bool, err error) {
	if in.Source == "" {
		in.Source = SourceManual
	}
	if err := in.Validate(); err != nil {
		return Order{}, false, err
	}
	o = Order{Status: StatusReceived, Source: in.Source, SyncID: in.SyncID, CRMOrderID: in.CRMOrderID, Customer: in.Customer, DueDate: in.DueDate,
		Note: in.Note, DeliveryAddress: in.DeliveryAddress, DeliveryDate: in.DeliveryDate, Currency: in.Currency, Total: in.Total,
		SourceVersion: in.Version, SourceUpdatedAt: in.UpdatedAt}
	if uniqueBy != "" {
		o.SourceHash = contentHash(in)
	}
	// Everything that can refuse the order is checked before it takes its
	// number, so that the common refusals do not even wait for the number.
	products, err := productsOf(ctx, tx, in.Items, "items")
	if err != nil {
		return Order{}, false, err
	}
	options, err := itemOptions(ctx, tx, in.Items, "items")
	if err != nil {
		return Order{}, false, err
	}
	id, err := insertOrderRow(ctx, tx, &o, uniqueBy)
	if err != nil {
		return Order{}, false, err
	}
	if id == 0 { // the key is taken: the order exists already
		existing, err := orderIDByKey(ctx, tx, uniqueBy, in)
		if err != nil {
			return Order{}, false, err
		}
		if existing == 0 {
			return Order{}, false, fmt.Errorf("sales: order by %s neither inserted nor found", uniqueBy)
		}
		o, err = order(ctx, tx, existing)
		return o, false, err
	}
	o.ID = id
	o.Items = make([]Item, len(in.Items))
	for i, it := range in.Items {
		o.Items[i] = Item{OrderID: o.ID, ProductID: products[it.SKU].ID, SKU: it.SKU, Qty: it.Qty, Note: it.Note, Status: ItemNew,
			UnitPrice: it.UnitPrice, LineTotal: it.LineTotal, Options: options[i]}
	}
	items := make([]*Item, len(o.Items))
	for i := range o.Items {
		items[i] = &o.Items[i]
	}
	if err := insertItems(ctx, tx, items); err != nil {
		return Order{}, false, err
	}
	payload := contracts.OrderReceivedPayload{OrderID: o.ID, Lines: len(o.Items), Source: o.Source,
		SyncID: o.SyncID, CRMOrderID: contracts.CRMOrderIDOf(o.CRMOrderID), DueDate: o.DueDate.String(), Customer: o.Customer.Name, Items: make([]contracts.OrderReceivedItem, len(o.Items)),
		Version: 1}
	for i, it := range o.Items {
		payload.Items[i] = contracts.OrderReceivedItem{ItemID: it.ID, SKU: it.SKU, Qty: it.Qty, Note: it.Note, Options: it.Options}
	}
	if err := events.Add(ctx, tx, contracts.OrderReceived.New(o.ID, payload)); err != nil {
		return Order{}, false, err
	}
	// Read back for the database's timestamps.
	o, err = order(ctx, tx, o.ID)
	return o, true, err
}

// productsOf looks the items' SKUs up in the catalog (items without one are
// skipped): EINVALID naming field[i].sku for each SKU no product has.
func productsOf(ctx context.Context, tx *gorm.DB, items []NewItem, field string) (map[string]catalog.Product, error) {
	skus := make([]string, 0, len(items))
	for _, it := range items {
		if it.SKU != "" {
			skus = append(skus, it.SKU)
		}
	}
	products, err := catalog.ProductsBySKU(ctx, tx, skus)
	if err != nil {
		return nil, err
	}
	var unknown []apperr.FieldError
	for i, it := range items {
		if _, ok := products[it.SKU]; !ok && it.SKU != "" {
			unknown = append(unknown, apperr.Field(fmt.Sprintf("%s[%d].sku", field, i), "no product has the SKU %q", it.SKU))
		}
	}
	if len(unknown) > 0 {
		return nil, apperr.Invalid("the order names unknown products", unknown...)
	}
	return products, nil
}

// OrderNumberLock is the advisory lock class (PostgreSQL) under which a
// transaction numbers its new order, held until it ends.
const OrderNumberLock = 0x6f6e6f21 // "ono!"

// Order returns the order with its items (and their boards), or ENOTFOUND.
func (s *Service) Order(ctx context.Context, id int64) (Order, error) {
	o, err := order(ctx, s.db, id)
	if err != nil {
		return o, err
	}
	return o, s.WithBoards(ctx, &o)
}

func order(ctx context.Context, db *gorm.DB, id int64) (Order, error) {
	o, found, err := orderByID(ctx, db, id)
	if err == nil && !found {
		err = apperr.NotFound("order %d does not exist", id)
	}
	return o, err
}
