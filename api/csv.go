package api

import (
	"encoding/csv"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/page"
)

// MIMETextCSV is the media type of the lists a spreadsheet imports.
const MIMETextCSV = "text/csv"

// wantsCSV reports whether the client's Accept header, read with its
// q-values (see negotiate), prefers CSV to what else the endpoint offers.
func wantsCSV(c echo.Context) bool { return mediaOf(c) == MIMETextCSV }

// writeCSV answers with every row of a list as CSV: UTF-8 with a byte order
// mark (so that Excel reads Cyrillic right), a header row, then the rows that
// fetch returns page after page from the first (limit and cursor do not
// apply: a spreadsheet wants the whole list the filters select). The list is
// streamed: each page is written out and flushed before the next is read, so
// that an export holds one page in memory however long the list. The first
// page is read before anything is written, so that a filter the service
// refuses is still a problem+json; a failure after that cuts the answer off
// (the client sees a broken transfer, never a short list that looks whole).
// Every cell is neutralised (see csvCell). The layout l gives the separator,
// the header row's language (cols) and how row writes times and numbers.
func writeCSV[T any](c echo.Context, l csvLayout, filename string, cols []csvCol, row func(csvLayout, T) []string, fetch func(page.Request) ([]T, string, error)) error {
	req := page.Request{Limit: page.MaxLimit}
	items, next, err := fetch(req)
	if err != nil {
		return err
	}
	w, err := newCSVStream(c, filename, l.Header(cols), l.Comma())
	if err != nil {
		return err
	}
	for {
		for _, it := range items {
			if err := w.Row(row(l, it)); err != nil {
				return w.abort(err)
			}
		}
		if err := w.Flush(); err != nil {
			return w.abort(err)
		}
		if next == "" {
			return nil
		}
		if req, err = page.Parse("", next); err != nil {
			return w.abort(err)
		}
		req.Limit = page.MaxLimit
		if items, next, err = fetch(req); err != nil {
			return w.abort(err)
		}
	}
}

// writeCSVRows answers with rows already at hand (a cutting list), written
// in the layout l, as CSV (see writeCSV).
func writeCSVRows(c echo.Context, l csvLayout, filename string, cols []csvCol, rows [][]string) error {
	return writeCSVRowsSep(c, filename, l.Header(cols), rows, l.Comma())
}

// writeCSVRowsSep is writeCSVRows with a header and separator of its own
// (the cutting list's optimiser layout, which tsekh cut reads).
func writeCSVRowsSep(c echo.Context, filename string, header []string, rows [][]string, comma rune) error {
	w, err := newCSVStream(c, filename, header, comma)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := w.Row(r); err != nil {
			return w.abort(err)
		}
	}
	if err := w.Flush(); err != nil {
		return w.abort(err)
	}
	return nil
}

// csvStream writes a CSV answer row by row: the status and headers are sent
// when it is made, every cell is neutralised (csvCell), and Flush sends what
// is buffered to the client. Any handler that answers with CSV writes
// through one.
type csvStream struct {
	c   echo.Context
	w   *csv.Writer
	row []string
}

// newCSVStream sends the headers of a CSV attachment named filename, the
// byte order mark and the header row, cells separated by comma.
func newCSVStream(c echo.Context, filename string, header []string, comma rune) (*csvStream, error) {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, MIMETextCSV+"; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+filename+`"`)
	c.Response().WriteHeader(http.StatusOK)
	s := &csvStream{c: c}
	out := clientWriter{c.Response()}
	if _, err := io.WriteString(out, "\uFEFF"); err != nil {
		return nil, err // the client has gone
	}
	s.w = csv.NewWriter(out)
	s.w.Comma = comma
	if err := s.Row(header); err != nil {
		return nil, err
	}
	return s, nil
}

// Row writes one row, each cell neutralised.
func (s *csvStream) Row(cells []string) error {
	s.row = s.row[:0]
	for _, cell := range cells {
		s.row = append(s.row, csvCell(cell))
	}
	return s.w.Write(s.row)
}

// csvPageWindow is how long the client has to take each page of an export
// (the server's WriteTimeout bounds a whole answer; an export of many pages
// may take longer, as long as each page goes out).
const csvPageWindow = time.Minute

// Flush sends the rows written so far, and gives the next ones
// csvPageWindow to go out.
func (s *csvStream) Flush() error {
	s.w.Flush()
	if err := s.w.Error(); err != nil {
		return err
	}
	s.c.Response().Flush()
	// Not every writer has a deadline (tests' recorders): nothing to extend then.
	_ = http.NewResponseController(s.c.Response()).SetWriteDeadline(time.Now().Add(csvPageWindow))
	return nil
}

// abort ends an answer whose status is sent: the error is logged, and the
// handler panics with http.ErrAbortHandler so that the server cuts the
// connection (a chunked answer without its last chunk) instead of ending a
// short list cleanly. A client that has gone (a write error) is only logged.
func (s *csvStream) abort(err error) error {
	ctx := s.c.Request().Context()
	var werr csvWriteError
	if errors.As(err, &werr) || ctx.Err() != nil {
		slog.InfoContext(ctx, "CSV export not received whole", "err", err, "path", s.c.Request().URL.Path)
		return nil
	}
	slog.ErrorContext(ctx, "CSV export cut off", "err", err, "path", s.c.Request().URL.Path,
		"request_id", s.c.Response().Header().Get(echo.HeaderXRequestID))
	panic(http.ErrAbortHandler)
}

// clientWriter is the response as the CSV writer sees it: its errors are
// the client's (csvWriteError), not the export's.
type clientWriter struct{ w io.Writer }

func (cw clientWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	if err != nil {
		err = csvWriteError{err}
	}
	return n, err
}

// csvWriteError marks a failure to write to the client.
type csvWriteError struct{ error }

func (e csvWriteError) Unwrap() error { return e.error }

// csvCell keeps a spreadsheet from running text as a formula (OWASP's CSV
// injection advice): a cell that starts with = + - @, a tab or a carriage
// return gets a leading apostrophe, which Excel and LibreOffice show as
// text. A negative number is such a cell too (-1+1+cmd|' /C calc'!A0 starts
// like one), so it comes as text (a shortage's negative "available" among
// them: a spreadsheet shows it, without reckoning with it).
func csvCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}
