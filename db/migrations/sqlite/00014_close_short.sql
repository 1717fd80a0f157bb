-- +goose NO TRANSACTION
-- +goose Up
-- The SQLite twin of migrations/postgres/00014_close_short.sql. SQLite cannot
-- change a CHECK constraint: plan_prod_orders is rebuilt, with the new
-- columns, foreign keys off so that its items, parts and operations keep
-- pointing at it (as in 00009). Every column the table has by 00013 is
-- listed, priority and eta_given (00012) included.
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE plan_prod_orders_new (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    status           TEXT     NOT NULL DEFAULT 'launched' CHECK (status IN ('launched', 'in_progress', 'done', 'cancelled', 'closed')),
    route_id         INTEGER  NOT NULL,
    route_name       TEXT     NOT NULL,
    parts_count      INTEGER  NOT NULL,
    ops_count        INTEGER  NOT NULL,
    eta              DATE     NOT NULL,
    planned_eta      DATE     NOT NULL,
    created_at       DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    started_at       DATETIME,
    completed_at     DATETIME,
    cancelled_at     DATETIME,
    needs_attention  BOOLEAN  NOT NULL DEFAULT false,
    attention_reason TEXT     NOT NULL DEFAULT '',
    priority         INTEGER  NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100),
    eta_given        BOOLEAN  NOT NULL DEFAULT false,
    closed_at        DATETIME,
    close_reason     TEXT     NOT NULL DEFAULT '',
    close_rest       TEXT     NOT NULL DEFAULT '' CHECK (close_rest IN ('', 'backlog', 'write_off')),
    closed_by_id     INTEGER,
    closed_by        TEXT
);
INSERT INTO plan_prod_orders_new (id, status, route_id, route_name, parts_count, ops_count, eta, planned_eta,
        created_at, started_at, completed_at, cancelled_at, needs_attention, attention_reason, priority, eta_given)
    SELECT id, status, route_id, route_name, parts_count, ops_count, eta, planned_eta,
        created_at, started_at, completed_at, cancelled_at, needs_attention, attention_reason, priority, eta_given FROM plan_prod_orders;
DROP TABLE plan_prod_orders;
ALTER TABLE plan_prod_orders_new RENAME TO plan_prod_orders;
CREATE INDEX plan_prod_orders_status ON plan_prod_orders (status, id);
CREATE INDEX plan_prod_orders_attention ON plan_prod_orders (id) WHERE needs_attention;

ALTER TABLE plan_prod_order_items ADD COLUMN made_qty INTEGER;
ALTER TABLE plan_prod_order_items ADD COLUMN returned_qty INTEGER;
ALTER TABLE plan_prod_order_items ADD COLUMN written_off_qty INTEGER;

ALTER TABLE sales_order_items ADD COLUMN made_qty INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sales_order_items ADD COLUMN written_off_qty INTEGER NOT NULL DEFAULT 0;
UPDATE sales_order_items SET made_qty = qty WHERE status IN ('done', 'shipped');
PRAGMA foreign_key_check;
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
PRAGMA foreign_keys = OFF;
BEGIN;
ALTER TABLE sales_order_items DROP COLUMN written_off_qty;
ALTER TABLE sales_order_items DROP COLUMN made_qty;
ALTER TABLE plan_prod_order_items DROP COLUMN written_off_qty;
ALTER TABLE plan_prod_order_items DROP COLUMN returned_qty;
ALTER TABLE plan_prod_order_items DROP COLUMN made_qty;
CREATE TABLE plan_prod_orders_old (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    status           TEXT     NOT NULL DEFAULT 'launched' CHECK (status IN ('launched', 'in_progress', 'done', 'cancelled')),
    route_id         INTEGER  NOT NULL,
    route_name       TEXT     NOT NULL,
    parts_count      INTEGER  NOT NULL,
    ops_count        INTEGER  NOT NULL,
    eta              DATE     NOT NULL,
    planned_eta      DATE     NOT NULL,
    created_at       DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    started_at       DATETIME,
    completed_at     DATETIME,
    cancelled_at     DATETIME,
    needs_attention  BOOLEAN  NOT NULL DEFAULT false,
    attention_reason TEXT     NOT NULL DEFAULT '',
    priority         INTEGER  NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100),
    eta_given        BOOLEAN  NOT NULL DEFAULT false
);
INSERT INTO plan_prod_orders_old (id, status, route_id, route_name, parts_count, ops_count, eta, planned_eta,
        created_at, started_at, completed_at, cancelled_at, needs_attention, attention_reason, priority, eta_given)
    SELECT id, CASE status WHEN 'closed' THEN 'cancelled' ELSE status END, route_id, route_name, parts_count, ops_count, eta, planned_eta,
        created_at, started_at, completed_at, COALESCE(cancelled_at, closed_at), needs_attention, attention_reason, priority, eta_given FROM plan_prod_orders;
DROP TABLE plan_prod_orders;
ALTER TABLE plan_prod_orders_old RENAME TO plan_prod_orders;
CREATE INDEX plan_prod_orders_status ON plan_prod_orders (status, id);
CREATE INDEX plan_prod_orders_attention ON plan_prod_orders (id) WHERE needs_attention;
COMMIT;
PRAGMA foreign_keys = ON;
