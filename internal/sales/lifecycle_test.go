package sales_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/sales"
)

// fixture is the sales module over a fresh database with the demo catalog,
// its own registry and dispatcher.
type fixture struct {
	db      *gorm.DB
	sales   *sales.Service
	reg     *events.Registry
	disp    *events.Dispatcher
	journal *events.Journal
}

func newFixture(t *testing.T, db *gorm.DB, extra ...events.Subscriber) *fixture {
	t.Helper()
	_, err := catalog.NewService(db).SeedDemo(context.Background())
	require.NoError(t, err)
	f := &fixture{db: db, sales: sales.NewService(db), reg: events.NewRegistry()}
	// The plan module declares the prod_order.* types the sales module follows.
	require.NoError(t, f.reg.Register(f.sales, events.ModuleFunc(func(r *events.Registrar) {
		r.Declare(contracts.ProdOrderLaunched, contracts.ProdOrderStarted, contracts.ProdOrderCompleted, contracts.ProdOrderCancelled,
			contracts.ProdOrderItemsReleased, contracts.ProdOrderClosed, contracts.ProdOrderRescheduled, contracts.UnitMade)
		r.Subscribe(extra...)
	})))
	f.disp = events.NewDispatcher(db, f.reg, events.DispatcherOptions{BackoffBase: 20 * time.Millisecond, BackoffMax: 40 * time.Millisecond, MaxAttempts: 4, Timeout: 2 * time.Second})
	f.journal = events.NewJournal(db, f.reg)
	return f
}

// drain runs dispatcher passes until nothing is due.
func (f *fixture) drain(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		st, err := f.disp.RunOnce(context.Background())
		require.NoError(t, err)
		if st.Events == 0 && !st.Lagging {
			return
		}
		if st.Events == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	t.Fatal("the dispatcher did not settle")
}

// production writes a prod_order.* event as the plan module would.
func (f *fixture) production(t *testing.T, typ string, prodOrderID int64, items []int64, eta string) {
	t.Helper()
	ev := events.New{Type: typ, AggregateType: "plan_prod_orders", AggregateID: prodOrderID,
		Payload: contracts.ProdOrderPayload{ProdOrderID: prodOrderID, Items: items}}
	if typ == contracts.ProdOrderLaunched.Name() {
		ev = contracts.ProdOrderLaunched.New(prodOrderID, contracts.ProdOrderLaunchedPayload{ProdOrderID: prodOrderID, Items: items,
			Route: "Корпус ЛДСП (типовой)", PartsCount: len(items), OpsCount: len(items), ETA: eta})
	}
	require.NoError(t, f.db.Transaction(func(tx *gorm.DB) error {
		return events.Add(context.Background(), tx, ev)
	}))
	f.drain(t)
}

type statusChange struct {
	OrderID        int64  `json:"order_id"`
	Status         string `json:"status"`
	PreviousStatus string `json:"previous_status"`
	ETA            string `json:"eta"`
	SyncID         string `json:"sync_id"`
}

func (f *fixture) statusChanges(t *testing.T, orderID int64) []statusChange {
	t.Helper()
	var payloads []string
	require.NoError(t, database.Scan(f.db.Raw("SELECT payload FROM events WHERE type = ? AND aggregate_id = ? ORDER BY id", contracts.OrderStatusChanged.Name(), orderID), &payloads))
	out := make([]statusChange, len(payloads))
	for i, p := range payloads {
		require.NoError(t, json.Unmarshal([]byte(p), &out[i]))
	}
	return out
}

func newOrder(t *testing.T, f *fixture, skus ...string) sales.Order {
	t.Helper()
	in := sales.NewOrder{Customer: sales.Customer{Name: "Иван"}}
	for _, s := range skus {
		in.Items = append(in.Items, sales.NewItem{SKU: s, Qty: 1})
	}
	o, err := f.sales.CreateOrder(context.Background(), in)
	require.NoError(t, err)
	return o
}

func TestLifecycle_FollowsProduction(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		o := newOrder(t, f, "SHK-KUPE-1600", "TMB-PRIK-450")
		a, b := o.Items[0].ID, o.Items[1].ID
		state := func() sales.Order {
			got, err := f.sales.Order(ctx, o.ID)
			require.NoError(t, err)
			return got
		}

		// One item launched: the order is in production with that item's ETA.
		f.production(t, contracts.ProdOrderLaunched.Name(), 1, []int64{a}, "2026-12-10")
		got := state()
		require.Equal(t, sales.StatusInProduction, got.Status)
		require.Equal(t, "2026-12-10", got.ETA.String())
		require.Equal(t, sales.ItemInProduction, got.Items[0].Status)
		require.Equal(t, int64(1), *got.Items[0].ProdOrderID)
		require.Equal(t, sales.ItemNew, got.Items[1].Status)

		// The other launched later: the ETA is the latest of the two.
		f.production(t, contracts.ProdOrderLaunched.Name(), 2, []int64{b}, "2026-12-20")
		f.production(t, contracts.ProdOrderStarted.Name(), 1, []int64{a}, "")
		require.Equal(t, "2026-12-20", state().ETA.String())

		// A stale cancellation of another production order changes nothing.
		f.production(t, contracts.ProdOrderCancelled.Name(), 7, []int64{b}, "")
		require.Equal(t, sales.ItemInProduction, state().Items[1].Status)

		// One done, the other's production order cancelled: still in production (one item was made), ETA of the made one.
		f.production(t, contracts.ProdOrderCompleted.Name(), 1, []int64{a}, "")
		f.production(t, contracts.ProdOrderCancelled.Name(), 2, []int64{b}, "")
		got = state()
		require.Equal(t, sales.StatusInProduction, got.Status)
		require.Equal(t, sales.ItemDone, got.Items[0].Status)
		require.Equal(t, sales.ItemNew, got.Items[1].Status)
		require.Nil(t, got.Items[1].ProdOrderID)
		require.Equal(t, "2026-12-10", got.ETA.String())

		// Relaunched and done: the order is ready.
		f.production(t, contracts.ProdOrderLaunched.Name(), 3, []int64{b}, "2026-12-24")
		f.production(t, contracts.ProdOrderCompleted.Name(), 3, []int64{b}, "")
		got = state()
		require.Equal(t, sales.StatusReady, got.Status)
		require.Equal(t, "2026-12-24", got.ETA.String())

		// Every change of state or ETA, and only those, wrote its event.
		require.Equal(t, []statusChange{
			{OrderID: o.ID, Status: "in_production", PreviousStatus: "received", ETA: "2026-12-10"},
			{OrderID: o.ID, Status: "in_production", PreviousStatus: "in_production", ETA: "2026-12-20"},
			{OrderID: o.ID, Status: "in_production", PreviousStatus: "in_production", ETA: "2026-12-10"},
			{OrderID: o.ID, Status: "in_production", PreviousStatus: "in_production", ETA: "2026-12-24"},
			{OrderID: o.ID, Status: "ready", PreviousStatus: "in_production", ETA: "2026-12-24"},
		}, f.statusChanges(t, o.ID))
		// The system made them: no actor.
		var actors int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM events WHERE type = ? AND actor_id IS NOT NULL", contracts.OrderStatusChanged.Name()), &actors))
		require.Zero(t, actors)
	})
}

func TestLifecycle_BackToReceived(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		o := newOrder(t, f, "SHK-KUPE-1600")
		other := newOrder(t, f, "TMB-PRIK-450")
		// One production order for the items of two sales orders.
		f.production(t, contracts.ProdOrderLaunched.Name(), 5, []int64{o.Items[0].ID, other.Items[0].ID}, "2026-12-01")
		f.production(t, contracts.ProdOrderCancelled.Name(), 5, []int64{o.Items[0].ID, other.Items[0].ID}, "")
		for _, id := range []int64{o.ID, other.ID} {
			got, err := f.sales.Order(context.Background(), id)
			require.NoError(t, err)
			require.Equal(t, sales.StatusReceived, got.Status)
			require.True(t, got.ETA.IsZero())
			require.Equal(t, []statusChange{
				{OrderID: id, Status: "in_production", PreviousStatus: "received", ETA: "2026-12-01"},
				{OrderID: id, Status: "received", PreviousStatus: "in_production"},
			}, f.statusChanges(t, id))
		}
		// Items the sales module does not know are ignored.
		f.production(t, contracts.ProdOrderLaunched.Name(), 6, []int64{999999}, "2026-12-01")
	})
}

func TestOrders_Cancel(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		t.Run("OK", func(t *testing.T) {
			o := newOrder(t, f, "SHK-KUPE-1600", "TMB-PRIK-450")
			got, err := f.sales.CancelOrder(ctx, o.ID, "the customer changed their mind")
			require.NoError(t, err)
			require.Equal(t, sales.StatusCancelled, got.Status)
			var payload string
			require.NoError(t, database.Scan(db.Raw("SELECT payload FROM events WHERE type = ? AND aggregate_id = ?", contracts.OrderCancelled.Name(), o.ID), &payload))
			require.JSONEq(t, `{"order_id": `+itoa(o.ID)+`, "items": [`+itoa(o.Items[0].ID)+`, `+itoa(o.Items[1].ID)+`], "reason": "the customer changed their mind", "version": 2}`, payload)
			require.Equal(t, "the customer changed their mind", got.CancelReason)
			require.Equal(t, int64(2), got.Version, "a cancellation is one change, one version: order.cancelled and order.status_changed carry the same")
			require.Equal(t, []statusChange{{OrderID: o.ID, Status: "cancelled", PreviousStatus: "received"}}, f.statusChanges(t, o.ID))

			// A cancelled order stays cancelled whatever production reports.
			f.production(t, contracts.ProdOrderLaunched.Name(), 9, []int64{o.Items[0].ID}, "2026-12-01")
			got, err = f.sales.Order(ctx, o.ID)
			require.NoError(t, err)
			require.Equal(t, sales.StatusCancelled, got.Status)
			require.Len(t, f.statusChanges(t, o.ID), 1)
		})
		t.Run("ErrConflict", func(t *testing.T) {
			o := newOrder(t, f, "SHK-KUPE-1600")
			_, err := f.sales.CancelOrder(ctx, o.ID, "the customer changed their mind")
			require.NoError(t, err)
			_, err = f.sales.CancelOrder(ctx, o.ID, "the customer changed their mind")
			require.Equal(t, apperr.ECONFLICT, apperr.Code(err))
			launched := newOrder(t, f, "SHK-KUPE-1600")
			f.production(t, contracts.ProdOrderLaunched.Name(), 10, []int64{launched.Items[0].ID}, "2026-12-01")
			_, err = f.sales.CancelOrder(ctx, launched.ID, "the customer changed their mind")
			require.Equal(t, apperr.ECONFLICT, apperr.Code(err))
			require.Contains(t, err.Error(), "in_production")
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			_, err := f.sales.CancelOrder(ctx, 424242, "the customer changed their mind")
			require.Equal(t, apperr.ENOTFOUND, apperr.Code(err))
		})
	})
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
