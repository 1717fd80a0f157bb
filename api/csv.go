package api

import (
	"encoding/csv"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/page"
)

// MIMETextCSV is the media type of the lists a spreadsheet imports.
const MIMETextCSV = "text/csv"

// wantsCSV reports whether the client asked for CSV (Accept: text/csv).
func wantsCSV(c echo.Context) bool {
	return strings.Contains(c.Request().Header.Get(echo.HeaderAccept), MIMETextCSV)
}

// writeCSV answers with every row of a list as CSV: UTF-8 with a byte order
// mark (so that Excel reads Cyrillic right), a header row, then the rows that
// fetch returns page after page from the first (limit and cursor do not
// apply: a spreadsheet wants the whole list the filters select). A cell that a
// spreadsheet would run as a formula is prefixed with an apostrophe.
func writeCSV[T any](c echo.Context, filename string, header []string, row func(T) []string, fetch func(page.Request) ([]T, string, error)) error {
	var all [][]string
	req := page.Request{Limit: page.MaxLimit}
	for {
		items, next, err := fetch(req)
		if err != nil {
			return err
		}
		for _, it := range items {
			all = append(all, row(it))
		}
		if next == "" {
			break
		}
		if req, err = page.Parse("", next); err != nil {
			return err
		}
		req.Limit = page.MaxLimit
	}
	return writeCSVRows(c, filename, header, all)
}

// writeCSVRows answers with the rows as CSV (see writeCSV).
func writeCSVRows(c echo.Context, filename string, header []string, rows [][]string) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, MIMETextCSV+"; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+filename+`"`)
	c.Response().WriteHeader(http.StatusOK)
	if _, err := c.Response().Write([]byte("\uFEFF")); err != nil {
		return err
	}
	w := csv.NewWriter(c.Response())
	if err := w.Write(header); err != nil {
		return err
	}
	for _, r := range rows {
		for i, cell := range r {
			r[i] = csvCell(cell)
		}
		if err := w.Write(r); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

// csvCell keeps a spreadsheet from running text as a formula: a cell that
// starts with = + @ or a tab, or with - not followed by a digit, gets a
// leading apostrophe. Numbers, negative ones included, stay numbers.
func csvCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '@', '\t', '\r':
		return "'" + s
	case '-':
		if len(s) == 1 || s[1] < '0' || s[1] > '9' {
			return "'" + s
		}
	}
	return s
}
