package input

import (
	"time"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// The range of every date and time tsekh takes: anything outside it is a
// typing error (year 0000, 9999-12-31), never a day a factory plans for.
var (
	MinDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxDate = time.Date(2100, 12, 31, 0, 0, 0, 0, time.UTC)
)

// dateRange is the range as the error messages say it.
const dateRange = "from 2000-01-01 to 2100-12-31"

// Date reads an optional day, "YYYY-MM-DD" from MinDate to MaxDate; "" is
// the zero Date.
func Date(field, s string) (database.Date, []apperr.FieldError) {
	if s == "" {
		return database.Date{}, nil
	}
	d, err := database.ParseDate(s)
	switch {
	case err != nil:
		return database.Date{}, []apperr.FieldError{apperr.Field(field, "must be a date of the form YYYY-MM-DD")}
	case d.Before(MinDate) || d.After(MaxDate):
		return database.Date{}, []apperr.FieldError{apperr.Field(field, "must be a date %s", dateRange)}
	}
	return d, nil
}

// Time reads an optional RFC 3339 time on a day from MinDate to MaxDate (in
// UTC); "" is the zero time.
func Time(field, s string) (time.Time, []apperr.FieldError) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	switch {
	case err != nil:
		return time.Time{}, []apperr.FieldError{apperr.Field(field, "must be a time in RFC 3339 form, e.g. 2026-11-13T17:20:04Z")}
	case t.Before(MinDate) || !t.Before(MaxDate.AddDate(0, 0, 1)):
		return time.Time{}, []apperr.FieldError{apperr.Field(field, "must be a time %s (UTC)", dateRange)}
	}
	return t, nil
}
