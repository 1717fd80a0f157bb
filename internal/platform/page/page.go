// Package page implements keyset pagination: a limit and an opaque cursor
// that names the last row a client has seen.
package page

import (
	"encoding/base64"
	"strconv"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// Limits of a page.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Request is a page request: at most Limit rows after the row the cursor names.
type Request struct {
	Limit int
	After int64 // the id of the last row seen; 0 for the first page

	// For a list sorted by a key (see Sort): the sort the cursor continues
	// and the last row's key (nil when that row had none).
	Sort string
	Key  *string
}

// Parse reads ?limit= and ?cursor= as the client sent them.
func Parse(limit, cursor string) (Request, error) {
	r := Request{Limit: DefaultLimit}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > MaxLimit {
			return r, apperr.Invalid("invalid query", apperr.Field("limit", "must be a whole number from 1 to %d", MaxLimit))
		}
		r.Limit = n
	}
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err == nil && len(b) > 0 && b[0] == '{' {
			err = r.parseKeyed(b)
		} else if err == nil {
			r.After, err = strconv.ParseInt(string(b), 10, 64)
		}
		if err != nil || r.After <= 0 {
			return r, badCursor()
		}
	}
	return r, nil
}

func badCursor() error {
	return apperr.Invalid("invalid query", apperr.Field("cursor", "is not a cursor this API returned"))
}

// Cursor returns the cursor that continues after the row with the id.
func Cursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(id, 10)))
}

// Next returns the next page's cursor: empty when rows has no more than
// limit items (the caller fetches limit+1 rows to know), and trims rows to
// the limit.
func Next[T any](rows []T, limit int, id func(T) int64) ([]T, string) {
	if len(rows) <= limit {
		return rows, ""
	}
	rows = rows[:limit]
	return rows, Cursor(id(rows[len(rows)-1]))
}
