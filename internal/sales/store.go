package sales

import (
	"context"
	"time"

	"gorm.io/gorm"

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
