package contracts

import "github.com/tsekh/tsekh/internal/events"

// The stock module's event types: every movement of stock, each about the
// stock document that made it (a receipt, a count, or a production order's
// reservation, consumption or release).
var (
	StockReceived = events.Declare[StockPayload]("stock.received", "stock", "stock_documents",
		"Materials were received into stock (a delivery from a supplier).")
	StockCounted = events.Declare[StockPayload]("stock.counted", "stock", "stock_documents",
		"Stock was counted (inventory): on hand set to what was counted, with the reason.")
	StockReserved = events.Declare[StockPayload]("stock.reserved", "stock", "stock_documents",
		"Materials were reserved for a launched production order (what it needs, even beyond what is available: short says so).")
	StockConsumed = events.Declare[StockPayload]("stock.consumed", "stock", "stock_documents",
		"Materials reserved for a production order were used up as the floor reported cutting, banding or assembly.")
	StockReleased = events.Declare[StockPayload]("stock.released", "stock", "stock_documents",
		"What was still reserved for a production order was released: it was cancelled, closed or completed.")
)

// StockPayload is the payload of the stock.* events.
type StockPayload struct {
	DocumentID  int64           `json:"document_id" jsonschema_description:"the stock document"`
	ProdOrderID *int64          `json:"prod_order_id,omitempty" jsonschema_description:"the production order, for reservations, consumption and releases"`
	Reason      string          `json:"reason,omitempty" jsonschema_description:"a count's reason, a receipt's note"`
	Lines       []StockLine     `json:"lines" jsonschema_description:"the materials moved"`
	Short       []StockShortage `json:"short,omitempty" jsonschema_description:"stock.reserved: the materials of which less is available than reserved"`
}

// StockLine is a movement of one material.
type StockLine struct {
	Code    string  `json:"code" jsonschema_description:"the material's code"`
	Qty     float64 `json:"qty" jsonschema_description:"the quantity moved, in the material's unit (a count: counted minus what was on hand)"`
	OnHand  float64 `json:"on_hand" jsonschema_description:"on hand after the movement"`
	Reserve float64 `json:"reserved" jsonschema_description:"reserved after the movement"`
}

// StockShortage is a material a reservation found short.
type StockShortage struct {
	Code    string  `json:"code" jsonschema_description:"the material's code"`
	Missing float64 `json:"missing" jsonschema_description:"how much more is reserved than is on hand"`
}
