-- +goose Up
-- The planned slots move out of plan_operations into one row per
-- production order (internal/plan/schedules.go; the form of ops and slots
-- is package internal/plan/schedblob's): a change of priority in the
-- middle of a big plan moves tens of thousands of operations, which as
-- rows of plan_operations is tens of thousands of row writes and as
-- schedules the slots of a few hundred orders. 00055 fills it from
-- plan_operations, 00056 drops the columns it replaces.
--
-- A row stays whole in its page up to 8 kB (about 200 operations):
-- reading it takes no second lookup and writing it no compression. ops
-- (about 14 bytes an operation) changes only when an order gains or
-- loses operations; past 8 kB it goes out of line, uncompressed, and a
-- re-plan writing the slots (24 bytes an operation) leaves it there.
-- first_day and last_day are the earliest start and the latest end, for
-- the schedule view to find the orders in its days.
CREATE TABLE plan_schedules (
    prod_order_id bigint PRIMARY KEY REFERENCES plan_prod_orders (id) ON DELETE CASCADE,
    ops           bytea  NOT NULL,
    slots         bytea  NOT NULL,
    first_day     date,
    last_day      date
) WITH (toast_tuple_target = 8160);
ALTER TABLE plan_schedules ALTER COLUMN ops SET STORAGE EXTERNAL, ALTER COLUMN slots SET STORAGE MAIN;
CREATE INDEX plan_schedules_days ON plan_schedules (last_day, first_day);

-- +goose Down
DROP TABLE plan_schedules;
