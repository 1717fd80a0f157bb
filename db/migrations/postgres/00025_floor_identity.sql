-- +goose Up

-- plan: the shop floor by physical part. Every physical part and every unit
-- has a short printable code, unique in the database, from launch: a part
-- "P<production order>-<n>", a unit "U<production order>-<n>", a re-cut part
-- the code of the part it replaces with ".<generation>" ("P12-5.1").
ALTER TABLE plan_parts ADD COLUMN code text;
UPDATE plan_parts SET code = 'P' || n.prod_order_id || '-' || n.n
FROM (SELECT id, prod_order_id, row_number() OVER (PARTITION BY prod_order_id ORDER BY id) AS n FROM plan_parts) n
WHERE plan_parts.id = n.id;
ALTER TABLE plan_parts ALTER COLUMN code SET NOT NULL;
CREATE UNIQUE INDEX plan_parts_code ON plan_parts (code);

-- A part spoilt on the floor is kept, scrapped, with where (the route step),
-- why (a reason of the factory's list and free text), who and when; the
-- part cut again in its place points at it.
ALTER TABLE plan_parts ADD COLUMN status text NOT NULL DEFAULT 'live' CHECK (status IN ('live', 'scrapped'));
ALTER TABLE plan_parts ADD COLUMN recut_of bigint REFERENCES plan_parts (id);
ALTER TABLE plan_parts ADD COLUMN scrap_seq integer;
ALTER TABLE plan_parts ADD COLUMN scrap_reason text NOT NULL DEFAULT '';
ALTER TABLE plan_parts ADD COLUMN scrap_note text NOT NULL DEFAULT '';
ALTER TABLE plan_parts ADD COLUMN scrapped_at timestamptz;
ALTER TABLE plan_parts ADD COLUMN scrapped_by_id bigint;
ALTER TABLE plan_parts ADD COLUMN scrapped_by text;
CREATE INDEX plan_parts_recuts ON plan_parts (recut_of) WHERE recut_of IS NOT NULL;

-- One row per unit (unit n of an item) of a production order, with its code
-- and the moment its last operation was done (made).
CREATE TABLE plan_units (
    id            bigserial   PRIMARY KEY,
    code          text        NOT NULL UNIQUE,
    prod_order_id bigint      NOT NULL REFERENCES plan_prod_orders (id),
    item_id       bigint      NOT NULL,
    unit          integer     NOT NULL,
    made_at       timestamptz,
    UNIQUE (prod_order_id, item_id, unit)
);
-- Existing units get their codes; made_at stays empty, so that the next
-- report on their order tells sales of those made (unit.made) once.
INSERT INTO plan_units (code, prod_order_id, item_id, unit)
SELECT 'U' || prod_order_id || '-' || row_number() OVER (PARTITION BY prod_order_id ORDER BY item_id, unit), prod_order_id, item_id, unit
FROM (SELECT DISTINCT prod_order_id, item_id, unit FROM plan_operations) u;

-- Who completed an operation (null: the system, or before this was kept).
ALTER TABLE plan_operations ADD COLUMN completed_by_id bigint;
ALTER TABLE plan_operations ADD COLUMN completed_by text;
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
