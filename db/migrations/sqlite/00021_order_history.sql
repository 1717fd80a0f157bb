-- +goose Up
-- An order's history looks up the production orders its items were launched on.
CREATE INDEX plan_prod_order_items_order ON plan_prod_order_items (order_id);

-- +goose Down
DROP INDEX plan_prod_order_items_order;
