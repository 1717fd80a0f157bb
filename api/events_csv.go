package api

import (
	"mime"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// journalCSVCols are the journal's columns, the screen the factory's office
// knows.
var journalCSVCols = []csvCol{{"№", "id"}, {"Событие", "type"}, {"Объект", "object"}, {"Данные", "payload"},
	{"Создано", "created_at"}, {"Обработано", "processed_at"}, {"Кто", "actor"}}

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
// as the journal's CSV, page by page (see writeCSV).
func (s *server) writeEventsCSV(c echo.Context, filename string, f events.Filter) error {
	ctx := c.Request().Context()
	return s.streamJournalCSV(c, filename, func(pr page.Request) ([]events.Entry, string, error) {
		return s.Journal.List(ctx, f, pr)
	})
}

// streamJournalCSV writes the journal entries that fetch returns, page after
// page from the first, as CSV in the layout the query names (see writeCSV).
func (s *server) streamJournalCSV(c echo.Context, filename string, fetch func(page.Request) ([]events.Entry, string, error)) error {
	l, err := s.csvLayoutOf(c)
	if err != nil {
		return err
	}
	return writeCSV(c, l, filename, journalCSVCols, journalCSVRow, fetch)
}

// journalCSVRow is the event's row; the actor is "—" for the system in both
// layouts.
func journalCSVRow(l csvLayout, e events.Entry) []string {
	actor := noActor
	if e.Actor != nil {
		actor = e.Actor.Name
	}
	return []string{strconv.FormatInt(e.ID, 10), e.Type, e.Object, string(events.InDeclaredOrder(e.Type, e.Payload)),
		l.Time(e.CreatedAt), l.TimePtr(e.ProcessedAt), actor}
}
