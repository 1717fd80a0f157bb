-- +goose Up
-- The SQLite twin of migrations/postgres/00051_plan_operations_fillfactor.sql:
-- SQLite has no fill factor; nothing to do.
SELECT 1;

-- +goose Down
SELECT 1;
