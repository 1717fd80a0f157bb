-- +goose Up
-- A refused delivery's body is kept up to INTAKE_BODY_LIMIT bytes: body_bytes
-- is its size as received, body_cut says that what is kept is its
-- beginning only (such a rejection cannot be retried; its sender delivers
-- it again).
ALTER TABLE sales_intake_rejections ADD COLUMN body_bytes integer NOT NULL DEFAULT 0,
    ADD COLUMN body_cut boolean NOT NULL DEFAULT false;
UPDATE sales_intake_rejections SET body_bytes = octet_length(body);

-- +goose Down
ALTER TABLE sales_intake_rejections DROP COLUMN body_bytes, DROP COLUMN body_cut;
