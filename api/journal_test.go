package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// Item 7: since and until draw the line at the same millisecond on both
// databases: an event created at …25.729Z is kept by since=…25.729Z and left
// out by until=…25.729Z.
func TestEvents_SinceUntilExactBoundary(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		r := env.Admin(http.MethodPost, "/api/v1/orders", validOrder)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var list struct {
			Items []struct {
				ID        int64
				CreatedAt time.Time `json:"created_at"`
			}
		}
		env.Admin(http.MethodGet, "/api/v1/events?type=order.received", nil).JSON(t, &list)
		require.Len(t, list.Items, 1)
		id := list.Items[0].ID
		ids := func(query string) []int64 {
			t.Helper()
			var l struct{ Items []struct{ ID int64 } }
			r := env.Admin(http.MethodGet, "/api/v1/events?type=order.received&"+query, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			r.JSON(t, &l)
			var out []int64
			for _, e := range l.Items {
				out = append(out, e.ID)
			}
			return out
		}
		at := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
		check := func(created time.Time) {
			t.Helper()
			ms := created.Truncate(time.Millisecond) // as a client that keeps milliseconds writes it
			require.Equal(t, []int64{id}, ids("since="+at(created)), "since=%s keeps the event", at(created))
			require.Equal(t, []int64{id}, ids("since="+at(ms)), "since=%s keeps the event of %s", at(ms), at(created))
			require.Empty(t, ids("until="+at(created)), "until=%s leaves the event out", at(created))
			require.Empty(t, ids("until="+at(ms)), "until=%s leaves the event of %s out", at(ms), at(created))
			require.Empty(t, ids("since="+at(ms.Add(time.Millisecond))))
			require.Equal(t, []int64{id}, ids("until="+at(ms.Add(time.Millisecond))))
			require.Equal(t, []int64{id}, ids("since="+at(ms)+"&until="+at(ms.Add(time.Millisecond))))
			// With an offset: the same instant.
			require.Equal(t, []int64{id}, ids("since="+strings.Replace(created.In(time.FixedZone("", 3*3600)).Format(time.RFC3339Nano), "+", "%2B", 1)))
		}
		// As the database clock wrote it.
		check(list.Items[0].CreatedAt)
		// At the instants of the report, and ones whose milliseconds end in zeros.
		for _, s := range []string{"2026-11-13 17:20:25.729", "2026-11-13 17:20:25.730", "2026-11-13 17:20:25.700", "2026-11-13 17:20:26.000", "2026-11-13 17:20:25.001"} {
			created, err := time.Parse("2006-01-02 15:04:05.000", s)
			require.NoError(t, err)
			set := "UPDATE events SET created_at = ? WHERE id = ?"
			var value any = s // SQLite keeps the database clock's own text
			if env.Dialect == database.Postgres {
				value = created
			}
			require.NoError(t, env.App.DB.Exec(set, value, id).Error)
			check(created)
		}
	})
}
