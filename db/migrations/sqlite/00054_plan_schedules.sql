-- +goose Up
-- The SQLite twin of migrations/postgres/00054_plan_schedules.sql: the
-- planned slots move out of plan_operations into one row per production
-- order.
CREATE TABLE plan_schedules (
    prod_order_id INTEGER PRIMARY KEY REFERENCES plan_prod_orders (id) ON DELETE CASCADE,
    ops           BLOB    NOT NULL,
    slots         BLOB    NOT NULL,
    first_day     DATE,
    last_day      DATE
);
CREATE INDEX plan_schedules_days ON plan_schedules (last_day, first_day);

-- +goose Down
DROP TABLE plan_schedules;
