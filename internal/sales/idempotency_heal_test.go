package sales_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/sales"
)

// holdOrders makes every insert of a sales order wait in its transaction
// (a test-only trigger sleeping while heal_hold says so), so that a test can
// cut the request's connection while the order's transaction is open.
func holdOrders(t *testing.T, db *gorm.DB) {
	t.Helper()
	for _, q := range []string{
		`CREATE TABLE heal_hold (hold boolean NOT NULL)`,
		`INSERT INTO heal_hold VALUES (true)`,
		`CREATE FUNCTION heal_hold() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WHILE (SELECT hold FROM heal_hold) LOOP PERFORM pg_sleep(0.01); END LOOP;
    RETURN NULL;
END $$`,
		`CREATE TRIGGER heal_hold AFTER INSERT ON sales_orders FOR EACH ROW EXECUTE FUNCTION heal_hold()`,
	} {
		require.NoError(t, db.Exec(q).Error)
	}
}

// heldBackend waits until a session of the pool named app sleeps in
// heal_hold's trigger and returns its process id.
func heldBackend(t *testing.T, admin *gorm.DB, app string) int64 {
	t.Helper()
	var pid int64
	require.Eventually(t, func() bool {
		require.NoError(t, database.Scan(admin.Raw(`SELECT coalesce(max(pid), 0) FROM pg_stat_activity
WHERE application_name = ? AND wait_event = 'PgSleep'`, app), &pid))
		return pid != 0
	}, 10*time.Second, 5*time.Millisecond)
	return pid
}

// atOnce bounds "at once": far below the two minutes after which a held
// key counts as stale, with room for a busy machine.
const atOnce = 10 * time.Second

// A request whose database connection dies in the middle of the order's
// transaction leaves nothing behind that blocks its key: the retry with the
// same key creates the order at once, and only once. A request with the
// same key that arrived meanwhile waited for the first and goes ahead when
// it fails. When the process itself is gone (its pool closed under it, so
// that nothing can clean up after the request), the key is free all the
// same for the restarted process.
func TestIdempotencyKeys_HealAfterConnectionLoss(t *testing.T) {
	in := sales.NewOrder{Customer: sales.Customer{Name: "Иван"}, Items: []sales.NewItem{{SKU: "SHK-KUPE-1600", Qty: 1}}}
	setup := func(t *testing.T) (admin *gorm.DB, open func() *gorm.DB, app string) {
		opts := dbtest.Options(t, database.Postgres)
		admin, err := database.Open(context.Background(), opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = database.Close(admin) })
		_, err = database.Migrate(context.Background(), admin)
		require.NoError(t, err)
		_, err = catalog.NewService(admin).SeedDemo(context.Background())
		require.NoError(t, err)
		holdOrders(t, admin)
		app = "tsekh-heal-" + time.Now().Format("150405.000000")
		open = func() *gorm.DB {
			o := opts
			o.PostgresURL += "&application_name=" + app
			db, err := database.Open(context.Background(), o)
			require.NoError(t, err)
			t.Cleanup(func() { _ = database.Close(db) })
			return db
		}
		return admin, open, app
	}
	orders := func(t *testing.T, admin *gorm.DB) int64 {
		var n int64
		require.NoError(t, database.Scan(admin.Raw("SELECT count(*) FROM sales_orders"), &n))
		return n
	}
	key := sales.IdempotencyKey{UserID: 1, Key: "blip", RequestHash: "h"}

	t.Run("ConnectionKilled", func(t *testing.T) {
		t.Parallel()
		admin, open, app := setup(t)
		svc := sales.NewService(open())
		first := make(chan error, 1)
		go func() { _, err := svc.CreateOrderOnce(context.Background(), key, in); first <- err }()
		pid := heldBackend(t, admin, app)
		// The same key again while the first holds it: it waits.
		type answer struct {
			res sales.StoredResponse
			err error
		}
		second := make(chan answer, 1)
		go func() {
			res, err := svc.CreateOrderOnce(context.Background(), key, in)
			second <- answer{res, err}
		}()
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, admin.Exec("SELECT pg_terminate_backend(?)", pid).Error)
		require.NoError(t, admin.Exec("UPDATE heal_hold SET hold = false").Error)
		require.Error(t, <-first)
		select {
		case a := <-second:
			require.NoError(t, a.err)
			require.Equal(t, 201, a.res.Status)
			require.False(t, a.res.Replayed)
		case <-time.After(5 * time.Second):
			t.Fatal("the request waiting for the key did not go ahead when the first one died")
		}
		start := time.Now()
		again, err := svc.CreateOrderOnce(context.Background(), key, in)
		require.NoError(t, err)
		require.True(t, again.Replayed)
		require.Less(t, time.Since(start), atOnce, "not after the key goes stale (%s)", sales.IdempotencyStale)
		require.EqualValues(t, 1, orders(t, admin))
	})

	t.Run("ProcessGone", func(t *testing.T) {
		t.Parallel()
		admin, open, app := setup(t)
		db := open()
		first := make(chan error, 1)
		go func() { _, err := sales.NewService(db).CreateOrderOnce(context.Background(), key, in); first <- err }()
		pid := heldBackend(t, admin, app)
		// The process dies: its pool goes, then its connection.
		require.NoError(t, database.Close(db))
		require.NoError(t, admin.Exec("SELECT pg_terminate_backend(?)", pid).Error)
		require.NoError(t, admin.Exec("UPDATE heal_hold SET hold = false").Error)
		require.Error(t, <-first)
		// The restarted process: the retry creates the order at once.
		svc := sales.NewService(open())
		start := time.Now()
		res, err := svc.CreateOrderOnce(context.Background(), key, in)
		require.NoError(t, err, "code %s", apperr.Code(err))
		require.Equal(t, 201, res.Status)
		require.False(t, res.Replayed)
		require.Less(t, time.Since(start), atOnce, "not after the key goes stale (%s)", sales.IdempotencyStale)
		again, err := svc.CreateOrderOnce(context.Background(), key, in)
		require.NoError(t, err)
		require.True(t, again.Replayed)
		require.Equal(t, string(res.Body), string(again.Body))
		require.EqualValues(t, 1, orders(t, admin))
	})
}
