-- +goose Up

-- The planning backlog and the production orders' items carry the customer's
-- name and the item's note, as order.received now does, so that the plan's
-- lists read without a trip to sales. Rows received before are filled once,
-- here, from the sales tables (their events did not carry these fields); from
-- now on only the events feed them.
ALTER TABLE plan_backlog ADD COLUMN customer text NOT NULL DEFAULT '';
ALTER TABLE plan_backlog ADD COLUMN note text NOT NULL DEFAULT '';
ALTER TABLE plan_prod_order_items ADD COLUMN customer text NOT NULL DEFAULT '';
ALTER TABLE plan_prod_order_items ADD COLUMN note text NOT NULL DEFAULT '';

UPDATE plan_backlog b SET
    customer = coalesce((SELECT o.customer_name FROM sales_orders o WHERE o.id = b.order_id), ''),
    note = coalesce((SELECT i.note FROM sales_order_items i WHERE i.id = b.item_id), '');
UPDATE plan_prod_order_items b SET
    customer = coalesce((SELECT o.customer_name FROM sales_orders o WHERE o.id = b.order_id), ''),
    note = coalesce((SELECT i.note FROM sales_order_items i WHERE i.id = b.item_id), '');

-- The backlog sorted by due date, and filtered by SKU.
CREATE INDEX plan_backlog_due ON plan_backlog (due_date, item_id);
CREATE INDEX plan_backlog_sku ON plan_backlog (sku, item_id);

-- +goose Down
DROP INDEX plan_backlog_sku;
DROP INDEX plan_backlog_due;
ALTER TABLE plan_prod_order_items DROP COLUMN note;
ALTER TABLE plan_prod_order_items DROP COLUMN customer;
ALTER TABLE plan_backlog DROP COLUMN note;
ALTER TABLE plan_backlog DROP COLUMN customer;
