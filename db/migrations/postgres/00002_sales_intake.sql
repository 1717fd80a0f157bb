-- +goose Up

-- sales: the ETA and production order of each item, as the plan module's
-- events report them; the order's eta is the latest of its launched items'.
ALTER TABLE sales_order_items ADD COLUMN eta date;
ALTER TABLE sales_order_items ADD COLUMN prod_order_id bigint;

-- Idempotency-Key of POST /api/v1/orders, per user: the first request with a
-- key reserves it (in_flight), then stores its response with the order, in the
-- order's transaction (done).
CREATE TABLE sales_idempotency_keys (
    user_id         bigint      NOT NULL,
    key             text        NOT NULL,
    request_hash    text        NOT NULL,
    state           text        NOT NULL CHECK (state IN ('in_flight', 'done')),
    response_status integer,
    response_body   text,
    order_id        bigint,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key)
);

-- +goose Down
DROP TABLE sales_idempotency_keys;
ALTER TABLE sales_order_items DROP COLUMN prod_order_id;
ALTER TABLE sales_order_items DROP COLUMN eta;
