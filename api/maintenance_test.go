package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// The maintenance job expires Idempotency-Keys older than
// IDEMPOTENCY_KEY_TTL: a request repeated with an expired key is a new
// request, one repeated within the TTL a replay; /metrics says what the job
// did.
func TestMaintenance_ExpiresIdempotencyKeys(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		db := env.App.DB
		order := func(key string) (int64, bool) {
			t.Helper()
			r := env.Do(http.MethodPost, "/api/v1/orders", validOrder, apptest.AdminToken, "Idempotency-Key", key)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			var o struct{ ID int64 }
			r.JSON(t, &o)
			return o.ID, r.Header.Get("Idempotent-Replayed") == "true"
		}
		old, replayed := order("key-old")
		require.False(t, replayed)
		young, _ := order("key-young")
		again, replayed := order("key-old")
		require.True(t, replayed)
		require.Equal(t, old, again)

		// key-old is now 25 hours old, key-young 23: the TTL is 24 hours.
		age := func(key string, d time.Duration) {
			require.NoError(t, db.Exec("UPDATE sales_idempotency_keys SET created_at = "+database.NowPlus(db, -d)+" WHERE key = ?", key).Error)
		}
		age("key-old", 25*time.Hour)
		age("key-young", 23*time.Hour)
		require.Equal(t, 24*time.Hour, env.App.Config.IdempotencyKeyTTL)
		ran, err := env.App.Maintenance.RunOnce(context.Background())
		require.NoError(t, err)
		require.True(t, ran)

		renewed, replayed := order("key-old")
		require.False(t, replayed, "an expired key is a new request")
		require.NotEqual(t, old, renewed)
		again, replayed = order("key-young")
		require.True(t, replayed, "a key within its TTL still replays")
		require.Equal(t, young, again)

		m := env.Admin(http.MethodGet, "/metrics", nil)
		require.Equal(t, http.StatusOK, m.Status)
		require.Contains(t, string(m.Body), `tsekh_maintenance_runs_total{outcome="ok",task="expire_idempotency_keys"} 1`)
		require.Contains(t, string(m.Body), `tsekh_maintenance_rows_total{task="expire_idempotency_keys"} 1`)
	})
}

// The maintenance job compacts the outbox's batch rows, and the journal
// reads the same before and after.
func TestMaintenance_CompactsEventBatches(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		for range 3 {
			require.Equal(t, http.StatusCreated, env.Admin(http.MethodPost, "/api/v1/orders", validOrder).Status)
			env.Dispatch()
		}
		count := func() (n int64) {
			require.NoError(t, database.Scan(env.App.DB.Raw("SELECT count(*) FROM events_batches"), &n))
			return n
		}
		before := count()
		require.Positive(t, before)
		journal := env.Admin(http.MethodGet, "/api/v1/events?limit=500", nil)
		require.Equal(t, http.StatusOK, journal.Status)
		ran, err := env.App.Maintenance.RunOnce(context.Background())
		require.NoError(t, err)
		require.True(t, ran)
		require.Less(t, count(), before)
		require.JSONEq(t, string(journal.Body), string(env.Admin(http.MethodGet, "/api/v1/events?limit=500", nil).Body))
		m := env.Admin(http.MethodGet, "/metrics", nil)
		require.Contains(t, string(m.Body), `tsekh_maintenance_runs_total{outcome="ok",task="compact_event_batches"} 1`)
	})
}
