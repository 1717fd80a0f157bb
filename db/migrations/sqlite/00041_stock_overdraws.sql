-- +goose Up
-- The SQLite twin of migrations/postgres/00041_stock_overdraws.sql.
CREATE TABLE stock_overdraws (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id   bigint NOT NULL,
    code          text   NOT NULL,
    prod_order_id bigint NOT NULL,
    qty           REAL NOT NULL CHECK (qty > 0),
    settled       boolean NOT NULL DEFAULT false,
    created_at    DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX stock_overdraws_open ON stock_overdraws (code, prod_order_id) WHERE NOT settled;

-- +goose Down
DROP TABLE stock_overdraws;
