package page

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	byDue    = Sort{Name: "due_date", Key: "due", ID: "id", Nullable: true}
	byDueRev = Sort{Name: "-due_date", Key: "due", ID: "id", Desc: true, Nullable: true}
	byID     = Sort{Name: "received", ID: "id", Plain: true}
)

func TestSort_CursorRoundTrip(t *testing.T) {
	type row struct {
		id  int64
		due *string
	}
	d := "2026-12-01"
	rows := []row{{1, &d}, {2, nil}, {3, nil}}
	id := func(r row) int64 { return r.id }
	key := func(r row) *string { return r.due }

	_, next := NextSorted(rows, 1, byDue, id, key)
	r, err := Parse("", next)
	require.NoError(t, err)
	require.Equal(t, Request{Limit: DefaultLimit, After: 1, Sort: "due_date", Key: &d}, r)
	where, args, err := byDue.After(r)
	require.NoError(t, err)
	require.Equal(t, "((due) > ? OR ((due) = ? AND id > ?) OR (due) IS NULL)", where)
	require.Equal(t, []any{d, d, int64(1)}, args)

	_, next = NextSorted(rows, 2, byDue, id, key)
	r, err = Parse("", next)
	require.NoError(t, err)
	require.Nil(t, r.Key)
	where, args, err = byDue.After(r)
	require.NoError(t, err)
	require.Equal(t, "((due) IS NULL AND id > ?)", where)
	require.Equal(t, []any{int64(2)}, args)
	_, _, err = byDueRev.After(r)
	require.Error(t, err, "a cursor continues only its own sort")
	_, _, err = byID.After(r)
	require.Error(t, err)

	// The default order keeps the plain id cursor it always had.
	_, next = NextSorted(rows, 1, byID, id, key)
	require.Equal(t, Cursor(1), next)
	r, err = Parse("", next)
	require.NoError(t, err)
	where, _, err = byID.After(r)
	require.NoError(t, err)
	require.Equal(t, "id > ?", where)
	_, _, err = byDue.After(r)
	require.Error(t, err)

	require.Equal(t, "(due) IS NULL, due DESC, id DESC", byDueRev.OrderBy())
}

func TestSort_BadCursors(t *testing.T) {
	for _, raw := range []string{`{"s":"","id":1}`, `{"s":"due_date","id":0}`, `{"s":"due_date","id":1`, `{}`, `-3`} {
		_, err := Parse("", base64.RawURLEncoding.EncodeToString([]byte(raw)))
		require.Error(t, err, raw)
	}
	_, err := SortOf("priority", []Sort{byID, byDue})
	require.Error(t, err)
	s, err := SortOf("", []Sort{byID, byDue})
	require.NoError(t, err)
	require.Equal(t, "received", s.Name)
}
