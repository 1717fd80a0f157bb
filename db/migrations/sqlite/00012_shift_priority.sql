-- +goose Up
-- The SQLite twin of migrations/postgres/00012_shift_priority.sql.
ALTER TABLE catalog_work_centers ADD COLUMN shift_start TEXT NOT NULL DEFAULT '08:00'
    CHECK (length(shift_start) = 5 AND shift_start GLOB '[0-2][0-9]:[0-5][0-9]' AND shift_start < '24:00');

ALTER TABLE plan_prod_orders ADD COLUMN priority INTEGER NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100);
ALTER TABLE plan_prod_orders ADD COLUMN eta_given BOOLEAN NOT NULL DEFAULT false;
UPDATE plan_prod_orders SET eta_given = (eta <> planned_eta);

-- +goose Down
ALTER TABLE plan_prod_orders DROP COLUMN eta_given;
ALTER TABLE plan_prod_orders DROP COLUMN priority;
ALTER TABLE catalog_work_centers DROP COLUMN shift_start;
