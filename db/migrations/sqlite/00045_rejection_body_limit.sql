-- +goose Up
-- The SQLite twin of migrations/postgres/00045_rejection_body_limit.sql.
ALTER TABLE sales_intake_rejections ADD COLUMN body_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sales_intake_rejections ADD COLUMN body_cut BOOLEAN NOT NULL DEFAULT 0;
UPDATE sales_intake_rejections SET body_bytes = length(CAST(body AS BLOB));

-- +goose Down
ALTER TABLE sales_intake_rejections DROP COLUMN body_cut;
ALTER TABLE sales_intake_rejections DROP COLUMN body_bytes;
