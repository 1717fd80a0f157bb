-- +goose Up
-- The SQLite twin of migrations/postgres/00008_plan_attention.sql.

ALTER TABLE plan_prod_orders ADD COLUMN needs_attention BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE plan_prod_orders ADD COLUMN attention_reason TEXT NOT NULL DEFAULT '';
CREATE INDEX plan_prod_orders_attention ON plan_prod_orders (id) WHERE needs_attention;

-- +goose Down
DROP INDEX plan_prod_orders_attention;
ALTER TABLE plan_prod_orders DROP COLUMN attention_reason;
ALTER TABLE plan_prod_orders DROP COLUMN needs_attention;
