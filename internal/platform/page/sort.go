package page

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// Sort is one order of a list that pages by keyset: by a key, then by the
// row id, so that every row has one place and a cursor (the last row's key
// and id) continues exactly after it however many rows share a key. Rows
// without a key (NULL) come last in either direction.
type Sort struct {
	Name string // as ?sort= names it: "due_date", "-due_date"
	// Key is the SQL expression of the sort key; "" sorts by the id alone
	// (then the cursor is the plain id, as in the lists that do not sort).
	Key string
	ID  string // the SQL expression of the row id
	// Plain makes the cursor the plain id, without the sort's name: the
	// list's default order, whose cursors were plain ids before lists sorted.
	Plain bool
	Desc  bool
	// Nullable says the key may be NULL.
	Nullable bool
	// Parse checks a key read from a cursor and turns it into the value the
	// query compares with; nil passes the string as it is.
	Parse func(string) (any, error)
}

// keyedCursor is the content of a cursor of a list sorted by a key.
type keyedCursor struct {
	Sort string  `json:"s"`
	Key  *string `json:"k,omitempty"`
	ID   int64   `json:"id"`
}

func (r *Request) parseKeyed(b []byte) error {
	var c keyedCursor
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	if c.Sort == "" {
		return errors.New("cursor without its sort")
	}
	r.After, r.Sort, r.Key = c.ID, c.Sort, c.Key
	return nil
}

// SortOf returns the sort that ?sort= names among sorts (the first is the
// default, used when name is empty), or EINVALID naming the choices.
func SortOf(name string, sorts []Sort) (Sort, error) {
	if name == "" {
		return sorts[0], nil
	}
	names := make([]string, len(sorts))
	for i, s := range sorts {
		if s.Name == name {
			return s, nil
		}
		names[i] = s.Name
	}
	return Sort{}, apperr.Invalid("invalid query", apperr.Field("sort", "must be one of %s", strings.Join(names, ", ")))
}

func (s Sort) cmp() string {
	if s.Desc {
		return "<"
	}
	return ">"
}

// OrderBy returns the ORDER BY list of the sort.
func (s Sort) OrderBy() string {
	dir := " ASC"
	if s.Desc {
		dir = " DESC"
	}
	if s.Key == "" {
		return s.ID + dir
	}
	order := s.Key + dir + ", " + s.ID + dir
	if s.Nullable {
		// false (0) before true (1) on both databases: NULLs last.
		order = "(" + s.Key + ") IS NULL, " + order
	}
	return order
}

// After returns the condition (and its arguments) that selects the rows
// after the cursor of r; "" on the first page. It returns EINVALID when the
// cursor belongs to another sort of the list or its key is not one.
func (s Sort) After(r Request) (string, []any, error) {
	if r.After == 0 {
		return "", nil, nil
	}
	want := s.Name
	if s.Plain {
		want = ""
	}
	if r.Sort != want {
		return "", nil, otherSort(r.Sort)
	}
	if s.Key == "" {
		return s.ID + " " + s.cmp() + " ?", []any{r.After}, nil
	}
	if r.Key == nil {
		if !s.Nullable {
			return "", nil, badCursor()
		}
		return "((" + s.Key + ") IS NULL AND " + s.ID + " " + s.cmp() + " ?)", []any{r.After}, nil
	}
	var key any = *r.Key
	if s.Parse != nil {
		v, err := s.Parse(*r.Key)
		if err != nil {
			return "", nil, badCursor()
		}
		key = v
	}
	cond := "(" + s.Key + ") " + s.cmp() + " ? OR ((" + s.Key + ") = ? AND " + s.ID + " " + s.cmp() + " ?)"
	if s.Nullable {
		cond += " OR (" + s.Key + ") IS NULL"
	}
	return "(" + cond + ")", []any{key, key, r.After}, nil
}

func otherSort(name string) error {
	if name == "" {
		name = "the default one"
	}
	return apperr.Invalid("invalid query", apperr.Field("cursor", "continues a list in another order (%s): give the same sort as the first page", name))
}

// NextSorted is Next for a list in the sort s: key returns a row's sort key
// (nil when it has none).
func NextSorted[T any](rows []T, limit int, s Sort, id func(T) int64, key func(T) *string) ([]T, string) {
	if s.Plain {
		return Next(rows, limit, id)
	}
	if len(rows) <= limit {
		return rows, ""
	}
	rows = rows[:limit]
	last := rows[len(rows)-1]
	c := keyedCursor{Sort: s.Name, ID: id(last)}
	if s.Key != "" {
		c.Key = key(last)
	}
	b, _ := json.Marshal(c)
	return rows, base64.RawURLEncoding.EncodeToString(b)
}
