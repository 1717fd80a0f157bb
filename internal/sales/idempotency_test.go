package sales_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/sales"
)

// ageKeys moves the keys' creation back by d on the database clock.
func ageKeys(t *testing.T, db *gorm.DB, d time.Duration, where string, args ...any) {
	t.Helper()
	require.NoError(t, db.Exec("UPDATE sales_idempotency_keys SET created_at = "+database.NowPlus(db, -d)+" WHERE "+where, args...).Error)
}

func keyCount(t *testing.T, db *gorm.DB) int64 {
	t.Helper()
	var n int64
	require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM sales_idempotency_keys"), &n))
	return n
}

// Keys older than the TTL go, in batches, done or left in flight; younger
// ones stay; a request repeated after its key expired is a new request.
func TestIdempotencyKeys_Expire(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		ctx := events.WithActor(context.Background(), events.Actor{ID: 1, Name: "Администратор"})
		in := sales.NewOrder{Customer: sales.Customer{Name: "Иван"}, Items: []sales.NewItem{{SKU: "SHK-KUPE-1600", Qty: 1}}}
		body := []byte(`{"customer": {"name": "Иван"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1}]}`)
		key := func(k string) sales.IdempotencyKey {
			return sales.IdempotencyKey{UserID: 1, Key: k, RequestHash: sales.RequestHash(body)}
		}

		// 23 old keys: 20 done, 3 left in flight by requests that died; 4 young ones.
		for i := range 20 {
			_, err := f.sales.CreateOrderOnce(ctx, key(fmt.Sprint("old-", i)), in)
			require.NoError(t, err)
		}
		require.NoError(t, db.Exec("INSERT INTO sales_idempotency_keys (user_id, key, request_hash, state) VALUES (1, 'dead-1', 'h', 'in_flight'), (1, 'dead-2', 'h', 'in_flight'), (2, 'dead-3', 'h', 'in_flight')").Error)
		ageKeys(t, db, 25*time.Hour, "1 = 1")
		first, err := f.sales.CreateOrderOnce(ctx, key("young-0"), in)
		require.NoError(t, err)
		for i := 1; i < 4; i++ {
			_, err := f.sales.CreateOrderOnce(ctx, key(fmt.Sprint("young-", i)), in)
			require.NoError(t, err)
		}
		ageKeys(t, db, 23*time.Hour, "key = ?", "young-3") // within the TTL still
		require.Equal(t, int64(27), keyCount(t, db))

		n, err := f.sales.ExpireIdempotencyKeysInBatches(context.Background(), 24*time.Hour, 5) // five batches
		require.NoError(t, err)
		require.Equal(t, int64(23), n)
		var left []string
		require.NoError(t, database.Scan(db.Raw("SELECT key FROM sales_idempotency_keys ORDER BY key"), &left))
		require.Equal(t, []string{"young-0", "young-1", "young-2", "young-3"}, left)
		n, err = f.sales.ExpireIdempotencyKeys(context.Background(), 24*time.Hour)
		require.NoError(t, err)
		require.Zero(t, n, "nothing more to expire")

		// A repeat of an expired key is a new request; of a young one, a replay.
		again, err := f.sales.CreateOrderOnce(ctx, key("old-0"), in)
		require.NoError(t, err)
		require.False(t, again.Replayed)
		replay, err := f.sales.CreateOrderOnce(ctx, key("young-0"), in)
		require.NoError(t, err)
		require.True(t, replay.Replayed)
		require.Equal(t, first.Body, replay.Body)

		// A run that is cancelled stops between batches and says so.
		ageKeys(t, db, 25*time.Hour, "1 = 1")
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		n, err = f.sales.ExpireIdempotencyKeys(cancelled, 24*time.Hour)
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, n)
	})
}

// A key that expires while its request is in flight (the maintenance deleted
// it) must not leave an order behind it: a repeat would create it again.
// A trigger deletes the key as the order is written, as an expiry would.
func TestIdempotencyKeys_ExpiredInFlight(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		trigger := `CREATE TRIGGER expire_now AFTER INSERT ON sales_orders
BEGIN DELETE FROM sales_idempotency_keys; END`
		if database.DialectOf(db) == database.Postgres {
			require.NoError(t, db.Exec(`CREATE FUNCTION expire_now() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN DELETE FROM sales_idempotency_keys; RETURN NULL; END $$`).Error)
			trigger = `CREATE TRIGGER expire_now AFTER INSERT ON sales_orders FOR EACH ROW EXECUTE FUNCTION expire_now()`
		}
		require.NoError(t, db.Exec(trigger).Error)
		in := sales.NewOrder{Customer: sales.Customer{Name: "Иван"}, Items: []sales.NewItem{{SKU: "SHK-KUPE-1600", Qty: 1}}}
		_, err := f.sales.CreateOrderOnce(context.Background(), sales.IdempotencyKey{UserID: 1, Key: "k", RequestHash: "h"}, in)
		require.Equal(t, apperr.ECONFLICT, apperr.Code(err), "%v", err)
		var orders int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM sales_orders"), &orders))
		require.Zero(t, orders)
	})
}
