-- +goose NO TRANSACTION
-- +goose Up
-- The SQLite twin of migrations/postgres/00040_purchasing.sql. The role's
-- CHECK constraint is changed by rebuilding auth_users, as 00009 does.
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE purchasing_suppliers (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       text NOT NULL,
    contact    text NOT NULL DEFAULT '',
    phone      text NOT NULL DEFAULT '',
    email      text NOT NULL DEFAULT '',
    note       text NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);

CREATE TABLE purchasing_supplier_materials (
    supplier_id   bigint NOT NULL REFERENCES purchasing_suppliers (id),
    code          text   NOT NULL,
    supplier_code text   NOT NULL DEFAULT '',
    price         REAL NOT NULL DEFAULT 0 CHECK (price >= 0),
    lead_days     integer NOT NULL DEFAULT 0 CHECK (lead_days >= 0),
    min_qty       REAL NOT NULL DEFAULT 0 CHECK (min_qty >= 0),
    pack_qty      REAL NOT NULL DEFAULT 0 CHECK (pack_qty >= 0),
    PRIMARY KEY (supplier_id, code)
);
CREATE INDEX purchasing_supplier_materials_code ON purchasing_supplier_materials (code, supplier_id);

CREATE TABLE purchasing_orders (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    supplier_id   bigint NOT NULL REFERENCES purchasing_suppliers (id),
    status        text   NOT NULL CHECK (status IN ('draft', 'ordered', 'partially_received', 'received', 'cancelled')),
    note          text   NOT NULL DEFAULT '',
    cancel_reason text   NOT NULL DEFAULT '',
    created_at    DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    ordered_at    DATETIME
);
CREATE INDEX purchasing_orders_status ON purchasing_orders (status, id);

CREATE TABLE purchasing_order_lines (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id    bigint NOT NULL REFERENCES purchasing_orders (id),
    n           integer NOT NULL,
    code        text   NOT NULL,
    qty         REAL NOT NULL CHECK (qty > 0),
    received    REAL NOT NULL DEFAULT 0 CHECK (received >= 0),
    price       REAL NOT NULL DEFAULT 0,
    expected_on DATE   NOT NULL,
    UNIQUE (order_id, n),
    UNIQUE (order_id, code)
);
CREATE INDEX purchasing_order_lines_code ON purchasing_order_lines (code, expected_on);

CREATE TABLE purchasing_receipts (
    document_id bigint NOT NULL,
    line_id     bigint NOT NULL REFERENCES purchasing_order_lines (id),
    qty         REAL NOT NULL,
    over_reason text NOT NULL DEFAULT '',
    PRIMARY KEY (document_id, line_id)
);
CREATE INDEX purchasing_receipts_line ON purchasing_receipts (line_id);

CREATE TABLE auth_users_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT     NOT NULL,
    email          TEXT     UNIQUE,
    role           TEXT     NOT NULL CHECK (role IN ('admin', 'manager', 'planner', 'master', 'buyer', 'viewer')),
    created_at     DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    deactivated_at DATETIME
);
INSERT INTO auth_users_new (id, name, email, role, created_at, deactivated_at)
    SELECT id, name, email, role, created_at, deactivated_at FROM auth_users;
DROP TABLE auth_users;
ALTER TABLE auth_users_new RENAME TO auth_users;
PRAGMA foreign_key_check;
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
PRAGMA foreign_keys = OFF;
BEGIN;
UPDATE auth_users SET role = 'viewer' WHERE role = 'buyer';
CREATE TABLE auth_users_old (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT     NOT NULL,
    email          TEXT     UNIQUE,
    role           TEXT     NOT NULL CHECK (role IN ('admin', 'manager', 'planner', 'master', 'viewer')),
    created_at     DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    deactivated_at DATETIME
);
INSERT INTO auth_users_old (id, name, email, role, created_at, deactivated_at)
    SELECT id, name, email, role, created_at, deactivated_at FROM auth_users;
DROP TABLE auth_users;
ALTER TABLE auth_users_old RENAME TO auth_users;
DROP TABLE purchasing_receipts;
DROP TABLE purchasing_order_lines;
DROP TABLE purchasing_orders;
DROP TABLE purchasing_supplier_materials;
DROP TABLE purchasing_suppliers;
COMMIT;
PRAGMA foreign_keys = ON;
