-- +goose Up

-- The maintenance job expires Idempotency-Keys by age, oldest first, in
-- batches: each batch is a short range scan of this index, not a scan of
-- the table.
CREATE INDEX sales_idempotency_keys_created_at ON sales_idempotency_keys (created_at);

-- +goose Down
DROP INDEX sales_idempotency_keys_created_at;
