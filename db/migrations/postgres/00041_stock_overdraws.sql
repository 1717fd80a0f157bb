-- +goose Up
-- Consumption beyond what is on hand is still booked (the saw does not
-- stop) and recorded here: the part of each consumption that took stock
-- below nothing, with the production order that took it, until a receipt
-- or a count brings the material's on hand back to nothing or more
-- (settled). docs/planning.md, "Stock below nothing".
CREATE TABLE stock_overdraws (
    id            bigserial PRIMARY KEY,
    document_id   bigint NOT NULL,
    code          text   NOT NULL,
    prod_order_id bigint NOT NULL,
    qty           double precision NOT NULL CHECK (qty > 0),
    settled       boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stock_overdraws_open ON stock_overdraws (code, prod_order_id) WHERE NOT settled;

-- +goose Down
DROP TABLE stock_overdraws;
