-- +goose Up

-- The SQLite twin of migrations/postgres/00025_floor_identity.sql: codes of
-- parts and units, scrapped parts and their re-cuts, who completed an
-- operation. SQLite cannot make an added column NOT NULL: the code is
-- always written, and unique.
ALTER TABLE plan_parts ADD COLUMN code TEXT;
UPDATE plan_parts SET code = 'P' || n.prod_order_id || '-' || n.n
FROM (SELECT id, prod_order_id, row_number() OVER (PARTITION BY prod_order_id ORDER BY id) AS n FROM plan_parts) n
WHERE plan_parts.id = n.id;
CREATE UNIQUE INDEX plan_parts_code ON plan_parts (code);

ALTER TABLE plan_parts ADD COLUMN status TEXT NOT NULL DEFAULT 'live' CHECK (status IN ('live', 'scrapped'));
ALTER TABLE plan_parts ADD COLUMN recut_of INTEGER REFERENCES plan_parts (id);
ALTER TABLE plan_parts ADD COLUMN scrap_seq INTEGER;
ALTER TABLE plan_parts ADD COLUMN scrap_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE plan_parts ADD COLUMN scrap_note TEXT NOT NULL DEFAULT '';
ALTER TABLE plan_parts ADD COLUMN scrapped_at DATETIME;
ALTER TABLE plan_parts ADD COLUMN scrapped_by_id INTEGER;
ALTER TABLE plan_parts ADD COLUMN scrapped_by TEXT;
CREATE INDEX plan_parts_recuts ON plan_parts (recut_of) WHERE recut_of IS NOT NULL;

CREATE TABLE plan_units (
    id            INTEGER  PRIMARY KEY AUTOINCREMENT,
    code          TEXT     NOT NULL UNIQUE,
    prod_order_id INTEGER  NOT NULL REFERENCES plan_prod_orders (id),
    item_id       INTEGER  NOT NULL,
    unit          INTEGER  NOT NULL,
    made_at       DATETIME,
    UNIQUE (prod_order_id, item_id, unit)
);
-- Existing units get their codes; made_at stays empty, so that the next
-- report on their order tells sales of those made (unit.made) once.
INSERT INTO plan_units (code, prod_order_id, item_id, unit)
SELECT 'U' || prod_order_id || '-' || row_number() OVER (PARTITION BY prod_order_id ORDER BY item_id, unit), prod_order_id, item_id, unit
FROM (SELECT DISTINCT prod_order_id, item_id, unit FROM plan_operations) u;

ALTER TABLE plan_operations ADD COLUMN completed_by_id INTEGER;
ALTER TABLE plan_operations ADD COLUMN completed_by TEXT;
CREATE INDEX plan_operations_part ON plan_operations (part_id, seq) WHERE part_id IS NOT NULL;
-- A scan reads the operations of one part or one unit: the route before it,
-- what is left of it.
CREATE INDEX plan_operations_unit ON plan_operations (prod_order_id, item_id, unit, seq);

-- +goose Down
DROP INDEX plan_operations_unit;
DROP INDEX plan_operations_part;
ALTER TABLE plan_operations DROP COLUMN completed_by;
ALTER TABLE plan_operations DROP COLUMN completed_by_id;
DROP TABLE plan_units;
DROP INDEX plan_parts_recuts;
ALTER TABLE plan_parts DROP COLUMN scrapped_by;
ALTER TABLE plan_parts DROP COLUMN scrapped_by_id;
ALTER TABLE plan_parts DROP COLUMN scrapped_at;
ALTER TABLE plan_parts DROP COLUMN scrap_note;
ALTER TABLE plan_parts DROP COLUMN scrap_reason;
ALTER TABLE plan_parts DROP COLUMN scrap_seq;
ALTER TABLE plan_parts DROP COLUMN recut_of;
ALTER TABLE plan_parts DROP COLUMN status;
DROP INDEX plan_parts_code;
ALTER TABLE plan_parts DROP COLUMN code;
