-- +goose Up
-- The SQLite twin of migrations/postgres/00008_plan_attention_shipments.sql.

ALTER TABLE plan_prod_orders ADD COLUMN needs_attention BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE plan_prod_orders ADD COLUMN attention_reason TEXT NOT NULL DEFAULT '';
CREATE INDEX plan_prod_orders_attention ON plan_prod_orders (id) WHERE needs_attention;

-- sales: shipments record what left the factory, partially or whole, with
-- carrier and tracking; an item counts what of it has shipped.
ALTER TABLE sales_order_items ADD COLUMN shipped_qty INTEGER NOT NULL DEFAULT 0;
CREATE TABLE sales_shipments (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id   INTEGER      NOT NULL REFERENCES sales_orders (id),
    carrier    TEXT        NOT NULL DEFAULT '',
    tracking   TEXT        NOT NULL DEFAULT '',
    shipped_at DATETIME NOT NULL,
    created_at DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX sales_shipments_order_id ON sales_shipments (order_id, id);
CREATE TABLE sales_shipment_items (
    shipment_id INTEGER  NOT NULL REFERENCES sales_shipments (id),
    item_id     INTEGER  NOT NULL REFERENCES sales_order_items (id),
    sku         TEXT    NOT NULL,
    qty         INTEGER NOT NULL CHECK (qty > 0),
    PRIMARY KEY (shipment_id, item_id)
);

-- +goose Down
DROP TABLE sales_shipment_items;
DROP TABLE sales_shipments;
ALTER TABLE sales_order_items DROP COLUMN shipped_qty;
DROP INDEX plan_prod_orders_attention;
ALTER TABLE plan_prod_orders DROP COLUMN attention_reason;
ALTER TABLE plan_prod_orders DROP COLUMN needs_attention;
