package api

import (
	"encoding/csv"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// journalCSVHeader is the journal's header row, the columns of the screen
// the factory's office knows.
var journalCSVHeader = []string{"№", "Событие", "Объект", "Данные", "Создано", "Обработано", "Кто"}

// journalCSVTime is how the journal's CSV writes a time, in the factory's
// time zone.
const journalCSVTime = "02.01.2006 15:04:05"

// noActor names the system in the journal's "Кто" column.
const noActor = "—"

// prefersCSV reports whether the request's Accept header ranks text/csv
// above application/json (RFC 9110 q-values; a more specific range wins over
// a wildcard). JSON is the default: with no Accept, with */* alone, or with
// text/csv at a lower q-value or at q=0.
func prefersCSV(c echo.Context) bool {
	accept := c.Request().Header.Values(echo.HeaderAccept)
	if len(accept) == 0 {
		return false
	}
	csvQ, jsonQ := -1.0, -1.0   // -1: not named
	csvSpec, jsonSpec := -1, -1 // how specific the range that set the q-value was
	for _, part := range strings.Split(strings.Join(accept, ","), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil || q < 0 || q > 1 {
				continue
			}
		}
		match := func(full string, best *float64, spec *int) {
			typ, _, _ := strings.Cut(full, "/")
			s := -1
			switch mt {
			case full:
				s = 2
			case typ + "/*":
				s = 1
			case "*/*":
				s = 0
			}
			if s > *spec {
				*best, *spec = q, s
			}
		}
		match(MIMETextCSV, &csvQ, &csvSpec)
		match(echo.MIMEApplicationJSON, &jsonQ, &jsonSpec)
	}
	// text/csv only when it is named outright (a wildcard picks JSON) and
	// not ranked below JSON.
	return csvSpec == 2 && csvQ > 0 && csvQ >= jsonQ
}

// writeEventsCSV answers with every event the filter selects, newest first,
// as the journal's CSV. The journal is read and written page by page, each
// page flushed to the client before the next is read, so that the whole
// journal is never held in memory.
func (s *server) writeEventsCSV(c echo.Context, filename string, f events.Filter) error {
	ctx := c.Request().Context()
	return s.streamJournalCSV(c, filename, func(pr page.Request) ([]events.Entry, string, error) {
		return s.Journal.List(ctx, f, pr)
	})
}

// streamJournalCSV writes the journal entries that fetch returns, page after
// page from the first, as CSV (UTF-8 with a byte order mark, a header row,
// one row per event, every cell neutralised as csvCell does for Excel). The
// first page is read before anything is sent, so that its error is still a
// problem document; a later error ends the body early.
func (s *server) streamJournalCSV(c echo.Context, filename string, fetch func(page.Request) ([]events.Entry, string, error)) error {
	req := page.Request{Limit: page.MaxLimit}
	entries, next, err := fetch(req)
	if err != nil {
		return err
	}
	loc := s.TimeZone
	if loc == nil {
		loc = time.UTC
	}
	res := c.Response()
	h := res.Header()
	h.Set(echo.HeaderContentType, MIMETextCSV+"; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+filename+`"`)
	res.WriteHeader(http.StatusOK)
	if _, err := res.Write([]byte("\uFEFF")); err != nil {
		return err
	}
	w := csv.NewWriter(res)
	if err := w.Write(journalCSVHeader); err != nil {
		return err
	}
	row := make([]string, len(journalCSVHeader))
	for {
		for _, e := range entries {
			journalCSVRow(row, e, loc)
			for i, cell := range row {
				row[i] = csvCell(cell)
			}
			if err := w.Write(row); err != nil {
				return err
			}
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return err
		}
		res.Flush()
		if next == "" {
			return nil
		}
		if req, err = page.Parse("", next); err != nil {
			return err
		}
		req.Limit = page.MaxLimit
		if entries, next, err = fetch(req); err != nil {
			s.Logger.ErrorContext(c.Request().Context(), "journal CSV cut short", "err", err,
				"request_id", res.Header().Get(echo.HeaderXRequestID))
			return err
		}
	}
}

// journalCSVRow fills row with the event's cells.
func journalCSVRow(row []string, e events.Entry, loc *time.Location) {
	row[0] = strconv.FormatInt(e.ID, 10)
	row[1] = e.Type
	row[2] = e.Object
	row[3] = string(events.InDeclaredOrder(e.Type, e.Payload))
	row[4] = e.CreatedAt.In(loc).Format(journalCSVTime)
	row[5] = ""
	if e.ProcessedAt != nil {
		row[5] = e.ProcessedAt.In(loc).Format(journalCSVTime)
	}
	row[6] = noActor
	if e.Actor != nil {
		row[6] = e.Actor.Name
	}
}
