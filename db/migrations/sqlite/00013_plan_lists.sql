-- +goose Up
-- The SQLite twin of migrations/postgres/00013_plan_lists.sql.
ALTER TABLE plan_backlog ADD COLUMN customer TEXT NOT NULL DEFAULT '';
ALTER TABLE plan_backlog ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE plan_prod_order_items ADD COLUMN customer TEXT NOT NULL DEFAULT '';
ALTER TABLE plan_prod_order_items ADD COLUMN note TEXT NOT NULL DEFAULT '';

UPDATE plan_backlog SET
    customer = coalesce((SELECT o.customer_name FROM sales_orders o WHERE o.id = plan_backlog.order_id), ''),
    note = coalesce((SELECT i.note FROM sales_order_items i WHERE i.id = plan_backlog.item_id), '');
UPDATE plan_prod_order_items SET
    customer = coalesce((SELECT o.customer_name FROM sales_orders o WHERE o.id = plan_prod_order_items.order_id), ''),
    note = coalesce((SELECT i.note FROM sales_order_items i WHERE i.id = plan_prod_order_items.item_id), '');

CREATE INDEX plan_backlog_due ON plan_backlog (due_date, item_id);
CREATE INDEX plan_backlog_sku ON plan_backlog (sku, item_id);

-- +goose Down
DROP INDEX plan_backlog_sku;
DROP INDEX plan_backlog_due;
ALTER TABLE plan_prod_order_items DROP COLUMN note;
ALTER TABLE plan_prod_order_items DROP COLUMN customer;
ALTER TABLE plan_backlog DROP COLUMN note;
ALTER TABLE plan_backlog DROP COLUMN customer;
