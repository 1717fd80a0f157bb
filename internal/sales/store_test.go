package sales

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/platform/page"
)

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
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
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
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
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
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
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

		// reload reads the order and its items as the store left them.
		reload := func(t *testing.T, db *gorm.DB) Order {
			t.Helper()
			var got Order
			require.NoError(t, db.Preload("Items", func(db *gorm.DB) *gorm.DB { return db.Order("id") }).First(&got, o.ID).Error)
			return got
		}

		t.Run("versions and notes", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				v, err := bumpVersion(ctx, db, o.ID)
				require.NoError(t, err)
				require.Equal(t, o.Version+1, v)
				v, err = bumpVersion(ctx, db, o.ID+100)
				require.NoError(t, err)
				require.Zero(t, v, "no such order")
				require.NoError(t, setOfficeChanges(ctx, db, o.ID, `{"customer.phone":"x"}`))
				var changes string
				require.NoError(t, database.Scan(db.Raw("SELECT office_changes FROM sales_orders WHERE id = ?", o.ID), &changes))
				require.JSONEq(t, `{"customer.phone":"x"}`, changes)
				require.NoError(t, setAttention(ctx, db, o.ID, "позвонить"))
				require.Equal(t, "позвонить", reload(t, db).Attention)
				require.NoError(t, setAttention(ctx, db, o.ID, ""))
				require.Empty(t, reload(t, db).Attention)
			})
		})

		t.Run("changes", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				ids, err := ordersOfItems(ctx, db, []int64{o.Items[1].ID, o.Items[0].ID, o.Items[1].ID})
				require.NoError(t, err)
				require.Equal(t, []int64{o.ID}, ids, "each order once")
				require.NoError(t, setCustomer(ctx, db, o.ID, Customer{Name: "Пётр", Phone: "+7 900 000-00-00"}))
				got := reload(t, db)
				require.Equal(t, "Пётр", got.Customer.Name)
				require.NoError(t, setOrderColumns(ctx, db, o.ID, []string{"note = ?", "currency = ?"}, []any{"к подъезду", "RUB"}, true))
				got = reload(t, db)
				require.Equal(t, "к подъезду", got.Note)
				id, err := orderByKey(ctx, db, "sync_id", "shop-none")
				require.NoError(t, err)
				require.Zero(t, id)
				require.NoError(t, setOrderColumns(ctx, db, o.ID, []string{"sync_id = ?"}, []any{"shop-1"}, false))
				id, err = orderByKey(ctx, db, "sync_id", "shop-1")
				require.NoError(t, err)
				require.Equal(t, o.ID, id)

				it := got.Items[0]
				it.Qty, it.Note = 5, "угловой"
				require.NoError(t, takenUp(updateItem(ctx, db, it, true)))
				require.Equal(t, 5, reload(t, db).Items[0].Qty)
				require.NoError(t, setItemStatus(ctx, db, it.ID, ItemInProduction))
				it.Qty = 6
				require.Error(t, takenUp(updateItem(ctx, db, it, true)), "an item in production is not changed as new")
				require.NoError(t, takenUp(updateItem(ctx, db, it, false)), "unless the change leaves production alone")
				require.Error(t, takenUp(deleteNewItem(ctx, db, it.ID)), "nor deleted")
				require.NoError(t, takenUp(deleteNewItem(ctx, db, got.Items[1].ID)))
				require.Len(t, reload(t, db).Items, 1)
			})
		})

		t.Run("production", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				a, b := o.Items[0], o.Items[1]
				both := []int64{a.ID, b.ID}
				eta := database.Date{Time: time.Date(2026, 12, 20, 0, 0, 0, 0, time.UTC)}
				require.NoError(t, itemsLaunched(ctx, db, both, 7, eta))
				got := reload(t, db)
				require.Equal(t, int64(7), *got.Items[0].ProdOrderID)
				require.Equal(t, "2026-12-20", got.Items[1].ETA.String())
				require.NoError(t, setItemStatus(ctx, db, a.ID, ItemInProduction))
				later := database.Date{Time: eta.AddDate(0, 0, 3)}
				require.NoError(t, itemsRescheduled(ctx, db, both, 7, later))
				got = reload(t, db)
				require.Equal(t, "2026-12-23", got.Items[0].ETA.String(), "in production: moved")
				require.Equal(t, "2026-12-20", got.Items[1].ETA.String(), "new: not")
				require.NoError(t, itemsRescheduledAny(ctx, db, []int64{b.ID}, 7, later))
				require.Equal(t, "2026-12-23", reload(t, db).Items[1].ETA.String())
				require.NoError(t, itemsRescheduledAny(ctx, db, []int64{b.ID}, 8, eta))
				require.Equal(t, "2026-12-23", reload(t, db).Items[1].ETA.String(), "another production order's")

				require.NoError(t, countUnitMade(ctx, db, a.ID, 7))
				require.NoError(t, countUnitMade(ctx, db, a.ID, 7))
				require.NoError(t, countUnitMade(ctx, db, a.ID, 7))
				require.Equal(t, a.Qty, reload(t, db).Items[0].MadeQty, "never past what is wanted")
				require.NoError(t, itemsCompleted(ctx, db, []int64{b.ID}, 7))
				require.Equal(t, b.Qty, reload(t, db).Items[1].MadeQty)

				require.NoError(t, itemsReleased(ctx, db, both, 8))
				require.NotNil(t, reload(t, db).Items[0].ProdOrderID, "another production order's release")
				require.NoError(t, itemsReleased(ctx, db, both, 7))
				got = reload(t, db)
				require.Nil(t, got.Items[0].ProdOrderID)
				require.True(t, got.Items[0].ETA.IsZero())

				require.NoError(t, itemsStarted(ctx, db, []int64{a.ID}, 9))
				require.Nil(t, reload(t, db).Items[0].ProdOrderID, "an item in production is not started again")
				require.NoError(t, setItemStatus(ctx, db, a.ID, ItemNew))
				require.NoError(t, itemsStarted(ctx, db, []int64{a.ID}, 9))
				require.Equal(t, int64(9), *reload(t, db).Items[0].ProdOrderID)

				require.NoError(t, db.Model(&Item{}).Where("id = ?", a.ID).Update("made_qty", 0).Error)
				require.NoError(t, addClosed(ctx, db, 9, contracts.ClosedQuantities{ItemID: a.ID, Made: 1, WrittenOff: 0, Returned: 1}))
				got = reload(t, db)
				require.Equal(t, 1, got.Items[0].MadeQty)
				require.Nil(t, got.Items[0].ProdOrderID, "units back in the backlog: off the production order")

				cancelled, err := markCancelled(ctx, db, o.ID, "передумал")
				require.NoError(t, err)
				require.True(t, cancelled)
				cancelled, err = markCancelled(ctx, db, o.ID, "again")
				require.NoError(t, err)
				require.False(t, cancelled, "only a received order")
				require.NoError(t, setOrderState(ctx, db, o.ID, StatusReady, eta, "", true))
				got = reload(t, db)
				require.Equal(t, StatusReady, got.Status)
				require.True(t, got.ReadyToShip)
				require.Equal(t, "2026-12-20", got.ETA.String())
			})
		})

		t.Run("inbox", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				sync := "shop-a1"
				r := rejectionRow{Source: SourceShop, IntakeKey: sync, SyncID: &sync, Body: `{"id":"a1"}`, BodyBytes: 11, Reasons: ",unknown_sku,", Errors: "[]", Detail: "unknown SKU"}
				require.NoError(t, keepRejection(ctx, db, &r))
				require.Positive(t, r.ID)
				require.Equal(t, 1, r.Deliveries)
				again := r
				again.Body, again.Detail = `{"id":"a1","v":2}`, "still unknown"
				require.NoError(t, keepRejection(ctx, db, &again))
				require.Equal(t, r.ID, again.ID, "an open rejection of the key is kept, not another")
				require.Equal(t, 2, again.Deliveries)
				got, found, err := rejectionByID(ctx, db, r.ID)
				require.NoError(t, err)
				require.True(t, found)
				require.JSONEq(t, `{"id":"a1","v":2}`, got.Body)
				_, found, err = rejectionByID(ctx, db, r.ID+100)
				require.NoError(t, err)
				require.False(t, found)

				refused, err := refusedAgain(ctx, db, r.ID, ",conflict,", "[]", "conflict")
				require.NoError(t, err)
				require.True(t, refused)
				got, _, err = rejectionByID(ctx, db, r.ID)
				require.NoError(t, err)
				require.Equal(t, 1, got.Retries)
				require.Equal(t, ",conflict,", got.Reasons)
				set, err := setRejectionBody(ctx, db, r.ID, `{"id":"a1","fixed":true}`)
				require.NoError(t, err)
				require.True(t, set)

				open, err := openRejectionsByKey(ctx, db, SourceShop, sync)
				require.NoError(t, err)
				require.Len(t, open, 1)
				other := rejectionRow{Source: SourceCRM, IntakeKey: "CRM-1", Body: `{}`, Reasons: ",invalid,", Errors: "[]"}
				require.NoError(t, keepRejection(ctx, db, &other))
				resolved, err := markResolved(ctx, db, r.ID, o.ID, "changed")
				require.NoError(t, err)
				require.True(t, resolved)
				resolved, err = markResolved(ctx, db, r.ID, o.ID, "changed")
				require.NoError(t, err)
				require.False(t, resolved, "resolved once")
				open, err = openRejectionsByKey(ctx, db, SourceShop, sync)
				require.NoError(t, err)
				require.Empty(t, open)
				refused, err = refusedAgain(ctx, db, r.ID, ",x,", "[]", "")
				require.NoError(t, err)
				require.False(t, refused, "a closed one is not refused again")
				set, err = setRejectionBody(ctx, db, r.ID, `{}`)
				require.NoError(t, err)
				require.False(t, set, "nor edited")

				about, err := rejectionsAbout(ctx, db, o)
				require.NoError(t, err)
				require.Equal(t, []int64{r.ID}, about, "resolved into the order")
				keyed := o
				crm := "CRM-1"
				keyed.CRMOrderID = &crm
				about, err = rejectionsAbout(ctx, db, keyed)
				require.NoError(t, err)
				require.Equal(t, []int64{r.ID, other.ID}, about, "and kept under its key")

				dismissed, err := markDismissed(ctx, db, other.ID, "дубль")
				require.NoError(t, err)
				require.True(t, dismissed)
				dismissed, err = markDismissed(ctx, db, r.ID, "дубль")
				require.NoError(t, err)
				require.False(t, dismissed, "only an open one")

				yes := true
				sizes, err := rejectionSizes(ctx, db, RejectionFilter{}, page.Request{Limit: 10})
				require.NoError(t, err)
				require.Equal(t, []int64{other.ID, r.ID}, []int64{sizes[0].ID, sizes[1].ID}, "newest first")
				require.EqualValues(t, len(`{"id":"a1","fixed":true}`), sizes[1].Size, "the body's bytes")
				sizes, err = rejectionSizes(ctx, db, RejectionFilter{Source: SourceCRM}, page.Request{Limit: 10})
				require.NoError(t, err)
				require.Len(t, sizes, 1)
				sizes, err = rejectionSizes(ctx, db, RejectionFilter{Open: &yes}, page.Request{Limit: 10})
				require.NoError(t, err)
				require.Empty(t, sizes)
				sizes, err = rejectionSizes(ctx, db, RejectionFilter{Reason: "conflict"}, page.Request{Limit: 10})
				require.NoError(t, err)
				require.Equal(t, r.ID, sizes[0].ID)
				sizes, err = rejectionSizes(ctx, db, RejectionFilter{}, page.Request{Limit: 10, After: other.ID})
				require.NoError(t, err)
				require.Len(t, sizes, 1, "after the cursor")
				rows, err := rejectionsByID(ctx, db, []int64{r.ID, other.ID})
				require.NoError(t, err)
				require.Equal(t, []int64{other.ID, r.ID}, []int64{rows[0].ID, rows[1].ID})
			})
		})

		t.Run("orders", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				got, found, err := orderByID(ctx, db, o.ID)
				require.NoError(t, err)
				require.True(t, found)
				require.Len(t, got.Items, len(o.Items))
				_, found, err = orderByID(ctx, db, o.ID+100)
				require.NoError(t, err)
				require.False(t, found)

				sync := "shop-x1"
				due := database.Date{Time: time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC)}
				shop := Order{Status: StatusReceived, Source: "shop", SyncID: &sync, Customer: Customer{Name: "Мария Иванова", Phone: "+7 901 111-22-33"}, DueDate: due}
				id, err := insertOrderRow(ctx, db, &shop, "sync_id")
				require.NoError(t, err)
				require.Equal(t, o.ID+1, id, "the highest number plus one")
				again, err := insertOrderRow(ctx, db, &shop, "sync_id")
				require.NoError(t, err)
				require.Zero(t, again, "an order of the key exists")
				require.NoError(t, lockOrder(ctx, db, id))
				item := Item{OrderID: id, ProductID: o.Items[0].ProductID, SKU: "DIV-CHESTER-3", Qty: 1, Status: ItemNew}
				require.NoError(t, insertItems(ctx, db, []*Item{&item}))
				require.Positive(t, item.ID)
				require.NoError(t, insertItems(ctx, db, nil))

				ids := func(f OrderFilter, pr page.Request) []int64 {
					t.Helper()
					os, err := ordersPage(ctx, db, f, pr)
					require.NoError(t, err)
					out := []int64{}
					for _, o := range os {
						out = append(out, o.ID)
					}
					return out
				}
				require.Equal(t, []int64{id, o.ID}, ids(OrderFilter{}, page.Request{Limit: 10}), "newest first")
				require.Equal(t, []int64{id, o.ID}, ids(OrderFilter{}, page.Request{Limit: 1}), "one more than the limit")
				require.Equal(t, []int64{o.ID}, ids(OrderFilter{}, page.Request{Limit: 10, After: id}))
				require.Equal(t, []int64{id}, ids(OrderFilter{Source: "shop"}, page.Request{Limit: 10}))
				require.Equal(t, []int64{id}, ids(OrderFilter{Customer: "мария"}, page.Request{Limit: 10}))
				require.Equal(t, []int64{o.ID}, ids(OrderFilter{SKU: "SHK-KUPE-1600"}, page.Request{Limit: 10}))
				require.Equal(t, []int64{id}, ids(OrderFilter{DueAfter: due}, page.Request{Limit: 10}))
				require.Empty(t, ids(OrderFilter{DueBefore: database.Date{Time: due.AddDate(0, 0, -1)}}, page.Request{Limit: 10}))
				require.Empty(t, ids(OrderFilter{Status: StatusCancelled}, page.Request{Limit: 10}))
				os, err := ordersPage(ctx, db, OrderFilter{}, page.Request{Limit: 10})
				require.NoError(t, err)
				require.Len(t, os[0].Items, 1, "with its items")
			})
		})

		t.Run("open rejections", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
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
	dbtest.EveryStatementHasACase(t, "withShipments") // the preloads of orderByID and ordersPage
}
