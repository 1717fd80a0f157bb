// Package sales owns sales orders and their items: manual orders, orders
// pushed by the online shop and orders imported from the CRM, and their life
// cycle.
package sales

import (
	"context"
	"errors"
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
	"github.com/tsekh/tsekh/internal/platform/page"
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
	CRMOrderID *int64        `json:"crm_order_id" gorm:"column:crm_order_id" extensions:"x-nullable"`
	Customer   Customer      `json:"customer" gorm:"embedded;embeddedPrefix:customer_"`
	DueDate    database.Date `json:"due_date" swaggertype:"string" format:"date" extensions:"x-nullable"`
	ETA        database.Date `json:"eta" gorm:"column:eta" swaggertype:"string" format:"date" extensions:"x-nullable"`
	Items      []Item        `json:"items" gorm:"foreignKey:OrderID"`
	CreatedAt  time.Time     `json:"created_at" gorm:"->" format:"date-time"`
	UpdatedAt  time.Time     `json:"updated_at" gorm:"->" format:"date-time"`

	// Shipments are what has left the factory, oldest first.
	Shipments []Shipment `json:"shipments" gorm:"foreignKey:OrderID"`
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
	Status    string `json:"status" enums:"new,in_production,done,shipped"`
	// ShippedQty is how much of it has shipped.
	ShippedQty int `json:"shipped_qty"`
	// ETA is the day production promised for the item, once launched.
	ETA database.Date `json:"eta" gorm:"column:eta" swaggertype:"string" format:"date" extensions:"x-nullable"`
	// ProdOrderID is the production order making the item, once launched.
	ProdOrderID *int64 `json:"prod_order_id" extensions:"x-nullable"`
}

// TableName is the sales module's item table.
func (Item) TableName() string { return "sales_order_items" }

// NewOrder is the input of CreateOrder.
type NewOrder struct {
	Customer   Customer
	Items      []NewItem
	DueDate    database.Date
	Source     string  // manual when empty
	SyncID     *string // shop orders
	CRMOrderID *int64  // CRM orders
}

// NewItem is one line of a new order.
type NewItem struct {
	SKU  string
	Qty  int
	Note string
}

// MaxItems is the most lines one order may have.
const MaxItems = 200

// Service manages sales orders.
type Service struct{ db *gorm.DB }

// NewService returns the sales service over db.
func NewService(db *gorm.DB) *Service { return &Service{db: db} }

// CreateOrder validates and stores an order with its items and its
// order.received event, in one transaction. It returns EINVALID naming the
// fields at fault (unknown SKUs included).
func (s *Service) CreateOrder(ctx context.Context, in NewOrder) (Order, error) {
	var o Order
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
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
	var fields []apperr.FieldError
	c := &in.Customer
	c.Name, c.Phone, c.Email = strings.TrimSpace(c.Name), strings.TrimSpace(c.Phone), strings.TrimSpace(c.Email)
	fields = append(fields, input.RequiredLine("customer.name", c.Name, input.MaxName)...)
	fields = append(fields, input.Line("customer.phone", c.Phone, input.MaxPhone)...)
	if f := input.Line("customer.email", c.Email, input.MaxEmail); len(f) > 0 {
		fields = append(fields, f...)
	} else if c.Email != "" && !strings.Contains(c.Email, "@") {
		fields = append(fields, apperr.Field("customer.email", "is not an email address"))
	}
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
	}
	if len(fields) > 0 {
		return apperr.Invalid("the order is not valid", fields...)
	}
	return nil
}

// createOrder does CreateOrder's work inside tx.
func createOrder(ctx context.Context, tx *gorm.DB, in NewOrder) (Order, error) {
	o, _, err := createOrderOnce(ctx, tx, in, "")
	return o, err
}

// createOrderOnce validates and stores a new order, its items and its
// order.received event inside tx. With uniqueBy ("sync_id" or "crm_order_id")
// the order is created once per value of that column: the database's unique
// key decides, by an insert that tolerates the conflict, so that concurrent
// deliveries of one order cannot both create it. An existing order is
// returned as it is, with created false and no event.
func createOrderOnce(ctx context.Context, tx *gorm.DB, in NewOrder, uniqueBy string) (o Order, created bool, err error) {
	if in.Source == "" {
		in.Source = SourceManual
	}
	if err := in.Validate(); err != nil {
		return Order{}, false, err
	}
	o = Order{Status: StatusReceived, Source: in.Source, SyncID: in.SyncID, CRMOrderID: in.CRMOrderID, Customer: in.Customer, DueDate: in.DueDate}
	id, err := insertOrderRow(ctx, tx, &o, uniqueBy)
	if err != nil {
		return Order{}, false, err
	}
	if id == 0 { // the key is taken: the order exists already
		var existing int64
		key := any(o.SyncID)
		if uniqueBy == "crm_order_id" {
			key = o.CRMOrderID
		}
		if err := tx.WithContext(ctx).Raw("SELECT id FROM sales_orders WHERE "+uniqueBy+" = ?", key).Scan(&existing).Error; err != nil {
			return Order{}, false, err
		}
		if existing == 0 {
			return Order{}, false, fmt.Errorf("sales: order by %s neither inserted nor found", uniqueBy)
		}
		o, err = order(ctx, tx, existing)
		return o, false, err
	}
	o.ID = id

	skus := make([]string, 0, len(in.Items))
	for _, it := range in.Items {
		skus = append(skus, it.SKU)
	}
	products, err := catalog.ProductsBySKU(ctx, tx, skus)
	if err != nil {
		return Order{}, false, err
	}
	var unknown []apperr.FieldError
	for i, it := range in.Items {
		if _, ok := products[it.SKU]; !ok {
			unknown = append(unknown, apperr.Field(fmt.Sprintf("items[%d].sku", i), "no product has the SKU %q", it.SKU))
		}
	}
	if len(unknown) > 0 {
		return Order{}, false, apperr.Invalid("the order names unknown products", unknown...)
	}
	o.Items = make([]Item, len(in.Items))
	for i, it := range in.Items {
		o.Items[i] = Item{OrderID: o.ID, ProductID: products[it.SKU].ID, SKU: it.SKU, Qty: it.Qty, Note: it.Note, Status: ItemNew}
	}
	if err := tx.Omit("ID").Create(&o.Items).Error; err != nil {
		return Order{}, false, err
	}
	payload := contracts.OrderReceivedPayload{OrderID: o.ID, Lines: len(o.Items), Source: o.Source,
		SyncID: o.SyncID, CRMOrderID: o.CRMOrderID, DueDate: o.DueDate.String(), Customer: o.Customer.Name, Items: make([]contracts.OrderReceivedItem, len(o.Items))}
	for i, it := range o.Items {
		payload.Items[i] = contracts.OrderReceivedItem{ItemID: it.ID, SKU: it.SKU, Qty: it.Qty, Note: it.Note}
	}
	if err := events.Add(ctx, tx, contracts.OrderReceived.New(o.ID, payload)); err != nil {
		return Order{}, false, err
	}
	// Read back for the database's timestamps.
	o, err = order(ctx, tx, o.ID)
	return o, true, err
}

// insertOrderRow inserts the order row and returns its id; with uniqueBy it
// returns 0 when an order with that key exists (ON CONFLICT DO NOTHING, which
// PostgreSQL and SQLite both speak).
func insertOrderRow(ctx context.Context, tx *gorm.DB, o *Order, uniqueBy string) (int64, error) {
	conflict := ""
	switch uniqueBy {
	case "":
	case "sync_id", "crm_order_id":
		conflict = " ON CONFLICT (" + uniqueBy + ") DO NOTHING"
	default:
		return 0, fmt.Errorf("sales: no unique key %q", uniqueBy)
	}
	var id int64
	err := tx.WithContext(ctx).Raw(`INSERT INTO sales_orders (status, source, sync_id, crm_order_id, customer_name, customer_phone, customer_email, due_date)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`+conflict+` RETURNING id`,
		o.Status, o.Source, o.SyncID, o.CRMOrderID, o.Customer.Name, o.Customer.Phone, o.Customer.Email, o.DueDate).Scan(&id).Error
	return id, err
}

// Order returns the order with its items, or ENOTFOUND.
func (s *Service) Order(ctx context.Context, id int64) (Order, error) {
	return order(ctx, s.db, id)
}

func order(ctx context.Context, db *gorm.DB, id int64) (Order, error) {
	var o Order
	err := withShipments(db.WithContext(ctx).Preload("Items", func(db *gorm.DB) *gorm.DB { return db.Order("id") })).First(&o, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return o, apperr.NotFound("order %d does not exist", id)
	}
	return o, err
}

func withShipments(db *gorm.DB) *gorm.DB {
	return db.Preload("Shipments", func(db *gorm.DB) *gorm.DB { return db.Order("id") }).
		Preload("Shipments.Items", func(db *gorm.DB) *gorm.DB { return db.Order("item_id") })
}

// OrderFilter selects orders; zero fields do not filter.
type OrderFilter struct {
	Status string
	Source string
}

// Orders returns a page of orders, newest first.
func (s *Service) Orders(ctx context.Context, f OrderFilter, pr page.Request) ([]Order, string, error) {
	q := withShipments(s.db.WithContext(ctx).Preload("Items", func(db *gorm.DB) *gorm.DB { return db.Order("id") }))
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.Source != "" {
		q = q.Where("source = ?", f.Source)
	}
	if pr.After != 0 {
		q = q.Where("id < ?", pr.After)
	}
	var os []Order
	if err := q.Order("id DESC").Limit(pr.Limit + 1).Find(&os).Error; err != nil {
		return nil, "", err
	}
	os, next := page.Next(os, pr.Limit, func(o Order) int64 { return o.ID })
	return os, next, nil
}
