package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// SheetFormatRequest is a sheet size a board is bought in.
type SheetFormatRequest struct {
	LengthMM int `json:"length_mm" minimum:"1" maximum:"10000" example:"2800"`
	WidthMM  int `json:"width_mm" minimum:"1" maximum:"10000" example:"2070"`
}

// TrimRequest is what is cut off each edge of a board's sheet, in mm: along its length (l1, l2) and its width (w1, w2).
type TrimRequest struct {
	L1 int `json:"l1" validate:"optional" minimum:"0" maximum:"100" example:"10"`
	L2 int `json:"l2" validate:"optional" minimum:"0" maximum:"100" example:"10"`
	W1 int `json:"w1" validate:"optional" minimum:"0" maximum:"100" example:"10"`
	W2 int `json:"w2" validate:"optional" minimum:"0" maximum:"100" example:"10"`
}

// MaterialRequest is the body of POST /api/v1/materials and PUT /api/v1/materials/{id}.
type MaterialRequest struct {
	// Read-only: the material's id, accepted when it is the one at the path (refused on a create).
	ID   *int64 `json:"id" validate:"optional" minimum:"1" example:"1"`
	Kind string `json:"kind" enums:"board,band,fitting" example:"board"`
	// Read in NFKC (a fullwidth ＬＤＳＰ is LDSP), without blanks around it; then ASCII letters, digits, '-', '_', '.' and '/' only. Unique regardless of case; it never changes once created.
	Code  string `json:"code" maxLength:"32" example:"LDSP16-SONOMA"`
	Name  string `json:"name" maxLength:"200" example:"ЛДСП 16 мм Дуб сонома"`
	Decor string `json:"decor" validate:"optional" maxLength:"200" example:"Дуб сонома"`
	// A board's or an edge band's thickness in mm (0.4, 2, 16); absent for a fitting.
	ThicknessMM float64 `json:"thickness_mm" validate:"optional" minimum:"0" maximum:"200" example:"16"`
	// An edge band's width in mm; absent otherwise.
	WidthMM int `json:"width_mm" validate:"optional" minimum:"0" maximum:"200" example:"0"`
	// A board whose decor has a grain direction (along the sheet's length).
	Grain bool `json:"grain" validate:"optional" example:"true"`
	// A board's sheet formats.
	Formats []SheetFormatRequest `json:"formats" validate:"optional,max=20"`
	Trim    TrimRequest          `json:"trim" validate:"optional"`
	// A board's matching edge bands, by code.
	Bands []string `json:"bands" validate:"optional,max=20" maxLength:"32" example:"PVC04-SONOMA,PVC2-SONOMA"`
	// Buy when what is available falls below it, in the material's unit (whole sheets, metres to the centimetre, whole pieces).
	ReorderPoint float64 `json:"reorder_point" validate:"optional" minimum:"0" maximum:"1000000" example:"10"`
	// Read-only: what the kind is counted in (sheet, m, pcs); accepted when it is the kind's.
	Unit *string `json:"unit" validate:"optional" enums:"sheet,m,pcs" example:"sheet"`
}

// readOnly checks the read-only members sent back: the id (0 on a create)
// and the unit, which follows from the kind.
func (r MaterialRequest) readOnly(id int64) error {
	return readOnlyRefused(append(readOnlyID(r.ID, id), readOnlyEqual("unit", r.Unit, catalog.UnitOf(r.Kind))...))
}

func (r MaterialRequest) input() catalog.MaterialInput {
	in := catalog.MaterialInput{Kind: r.Kind, Code: r.Code, Name: r.Name, Decor: r.Decor, ThicknessMM: r.ThicknessMM, WidthMM: r.WidthMM,
		Grain: r.Grain, Trim: catalog.Trim{L1: r.Trim.L1, L2: r.Trim.L2, W1: r.Trim.W1, W2: r.Trim.W2}, Bands: r.Bands, ReorderPoint: r.ReorderPoint}
	for _, f := range r.Formats {
		in.Formats = append(in.Formats, catalog.SheetFormat{LengthMM: f.LengthMM, WidthMM: f.WidthMM})
	}
	return in
}

// MaterialList is a page of materials.
type MaterialList = List[catalog.Material]

// listMaterials godoc
//
//	@Summary	The materials catalogue: boards, edge bands, fittings
//	@ID			listMaterials
//	@Description	Materials in id order: boards (decor, thickness, sheet formats, grain, trims, matching edge bands; counted in sheets), edge bands (decor, thickness, width; in metres) and fittings (in pieces), each with its reorder point.
//	@Description	422 naming kind when it is none of board, band, fitting.
//	@Tags		catalog
//	@Produce	json
//	@Security	BearerAuth
//	@Param		kind	query		string	false	"only materials of this kind"	Enums(board, band, fitting) example(board)
//	@Param		decor	query		string	false	"only materials of this decor (regardless of case)"	maxlength(200) example(Дуб сонома)
//	@Param		q		query		string	false	"only materials whose code or name contains this (regardless of case)"	maxlength(200) example(ЛДСП)
//	@Param		limit	query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param		cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9tYXRlcmlhbHMiLCJpZCI6MX0)
//	@Success	200		{object}	MaterialList
//	@Failure	400		{object}	Problem
//	@Failure	401		{object}	Problem
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/materials [get]
func (s *server) listMaterials(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	var f catalog.MaterialFilter
	f.Kind = c.QueryParam("kind")
	decor, fields := queryText(c, "decor", input.MaxName)
	q, more := queryText(c, "q", input.MaxName)
	if fields = append(fields, more...); len(fields) > 0 {
		return apperr.Invalid("invalid query", fields...)
	}
	f.Decor, f.Query = decor, q
	ms, next, err := s.Catalog.Materials(c.Request().Context(), f, pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, ms, next))
}

// getMaterial godoc
//
//	@Summary	One material
//	@ID			getMaterial
//	@Description	A board, edge band or fitting of the catalogue.
//	@Tags		catalog
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"material id"	minimum(1) example(1)
//	@Success	200	{object}	catalog.Material
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/materials/{id} [get]
func (s *server) getMaterial(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	m, err := s.Catalog.Material(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, m)
}

// createMaterial godoc
//
//	@Summary		Add a material to the catalogue (admin, planner)
//	@ID			createMaterial
//	@Description	Writes material.created. A board has a thickness and may have sheet formats, a grain, trims and matching edge bands (which must be edge bands of the catalogue); an edge band a thickness and a width; a fitting neither. The code is read in NFKC and holds ASCII letters, digits, '-', '_', '.' and '/' only (422 naming code: no invisible characters, letters of other scripts or emoji); it is unique regardless of case (409).
//	@Tags			catalog
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		MaterialRequest	true	"the material"
//	@Success		201		{object}	catalog.Material
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		409		{object}	Problem	"the code is taken"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/materials [post]
func (s *server) createMaterial(c echo.Context) error {
	var req MaterialRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := req.readOnly(0); err != nil {
		return err
	}
	m, err := s.Catalog.CreateMaterial(c.Request().Context(), req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, m)
}

// updateMaterial godoc
//
//	@Summary		Replace a material (admin, planner)
//	@ID			updateMaterial
//	@Description	Writes material.updated. The code and kind never change (422 naming them). No product's part may be left as its product's own check refuses it: a board's new formats, trims or grain must leave every part made of it a sheet it fits, and a board products are made of keeps at least one format (422 naming formats); its matching bands, and a band's thickness and width, must leave every banded side of those parts a band at least as wide as the part is thick (422 naming bands, thickness_mm or width_mm).
//	@Tags			catalog
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int				true	"material id"	minimum(1) example(1)
//	@Param			body	body		MaterialRequest	true	"the material"
//	@Success		200		{object}	catalog.Material
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/materials/{id} [put]
func (s *server) updateMaterial(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req MaterialRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := req.readOnly(id); err != nil {
		return err
	}
	m, err := s.Catalog.UpdateMaterial(c.Request().Context(), id, req.input())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, m)
}
