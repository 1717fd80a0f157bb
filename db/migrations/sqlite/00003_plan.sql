-- +goose Up
-- The SQLite twin of migrations/postgres/00003_plan.sql.

CREATE TABLE plan_prod_orders (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    status       TEXT     NOT NULL DEFAULT 'launched' CHECK (status IN ('launched', 'in_progress', 'done', 'cancelled')),
    route_id     INTEGER  NOT NULL,
    route_name   TEXT     NOT NULL,
    parts_count  INTEGER  NOT NULL,
    ops_count    INTEGER  NOT NULL,
    eta          DATE     NOT NULL,
    planned_eta  DATE     NOT NULL,
    created_at   DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    started_at   DATETIME,
    completed_at DATETIME,
    cancelled_at DATETIME
);
CREATE INDEX plan_prod_orders_status ON plan_prod_orders (status, id);

CREATE TABLE plan_prod_order_items (
    prod_order_id INTEGER  NOT NULL REFERENCES plan_prod_orders (id),
    item_id       INTEGER  NOT NULL,
    order_id      INTEGER  NOT NULL,
    product_id    INTEGER  NOT NULL,
    sku           TEXT     NOT NULL,
    qty           INTEGER  NOT NULL,
    due_date      DATE,
    received_at   DATETIME NOT NULL,
    event_id      INTEGER  NOT NULL,
    released      BOOLEAN  NOT NULL DEFAULT false,
    PRIMARY KEY (prod_order_id, item_id)
);
CREATE UNIQUE INDEX plan_prod_order_items_live ON plan_prod_order_items (item_id) WHERE NOT released;

CREATE TABLE plan_parts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    prod_order_id INTEGER NOT NULL REFERENCES plan_prod_orders (id),
    item_id       INTEGER NOT NULL,
    unit          INTEGER NOT NULL,
    seq           INTEGER NOT NULL,
    name          TEXT    NOT NULL,
    material      TEXT    NOT NULL,
    length_mm     INTEGER NOT NULL,
    width_mm      INTEGER NOT NULL,
    thickness_mm  INTEGER NOT NULL,
    edging        TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX plan_parts_prod_order ON plan_parts (prod_order_id, id);

CREATE TABLE plan_operations (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    prod_order_id  INTEGER  NOT NULL REFERENCES plan_prod_orders (id),
    item_id        INTEGER  NOT NULL,
    unit           INTEGER  NOT NULL,
    part_id        INTEGER  REFERENCES plan_parts (id),
    seq            INTEGER  NOT NULL,
    name           TEXT     NOT NULL,
    work_center_id INTEGER  NOT NULL,
    scope          TEXT     NOT NULL CHECK (scope IN ('part', 'item')),
    minutes        REAL     NOT NULL,
    status         TEXT     NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'in_progress', 'done')),
    start_day      DATE     NOT NULL,
    start_min      REAL     NOT NULL,
    end_day        DATE     NOT NULL,
    end_min        REAL     NOT NULL,
    started_at     DATETIME,
    completed_at   DATETIME
);
CREATE INDEX plan_operations_prod_order ON plan_operations (prod_order_id, id);
CREATE INDEX plan_operations_open ON plan_operations (work_center_id, end_day) WHERE status <> 'done';
CREATE INDEX plan_operations_days ON plan_operations (end_day, start_day);

CREATE TABLE plan_cancelled_orders (
    order_id INTEGER PRIMARY KEY,
    event_id INTEGER NOT NULL
);

-- +goose Down
DROP TABLE plan_cancelled_orders;
DROP TABLE plan_operations;
DROP TABLE plan_parts;
DROP TABLE plan_prod_order_items;
DROP TABLE plan_prod_orders;
