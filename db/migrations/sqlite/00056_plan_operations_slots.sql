-- +goose Up
-- The SQLite twin of migrations/postgres/00056_plan_operations_slots.sql:
-- the planned slots are in plan_schedules now.
DROP INDEX plan_operations_open;
DROP INDEX plan_operations_days;
ALTER TABLE plan_operations DROP COLUMN start_day;
ALTER TABLE plan_operations DROP COLUMN start_min;
ALTER TABLE plan_operations DROP COLUMN end_day;
ALTER TABLE plan_operations DROP COLUMN end_min;
CREATE INDEX plan_operations_done ON plan_operations (prod_order_id) WHERE status = 'done';
CREATE INDEX plan_operations_open ON plan_operations (work_center_id, prod_order_id) WHERE status <> 'done';

-- +goose Down
-- The columns come back empty; 00055's down fills them from the schedules.
DROP INDEX plan_operations_open;
DROP INDEX plan_operations_done;
ALTER TABLE plan_operations ADD COLUMN start_day DATE;
ALTER TABLE plan_operations ADD COLUMN start_min REAL;
ALTER TABLE plan_operations ADD COLUMN end_day DATE;
ALTER TABLE plan_operations ADD COLUMN end_min REAL;
CREATE INDEX plan_operations_open ON plan_operations (work_center_id, end_day) WHERE status <> 'done';
CREATE INDEX plan_operations_days ON plan_operations (end_day, start_day);
