package page

import (
	"encoding/base64"
	"encoding/json"
	"strconv"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// listCursor is a cursor as clients see it: the list it was made for (its
// route), the sort it continues ("" for a list's default order) with the
// last row's key, and the last row's id. A cursor sent to another list, or
// to another sort of its own, is refused rather than answered with a page of
// rows from somewhere else or with an empty one.
type listCursor struct {
	List string  `json:"l"`
	Sort string  `json:"s,omitempty"`
	Key  *string `json:"k,omitempty"`
	ID   int64   `json:"id"`
}

// ForList returns the cursor clients get for a page of the list (its path,
// e.g. "/api/v1/plan/backlog", or "/api/v1/orders/6116/history" for a list
// of one object's): the cursor a service returned (Next, NextSorted),
// marked with the list. "" stays "" (no next page).
func ForList(list, cursor string) string {
	if cursor == "" {
		return ""
	}
	r, err := Parse("", cursor)
	if err != nil {
		return ""
	}
	b, _ := json.Marshal(listCursor{List: list, Sort: r.Sort, Key: r.Key, ID: r.After})
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseList reads ?limit= and ?cursor= of the list (see ForList): a cursor
// that this API did not return for that list is EINVALID naming cursor.
func ParseList(list, limit, cursor string) (Request, error) {
	r, err := Parse(limit, "")
	if err != nil || cursor == "" {
		return r, err
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) == 0 || b[0] != '{' {
		return r, badCursor()
	}
	var c listCursor
	if err := json.Unmarshal(b, &c); err != nil || c.ID <= 0 {
		return r, badCursor()
	}
	if c.List != list {
		return r, otherList(c.List)
	}
	r.After, r.Sort, r.Key = c.ID, c.Sort, c.Key
	return r, nil
}

// Unsorted refuses the cursor of a sort in a list that has only its default
// order.
func (r Request) Unsorted() error {
	if r.Sort != "" {
		return otherSort(r.Sort)
	}
	return nil
}

func otherList(name string) error {
	return apperr.Invalid("invalid query", apperr.Field("cursor", "continues another list (%s), not this one: give a next_cursor of this list", quoted(name)))
}

// quoted bounds and escapes a list name read from a cursor to quote it back.
func quoted(s string) string {
	if len(s) > 100 {
		s = s[:100]
	}
	return strconv.QuoteToASCII(s)
}
