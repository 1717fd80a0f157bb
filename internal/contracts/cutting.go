package contracts

import "github.com/tsekh/tsekh/internal/events"

// The cutting module's event types: cutting plans laid out for production
// orders, and their sheets reported cut.
var (
	CuttingPlanCreated = events.Declare[CuttingPlanPayload]("cutting_plan.created", "cutting", "cutting_plans",
		"A cutting plan was laid out for production orders: their uncut parts, board by board, on sheets and offcuts in stock; or rebuilt from a stale one, which it replaces.")
	CuttingSheetCut = events.Declare[CuttingSheetCutPayload]("cutting_plan.sheet_cut", "cutting", "cutting_plans",
		"A sheet of a cutting plan was reported cut: its parts still waiting for the saw went through the cutting step, the sheet (a new one, or the offcut it is) is used up in stock once, whether a scan of one of its parts took it to the saw first or the report, and the offcuts it left are kept.")
)

// CuttingPlanPayload is the payload of cutting_plan.created.
type CuttingPlanPayload struct {
	PlanID     int64                `json:"plan_id" jsonschema_description:"the cutting plan"`
	ProdOrders []int64              `json:"prod_orders" jsonschema_description:"the production orders whose parts it lays out"`
	Boards     []CuttingBoardTotals `json:"boards" jsonschema_description:"per board: sheets, parts, yield, waste"`
	// OffcutsUsed are the offcuts in stock the plan cuts from.
	OffcutsUsed []int64 `json:"offcuts_used" jsonschema_description:"the offcuts in stock the plan cuts parts from"`
	// Replaces is the stale plan it was rebuilt from.
	Replaces *int64 `json:"replaces,omitempty" jsonschema_description:"the plan it was rebuilt from, which no longer counts"`
	// NewSheets are the new sheets (not offcuts) the plan cuts, per
	// production order and board: each sheet counts for the first
	// production order with a part on it (stock reserves each part's share
	// of its sheet).
	NewSheets []CuttingOrderSheets `json:"new_sheets" jsonschema_description:"the new sheets (not offcuts) the plan cuts, per production order and board; a sheet counts for the first production order with a part on it"`
}

// CuttingOrderSheets is how many new sheets of a board a cutting plan cuts
// for one production order.
type CuttingOrderSheets struct {
	ProdOrderID int64  `json:"prod_order_id" jsonschema_description:"the production order"`
	Board       string `json:"board" jsonschema_description:"the board's code"`
	Sheets      int    `json:"sheets" jsonschema:"minimum=0" jsonschema_description:"the new sheets charged to it"`
}

// CuttingBoardTotals sums up a plan's sheets of one board.
type CuttingBoardTotals struct {
	Board   string  `json:"board" jsonschema_description:"the board's code"`
	Sheets  int     `json:"sheets" jsonschema_description:"sheets (new and offcuts) the plan cuts"`
	Offcuts int     `json:"offcuts_used" jsonschema_description:"of them, offcuts from stock"`
	Parts   int     `json:"parts" jsonschema_description:"physical parts laid out"`
	Yield   float64 `json:"yield" jsonschema_description:"the parts' area divided by the sheets' area"`
	WasteM2 float64 `json:"waste_m2" jsonschema_description:"the sheets' area neither in parts nor in offcuts kept, m²"`
}

// CuttingSheetCutPayload is the payload of cutting_plan.sheet_cut.
type CuttingSheetCutPayload struct {
	PlanID   int64  `json:"plan_id" jsonschema_description:"the cutting plan"`
	Sheet    int    `json:"sheet" jsonschema_description:"the sheet's number in the plan, from 1"`
	Board    string `json:"board" jsonschema_description:"the board's code"`
	OffcutID *int64 `json:"offcut_id,omitempty" jsonschema_description:"the offcut the sheet is, when it is one; absent for a new sheet"`
	// NewSheet: the sheet is a new sheet of the board (not an offcut).
	NewSheet   bool    `json:"new_sheet" jsonschema_description:"the sheet is a new sheet of the board, not an offcut"`
	Parts      []int64 `json:"parts" jsonschema_description:"the physical parts the sheet lays out"`
	ProdOrders []int64 `json:"prod_orders" jsonschema_description:"their production orders, the first one's part first on the sheet"`
	// OffcutsKept are the offcuts the sheet left, now in stock.
	OffcutsKept []int64 `json:"offcuts_kept" jsonschema_description:"the offcuts the sheet left, kept in stock"`
}
