package contracts

import "github.com/tsekh/tsekh/internal/events"

// The stock module's event types: every movement of stock, each about the
// stock document that made it (a receipt, a count, a write-off, a change of
// what a production order needs, or what the floor physically used up).
var (
	StockReceived = events.Declare[StockPayload]("stock.received", "stock", "stock_documents",
		"Materials were received into stock (a delivery from a supplier).")
	StockCounted = events.Declare[StockPayload]("stock.counted", "stock", "stock_documents",
		"Stock was counted (inventory): on hand set to what was counted, with the reason; an offcut counted is confirmed on the shelf (qty 0) or written off as gone (qty -1).")
	StockReserved = events.Declare[StockPayload]("stock.reserved", "stock", "stock_documents",
		"What a live production order needs of materials grew: its launch, a cutting plan that lays its parts out on more sheets, a part to be cut again; reserved even beyond what is available (short says so). Offcuts a cutting plan cuts are reserved for it.")
	StockConsumed = events.Declare[StockPayload]("stock.consumed", "stock", "stock_documents",
		"The shop floor used up materials: a part cut uses its board (the sheet it lies on when a cutting plan says so, whole, once; its own area otherwise), a part banded the metres of its own edges' bands, a unit assembled its fittings, a part scrapped its board; source names the parts, units or sheet, needs what the production order no longer needs with it. Booked even beyond what is on hand: overdrawn flags what went below nothing.")
	StockReleased = events.Declare[StockPayload]("stock.released", "stock", "stock_documents",
		"What a production order needed of materials shrank or ended: it was cancelled, closed, completed, lost items, or a cutting plan laid its parts out on fewer sheets than estimated.")
	StockWrittenOff = events.Declare[StockPayload]("stock.written_off", "stock", "stock_documents",
		"Materials or offcuts were written off with a reason (damaged, lost): on hand comes down, an offcut leaves the shelf.")
)

// StockPayload is the payload of the stock.* events.
type StockPayload struct {
	DocumentID  int64  `json:"document_id" jsonschema_description:"the stock document"`
	ProdOrderID *int64 `json:"prod_order_id,omitempty" jsonschema_description:"the production order, for its needs and what the floor used up for it"`
	Reason      string `json:"reason,omitempty" jsonschema_description:"a count's or a write-off's reason, a receipt's note"`
	// PurchaseOrderID is the purchase order a receipt was delivered against.
	PurchaseOrderID *int64          `json:"purchase_order_id,omitempty" jsonschema_description:"stock.received: the purchase order the delivery was received against"`
	Lines           []StockLine     `json:"lines" jsonschema_description:"the materials moved"`
	Short           []StockShortage `json:"short,omitempty" jsonschema_description:"stock.reserved: the materials of which less is available than reserved"`
	// Source says what physically moved, for the floor's consumption and
	// the needs that follow the floor and the cutting plans.
	Source *StockSource `json:"source,omitempty" jsonschema_description:"what made the movement: the parts, units or cutting-plan sheet, and why"`
	// Needs are how what the production order still needs changed with
	// the consumption (stock.consumed): negative, released.
	Needs []StockLine `json:"needs,omitempty" jsonschema_description:"stock.consumed: how the production order's needs changed with it (negative: no longer needed)"`
	// Overdrawn flags consumption booked beyond what was on hand.
	Overdrawn []StockShortage `json:"overdrawn,omitempty" jsonschema_description:"stock.consumed: the materials this consumption took below nothing, and how much of it was beyond what was on hand"`
	// OffcutsKept are the offcuts a cut sheet left, now on the shelf.
	OffcutsKept []string `json:"offcuts_kept,omitempty" jsonschema_description:"stock.consumed: the codes of the offcuts the cut sheet left, now in stock"`
}

// StockLine is a movement of one material (or one offcut, by its code).
type StockLine struct {
	Code    string  `json:"code" jsonschema_description:"the material's code, or an offcut's"`
	Qty     float64 `json:"qty" jsonschema_description:"the quantity moved, in the material's unit (a count: counted minus what was on hand); an offcut is 1"`
	OnHand  float64 `json:"on_hand" jsonschema_description:"on hand after the movement"`
	Reserve float64 `json:"reserved" jsonschema_description:"reserved after the movement"`
}

// StockShortage is a material a reservation found short.
type StockShortage struct {
	Code    string  `json:"code" jsonschema_description:"the material's code"`
	Missing float64 `json:"missing" jsonschema_description:"how much more the live production orders up to this one need than is on hand"`
}

// StockSource is what made a movement of stock.
type StockSource struct {
	What  string      `json:"what" jsonschema:"enum=launch,enum=cut,enum=banded,enum=assembled,enum=scrapped,enum=recut,enum=cutting_plan,enum=items_released,enum=cancelled,enum=closed,enum=completed" jsonschema_description:"what happened"`
	Parts []string    `json:"parts,omitempty" jsonschema_description:"the codes of the physical parts"`
	Units []string    `json:"units,omitempty" jsonschema_description:"the codes of the units"`
	Sheet *StockSheet `json:"sheet,omitempty" jsonschema_description:"the cutting plan's sheet cut"`
	Plan  *int64      `json:"cutting_plan,omitempty" jsonschema_description:"the cutting plan whose layout changed the needs"`
}

// StockSheet is a sheet of a cutting plan.
type StockSheet struct {
	PlanID int64 `json:"plan_id" jsonschema_description:"the cutting plan"`
	N      int   `json:"n" jsonschema_description:"the sheet's number in it"`
}
