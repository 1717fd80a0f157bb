package contracts

import "github.com/tsekh/tsekh/internal/events"

// The catalog module's event types about its materials: boards, edge bands
// and fittings.
var (
	MaterialCreated = events.Declare[MaterialPayload]("material.created", "catalog", "catalog_materials",
		"A material (a board, an edge band or a fitting) was added to the catalogue.")
	MaterialUpdated = events.Declare[MaterialPayload]("material.updated", "catalog", "catalog_materials",
		"A material's name, decor, formats, trim, matching bands or reorder point changed.")
)

// MaterialPayload is the payload of material.created and .updated: the
// material as it now is.
type MaterialPayload struct {
	MaterialID   int64         `json:"material_id" jsonschema_description:"the material"`
	Kind         string        `json:"kind" jsonschema:"enum=board,enum=band,enum=fitting"`
	Code         string        `json:"code" jsonschema_description:"its code, unique regardless of case, never changed"`
	Name         string        `json:"name"`
	Decor        string        `json:"decor" jsonschema_description:"its decor; empty when it has none"`
	ThicknessMM  float64       `json:"thickness_mm" jsonschema_description:"a board's or an edge band's thickness; 0 for a fitting"`
	WidthMM      int           `json:"width_mm" jsonschema_description:"an edge band's width; 0 otherwise"`
	Unit         string        `json:"unit" jsonschema:"enum=sheet,enum=m,enum=pcs" jsonschema_description:"what it is counted in"`
	Grain        bool          `json:"grain" jsonschema_description:"a board whose decor has a grain direction"`
	Formats      []SheetFormat `json:"formats" jsonschema_description:"a board's sheet formats"`
	Trim         SheetTrim     `json:"trim" jsonschema_description:"what is cut off each edge of a board's sheet"`
	Bands        []string      `json:"bands" jsonschema_description:"a board's matching edge bands, by code"`
	ReorderPoint float64       `json:"reorder_point" jsonschema_description:"buy when what is available falls below it"`
}

// SheetFormat is a sheet size a board is bought in, in millimetres.
type SheetFormat struct {
	LengthMM int `json:"length_mm"`
	WidthMM  int `json:"width_mm"`
}

// SheetTrim is what is cut off each edge of a sheet, in millimetres: along
// its length (l1, l2) and along its width (w1, w2).
type SheetTrim struct {
	L1 int `json:"l1"`
	L2 int `json:"l2"`
	W1 int `json:"w1"`
	W2 int `json:"w2"`
}
