-- +goose Up

-- plan: a production order on which work has started can be closed short,
-- with a reason: what is made stays made; the rest goes back to the backlog
-- or is written off, as the planner said. Who closed it is kept beside when.
ALTER TABLE plan_prod_orders DROP CONSTRAINT plan_prod_orders_status_check;
ALTER TABLE plan_prod_orders ADD CONSTRAINT plan_prod_orders_status_check
    CHECK (status IN ('launched', 'in_progress', 'done', 'cancelled', 'closed'));
ALTER TABLE plan_prod_orders ADD COLUMN closed_at timestamptz;
ALTER TABLE plan_prod_orders ADD COLUMN close_reason text NOT NULL DEFAULT '';
ALTER TABLE plan_prod_orders ADD COLUMN close_rest text NOT NULL DEFAULT ''
    CHECK (close_rest IN ('', 'backlog', 'write_off'));
ALTER TABLE plan_prod_orders ADD COLUMN closed_by_id bigint;
ALTER TABLE plan_prod_orders ADD COLUMN closed_by text;

-- What became of each item of a closed order, in units: made, returned to
-- the backlog, written off (null until the order is closed).
ALTER TABLE plan_prod_order_items ADD COLUMN made_qty integer;
ALTER TABLE plan_prod_order_items ADD COLUMN returned_qty integer;
ALTER TABLE plan_prod_order_items ADD COLUMN written_off_qty integer;

-- sales: an item counts the units production has made and those written
-- off when a production order was closed short; items already made count whole.
ALTER TABLE sales_order_items ADD COLUMN made_qty integer NOT NULL DEFAULT 0;
ALTER TABLE sales_order_items ADD COLUMN written_off_qty integer NOT NULL DEFAULT 0;
UPDATE sales_order_items SET made_qty = qty WHERE status IN ('done', 'shipped');

-- +goose Down
ALTER TABLE sales_order_items DROP COLUMN written_off_qty;
ALTER TABLE sales_order_items DROP COLUMN made_qty;
ALTER TABLE plan_prod_order_items DROP COLUMN written_off_qty;
ALTER TABLE plan_prod_order_items DROP COLUMN returned_qty;
ALTER TABLE plan_prod_order_items DROP COLUMN made_qty;
UPDATE plan_prod_orders SET status = 'cancelled', cancelled_at = closed_at WHERE status = 'closed';
ALTER TABLE plan_prod_orders DROP COLUMN closed_by;
ALTER TABLE plan_prod_orders DROP COLUMN closed_by_id;
ALTER TABLE plan_prod_orders DROP COLUMN close_rest;
ALTER TABLE plan_prod_orders DROP COLUMN close_reason;
ALTER TABLE plan_prod_orders DROP COLUMN closed_at;
ALTER TABLE plan_prod_orders DROP CONSTRAINT plan_prod_orders_status_check;
ALTER TABLE plan_prod_orders ADD CONSTRAINT plan_prod_orders_status_check
    CHECK (status IN ('launched', 'in_progress', 'done', 'cancelled'));
