package sales

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/page"
	"github.com/tsekh/tsekh/internal/platform/textsearch"
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

// The statements of the intake inbox (rejections.go, resolve.go,
// inboxedit.go, rejectionlist.go).

// keepRejection keeps a refused delivery: a new open rejection, or, when
// one of its key is open, that one with the new body and reasons and one
// more delivery. It fills in r's id and deliveries.
func keepRejection(ctx context.Context, tx *gorm.DB, r *rejectionRow) error {
	var row struct {
		ID         int64
		Deliveries int
	}
	err := database.Scan(tx.WithContext(ctx).Raw(`INSERT INTO sales_intake_rejections (source, intake_key, sync_id, crm_order_id, body, body_bytes, body_cut, reasons, errors, detail)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (source, intake_key) WHERE status = 'open' DO UPDATE SET body = excluded.body, body_bytes = excluded.body_bytes,
    body_cut = excluded.body_cut, reasons = excluded.reasons,
    errors = excluded.errors, detail = excluded.detail, deliveries = sales_intake_rejections.deliveries + 1, updated_at = `+database.Now(tx)+`
RETURNING id, deliveries`,
		r.Source, r.IntakeKey, r.SyncID, r.CRMOrderID, r.Body, r.BodyBytes, r.BodyCut, r.Reasons, r.Errors, r.Detail), &row)
	r.ID, r.Deliveries = row.ID, row.Deliveries
	return err
}

// rejectionByID reads the rejection; found is false for an unknown id.
func rejectionByID(ctx context.Context, db *gorm.DB, id int64) (r rejectionRow, found bool, err error) {
	var rows []rejectionRow
	if err := db.WithContext(ctx).Where("id = ?", id).Limit(1).Find(&rows).Error; err != nil || len(rows) == 0 {
		return r, false, err
	}
	return rows[0], true, nil
}

// refusedAgain records that a retry of the open rejection was refused
// again, with its reasons; refused is false when it is not open any more.
func refusedAgain(ctx context.Context, tx *gorm.DB, id int64, reasons, errs, detail string) (refused bool, err error) {
	res := tx.WithContext(ctx).Exec(`UPDATE sales_intake_rejections SET reasons = ?, errors = ?, detail = ?, retries = retries + 1, updated_at = `+database.Now(tx)+`
WHERE id = ? AND status = ?`, reasons, errs, detail, id, RejectionOpen)
	return res.RowsAffected == 1, res.Error
}

// markDismissed closes the open rejection for the reason; dismissed is
// false when it was not open.
func markDismissed(ctx context.Context, tx *gorm.DB, id int64, reason string) (dismissed bool, err error) {
	res := tx.WithContext(ctx).Exec(`UPDATE sales_intake_rejections SET status = ?, dismiss_reason = ?, closed_at = `+database.Now(tx)+`, updated_at = `+database.Now(tx)+`
WHERE id = ? AND status = ?`, RejectionDismissed, reason, id, RejectionOpen)
	return res.RowsAffected == 1, res.Error
}

// openRejectionsByKey returns the open rejections of the source's key, in
// id order.
func openRejectionsByKey(ctx context.Context, tx *gorm.DB, source, key string) ([]rejectionRow, error) {
	var open []rejectionRow
	err := tx.WithContext(ctx).Where("source = ? AND intake_key = ? AND status = ?", source, key, RejectionOpen).Order("id").Find(&open).Error
	return open, err
}

// markResolved closes the open rejection as resolved into the order, with
// the outcome; resolved is false when it was not open.
func markResolved(ctx context.Context, tx *gorm.DB, id, orderID int64, outcome string) (resolved bool, err error) {
	res := tx.WithContext(ctx).Exec(`UPDATE sales_intake_rejections SET status = ?, order_id = ?, outcome = ?, closed_at = `+database.Now(tx)+`, updated_at = `+database.Now(tx)+`
WHERE id = ? AND status = ?`, RejectionResolved, orderID, outcome, id, RejectionOpen)
	return res.RowsAffected == 1, res.Error
}

// rejectionsAbout returns the ids of the rejections about the order, in id
// order: those resolved into it and those kept under its key (the shop's
// sync_id, the CRM's order id), open or closed.
func rejectionsAbout(ctx context.Context, db *gorm.DB, o Order) ([]int64, error) {
	ids := []int64{}
	q := db.WithContext(ctx).Model(&rejectionRow{}).Where("order_id = ?", o.ID)
	if o.SyncID != nil {
		q = q.Or("source = ? AND intake_key = ?", SourceShop, *o.SyncID)
	}
	if o.CRMOrderID != nil {
		q = q.Or("source = ? AND intake_key = ?", SourceCRM, *o.CRMOrderID)
	}
	err := q.Order("id").Pluck("id", &ids).Error
	return ids, err
}

// setRejectionBody stores the open rejection's corrected body; set is
// false when it is not open.
func setRejectionBody(ctx context.Context, tx *gorm.DB, id int64, body string) (set bool, err error) {
	res := tx.WithContext(ctx).Exec(`UPDATE sales_intake_rejections SET body = ?, updated_at = `+database.Now(tx)+` WHERE id = ? AND status = ?`,
		body, id, RejectionOpen)
	return res.RowsAffected == 1, res.Error
}

// rejectionSize is a rejection's id and its body's size in bytes.
type rejectionSize struct {
	ID   int64
	Size int64
}

// rejectionSizes returns the ids and body sizes of the page pr of the
// rejections f selects, newest first, one more than pr.Limit when there
// are more.
func rejectionSizes(ctx context.Context, db *gorm.DB, f RejectionFilter, pr page.Request) ([]rejectionSize, error) {
	q := db.WithContext(ctx).Model(&rejectionRow{})
	if f.Source != "" {
		q = q.Where("source = ?", f.Source)
	}
	if f.Reason != "" {
		q = q.Where("reasons LIKE ?", "%,"+f.Reason+",%")
	}
	if f.Open != nil {
		if *f.Open {
			q = q.Where("status = ?", RejectionOpen)
		} else {
			q = q.Where("status <> ?", RejectionOpen)
		}
	}
	if pr.After != 0 {
		q = q.Where("id < ?", pr.After)
	}
	size := "octet_length(body)"
	if database.Embedded(db) {
		size = "length(CAST(body AS BLOB))"
	}
	var sizes []rejectionSize
	err := database.Scan(q.Select("id, "+size+" AS size").Order("id DESC").Limit(pr.Limit+1), &sizes)
	return sizes, err
}

// rejectionsByID reads the rejections ids, newest first.
func rejectionsByID(ctx context.Context, db *gorm.DB, ids []int64) ([]rejectionRow, error) {
	var rows []rejectionRow
	err := db.WithContext(ctx).Where("id IN ?", ids).Order("id DESC").Find(&rows).Error
	return rows, err
}

// The statements of orders themselves (sales.go, orderlist.go).

// insertOrderRow inserts the order row and returns its id; with uniqueBy it
// returns 0 when an order with that key exists (ON CONFLICT DO NOTHING, which
// PostgreSQL and SQLite both speak; SQLite reads it after INSERT … SELECT only
// with a WHERE). It is the one place where an order's
// customer is first written; setCustomer changes it.
//
// Order numbers have no gaps: the id is the highest one committed plus one,
// taken under a lock held until the transaction ends (PostgreSQL's advisory
// lock; SQLite has one writer), so a transaction that rolls back, whatever
// refused it, gives its number back to the next order. A sequence would not:
// PostgreSQL never takes back a value it handed out. The sequence is kept
// in step for rows written without an id (the bench's).
func insertOrderRow(ctx context.Context, tx *gorm.DB, o *Order, uniqueBy string) (int64, error) {
	conflict := ""
	switch uniqueBy {
	case "":
	case "sync_id", "crm_order_id":
		conflict = " ON CONFLICT (" + uniqueBy + ") DO NOTHING"
	default:
		return 0, fmt.Errorf("sales: no unique key %q", uniqueBy)
	}
	var updatedAt, updatedNS any
	if o.SourceUpdatedAt != nil {
		updatedAt = database.TimeArg(tx, *o.SourceUpdatedAt)
		updatedNS = o.SourceUpdatedAt.UnixNano()
	}
	if err := database.LockClassName(tx.WithContext(ctx), OrderNumberLock, "sales_orders"); err != nil {
		return 0, err
	}
	var id int64
	cc := customerColumns(o.Customer)
	err := database.Scan(tx.WithContext(ctx).Raw(`INSERT INTO sales_orders (id, status, source, sync_id, crm_order_id, customer_name, customer_phone, customer_email, customer_search, due_date,
note, delivery_address, delivery_date, currency, total, source_version, source_updated_at, source_hash, source_updated_ns)
SELECT (SELECT COALESCE(MAX(id), 0) + 1 FROM sales_orders), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
WHERE true`+conflict+` RETURNING id`,
		o.Status, o.Source, o.SyncID, o.CRMOrderID, cc["customer_name"], cc["customer_phone"], cc["customer_email"], cc["customer_search"], o.DueDate,
		o.Note, o.DeliveryAddress, o.DeliveryDate, o.Currency, string(o.Total), o.SourceVersion, updatedAt, o.SourceHash, updatedNS), &id)
	if err != nil || id == 0 || database.DialectOf(tx) != database.Postgres {
		return id, err
	}
	// Values past the highest id are all free, so setting it back is safe.
	return id, tx.WithContext(ctx).Exec("SELECT setval(pg_get_serial_sequence('sales_orders', 'id'), ?)", id).Error
}

// orderByID reads the order with its items and shipments; found is false
// for an unknown id.
func orderByID(ctx context.Context, db *gorm.DB, id int64) (o Order, found bool, err error) {
	var os []Order
	err = withShipments(db.WithContext(ctx).Preload("Items", func(db *gorm.DB) *gorm.DB { return db.Order("id") })).
		Where("id = ?", id).Limit(1).Find(&os).Error
	if err != nil || len(os) == 0 {
		return o, false, err
	}
	return os[0], true, nil
}

func withShipments(db *gorm.DB) *gorm.DB {
	return db.Preload("Shipments", func(db *gorm.DB) *gorm.DB { return db.Order("id") }).
		Preload("Shipments.Items", func(db *gorm.DB) *gorm.DB { return db.Order("item_id") })
}

// ordersPage returns the page pr of the orders f selects, newest first,
// with their items and shipments: one more than pr.Limit when there are
// more.
func ordersPage(ctx context.Context, db *gorm.DB, f OrderFilter, pr page.Request) ([]Order, error) {
	q := withShipments(db.WithContext(ctx).Preload("Items", func(db *gorm.DB) *gorm.DB { return db.Order("id") }))
	if f.Status != "" {
		q = q.Where("sales_orders.status = ?", f.Status)
	}
	if f.Source != "" {
		q = q.Where("sales_orders.source = ?", f.Source)
	}
	if p := textsearch.Pattern(f.Customer); p != "" {
		q = q.Where(`sales_orders.customer_search LIKE ? ESCAPE '`+textsearch.Escape+`'`, p)
	}
	if f.SKU != "" {
		q = q.Where("EXISTS (SELECT 1 FROM sales_order_items i WHERE i.order_id = sales_orders.id AND i.sku = ?)", f.SKU)
	}
	if !f.DueAfter.IsZero() {
		q = q.Where("sales_orders.due_date >= ?", f.DueAfter)
	}
	if !f.DueBefore.IsZero() {
		q = q.Where("sales_orders.due_date <= ?", f.DueBefore)
	}
	if f.Late != nil {
		cond := lateSQL
		if !*f.Late {
			cond = "NOT " + lateSQL
		}
		q = q.Where(cond)
	}
	if pr.After != 0 {
		q = q.Where("sales_orders.id < ?", pr.After)
	}
	var os []Order
	err := q.Order("sales_orders.id DESC").Limit(pr.Limit + 1).Find(&os).Error
	return os, err
}

// lockOrder locks the order's row and then its items, in id order, until tx
// ends (PostgreSQL): the lock order of the package (see its doc), taken by
// every path that changes an order or its items, so that a change, a
// shipment and sales following production take turns instead of
// deadlocking.
func lockOrder(ctx context.Context, tx *gorm.DB, id int64) error {
	db := tx.WithContext(ctx)
	if err := database.LockRows(db, "SELECT id FROM sales_orders WHERE id = ? FOR UPDATE", id); err != nil {
		return err
	}
	return database.LockRows(db, "SELECT id FROM sales_order_items WHERE order_id = ? ORDER BY id FOR UPDATE", id)
}

// insertItems adds the items, their ids the database's, filled in.
func insertItems(ctx context.Context, tx *gorm.DB, items []*Item) error {
	if len(items) == 0 {
		return nil
	}
	return tx.WithContext(ctx).Omit("ID").Create(items).Error
}
