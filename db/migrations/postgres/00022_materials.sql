-- +goose Up
-- The materials catalogue: boards (плиты) in decors and thicknesses with the
-- sheet formats bought, their grain, the trim cut off each sheet edge and
-- their matching edge bands; edge bands (кромка) sold in metres; fittings
-- (фурнитура) in pieces. Parts name a board or a decor slot of their product,
-- with grain and edges per side; products list their fittings; ordered items
-- carry their choice of board per slot (options).
CREATE TABLE catalog_materials (
    id            bigserial PRIMARY KEY,
    kind          text    NOT NULL CHECK (kind IN ('board', 'band', 'fitting')),
    code          text    NOT NULL,
    name          text    NOT NULL,
    decor         text    NOT NULL DEFAULT '',
    thickness_mm  double precision NOT NULL DEFAULT 0,
    width_mm      integer NOT NULL DEFAULT 0,
    unit          text    NOT NULL CHECK (unit IN ('sheet', 'm', 'pcs')),
    grain         boolean NOT NULL DEFAULT false,
    formats       text    NOT NULL DEFAULT '[]',
    trim_l1_mm    integer NOT NULL DEFAULT 0,
    trim_l2_mm    integer NOT NULL DEFAULT 0,
    trim_w1_mm    integer NOT NULL DEFAULT 0,
    trim_w2_mm    integer NOT NULL DEFAULT 0,
    bands         text    NOT NULL DEFAULT '[]',
    reorder_point double precision NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX catalog_materials_code ON catalog_materials (lower(code));
CREATE INDEX catalog_materials_kind ON catalog_materials (kind, id);

ALTER TABLE catalog_product_parts ADD COLUMN board text NOT NULL DEFAULT '';
ALTER TABLE catalog_product_parts ADD COLUMN slot text NOT NULL DEFAULT '';
ALTER TABLE catalog_product_parts ADD COLUMN grain text NOT NULL DEFAULT 'none';
ALTER TABLE catalog_product_parts ADD COLUMN edge_l1 text NOT NULL DEFAULT '';
ALTER TABLE catalog_product_parts ADD COLUMN edge_l2 text NOT NULL DEFAULT '';
ALTER TABLE catalog_product_parts ADD COLUMN edge_w1 text NOT NULL DEFAULT '';
ALTER TABLE catalog_product_parts ADD COLUMN edge_w2 text NOT NULL DEFAULT '';

CREATE TABLE catalog_product_slots (
    product_id    bigint  NOT NULL REFERENCES catalog_products (id) ON DELETE CASCADE,
    seq           integer NOT NULL,
    name          text    NOT NULL,
    boards        text    NOT NULL DEFAULT '[]',
    default_board text    NOT NULL,
    PRIMARY KEY (product_id, seq)
);

CREATE TABLE catalog_product_fittings (
    product_id bigint  NOT NULL REFERENCES catalog_products (id) ON DELETE CASCADE,
    seq        integer NOT NULL,
    code       text    NOT NULL,
    qty        integer NOT NULL CHECK (qty > 0),
    PRIMARY KEY (product_id, seq)
);

ALTER TABLE sales_order_items ADD COLUMN options text NOT NULL DEFAULT '{}';
ALTER TABLE plan_backlog ADD COLUMN options text NOT NULL DEFAULT '{}';
ALTER TABLE plan_prod_order_items ADD COLUMN options text NOT NULL DEFAULT '{}';

ALTER TABLE plan_parts ADD COLUMN board text NOT NULL DEFAULT '';
ALTER TABLE plan_parts ADD COLUMN decor text NOT NULL DEFAULT '';
ALTER TABLE plan_parts ADD COLUMN grain text NOT NULL DEFAULT 'none';
ALTER TABLE plan_parts ADD COLUMN edge_l1 text NOT NULL DEFAULT '';
ALTER TABLE plan_parts ADD COLUMN edge_l2 text NOT NULL DEFAULT '';
ALTER TABLE plan_parts ADD COLUMN edge_w1 text NOT NULL DEFAULT '';
ALTER TABLE plan_parts ADD COLUMN edge_w2 text NOT NULL DEFAULT '';

-- The fittings of a production order, as its items' products listed them at
-- launch.
CREATE TABLE plan_fittings (
    prod_order_id bigint  NOT NULL REFERENCES plan_prod_orders (id),
    item_id       bigint  NOT NULL,
    code          text    NOT NULL,
    name          text    NOT NULL,
    qty           integer NOT NULL,
    PRIMARY KEY (prod_order_id, item_id, code)
);

-- Every free-text material of a product's part or of a launched part
-- becomes a board of the catalogue, named as it was, with its thickness; the
-- parts name it. Nothing is lost: the text stays in material (and edging).
INSERT INTO catalog_materials (kind, code, name, thickness_mm, unit)
SELECT 'board', 'MAT-' || row_number() OVER (ORDER BY material, thickness_mm), material, thickness_mm, 'sheet'
FROM (SELECT material, thickness_mm FROM catalog_product_parts
      UNION SELECT material, thickness_mm FROM plan_parts) AS m;
UPDATE catalog_product_parts SET board = (SELECT code FROM catalog_materials m
    WHERE m.kind = 'board' AND m.name = catalog_product_parts.material AND m.thickness_mm = catalog_product_parts.thickness_mm);
UPDATE plan_parts SET board = (SELECT code FROM catalog_materials m
    WHERE m.kind = 'board' AND m.name = plan_parts.material AND m.thickness_mm = plan_parts.thickness_mm);

-- +goose Down
DROP TABLE plan_fittings;
ALTER TABLE plan_parts DROP COLUMN edge_w2;
ALTER TABLE plan_parts DROP COLUMN edge_w1;
ALTER TABLE plan_parts DROP COLUMN edge_l2;
ALTER TABLE plan_parts DROP COLUMN edge_l1;
ALTER TABLE plan_parts DROP COLUMN grain;
ALTER TABLE plan_parts DROP COLUMN decor;
ALTER TABLE plan_parts DROP COLUMN board;
ALTER TABLE plan_prod_order_items DROP COLUMN options;
ALTER TABLE plan_backlog DROP COLUMN options;
ALTER TABLE sales_order_items DROP COLUMN options;
DROP TABLE catalog_product_fittings;
DROP TABLE catalog_product_slots;
ALTER TABLE catalog_product_parts DROP COLUMN edge_w2;
ALTER TABLE catalog_product_parts DROP COLUMN edge_w1;
ALTER TABLE catalog_product_parts DROP COLUMN edge_l2;
ALTER TABLE catalog_product_parts DROP COLUMN edge_l1;
ALTER TABLE catalog_product_parts DROP COLUMN grain;
ALTER TABLE catalog_product_parts DROP COLUMN slot;
ALTER TABLE catalog_product_parts DROP COLUMN board;
DROP TABLE catalog_materials;
