package sales

import (
	"context"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// The sales module's store: its statements on the sales tables, one
// function a statement, dialect-neutral (the clock's expressions and batch
// deletes are the database package's), each checked on both databases by
// store_test.go. The rules call them and write no SQL of their own.

// The statements of Idempotency-Keys (idempotency.go).

// reserveKey takes the key for a request in flight; reserved is false when
// it is taken already (by a committed request, or one in flight: then the
// statement waits on the key's unique index until that one ends).
func reserveKey(ctx context.Context, tx *gorm.DB, k IdempotencyKey) (reserved bool, err error) {
	var n int
	err = database.Scan(tx.WithContext(ctx).Raw(`INSERT INTO sales_idempotency_keys (user_id, key, request_hash, state) VALUES (?, ?, ?, 'in_flight')
ON CONFLICT (user_id, key) DO NOTHING RETURNING 1`, k.UserID, k.Key, k.RequestHash), &n)
	return n == 1, err
}

// storeResponse keeps the response the key's request got, and the order it
// created; stored is false when the key is gone (it expired meanwhile).
func storeResponse(ctx context.Context, tx *gorm.DB, k IdempotencyKey, res StoredResponse, orderID int64) (stored bool, err error) {
	up := tx.WithContext(ctx).Exec(`UPDATE sales_idempotency_keys SET state = 'done', response_status = ?, response_body = ?, order_id = ?
WHERE user_id = ? AND key = ?`, res.Status, string(res.Body), orderID, k.UserID, k.Key)
	return up.RowsAffected == 1, up.Error
}

// readKey reads the key's request and response; State is "" when there is
// no such key, and Stale 1 when it is in flight since before
// IdempotencyStale.
func readKey(ctx context.Context, tx *gorm.DB, k IdempotencyKey) (idempotencyRow, error) {
	var row idempotencyRow
	err := database.Scan(tx.WithContext(ctx).Raw(`SELECT request_hash, state, response_status, response_body,
CASE WHEN state = 'in_flight' AND created_at < `+database.NowPlus(tx, -IdempotencyStale)+` THEN 1 ELSE 0 END AS stale
FROM sales_idempotency_keys WHERE user_id = ? AND key = ?`, k.UserID, k.Key), &row)
	return row, err
}

// renewStaleKey takes over a key in flight since before IdempotencyStale,
// stamping it now; renewed is false when it is not (any more).
func renewStaleKey(ctx context.Context, tx *gorm.DB, k IdempotencyKey) (renewed bool, err error) {
	up := tx.WithContext(ctx).Exec(`UPDATE sales_idempotency_keys SET created_at = `+database.Now(tx)+`
WHERE user_id = ? AND key = ? AND state = 'in_flight' AND created_at < `+database.NowPlus(tx, -IdempotencyStale), k.UserID, k.Key)
	return up.RowsAffected == 1, up.Error
}

// expireKeys deletes at most batch of the keys created more than ttl ago,
// oldest first, and returns how many it deleted.
func expireKeys(ctx context.Context, db *gorm.DB, ttl time.Duration, batch int) (int64, error) {
	db = db.WithContext(ctx)
	res := db.Exec(database.DeleteBatch(db, "sales_idempotency_keys", "(user_id, key)", "created_at < "+database.NowPlus(db, -ttl), "created_at"), batch)
	return res.RowsAffected, res.Error
}

// The statements of shipments (shipments.go) and of items' states (state.go).

// insertShipment adds a shipment of the order, shipped at the time given
// or, when it is zero, now by the database's clock, and returns its id.
func insertShipment(ctx context.Context, tx *gorm.DB, orderID int64, carrier, tracking string, shippedAt time.Time) (int64, error) {
	at := "?"
	args := []any{orderID, carrier, tracking}
	if shippedAt.IsZero() {
		at = database.Now(tx)
	} else {
		args = append(args, database.TimeArg(tx, shippedAt))
	}
	var id int64
	err := database.Scan(tx.WithContext(ctx).Raw("INSERT INTO sales_shipments (order_id, carrier, tracking, shipped_at) VALUES (?, ?, ?, "+at+") RETURNING id",
		args...), &id)
	return id, err
}

// addShipped counts qty more of the item shipped; shipped is false, and
// nothing changes, when that would ship more than is wanted of it.
func addShipped(ctx context.Context, tx *gorm.DB, itemID int64, qty int) (shipped bool, err error) {
	res := tx.WithContext(ctx).Exec("UPDATE sales_order_items SET shipped_qty = shipped_qty + ? WHERE id = ? AND shipped_qty + ? <= qty - written_off_qty",
		qty, itemID, qty)
	return res.RowsAffected == 1, res.Error
}

// insertShipmentItems adds the lines of a shipment.
func insertShipmentItems(ctx context.Context, tx *gorm.DB, lines []ShipmentItem) error {
	if len(lines) == 0 {
		return nil
	}
	return tx.WithContext(ctx).Create(&lines).Error
}

// setShipState stores the order's state and whether it is ready to ship,
// stamped now.
func setShipState(ctx context.Context, tx *gorm.DB, orderID int64, status string, ready bool) error {
	return tx.WithContext(ctx).Exec("UPDATE sales_orders SET status = ?, ready_to_ship = ?, updated_at = "+database.Now(tx)+" WHERE id = ?",
		status, ready, orderID).Error
}

// itemsByID returns the items ids, in id order.
func itemsByID(ctx context.Context, tx *gorm.DB, ids []int64) ([]Item, error) {
	var items []Item
	err := tx.WithContext(ctx).Where("id IN ?", ids).Order("id").Find(&items).Error
	return items, err
}

// setItemStatus stores the item's state.
func setItemStatus(ctx context.Context, tx *gorm.DB, id int64, status string) error {
	return tx.WithContext(ctx).Model(&Item{}).Where("id = ?", id).Update("status", status).Error
}

// The statement of the metrics (metrics.go).

// openRejectionsBySource counts the open rejections per source.
func openRejectionsBySource(ctx context.Context, db *gorm.DB) (map[string]int64, error) {
	var rows []struct {
		Source string
		N      int64
	}
	err := database.Scan(db.WithContext(ctx).Raw("SELECT source, count(*) AS n FROM sales_intake_rejections WHERE status = ? GROUP BY source", RejectionOpen),
		&rows)
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Source] = r.N
	}
	return out, err
}

// The statements of orders' versions and the office's notes (versions.go).

// bumpVersion moves the order's version on by one and returns it; 0 when
// there is no such order.
func bumpVersion(ctx context.Context, tx *gorm.DB, id int64) (int64, error) {
	var v int64
	err := database.Scan(tx.WithContext(ctx).Raw("UPDATE sales_orders SET version = version + 1 WHERE id = ? RETURNING version", id), &v)
	return v, err
}

// setOfficeChanges stores what the office changed of the order (JSON).
func setOfficeChanges(ctx context.Context, tx *gorm.DB, id int64, changes string) error {
	return tx.WithContext(ctx).Exec("UPDATE sales_orders SET office_changes = ? WHERE id = ?", changes, id).Error
}

// setAttention stores the order's attention note ("": none).
func setAttention(ctx context.Context, tx *gorm.DB, id int64, note string) error {
	return tx.WithContext(ctx).Exec("UPDATE sales_orders SET attention = ? WHERE id = ?", note, id).Error
}

// The statements of changes and deliveries (changes.go, intake.go).

// ordersOfItems returns the orders of the items, in id order, each once.
func ordersOfItems(ctx context.Context, tx *gorm.DB, items []int64) ([]int64, error) {
	var ids []int64
	err := database.Scan(tx.WithContext(ctx).Raw("SELECT DISTINCT order_id FROM sales_order_items WHERE id IN ? ORDER BY order_id", items), &ids)
	return ids, err
}

// setCustomer is the one place where an order's customer changes (its
// first value is written by insertOrderRow).
func setCustomer(ctx context.Context, tx *gorm.DB, id int64, c Customer) error {
	cc := customerColumns(c)
	return tx.WithContext(ctx).Exec("UPDATE sales_orders SET customer_name = ?, customer_phone = ?, customer_email = ?, customer_search = ?, updated_at = "+database.Now(tx)+" WHERE id = ?",
		cc["customer_name"], cc["customer_phone"], cc["customer_email"], cc["customer_search"], id).Error
}

// setOrderColumns sets the order's columns, each "column = ?" with its
// argument in args (the callers name the columns, never a request), and
// stamps it updated when touch says so.
func setOrderColumns(ctx context.Context, tx *gorm.DB, id int64, columns []string, args []any, touch bool) error {
	sets := strings.Join(columns, ", ")
	if touch {
		sets += ", updated_at = " + database.Now(tx)
	}
	return tx.WithContext(ctx).Exec("UPDATE sales_orders SET "+sets+" WHERE id = ?", append(slices.Clone(args), id)...).Error
}

// updateItem stores the item's quantity, note, prices and options; onlyNew
// changes it only while it is new (not taken up by production). It
// returns the statement's result and the item's id, for takenUp.
func updateItem(ctx context.Context, tx *gorm.DB, it Item, onlyNew bool) (*gorm.DB, int64) {
	q := "UPDATE sales_order_items SET qty = ?, note = ?, unit_price = ?, line_total = ?, options = ? WHERE id = ?"
	args := []any{it.Qty, it.Note, string(it.UnitPrice), string(it.LineTotal), it.Options, it.ID}
	if onlyNew {
		q, args = q+" AND status = ?", append(args, ItemNew)
	}
	return tx.WithContext(ctx).Exec(q, args...), it.ID
}

// deleteNewItem deletes the item while it is new; the result and id are
// for takenUp.
func deleteNewItem(ctx context.Context, tx *gorm.DB, id int64) (*gorm.DB, int64) {
	return tx.WithContext(ctx).Exec("DELETE FROM sales_order_items WHERE id = ? AND status = ?", id, ItemNew), id
}

// orderByKey returns the id of the order whose column uniqueBy (sync_id or
// crm_order_id, never a request's) is key; 0 when none is.
func orderByKey(ctx context.Context, tx *gorm.DB, uniqueBy string, key any) (int64, error) {
	var id int64
	err := database.Scan(tx.WithContext(ctx).Raw("SELECT id FROM sales_orders WHERE "+uniqueBy+" = ?", key), &id)
	return id, err
}

// The statements of orders following production (lifecycle.go).

// markCancelled cancels the order while it is received; cancelled is false
// when it is past that.
func markCancelled(ctx context.Context, tx *gorm.DB, id int64, reason string) (cancelled bool, err error) {
	res := tx.WithContext(ctx).Exec("UPDATE sales_orders SET status = ?, cancel_reason = ?, ready_to_ship = false, updated_at = "+database.Now(tx)+" WHERE id = ? AND status = ?",
		StatusCancelled, reason, id, StatusReceived)
	return res.RowsAffected == 1, res.Error
}

// setOrderState stores the order's state, ETA, reason and readiness,
// stamped now.
func setOrderState(ctx context.Context, tx *gorm.DB, id int64, status string, eta database.Date, reason string, ready bool) error {
	return tx.WithContext(ctx).Exec("UPDATE sales_orders SET status = ?, eta = ?, cancel_reason = ?, ready_to_ship = ?, updated_at = "+database.Now(tx)+" WHERE id = ?",
		status, eta, reason, ready, id).Error
}

// itemsLaunched gives the items their production order and ETA.
func itemsLaunched(ctx context.Context, tx *gorm.DB, items []int64, prodOrderID int64, eta database.Date) error {
	return tx.WithContext(ctx).Exec("UPDATE sales_order_items SET eta = ?, prod_order_id = ? WHERE id IN ?", eta, prodOrderID, items).Error
}

// itemsRescheduled moves the ETA of the items the production order still
// makes (in production).
func itemsRescheduled(ctx context.Context, tx *gorm.DB, items []int64, prodOrderID int64, eta database.Date) error {
	return tx.WithContext(ctx).Exec("UPDATE sales_order_items SET eta = ? WHERE id IN ? AND prod_order_id = ? AND status = ?",
		eta, items, prodOrderID, ItemInProduction).Error
}

// itemsRescheduledAny moves the ETA of the items of the production order,
// whatever their state.
func itemsRescheduledAny(ctx context.Context, tx *gorm.DB, items []int64, prodOrderID int64, eta database.Date) error {
	return tx.WithContext(ctx).Exec("UPDATE sales_order_items SET eta = ? WHERE id IN ? AND prod_order_id = ?", eta, items, prodOrderID).Error
}

// itemsStarted gives the new items without one the production order that
// started on them.
func itemsStarted(ctx context.Context, tx *gorm.DB, items []int64, prodOrderID int64) error {
	return tx.WithContext(ctx).Exec("UPDATE sales_order_items SET prod_order_id = ? WHERE id IN ? AND prod_order_id IS NULL AND status = ?",
		prodOrderID, items, ItemNew).Error
}

// itemsCompleted counts the items of the production order (or of none)
// made whole.
func itemsCompleted(ctx context.Context, tx *gorm.DB, items []int64, prodOrderID int64) error {
	return tx.WithContext(ctx).Exec("UPDATE sales_order_items SET made_qty = qty - written_off_qty WHERE id IN ? AND (prod_order_id = ? OR prod_order_id IS NULL)",
		items, prodOrderID).Error
}

// itemsReleased takes the items off the production order: no ETA, no
// production order.
func itemsReleased(ctx context.Context, tx *gorm.DB, items []int64, prodOrderID int64) error {
	return tx.WithContext(ctx).Exec("UPDATE sales_order_items SET eta = NULL, prod_order_id = NULL WHERE id IN ? AND prod_order_id = ?", items, prodOrderID).Error
}

// countUnitMade counts one unit of the item made by the production order,
// up to what is wanted of it.
func countUnitMade(ctx context.Context, tx *gorm.DB, itemID, prodOrderID int64) error {
	return tx.WithContext(ctx).Exec(`UPDATE sales_order_items SET
    made_qty = CASE WHEN made_qty + 1 > qty - written_off_qty THEN qty - written_off_qty ELSE made_qty + 1 END
WHERE id = ? AND prod_order_id = ? AND status = ?`, itemID, prodOrderID, ItemInProduction).Error
}

// addClosed adds to the item what closing its production order short made
// (beyond the units counted already) and wrote off of it; with units
// returned to the backlog, it leaves the production order (no ETA).
func addClosed(ctx context.Context, tx *gorm.DB, prodOrderID int64, q contracts.ClosedQuantities) error {
	return tx.WithContext(ctx).Exec(`UPDATE sales_order_items SET made_qty = made_qty + ?, written_off_qty = written_off_qty + ?,
    eta = CASE WHEN ? > 0 THEN NULL ELSE eta END,
    prod_order_id = CASE WHEN ? > 0 THEN NULL ELSE prod_order_id END
WHERE id = ? AND prod_order_id = ?`,
		q.Made-q.MadeReported, q.WrittenOff, q.Returned, q.Returned, q.ItemID, prodOrderID).Error
}
