-- +goose Up
-- Purchasing (docs/planning.md, "Purchasing"): suppliers with their terms
-- per material (their code, price, lead time in working days, minimum order
-- and pack), purchase orders with their lines and what has been received of
-- each, the receipts that named them, and the buyer's role.
CREATE TABLE purchasing_suppliers (
    id         bigserial PRIMARY KEY,
    name       text NOT NULL,
    contact    text NOT NULL DEFAULT '',
    phone      text NOT NULL DEFAULT '',
    email      text NOT NULL DEFAULT '',
    note       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE purchasing_supplier_materials (
    supplier_id   bigint NOT NULL REFERENCES purchasing_suppliers (id),
    code          text   NOT NULL,
    supplier_code text   NOT NULL DEFAULT '',
    price         double precision NOT NULL DEFAULT 0 CHECK (price >= 0),
    lead_days     integer NOT NULL DEFAULT 0 CHECK (lead_days >= 0),
    min_qty       double precision NOT NULL DEFAULT 0 CHECK (min_qty >= 0),
    pack_qty      double precision NOT NULL DEFAULT 0 CHECK (pack_qty >= 0),
    PRIMARY KEY (supplier_id, code)
);
CREATE INDEX purchasing_supplier_materials_code ON purchasing_supplier_materials (code, supplier_id);

CREATE TABLE purchasing_orders (
    id            bigserial PRIMARY KEY,
    supplier_id   bigint NOT NULL REFERENCES purchasing_suppliers (id),
    status        text   NOT NULL CHECK (status IN ('draft', 'ordered', 'partially_received', 'received', 'cancelled')),
    note          text   NOT NULL DEFAULT '',
    cancel_reason text   NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    ordered_at    timestamptz
);
CREATE INDEX purchasing_orders_status ON purchasing_orders (status, id);

CREATE TABLE purchasing_order_lines (
    id          bigserial PRIMARY KEY,
    order_id    bigint NOT NULL REFERENCES purchasing_orders (id),
    n           integer NOT NULL,
    code        text   NOT NULL,
    qty         double precision NOT NULL CHECK (qty > 0),
    received    double precision NOT NULL DEFAULT 0 CHECK (received >= 0),
    price       double precision NOT NULL DEFAULT 0,
    expected_on date   NOT NULL,
    UNIQUE (order_id, n),
    UNIQUE (order_id, code)
);
CREATE INDEX purchasing_order_lines_code ON purchasing_order_lines (code, expected_on);

CREATE TABLE purchasing_receipts (
    document_id bigint NOT NULL,
    line_id     bigint NOT NULL REFERENCES purchasing_order_lines (id),
    qty         double precision NOT NULL,
    over_reason text NOT NULL DEFAULT '',
    PRIMARY KEY (document_id, line_id)
);
CREATE INDEX purchasing_receipts_line ON purchasing_receipts (line_id);

ALTER TABLE auth_users DROP CONSTRAINT auth_users_role_check;
ALTER TABLE auth_users ADD CONSTRAINT auth_users_role_check
    CHECK (role IN ('admin', 'manager', 'planner', 'master', 'buyer', 'viewer'));

-- +goose Down
UPDATE auth_users SET role = 'viewer' WHERE role = 'buyer';
ALTER TABLE auth_users DROP CONSTRAINT auth_users_role_check;
ALTER TABLE auth_users ADD CONSTRAINT auth_users_role_check
    CHECK (role IN ('admin', 'manager', 'planner', 'master', 'viewer'));
DROP TABLE purchasing_receipts;
DROP TABLE purchasing_order_lines;
DROP TABLE purchasing_orders;
DROP TABLE purchasing_supplier_materials;
DROP TABLE purchasing_suppliers;
