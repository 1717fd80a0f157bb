-- +goose Up
-- The SQLite twin of migrations/postgres/00001_init.sql: same tables and
-- columns; times are stored as UTC text from the database clock.

CREATE TABLE auth_users (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT     NOT NULL,
    email      TEXT     UNIQUE,
    role       TEXT     NOT NULL CHECK (role IN ('admin', 'manager', 'planner', 'viewer')),
    created_at DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE TABLE auth_tokens (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER  NOT NULL REFERENCES auth_users (id),
    name       TEXT     NOT NULL DEFAULT '',
    hash       TEXT     NOT NULL UNIQUE,
    created_at DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);

CREATE TABLE catalog_work_centers (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    code                 TEXT    NOT NULL UNIQUE,
    name                 TEXT    NOT NULL,
    capacity_min_per_day INTEGER NOT NULL CHECK (capacity_min_per_day > 0),
    weekdays             TEXT    NOT NULL DEFAULT '[1,2,3,4,5]',
    holidays             TEXT    NOT NULL DEFAULT '[]'
);
CREATE TABLE catalog_routes (
    id   INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('case', 'upholstered'))
);
CREATE TABLE catalog_route_operations (
    route_id       INTEGER NOT NULL REFERENCES catalog_routes (id) ON DELETE CASCADE,
    seq            INTEGER NOT NULL,
    name           TEXT    NOT NULL,
    work_center_id INTEGER NOT NULL REFERENCES catalog_work_centers (id),
    scope          TEXT    NOT NULL CHECK (scope IN ('part', 'item')),
    minutes        REAL    NOT NULL CHECK (minutes > 0),
    PRIMARY KEY (route_id, seq)
);
CREATE TABLE catalog_products (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    sku      TEXT    NOT NULL UNIQUE,
    name     TEXT    NOT NULL,
    kind     TEXT    NOT NULL CHECK (kind IN ('case', 'upholstered')),
    route_id INTEGER NOT NULL REFERENCES catalog_routes (id)
);
CREATE TABLE catalog_product_parts (
    product_id   INTEGER NOT NULL REFERENCES catalog_products (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    name         TEXT    NOT NULL,
    material     TEXT    NOT NULL,
    length_mm    INTEGER NOT NULL CHECK (length_mm > 0),
    width_mm     INTEGER NOT NULL CHECK (width_mm > 0),
    thickness_mm INTEGER NOT NULL CHECK (thickness_mm > 0),
    edging       TEXT    NOT NULL DEFAULT '',
    qty          INTEGER NOT NULL CHECK (qty > 0),
    PRIMARY KEY (product_id, seq)
);

CREATE TABLE sales_orders (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    status         TEXT     NOT NULL DEFAULT 'received',
    source         TEXT     NOT NULL CHECK (source IN ('shop', 'crm', 'manual')),
    sync_id        TEXT     UNIQUE,
    crm_order_id   INTEGER  UNIQUE,
    customer_name  TEXT     NOT NULL,
    customer_phone TEXT     NOT NULL DEFAULT '',
    customer_email TEXT     NOT NULL DEFAULT '',
    due_date       DATE,
    eta            DATE,
    created_at     DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    updated_at     DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE TABLE sales_order_items (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id   INTEGER NOT NULL REFERENCES sales_orders (id),
    product_id INTEGER NOT NULL,
    sku        TEXT    NOT NULL,
    qty        INTEGER NOT NULL CHECK (qty > 0),
    note       TEXT    NOT NULL DEFAULT '',
    status     TEXT    NOT NULL DEFAULT 'new'
);
CREATE INDEX sales_order_items_order_id ON sales_order_items (order_id);

CREATE TABLE plan_backlog (
    item_id     INTEGER PRIMARY KEY,
    order_id    INTEGER  NOT NULL,
    sku         TEXT     NOT NULL,
    qty         INTEGER  NOT NULL,
    due_date    DATE,
    received_at DATETIME NOT NULL,
    event_id    INTEGER  NOT NULL
);

CREATE TABLE events (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    type           TEXT     NOT NULL,
    aggregate_type TEXT     NOT NULL,
    aggregate_id   INTEGER  NOT NULL,
    partition      INTEGER  NOT NULL,
    payload        TEXT     NOT NULL,
    actor_id       INTEGER,
    actor_name     TEXT,
    created_at     DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX events_partition_id ON events (partition, id);
CREATE INDEX events_type_id ON events (type, id);
CREATE INDEX events_aggregate_id ON events (aggregate_type, aggregate_id, id);
CREATE INDEX events_actor_id ON events (actor_id, id) WHERE actor_id IS NOT NULL;
CREATE INDEX events_created_at ON events (created_at);

CREATE TABLE events_partitions (
    partition   INTEGER PRIMARY KEY,
    position    INTEGER NOT NULL DEFAULT 0,
    owner       TEXT,
    lease_until DATETIME
);
WITH RECURSIVE p(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM p WHERE n < 15)
INSERT INTO events_partitions (partition) SELECT n FROM p;

CREATE TABLE events_batches (
    partition     INTEGER  NOT NULL,
    first_id      INTEGER  NOT NULL,
    last_id       INTEGER  NOT NULL,
    dispatched_at DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    PRIMARY KEY (partition, last_id)
);

CREATE TABLE events_deliveries (
    event_id        INTEGER  NOT NULL REFERENCES events (id),
    subscriber      TEXT     NOT NULL,
    partition       INTEGER  NOT NULL,
    aggregate_type  TEXT     NOT NULL,
    aggregate_id    INTEGER  NOT NULL,
    status          TEXT     NOT NULL CHECK (status IN ('retrying', 'held', 'failed', 'processed')),
    attempts        INTEGER  NOT NULL DEFAULT 0,
    last_error      TEXT     NOT NULL DEFAULT '',
    blocked_by      INTEGER,
    next_attempt_at DATETIME,
    processed_at    DATETIME,
    updated_at      DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    PRIMARY KEY (event_id, subscriber)
);
CREATE INDEX events_deliveries_open ON events_deliveries (partition, subscriber, aggregate_type, aggregate_id, event_id)
    WHERE status <> 'processed';
CREATE INDEX events_deliveries_due ON events_deliveries (partition, next_attempt_at) WHERE status = 'retrying';

-- +goose Down
DROP TABLE events_deliveries;
DROP TABLE events_batches;
DROP TABLE events_partitions;
DROP TABLE events;
DROP TABLE plan_backlog;
DROP TABLE sales_order_items;
DROP TABLE sales_orders;
DROP TABLE catalog_product_parts;
DROP TABLE catalog_products;
DROP TABLE catalog_route_operations;
DROP TABLE catalog_routes;
DROP TABLE catalog_work_centers;
DROP TABLE auth_tokens;
DROP TABLE auth_users;
