-- +goose Up
-- The SQLite twin of migrations/postgres/00028_shop_partner.sql.
ALTER TABLE sales_orders ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE sales_orders ADD COLUMN cancel_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE sales_orders ADD COLUMN attention TEXT NOT NULL DEFAULT '';
ALTER TABLE sales_orders ADD COLUMN office_changes TEXT NOT NULL DEFAULT '{}';
ALTER TABLE sales_orders ADD COLUMN ready_to_ship BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE sales_orders ADD COLUMN source_updated_ns INTEGER;
UPDATE sales_orders SET ready_to_ship = true WHERE status = 'ready';
CREATE INDEX sales_orders_attention ON sales_orders (id) WHERE attention <> '';

CREATE TABLE sales_intake_rejections (
    id             INTEGER  PRIMARY KEY AUTOINCREMENT,
    source         TEXT     NOT NULL CHECK (source IN ('shop', 'crm')),
    intake_key     TEXT     NOT NULL,
    sync_id        TEXT,
    crm_order_id   INTEGER,
    body           TEXT     NOT NULL,
    reasons        TEXT     NOT NULL,
    errors         TEXT     NOT NULL DEFAULT '[]',
    detail         TEXT     NOT NULL DEFAULT '',
    status         TEXT     NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'dismissed')),
    deliveries     INTEGER  NOT NULL DEFAULT 1,
    retries        INTEGER  NOT NULL DEFAULT 0,
    order_id       INTEGER,
    outcome        TEXT     NOT NULL DEFAULT '',
    dismiss_reason TEXT     NOT NULL DEFAULT '',
    created_at     DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    updated_at     DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    closed_at      DATETIME
);
CREATE UNIQUE INDEX sales_intake_rejections_open_key ON sales_intake_rejections (source, intake_key) WHERE status = 'open';
CREATE INDEX sales_intake_rejections_status ON sales_intake_rejections (status, id);

-- +goose Down
DROP TABLE sales_intake_rejections;
DROP INDEX sales_orders_attention;
ALTER TABLE sales_orders DROP COLUMN source_updated_ns;
ALTER TABLE sales_orders DROP COLUMN ready_to_ship;
ALTER TABLE sales_orders DROP COLUMN office_changes;
ALTER TABLE sales_orders DROP COLUMN attention;
ALTER TABLE sales_orders DROP COLUMN cancel_reason;
ALTER TABLE sales_orders DROP COLUMN version;
