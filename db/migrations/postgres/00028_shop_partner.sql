-- +goose Up
-- The shop as a partner. An order's own version, advanced by every journalled
-- change (and sent in every shop callback); the reason it was cancelled; a
-- note for a manager when a shop delivery was merged around the office's
-- changes; which fields the office changed at which version (JSON: field or
-- "item:<id>" or "removed:<sku>" → version), so that a shop delivery built on
-- an older version cannot silently undo them; whether everything left to
-- ship is made (order.ready is written when it becomes so); and the shop's
-- updated_at to the nanosecond, compared exactly.
ALTER TABLE sales_orders ADD COLUMN version bigint NOT NULL DEFAULT 1;
ALTER TABLE sales_orders ADD COLUMN cancel_reason text NOT NULL DEFAULT '';
ALTER TABLE sales_orders ADD COLUMN attention text NOT NULL DEFAULT '';
ALTER TABLE sales_orders ADD COLUMN office_changes text NOT NULL DEFAULT '{}';
ALTER TABLE sales_orders ADD COLUMN ready_to_ship boolean NOT NULL DEFAULT false;
ALTER TABLE sales_orders ADD COLUMN source_updated_ns bigint;
UPDATE sales_orders SET ready_to_ship = true WHERE status = 'ready';
UPDATE sales_orders SET source_updated_ns = floor(extract(epoch FROM source_updated_at) * 1000000)::bigint * 1000
    WHERE source_updated_at IS NOT NULL;
CREATE INDEX sales_orders_attention ON sales_orders (id) WHERE attention <> '';

-- The intake inbox: authentic shop deliveries and CRM rows refused for their
-- content, kept as received with every reason, until a retry applies them,
-- a later delivery of the same order does, or a manager dismisses them. One
-- open rejection per shop order or CRM row (intake_key: the sync_id or the
-- crm_order_id); a repeat refusal updates it.
CREATE TABLE sales_intake_rejections (
    id             bigserial   PRIMARY KEY,
    source         text        NOT NULL CHECK (source IN ('shop', 'crm')),
    intake_key     text        NOT NULL,
    sync_id        text,
    crm_order_id   bigint,
    body           text        NOT NULL,
    reasons        text        NOT NULL,
    errors         text        NOT NULL DEFAULT '[]',
    detail         text        NOT NULL DEFAULT '',
    status         text        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'dismissed')),
    deliveries     integer     NOT NULL DEFAULT 1,
    retries        integer     NOT NULL DEFAULT 0,
    order_id       bigint,
    outcome        text        NOT NULL DEFAULT '',
    dismiss_reason text        NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    closed_at      timestamptz
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
