package sales_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/sales"
)

// shopOrderOf receives a shop order of the SKUs, one unit each.
func shopOrderOf(t *testing.T, f *fixture, id string, skus ...string) sales.Order {
	t.Helper()
	syncID := sales.SyncIDPrefix + id
	in := sales.NewOrder{Customer: sales.Customer{Name: "Анна"}, SyncID: &syncID}
	for _, s := range skus {
		in.Items = append(in.Items, sales.NewItem{SKU: s, Qty: 1})
	}
	o, out, err := f.sales.ReceiveShopOrder(context.Background(), in, nil)
	require.NoError(t, err)
	require.Equal(t, sales.OutcomeCreated, out)
	return o
}

// heardOf returns the callbacks of one shop order, in order.
func heardOf(sh *shop, shopID string) []sales.ShopCallbackBody {
	got, _ := sh.received()
	var out []sales.ShopCallbackBody
	for _, b := range got {
		if b.ShopOrderID == shopID {
			out = append(out, b)
		}
	}
	return out
}

func typesOf(bs []sales.ShopCallbackBody) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Type
	}
	return out
}

// requireVersionsRise checks that each callback carries a version above the
// one before, the last the order's own.
func requireVersionsRise(t *testing.T, f *fixture, orderID int64, bs []sales.ShopCallbackBody) {
	t.Helper()
	for i := 1; i < len(bs); i++ {
		require.Greater(t, bs[i].Version, bs[i-1].Version, "%s after %s", bs[i].Type, bs[i-1].Type)
	}
	o, err := f.sales.Order(context.Background(), orderID)
	require.NoError(t, err)
	require.Equal(t, o.Version, bs[len(bs)-1].Version)
}

// Everything the shop should know about its order, it is told, with the
// order's tsekh version: ready again after a partial shipment, the
// shipment with carrier and tracking, a write-off with the planner's
// reason, a cancellation with the manager's.
func TestShopCallback_EveryChange(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		sh := &shop{t: t, secret: "cb-secret"}
		srv := httptest.NewServer(sh)
		defer srv.Close()
		f := newFixture(t, db, sales.ShopCallback(srv.URL, "cb-secret", nil))
		ctx := context.Background()

		// Made in two production orders, shipped in two parts.
		o := shopOrderOf(t, f, "P-1", "SHK-KUPE-1600", "TMB-PRIK-450")
		a, b := o.Items[0].ID, o.Items[1].ID
		f.production(t, contracts.ProdOrderLaunched.Name(), 1, []int64{a}, "2026-12-15")
		f.production(t, contracts.ProdOrderLaunched.Name(), 2, []int64{b}, "2026-12-20")
		f.production(t, contracts.ProdOrderCompleted.Name(), 1, []int64{a}, "")
		_, err := f.sales.Ship(ctx, o.ID, sales.NewShipment{Items: []sales.ShipLine{{ItemID: a, Qty: 1}}, Carrier: "ПЭК", Tracking: "PEK-1"})
		require.NoError(t, err)
		f.production(t, contracts.ProdOrderCompleted.Name(), 2, []int64{b}, "")
		f.drain(t)
		heard := heardOf(sh, "P-1")
		// The rest made: the order is ready again (its state) and the shop
		// hears what is left to ship (order.ready).
		require.Equal(t, []string{"order.status_changed", "order.status_changed", "order.shipped", "order.status_changed", "order.status_changed", "order.ready"}, typesOf(heard))
		require.Equal(t, "2026-12-20", *heard[1].ETA, "the ETA's change")
		require.Equal(t, "ПЭК", heard[2].Shipment.Carrier)
		require.Equal(t, "PEK-1", heard[2].Shipment.Tracking)
		require.Equal(t, "partially_shipped", heard[3].Status)
		require.Equal(t, "ready", heard[4].Status)
		ready := heard[5]
		require.True(t, ready.Partial, "ready again after a partial shipment")
		require.Equal(t, []contracts.ItemQty{{ItemID: b, SKU: "TMB-PRIK-450", Qty: 1}}, ready.Items)
		requireVersionsRise(t, f, o.ID, heard)

		// Written off: the planner's reason; every item written off, the order cancelled.
		w := shopOrderOf(t, f, "P-2", "SHK-KUPE-1600")
		f.production(t, contracts.ProdOrderLaunched.Name(), 3, []int64{w.Items[0].ID}, "2026-12-15")
		require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
			return events.Add(ctx, tx, contracts.ProdOrderClosed.New(3, contracts.ProdOrderClosedPayload{ProdOrderID: 3, Items: []int64{w.Items[0].ID},
				Reason: "брак плиты, заказчик согласен ждать новый заказ", Rest: "write_off",
				Quantities: []contracts.ClosedQuantities{{ItemID: w.Items[0].ID, OrderID: w.ID, Qty: 1, WrittenOff: 1}}}))
		}))
		f.drain(t)
		heard = heardOf(sh, "P-2")
		require.Equal(t, []string{"order.status_changed", "order.status_changed", "order.items_written_off"}, typesOf(heard))
		require.Equal(t, "cancelled", heard[1].Status)
		require.Contains(t, heard[1].Reason, "written off")
		require.Equal(t, "брак плиты, заказчик согласен ждать новый заказ", heard[2].Reason)
		require.Equal(t, []contracts.ItemQty{{ItemID: w.Items[0].ID, SKU: "SHK-KUPE-1600", Qty: 1}}, heard[2].Items)
		requireVersionsRise(t, f, w.ID, heard)

		// Cancelled by a manager: the reason, shown on the order and told to the shop.
		c := shopOrderOf(t, f, "P-3", "SHK-KUPE-1600")
		_, err = f.sales.CancelOrder(ctx, c.ID, " ")
		require.Error(t, err, "a reason is required")
		got, err := f.sales.CancelOrder(ctx, c.ID, "клиент передумал")
		require.NoError(t, err)
		require.Equal(t, "клиент передумал", got.CancelReason)
		f.drain(t)
		heard = heardOf(sh, "P-3")
		require.Len(t, heard, 1)
		require.Equal(t, "cancelled", heard[0].Status)
		require.Equal(t, "клиент передумал", heard[0].Reason)
		requireVersionsRise(t, f, c.ID, heard)
	})
}
