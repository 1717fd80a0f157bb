-- +goose Up

-- A production order on which work has started when one of its sales orders
-- is cancelled is flagged for the planner, with the reason, instead of being
-- kept silently.
ALTER TABLE plan_prod_orders ADD COLUMN needs_attention boolean NOT NULL DEFAULT false;
ALTER TABLE plan_prod_orders ADD COLUMN attention_reason text NOT NULL DEFAULT '';
CREATE INDEX plan_prod_orders_attention ON plan_prod_orders (id) WHERE needs_attention;

-- sales: shipments record what left the factory, partially or whole, with
-- carrier and tracking; an item counts what of it has shipped.
ALTER TABLE sales_order_items ADD COLUMN shipped_qty integer NOT NULL DEFAULT 0;
CREATE TABLE sales_shipments (
    id         bigserial PRIMARY KEY,
    order_id   bigint      NOT NULL REFERENCES sales_orders (id),
    carrier    text        NOT NULL DEFAULT '',
    tracking   text        NOT NULL DEFAULT '',
    shipped_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sales_shipments_order_id ON sales_shipments (order_id, id);
CREATE TABLE sales_shipment_items (
    shipment_id bigint  NOT NULL REFERENCES sales_shipments (id),
    item_id     bigint  NOT NULL REFERENCES sales_order_items (id),
    sku         text    NOT NULL,
    qty         integer NOT NULL CHECK (qty > 0),
    PRIMARY KEY (shipment_id, item_id)
);

-- +goose Down
DROP TABLE sales_shipment_items;
DROP TABLE sales_shipments;
ALTER TABLE sales_order_items DROP COLUMN shipped_qty;
DROP INDEX plan_prod_orders_attention;
ALTER TABLE plan_prod_orders DROP COLUMN attention_reason;
ALTER TABLE plan_prod_orders DROP COLUMN needs_attention;
