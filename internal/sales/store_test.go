package sales

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// rolledBack runs fn in a transaction rolled back after it: each case
// sees the fixture as it was committed, and nothing it writes to set its
// scene is committed (no change without its event).
func rolledBack(t *testing.T, db *gorm.DB, fn func(tx *gorm.DB)) {
	t.Helper()
	tx := db.Begin()
	require.NoError(t, tx.Error)
	defer tx.Rollback()
	fn(tx)
}

// anOrder is an order of two wardrobes and a sofa, made through the service.
func anOrder(t *testing.T, db *gorm.DB) Order {
	t.Helper()
	ctx := events.WithActor(context.Background(), events.Actor{ID: 1, Name: "Администратор"})
	_, err := catalog.NewService(db).SeedDemo(ctx)
	require.NoError(t, err)
	o, err := NewService(db).CreateOrder(ctx, NewOrder{Customer: Customer{Name: "Иван"},
		Items: []NewItem{{SKU: "SHK-KUPE-1600", Qty: 2}, {SKU: "SHK-RASP-1200", Qty: 1}}})
	require.NoError(t, err)
	return o
}

// The sales module's store, statement by statement, on both databases.
func TestStore(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		o := anOrder(t, db)

		t.Run("idempotency keys", func(t *testing.T) {
			rolledBack(t, db, func(db *gorm.DB) {
				k := IdempotencyKey{UserID: 1, Key: "k-1", RequestHash: "h"}
				row, err := readKey(ctx, db, k)
				require.NoError(t, err)
				require.Empty(t, row.State, "no such key")
				reserved, err := reserveKey(ctx, db, k)
				require.NoError(t, err)
				require.True(t, reserved)
				reserved, err = reserveKey(ctx, db, k)
				require.NoError(t, err)
				require.False(t, reserved, "a key is taken once")
				reserved, err = reserveKey(ctx, db, IdempotencyKey{UserID: 2, Key: "k-1", RequestHash: "h"})
				require.NoError(t, err)
				require.True(t, reserved, "keys are the user's")
				row, err = readKey(ctx, db, k)
				require.NoError(t, err)
				require.Equal(t, idempotencyRow{RequestHash: "h", State: "in_flight"}, row)

				renewed, err := renewStaleKey(ctx, db, k)
				require.NoError(t, err)
				require.False(t, renewed, "a young key in flight is not taken over")
				require.NoError(t, db.Exec("UPDATE sales_idempotency_keys SET created_at = "+database.NowPlus(db, -IdempotencyStale-time.Minute)+" WHERE key = 'k-1' AND user_id = 1").Error)
				row, err = readKey(ctx, db, k)
				require.NoError(t, err)
				require.Equal(t, 1, row.Stale)
				renewed, err = renewStaleKey(ctx, db, k)
				require.NoError(t, err)
				require.True(t, renewed)
				row, err = readKey(ctx, db, k)
				require.NoError(t, err)
				require.Zero(t, row.Stale, "renewed now")

				stored, err := storeResponse(ctx, db, k, StoredResponse{Status: 201, Body: []byte(`{"id":1}`)}, o.ID)
				require.NoError(t, err)
				require.True(t, stored)
				row, err = readKey(ctx, db, k)
				require.NoError(t, err)
				require.Equal(t, "done", row.State)
				require.Equal(t, 201, *row.ResponseStatus)
				require.JSONEq(t, `{"id":1}`, *row.ResponseBody)
				require.NoError(t, db.Exec("UPDATE sales_idempotency_keys SET created_at = "+database.NowPlus(db, -IdempotencyStale-time.Minute)+" WHERE key = 'k-1' AND user_id = 1").Error)
				renewed, err = renewStaleKey(ctx, db, k)
				require.NoError(t, err)
				require.False(t, renewed, "a key done is never taken over")
				stored, err = storeResponse(ctx, db, IdempotencyKey{UserID: 3, Key: "gone"}, StoredResponse{Status: 201, Body: []byte(`{}`)}, o.ID)
				require.NoError(t, err)
				require.False(t, stored, "no such key")
			})
		})

		t.Run("expiry", func(t *testing.T) {
			rolledBack(t, db, func(db *gorm.DB) {
				for _, key := range []string{"a", "b", "c", "d", "e"} {
					_, err := reserveKey(ctx, db, IdempotencyKey{UserID: 1, Key: key, RequestHash: "h"})
					require.NoError(t, err)
				}
				require.NoError(t, db.Exec("UPDATE sales_idempotency_keys SET created_at = "+database.NowPlus(db, -2*time.Hour)+" WHERE key IN ('a', 'b', 'c')").Error)
				n, err := expireKeys(ctx, db, time.Hour, 2)
				require.NoError(t, err)
				require.EqualValues(t, 2, n, "at most the batch")
				n, err = expireKeys(ctx, db, time.Hour, 2)
				require.NoError(t, err)
				require.EqualValues(t, 1, n)
				n, err = expireKeys(ctx, db, time.Hour, 2)
				require.NoError(t, err)
				require.Zero(t, n, "the young keys stay")
				row, err := readKey(ctx, db, IdempotencyKey{UserID: 1, Key: "e"})
				require.NoError(t, err)
				require.Equal(t, "in_flight", row.State)
			})
		})

		t.Run("shipments", func(t *testing.T) {
			rolledBack(t, db, func(db *gorm.DB) {
				it := o.Items[0]
				require.NoError(t, db.Model(&Item{}).Where("id = ?", it.ID).Update("made_qty", it.Qty).Error)
				at := time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)
				id, err := insertShipment(ctx, db, o.ID, "СДЭК", "123", at)
				require.NoError(t, err)
				now, err := insertShipment(ctx, db, o.ID, "ПЭК", "", time.Time{})
				require.NoError(t, err)
				require.Greater(t, now, id)
				var sh []Shipment
				require.NoError(t, db.Where("order_id = ?", o.ID).Order("id").Find(&sh).Error)
				require.True(t, at.Equal(sh[0].ShippedAt), "the time given: %v", sh[0].ShippedAt)
				require.WithinDuration(t, time.Now(), sh[1].ShippedAt, time.Hour, "no time given: now")

				shipped, err := addShipped(ctx, db, it.ID, 1)
				require.NoError(t, err)
				require.True(t, shipped)
				shipped, err = addShipped(ctx, db, it.ID, it.Qty)
				require.NoError(t, err)
				require.False(t, shipped, "never more than is wanted")
				shipped, err = addShipped(ctx, db, it.ID, it.Qty-1)
				require.NoError(t, err)
				require.True(t, shipped)
				require.NoError(t, insertShipmentItems(ctx, db, []ShipmentItem{{ShipmentID: id, ItemID: it.ID, SKU: it.SKU, Qty: it.Qty}}))
				require.NoError(t, insertShipmentItems(ctx, db, nil))
				var lines []ShipmentItem
				require.NoError(t, db.Where("shipment_id = ?", id).Find(&lines).Error)
				require.Equal(t, []ShipmentItem{{ShipmentID: id, ItemID: it.ID, SKU: it.SKU, Qty: it.Qty}}, lines)

				items, err := itemsByID(ctx, db, []int64{o.Items[1].ID, it.ID})
				require.NoError(t, err)
				require.Equal(t, []int64{it.ID, o.Items[1].ID}, []int64{items[0].ID, items[1].ID}, "in id order")
				require.Equal(t, it.Qty, items[0].ShippedQty)
				require.NoError(t, setItemStatus(ctx, db, it.ID, ItemShipped))
				items, err = itemsByID(ctx, db, []int64{it.ID})
				require.NoError(t, err)
				require.Equal(t, ItemShipped, items[0].Status)

				require.NoError(t, setShipState(ctx, db, o.ID, StatusPartiallyShipped, true))
				var got Order
				require.NoError(t, db.First(&got, o.ID).Error)
				require.Equal(t, StatusPartiallyShipped, got.Status)
				require.True(t, got.ReadyToShip)
			})
		})

		t.Run("open rejections", func(t *testing.T) {
			rolledBack(t, db, func(db *gorm.DB) {
				open, err := openRejectionsBySource(ctx, db)
				require.NoError(t, err)
				require.Empty(t, open)
				for i, r := range []struct{ source, status string }{{SourceShop, RejectionOpen}, {SourceShop, RejectionOpen}, {SourceCRM, RejectionOpen}, {SourceCRM, "dismissed"}} {
					require.NoError(t, db.Exec("INSERT INTO sales_intake_rejections (source, intake_key, body, reasons, errors, detail, status) VALUES (?, ?, '{}', '[]', '[]', '', ?)",
						r.source, fmt.Sprint("key-", i), r.status).Error)
				}
				open, err = openRejectionsBySource(ctx, db)
				require.NoError(t, err)
				require.Equal(t, map[string]int64{SourceShop: 2, SourceCRM: 1}, open, "open ones only, per source")
			})
		})
	})
}

// Every statement of the store has its case.
func TestStore_EveryStatementHasACase(t *testing.T) {
	t.Parallel()
	dbtest.EveryStatementHasACase(t)
}
