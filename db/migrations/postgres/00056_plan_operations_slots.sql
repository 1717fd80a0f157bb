-- +goose Up
-- The planned slots are in plan_schedules now (00054, filled by 00055).
DROP INDEX plan_operations_open;
DROP INDEX plan_operations_days;
ALTER TABLE plan_operations DROP COLUMN start_day, DROP COLUMN start_min, DROP COLUMN end_day, DROP COLUMN end_min;
-- No re-plan writes these rows any more (00051 left room for it).
ALTER TABLE plan_operations RESET (fillfactor);
-- What a re-plan reads of plan_operations: which operations are done; and
-- the live work on a work centre whose capacity changed.
CREATE INDEX plan_operations_done ON plan_operations (prod_order_id) WHERE status = 'done';
CREATE INDEX plan_operations_open ON plan_operations (work_center_id, prod_order_id) WHERE status <> 'done';

-- +goose Down
-- The columns come back empty; 00055's down fills them from the schedules.
DROP INDEX plan_operations_open;
DROP INDEX plan_operations_done;
ALTER TABLE plan_operations ADD COLUMN start_day date, ADD COLUMN start_min double precision,
    ADD COLUMN end_day date, ADD COLUMN end_min double precision;
ALTER TABLE plan_operations SET (fillfactor = 70);
CREATE INDEX plan_operations_open ON plan_operations (work_center_id, end_day) WHERE status <> 'done';
CREATE INDEX plan_operations_days ON plan_operations (end_day, start_day);
