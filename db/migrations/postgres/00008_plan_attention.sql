-- +goose Up

-- A production order on which work has started when one of its sales orders
-- is cancelled is flagged for the planner, with the reason, instead of being
-- kept silently.
ALTER TABLE plan_prod_orders ADD COLUMN needs_attention boolean NOT NULL DEFAULT false;
ALTER TABLE plan_prod_orders ADD COLUMN attention_reason text NOT NULL DEFAULT '';
CREATE INDEX plan_prod_orders_attention ON plan_prod_orders (id) WHERE needs_attention;

-- +goose Down
DROP INDEX plan_prod_orders_attention;
ALTER TABLE plan_prod_orders DROP COLUMN attention_reason;
ALTER TABLE plan_prod_orders DROP COLUMN needs_attention;
