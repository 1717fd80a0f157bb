-- +goose Up

-- sales: what the shop sends besides the order's lines, kept as given (tsekh
-- computes no prices): the delivery address, the requested delivery date, the
-- currency and the order's total; per item, the unit price and the line total.
-- Amounts are kept as the decimal text the shop sent.
ALTER TABLE sales_orders ADD COLUMN note text NOT NULL DEFAULT '';
ALTER TABLE sales_orders ADD COLUMN delivery_address text NOT NULL DEFAULT '';
ALTER TABLE sales_orders ADD COLUMN delivery_date date;
ALTER TABLE sales_orders ADD COLUMN currency text NOT NULL DEFAULT '';
ALTER TABLE sales_orders ADD COLUMN total text NOT NULL DEFAULT '';
ALTER TABLE sales_order_items ADD COLUMN unit_price text NOT NULL DEFAULT '';
ALTER TABLE sales_order_items ADD COLUMN line_total text NOT NULL DEFAULT '';

-- The last delivery of the shop (or row of the CRM) applied to the order: its
-- version or updated_at, by which a later one is recognised as newer or older,
-- and the hash of its content, by which a repeat of it is recognised.
ALTER TABLE sales_orders ADD COLUMN source_version bigint;
ALTER TABLE sales_orders ADD COLUMN source_updated_at timestamptz;
ALTER TABLE sales_orders ADD COLUMN source_hash text NOT NULL DEFAULT '';

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
