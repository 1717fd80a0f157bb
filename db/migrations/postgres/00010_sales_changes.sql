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

-- plan: a production order's item whose sales order changed it after the
-- launch keeps what it was built on (qty) and remembers what is ordered now
-- (ordered_qty; removed: no longer ordered), so that the production order is
-- flagged rather than silently wrong, and its cancellation puts back into the
-- backlog what is ordered, not what was.
ALTER TABLE plan_prod_order_items ADD COLUMN ordered_qty integer;
ALTER TABLE plan_prod_order_items ADD COLUMN removed boolean NOT NULL DEFAULT false;

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
