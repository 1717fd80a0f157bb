package sales_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/sales"
)

// The deadlock of issue 24: sales.production handling prod_order.started
// (of one item) and prod_order.completed (of another) of one order in one
// batch, while a PATCH and a shipment of the same order run. A test-only
// trigger makes the batch pause after it has changed the started item, and
// the PATCH and the shipment start in that pause. Taken in one order (the
// order's row, then its items by id), the locks make them wait in turn;
// taken the other way round they deadlock, and a deadlock or serialization
// failure left over is run again by database.Transaction: no call answers
// with an internal error, nothing is lost, nothing is doubled.
func TestLockOrder_ProductionAgainstChangesAndShipments(t *testing.T) {
	opts := dbtest.Options(t, database.Postgres)
	app := "tsekh-locks-" + time.Now().Format("150405.000000")
	opts.PostgresURL += "&application_name=" + app
	db, err := database.Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = database.Close(db) })
	_, err = database.Migrate(context.Background(), db)
	require.NoError(t, err)
	f := newFixture(t, db)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE FUNCTION lock_pause() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_sleep(0.3); RETURN NULL; END $$`,
		`CREATE TRIGGER lock_pause AFTER UPDATE ON sales_order_items FOR EACH ROW
WHEN (OLD.status = 'new' AND OLD.prod_order_id IS NULL AND NEW.prod_order_id IS NOT NULL) EXECUTE FUNCTION lock_pause()`,
	} {
		require.NoError(t, db.Exec(q).Error)
	}
	const rounds = 3
	for round := range rounds {
		o := newOrder(t, f, "SHK-KUPE-1600", "TMB-PRIK-450")
		a, b := o.Items[0].ID, o.Items[1].ID
		prod := int64(100 + round)
		f.production(t, contracts.ProdOrderLaunched.Name(), prod, []int64{a}, "2026-12-10")
		// One batch: b started (b is new, not yet launched), then a completed.
		require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
			for _, ev := range []struct {
				typ   string
				items []int64
			}{{contracts.ProdOrderStarted.Name(), []int64{b}}, {contracts.ProdOrderCompleted.Name(), []int64{a}}} {
				if err := events.Add(ctx, tx, events.New{Type: ev.typ, AggregateType: "plan_prod_orders", AggregateID: prod,
					Payload: contracts.ProdOrderPayload{ProdOrderID: prod, Items: ev.items}}); err != nil {
					return err
				}
			}
			return nil
		}))
		dispatched := make(chan error, 1)
		go func() {
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				st, err := f.disp.RunOnce(ctx)
				if err != nil {
					dispatched <- err
					return
				}
				if st.Events == 0 && !st.Lagging {
					dispatched <- nil
					return
				}
			}
			dispatched <- fmt.Errorf("the dispatcher did not settle")
		}()
		// The batch pauses holding b: the PATCH and the shipment start.
		require.Eventually(t, func() bool {
			var n int64
			require.NoError(t, database.Scan(f.db.Raw(`SELECT count(*) FROM pg_stat_activity WHERE application_name = ? AND wait_event = 'PgSleep'`, app), &n))
			return n > 0
		}, 10*time.Second, 2*time.Millisecond)
		note := fmt.Sprintf("round %d", round)
		var wg sync.WaitGroup
		var changeErr, shipErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, _, changeErr = f.sales.ChangeOrder(ctx, o.ID, sales.Edit{Note: &note})
		}()
		go func() {
			defer wg.Done()
			_, shipErr = f.sales.Ship(ctx, o.ID, sales.NewShipment{Items: []sales.ShipLine{{ItemID: a, Qty: 1}}, Carrier: "СДЭК"})
		}()
		wg.Wait()
		require.NoError(t, <-dispatched)
		require.NoError(t, changeErr, "PATCH, round %d", round)
		if shipErr != nil {
			// Before a was made: refused, never an internal error.
			require.NotEqual(t, apperr.EINTERNAL, apperr.Code(shipErr), "shipment, round %d: %v", round, shipErr)
		}
		f.drain(t)
		got, err := f.sales.Order(ctx, o.ID)
		require.NoError(t, err)
		require.Equal(t, note, got.Note)
		require.Equal(t, sales.ItemInProduction, got.Items[1].Status, "b started")
		if shipErr == nil {
			require.Equal(t, sales.ItemShipped, got.Items[0].Status, "a made and shipped")
		} else {
			require.Equal(t, sales.ItemDone, got.Items[0].Status, "a made")
		}
		var changed int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM events WHERE type = ? AND aggregate_id = ?", contracts.OrderChanged.Name(), o.ID), &changed))
		require.EqualValues(t, 1, changed, "the PATCH applied once")
	}
}
