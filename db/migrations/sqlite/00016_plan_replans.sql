-- +goose Up

-- The SQLite twin of migrations/postgres/00016_plan_replans.sql.
CREATE TABLE plan_replans (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    reason        TEXT     NOT NULL CHECK (reason IN ('replan', 'priority')),
    prod_order_id INTEGER,
    planned_from  DATETIME NOT NULL,
    replanned     INTEGER  NOT NULL,
    moved         INTEGER  NOT NULL,
    created_at    DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);

-- +goose Down
DROP TABLE plan_replans;
