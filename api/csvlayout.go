package api

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// The layouts every CSV export comes in (see docs/operating.md, "CSV
// exports"): the office's, for people and their Excel, and the machine's,
// for scripts.
const (
	csvOffice  = "office"
	csvMachine = "machine"
)

// csvLayout is how an export writes its cells: the office's (";", decimal
// commas, times in the factory's time zone as dd.mm.yyyy HH:MM:SS, dates as
// dd.mm.yyyy, да/нет, Russian headers) or the machine's (",", decimal
// points, times in RFC 3339 UTC, dates as YYYY-MM-DD, true/false, English
// headers).
type csvLayout struct {
	machine bool
	loc     *time.Location
}

// csvCol is a column: its header in the office's layout and in the machine's.
type csvCol struct{ ru, en string }

// csvLayoutOf reads ?layout= (office, the default, or machine); 422 naming
// layout for another value.
func (s *server) csvLayoutOf(c echo.Context) (csvLayout, error) {
	switch v := c.QueryParam("layout"); v {
	case "", csvOffice, csvMachine:
		return s.csvLayoutNamed(v), nil
	}
	return csvLayout{}, apperr.Invalid("invalid query", apperr.Field("layout", "must be office or machine"))
}

// csvLayoutNamed is the layout named v: the machine's for "machine", the
// office's otherwise.
func (s *server) csvLayoutNamed(v string) csvLayout {
	loc := s.TimeZone
	if loc == nil {
		loc = time.UTC
	}
	return csvLayout{machine: v == csvMachine, loc: loc}
}

// Comma is the layout's separator.
func (l csvLayout) Comma() rune {
	if l.machine {
		return ','
	}
	return ';'
}

// Header is the header row of cols in the layout's language.
func (l csvLayout) Header(cols []csvCol) []string {
	h := make([]string, len(cols))
	for i, col := range cols {
		h[i] = col.ru
		if l.machine {
			h[i] = col.en
		}
	}
	return h
}

// officeTime is how the office's layout writes a time.
const officeTime = "02.01.2006 15:04:05"

// Time writes a moment; the zero time is an empty cell.
func (l csvLayout) Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	if l.machine {
		return t.UTC().Format(time.RFC3339)
	}
	return t.In(l.loc).Format(officeTime)
}

// TimePtr writes a moment that may be missing.
func (l csvLayout) TimePtr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return l.Time(*t)
}

// Date writes a day; no day is an empty cell.
func (l csvLayout) Date(d database.Date) string {
	if d.IsZero() || l.machine {
		return d.String()
	}
	return d.Format("02.01.2006")
}

// Num writes a number rounded to at most places decimals (trailing zeros
// dropped) with the layout's decimal mark.
func (l csvLayout) Num(v float64, places int) string {
	p := math.Pow10(places)
	v = math.Round(v*p) / p
	if v == 0 {
		v = 0 // no "-0"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if l.machine {
		return s
	}
	return strings.Replace(s, ".", ",", 1)
}

// Qty writes a quantity of a material in its unit: metres to the
// centimetre, sheets and pieces as the API rounds them (to a thousandth:
// sheets begun count in fractions).
func (l csvLayout) Qty(v float64, unit string) string {
	if unit == catalog.UnitMetre {
		return l.Num(v, 2)
	}
	return l.Num(v, 3)
}

// Bool writes yes or no.
func (l csvLayout) Bool(b bool) string {
	switch {
	case l.machine:
		return strconv.FormatBool(b)
	case b:
		return "да"
	}
	return "нет"
}
