package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// getCuttingList godoc
//
//	@Summary		The cutting list of a production order
//	@ID			getCuttingList
//	@Description	What the saw and the edgebander need: the physical parts by board (code, decor, thickness), identical parts (same name, size, grain, edges and edging) summed, longest first, each with where it goes (by sales order, "№5 ×4, №9 ×2") and its origins per item; per board the number of parts, their area in m² and the sheets it estimates (area ÷ the board's largest usable format); the edge-band metres per band (each banded side's length plus EDGE_OVERHANG_MM); the fittings per production order.
//	@Description	With Accept: text/csv, one row per summed part: with layout=office (the default) the office's layout (";" separated, Russian headers: Плита;Декор;Материал;Толщина, мм;Деталь;Длина, мм;Ширина, мм;Кол-во;Текстура;Кромка Д1;Кромка Д2;Кромка Ш1;Кромка Ш2;Кромка;Куда), with layout=machine the machine's ("," separated, English headers), see docs/operating.md, CSV exports; with layout=optimiser the layout panel-cutting optimisers (and tsekh cut) import: id;board;decor;thickness_mm;name;length_mm;width_mm;qty;grain;edge_l1;edge_l2;edge_w1;edge_w2;where.
//	@Tags			plan
//	@Produce		json
//	@Produce		text/csv
//	@Security		BearerAuth
//	@Param			id	path		int	true	"production order id"	minimum(1) example(1)
//	@Param			layout	query	string	false	"CSV only: office (\";\", Russian headers) or machine (\",\", English headers), see docs/operating.md, CSV exports; or optimiser (the optimisers' columns, \";\" separated, which tsekh cut reads)"	Enums(office, machine, optimiser) default(office) example(optimiser)
//	@Success		200	{object}	floor.CuttingList
//	@Failure		401	{object}	Problem
//	@Failure		404	{object}	Problem
//	@Failure		422	{object}	Problem
//	@Failure		406	{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Router			/api/v1/production-orders/{id}/cutting-list [get]
func (s *server) getCuttingList(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	l, err := s.Floor.CuttingList(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return s.cuttingListAnswer(c, l, fmt.Sprintf("cutting-list-%d.csv", id))
}

// getCuttingLists godoc
//
//	@Summary		The cutting list of several production orders, summed
//	@ID			getCuttingLists
//	@Description	As GET /api/v1/production-orders/{id}/cutting-list, for the production orders ids names (at most 200), summed per board: identical parts of different orders and items are one line with all their origins.
//	@Description	422 naming ids when it is missing, malformed or names production orders that do not exist.
//	@Tags			plan
//	@Produce		json
//	@Produce		text/csv
//	@Security		BearerAuth
//	@Param			ids	query		string	true	"production order ids separated by commas, e.g. 1,2,3"	minlength(1) maxlength(2000) extensions(x-pattern=ids) example(1,2)
//	@Param			layout	query	string	false	"CSV only: office (\";\", Russian headers) or machine (\",\", English headers), see docs/operating.md, CSV exports; or optimiser (the optimisers' columns, \";\" separated, which tsekh cut reads)"	Enums(office, machine, optimiser) default(office) example(optimiser)
//	@Success		200	{object}	floor.CuttingList
//	@Failure		400	{object}	Problem
//	@Failure		401	{object}	Problem
//	@Failure		422	{object}	Problem
//	@Failure		406	{object}	Problem	"the Accept header allows none of the media types it answers in"
//	@Router			/api/v1/production-orders/cutting-list [get]
func (s *server) getCuttingLists(c echo.Context) error {
	ids, err := idsOf(c)
	if err != nil {
		return err
	}
	l, err := s.Floor.CuttingListOf(c.Request().Context(), ids)
	if err != nil {
		return err
	}
	return s.cuttingListAnswer(c, l, "cutting-list.csv")
}

// cuttingListAnswer answers with the cutting list as JSON or, for
// Accept: text/csv, in the layout ?layout= names: the office's or the
// machine's (see csvLayout), or the panel-cutting optimisers' (optimiser).
func (s *server) cuttingListAnswer(c echo.Context, l floor.CuttingList, filename string) error {
	layout := c.QueryParam("layout")
	switch layout {
	case "", csvOffice, csvMachine:
		if wantsCSV(c) {
			cl := s.csvLayoutNamed(layout)
			return writeCSVRows(c, cl, filename, cuttingListCols, cuttingListRows(cl, l))
		}
	case "optimiser":
		if wantsCSV(c) {
			return writeCSVRowsSep(c, filename, cuttingListOptimiserHeader, cuttingListOptimiserRows(l), ';')
		}
	default:
		return apperr.Invalid("invalid query", apperr.Field("layout", "must be office, machine or optimiser"))
	}
	return c.JSON(http.StatusOK, l)
}

// cuttingListCols and cuttingListRows are the cutting list as CSV.
var cuttingListCols = []csvCol{{"Плита", "board"}, {"Декор", "decor"}, {"Материал", "material"}, {"Толщина, мм", "thickness_mm"},
	{"Деталь", "name"}, {"Длина, мм", "length_mm"}, {"Ширина, мм", "width_mm"}, {"Кол-во", "qty"}, {"Текстура", "grain"},
	{"Кромка Д1", "edge_l1"}, {"Кромка Д2", "edge_l2"}, {"Кромка Ш1", "edge_w1"}, {"Кромка Ш2", "edge_w2"}, {"Кромка", "edging"}, {"Куда", "where"}}

// grainRU names a part's grain for the office.
var grainRU = map[string]string{"length": "вдоль длины", "width": "вдоль ширины", "none": "нет"}

func cuttingListRows(cl csvLayout, l floor.CuttingList) [][]string {
	var rows [][]string
	for _, m := range l.Materials {
		for _, p := range m.Parts {
			grain := p.Grain
			if !cl.machine {
				grain = grainRU[p.Grain]
			}
			rows = append(rows, []string{m.Board, m.Decor, m.Material, strconv.Itoa(m.ThicknessMM), p.Name, strconv.Itoa(p.LengthMM), strconv.Itoa(p.WidthMM),
				strconv.Itoa(p.Qty), grain, p.Edges.L1, p.Edges.L2, p.Edges.W1, p.Edges.W2, p.Edging, p.Where})
		}
	}
	return rows
}

// The cutting list as CSV for panel-cutting optimisers (and tsekh cut):
// one row per part line, English column names, ";" separated; board and
// thickness_mm tell the boards apart (tsekh cut --material CODE/THICKNESS).
var cuttingListOptimiserHeader = []string{"id", "board", "decor", "thickness_mm", "name", "length_mm", "width_mm", "qty", "grain",
	"edge_l1", "edge_l2", "edge_w1", "edge_w2", "where"}

func cuttingListOptimiserRows(l floor.CuttingList) [][]string {
	var rows [][]string
	for _, m := range l.Materials {
		for i, p := range m.Parts {
			rows = append(rows, []string{fmt.Sprintf("%s-%d", m.Board, i+1), m.Board, m.Decor, strconv.Itoa(m.ThicknessMM), p.Name,
				strconv.Itoa(p.LengthMM), strconv.Itoa(p.WidthMM), strconv.Itoa(p.Qty), p.Grain, p.Edges.L1, p.Edges.L2, p.Edges.W1, p.Edges.W2, p.Where})
		}
	}
	return rows
}
