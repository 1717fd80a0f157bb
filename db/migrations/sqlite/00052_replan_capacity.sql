-- +goose Up
-- The SQLite twin of migrations/postgres/00052_replan_capacity.sql. SQLite
-- cannot change a CHECK constraint: plan_replans is rebuilt (nothing
-- refers to it).
CREATE TABLE plan_replans_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    reason        TEXT     NOT NULL CHECK (reason IN ('replan', 'priority', 'materials', 'capacity')),
    prod_order_id INTEGER,
    planned_from  DATETIME NOT NULL,
    replanned     INTEGER  NOT NULL,
    moved         INTEGER  NOT NULL,
    created_at    DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
INSERT INTO plan_replans_new (id, reason, prod_order_id, planned_from, replanned, moved, created_at)
    SELECT id, reason, prod_order_id, planned_from, replanned, moved, created_at FROM plan_replans;
DROP TABLE plan_replans;
ALTER TABLE plan_replans_new RENAME TO plan_replans;

-- +goose Down
DELETE FROM plan_replans WHERE reason = 'capacity';
CREATE TABLE plan_replans_old (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    reason        TEXT     NOT NULL CHECK (reason IN ('replan', 'priority', 'materials')),
    prod_order_id INTEGER,
    planned_from  DATETIME NOT NULL,
    replanned     INTEGER  NOT NULL,
    moved         INTEGER  NOT NULL,
    created_at    DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
INSERT INTO plan_replans_old (id, reason, prod_order_id, planned_from, replanned, moved, created_at)
    SELECT id, reason, prod_order_id, planned_from, replanned, moved, created_at FROM plan_replans;
DROP TABLE plan_replans;
ALTER TABLE plan_replans_old RENAME TO plan_replans;
