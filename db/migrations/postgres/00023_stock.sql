-- +goose Up
-- Stock per material (by its catalogue code): every movement is a line of a
-- document (a receipt, a count, or a production order's reservation, whose
-- consumption and release are its later lines); the levels are the sums
-- kept in step with them: on hand = receipts + counts - consumption,
-- reserved = what live production orders still need.
CREATE TABLE stock_documents (
    id            bigserial PRIMARY KEY,
    kind          text   NOT NULL CHECK (kind IN ('receipt', 'count', 'reservation')),
    prod_order_id bigint,
    reason        text   NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX stock_documents_prod_order ON stock_documents (prod_order_id) WHERE kind = 'reservation';

CREATE TABLE stock_movements (
    id          bigserial PRIMARY KEY,
    document_id bigint NOT NULL REFERENCES stock_documents (id),
    code        text   NOT NULL,
    kind        text   NOT NULL CHECK (kind IN ('receipt', 'count', 'reserve', 'consume', 'release')),
    qty         double precision NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stock_movements_code ON stock_movements (code, id);

CREATE TABLE stock_levels (
    code     text PRIMARY KEY,
    on_hand  double precision NOT NULL DEFAULT 0,
    reserved double precision NOT NULL DEFAULT 0
);

-- What each production order needs of each material, what of it is used
-- up, and whether the rest is released.
CREATE TABLE stock_reservations (
    prod_order_id bigint  NOT NULL,
    code          text    NOT NULL,
    kind          text    NOT NULL,
    step          integer NOT NULL,
    total         integer NOT NULL,
    done          integer NOT NULL DEFAULT 0,
    needed        double precision NOT NULL,
    consumed      double precision NOT NULL DEFAULT 0,
    released      boolean NOT NULL DEFAULT false,
    PRIMARY KEY (prod_order_id, code)
);

-- The materials a production order was launched short of, as the stock
-- module's stock.reserved reports them.
ALTER TABLE plan_prod_orders ADD COLUMN short text NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE plan_prod_orders DROP COLUMN short;
DROP TABLE stock_reservations;
DROP TABLE stock_levels;
DROP TABLE stock_movements;
DROP TABLE stock_documents;
