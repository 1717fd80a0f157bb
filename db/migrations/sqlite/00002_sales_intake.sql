-- +goose Up

-- sales: the ETA and production order of each item, as the plan module's
-- events report them; the order's eta is the latest of its launched items'.
ALTER TABLE sales_order_items ADD COLUMN eta DATE;
ALTER TABLE sales_order_items ADD COLUMN prod_order_id INTEGER;

-- Idempotency-Key of POST /api/v1/orders, per user: the first request with a
-- key reserves it (in_flight), then stores its response with the order, in the
-- order's transaction (done).
CREATE TABLE sales_idempotency_keys (
    user_id         INTEGER  NOT NULL,
    key             TEXT     NOT NULL,
    request_hash    TEXT     NOT NULL,
    state           TEXT     NOT NULL CHECK (state IN ('in_flight', 'done')),
    response_status INTEGER,
    response_body   TEXT,
    order_id        INTEGER,
    created_at      DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    PRIMARY KEY (user_id, key)
);

-- +goose Down
DROP TABLE sales_idempotency_keys;
ALTER TABLE sales_order_items DROP COLUMN prod_order_id;
ALTER TABLE sales_order_items DROP COLUMN eta;
