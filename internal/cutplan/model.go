// Package cutplan owns the cutting plans of production orders: their uncut
// parts laid out, board by board, on the board's sheet formats and the
// offcuts in stock by the optimiser of package cutting, stored with their
// cuts in saw order (package render draws them for the saw operator). A
// plan tells the shop floor which sheet each part lies on and stock the
// sheets it cuts (the offcuts it takes, reserved; the offcuts each sheet
// leaves), so that a part cut, by a scan or with its sheet reported cut,
// takes its sheet to the saw. It reads the floor's parts and the
// catalogue's boards through their services and owns the tables
// cutting_plans and cutting_sheets.
package cutplan

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tsekh/tsekh/internal/cutting"
)

// Settings are the panel saw's: its kerf, the stages it makes (0: any
// number), the smallest offcut worth keeping (both sides), how much a
// larger offcut is worth against smaller ones (cutting.Problem's
// OffcutWeight), how long the optimiser may search per board, and its
// effort in placements tried per part.
type Settings struct {
	KerfMM        float64
	Stages        int
	MinOffcutMM   int
	OffcutWeight  float64
	TimeBudget    time.Duration
	EffortPerPart int64
}

// DefaultSettings are the cutting work centre's defaults.
func DefaultSettings() Settings {
	return Settings{KerfMM: cutting.DefaultKerf, Stages: cutting.DefaultStages, MinOffcutMM: cutting.DefaultMinOffcut,
		OffcutWeight: cutting.DefaultOffcutWeight, TimeBudget: 10 * time.Second, EffortPerPart: cutting.DefaultEffortPerPart}
}

// Plan is a stored cutting plan.
type Plan struct {
	ID          int64     `json:"id" example:"1"`
	ProdOrders  IDList    `json:"prod_orders" swaggertype:"array,integer" example:"12,13"`
	KerfMM      float64   `json:"kerf_mm" example:"4.4"`
	Stages      int       `json:"stages" example:"3"`
	MinOffcutMM int       `json:"min_offcut_mm" example:"300"`
	Boards      BoardList `json:"boards"`
	// Sheets is how many sheets (new and offcuts) the plan cuts, Parts how many physical parts.
	Sheets    int       `json:"sheets" example:"4"`
	Parts     int       `json:"parts" example:"52"`
	CreatedAt time.Time `json:"created_at" format:"date-time"`
	// ReplacedBy is the plan rebuilt from this one, once it is.
	ReplacedBy *int64 `json:"replaced_by,omitempty" extensions:"x-nullable" example:"2"`
	// Cut is how many of its sheets are reported cut.
	Cut int `json:"cut" gorm:"-" example:"1"`
	// Stale: the production orders changed since the plan was made (parts
	// cut elsewhere, released, cancelled, sent back to be cut again); Why
	// says what. Build a new plan for them.
	Stale bool     `json:"stale" gorm:"-"`
	Why   []string `json:"why,omitempty" gorm:"-"`
	// SheetList is the plan's sheets, in the detail only.
	SheetList []Sheet `json:"sheet_list,omitempty" gorm:"-"`
}

// TableName is the cutting module's plan table.
func (Plan) TableName() string { return "cutting_plans" }

// BoardTotals sums up a plan's sheets of one board.
type BoardTotals struct {
	Board       string  `json:"board" example:"LDSP16-SONOMA"`
	Name        string  `json:"name" example:"ЛДСП 16 мм Дуб сонома"`
	Decor       string  `json:"decor" example:"Дуб сонома"`
	ThicknessMM float64 `json:"thickness_mm" example:"16"`
	Grain       bool    `json:"grain" example:"true"`
	Sheets      int     `json:"sheets" example:"3"`
	OffcutsUsed int     `json:"offcuts_used" example:"1"`
	Parts       int     `json:"parts" example:"40"`
	SheetsM2    float64 `json:"sheets_m2" example:"17.39"`
	PartsM2     float64 `json:"parts_m2" example:"14.2"`
	// Yield is the parts' area ÷ the sheets' area.
	Yield float64 `json:"yield" example:"0.8166"`
	// WasteM2 is the sheets' area neither in parts nor in offcuts kept.
	WasteM2 float64 `json:"waste_m2" example:"2.5"`
	// OffcutsM2 is the area the plan keeps in offcuts (pieces of at least
	// the minimum offcut), Offcuts how many.
	OffcutsM2 float64 `json:"offcuts_m2" example:"0.6"`
	Offcuts   int     `json:"offcuts_left" example:"2"`
	// LargestOffcut is the largest of them by area (zero when none).
	LargestOffcut cutting.Size `json:"largest_offcut"`
}

// BoardList is stored as JSON.
type BoardList []BoardTotals

// Value implements driver.Valuer.
func (l BoardList) Value() (driver.Value, error) { return jsonValue(l) }

// Scan implements sql.Scanner.
func (l *BoardList) Scan(src any) error { return jsonScan(src, l) }

// IDList is a list of ids stored as JSON.
type IDList []int64

// Value implements driver.Valuer.
func (l IDList) Value() (driver.Value, error) { return jsonValue(l) }

// Scan implements sql.Scanner.
func (l *IDList) Scan(src any) error { return jsonScan(src, l) }

// Sheet is one sheet of a plan: a new sheet of a format of its board or an
// offcut from stock, with its parts, its cuts in the order the saw makes
// them, and what it leaves.
type Sheet struct {
	N           int     `json:"n" example:"1"`
	Board       string  `json:"board" example:"LDSP16-SONOMA"`
	Decor       string  `json:"decor" example:"Дуб сонома"`
	ThicknessMM float64 `json:"thickness_mm" example:"16"`
	Grain       bool    `json:"grain" example:"true"`
	// Format names it: "2800 × 2070" or "offcut #7".
	Format   string  `json:"format" example:"2800 × 2070"`
	OffcutID *int64  `json:"offcut_id,omitempty" extensions:"x-nullable"`
	LengthMM float64 `json:"length_mm" example:"2800"`
	WidthMM  float64 `json:"width_mm" example:"2070"`
	// Usable is what lies inside the trims.
	Usable  cutting.Rect   `json:"usable"`
	Stages  int            `json:"stages" example:"3"`
	Parts   []SheetPart    `json:"parts"`
	Cuts    []cutting.Cut  `json:"cuts"`
	Yield   float64        `json:"yield" example:"0.81"`
	WasteM2 float64        `json:"waste_m2" example:"0.9"`
	Offcuts []cutting.Rect `json:"offcuts"`
	// CutAt is when it was reported cut.
	CutAt *time.Time `json:"cut_at,omitempty" format:"date-time" extensions:"x-nullable"`
}

// SheetPart is one physical part on a sheet: where it lies (X along the
// sheet's length, Y along its width, from the sheet's corner), its size as
// the cutting list gives it, whether it is turned (its length along the
// sheet's width), and when the saw frees it (CutOrder, from 1).
type SheetPart struct {
	PartID      int64   `json:"part_id" example:"501"`
	Code        string  `json:"code" example:"P501"`
	Name        string  `json:"name" example:"Боковина"`
	ProdOrderID int64   `json:"prod_order_id" example:"12"`
	ItemID      int64   `json:"item_id" example:"40"`
	LengthMM    int     `json:"length_mm" example:"2000"`
	WidthMM     int     `json:"width_mm" example:"580"`
	X           float64 `json:"x_mm" example:"10"`
	Y           float64 `json:"y_mm" example:"10"`
	DX          float64 `json:"dx_mm" example:"2000"`
	DY          float64 `json:"dy_mm" example:"580"`
	Turned      bool    `json:"turned" example:"false"`
	CutOrder    int     `json:"cut_order" example:"1"`
}

// sheetRow is a stored sheet.
type sheetRow struct {
	PlanID   int64 `gorm:"primaryKey;autoIncrement:false"`
	N        int   `gorm:"primaryKey;autoIncrement:false"`
	Board    string
	OffcutID *int64
	Layout   string
	CutAt    *time.Time
}

func (sheetRow) TableName() string { return "cutting_sheets" }

func (r sheetRow) sheet() (Sheet, error) {
	var s Sheet
	if err := json.Unmarshal([]byte(r.Layout), &s); err != nil {
		return s, fmt.Errorf("cutplan: sheet %d of plan %d: %w", r.N, r.PlanID, err)
	}
	s.CutAt = r.CutAt
	return s, nil
}

func jsonValue(v any) (driver.Value, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func jsonScan(src any, v any) error {
	switch s := src.(type) {
	case string:
		return json.Unmarshal([]byte(s), v)
	case []byte:
		return json.Unmarshal(s, v)
	case nil:
		return nil
	}
	return fmt.Errorf("cutplan: cannot scan %T", src)
}
