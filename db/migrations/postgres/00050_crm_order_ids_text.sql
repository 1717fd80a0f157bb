-- +goose Up
-- A CRM's order ids are text ("CRM-5001"), up to 64 characters: the orders'
-- and the intake inbox's crm_order_id become text, the numbers imported so
-- far kept as their decimal text (the unique key stays).
ALTER TABLE sales_orders ALTER COLUMN crm_order_id TYPE text USING crm_order_id::text;
ALTER TABLE sales_intake_rejections ALTER COLUMN crm_order_id TYPE text USING crm_order_id::text;

-- +goose Down
ALTER TABLE sales_intake_rejections ALTER COLUMN crm_order_id TYPE bigint USING crm_order_id::bigint;
ALTER TABLE sales_orders ALTER COLUMN crm_order_id TYPE bigint USING crm_order_id::bigint;
