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

-- +goose Down
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
