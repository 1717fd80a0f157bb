-- +goose Up
-- The SQLite twin of migrations/postgres/00010_sales_changes.sql.

-- sales: what the shop sends besides the order's lines, kept as given (tsekh
-- computes no prices): the delivery address, the requested delivery date, the
-- currency and the order's total; per item, the unit price and the line total.
-- Amounts are kept as the decimal text the shop sent.
ALTER TABLE sales_orders ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE sales_orders ADD COLUMN delivery_address TEXT NOT NULL DEFAULT '';
ALTER TABLE sales_orders ADD COLUMN delivery_date DATE;
ALTER TABLE sales_orders ADD COLUMN currency TEXT NOT NULL DEFAULT '';
ALTER TABLE sales_orders ADD COLUMN total TEXT NOT NULL DEFAULT '';
ALTER TABLE sales_order_items ADD COLUMN unit_price TEXT NOT NULL DEFAULT '';
ALTER TABLE sales_order_items ADD COLUMN line_total TEXT NOT NULL DEFAULT '';

-- The last delivery of the shop (or row of the CRM) applied to the order: its
-- version or updated_at, by which a later one is recognised as newer or older,
-- and the hash of its content, by which a repeat of it is recognised.
ALTER TABLE sales_orders ADD COLUMN source_version INTEGER;
ALTER TABLE sales_orders ADD COLUMN source_updated_at DATETIME;
ALTER TABLE sales_orders ADD COLUMN source_hash TEXT NOT NULL DEFAULT '';

-- plan: a production order's item whose sales order changed it after the
-- launch keeps what it was built on (qty) and remembers what is ordered now
-- (ordered_qty; removed: no longer ordered), so that the production order is
-- flagged rather than silently wrong, and its cancellation puts back into the
-- backlog what is ordered, not what was.
ALTER TABLE plan_prod_order_items ADD COLUMN ordered_qty INTEGER;
ALTER TABLE plan_prod_order_items ADD COLUMN removed BOOLEAN NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE plan_prod_order_items DROP COLUMN removed;
ALTER TABLE plan_prod_order_items DROP COLUMN ordered_qty;
ALTER TABLE sales_orders DROP COLUMN source_hash;
ALTER TABLE sales_orders DROP COLUMN source_updated_at;
ALTER TABLE sales_orders DROP COLUMN source_version;
ALTER TABLE sales_order_items DROP COLUMN line_total;
ALTER TABLE sales_order_items DROP COLUMN unit_price;
ALTER TABLE sales_orders DROP COLUMN total;
ALTER TABLE sales_orders DROP COLUMN currency;
ALTER TABLE sales_orders DROP COLUMN delivery_date;
ALTER TABLE sales_orders DROP COLUMN delivery_address;
ALTER TABLE sales_orders DROP COLUMN note;
