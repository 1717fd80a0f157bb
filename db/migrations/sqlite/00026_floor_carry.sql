-- +goose Up

-- The SQLite twin of migrations/postgres/00026_floor_carry.sql: units closed
-- back to the backlog with their parts, and the order that carries them on.
ALTER TABLE plan_units ADD COLUMN closed_back BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE plan_units ADD COLUMN carried_to INTEGER REFERENCES plan_prod_orders (id);
CREATE INDEX plan_units_to_carry ON plan_units (item_id, id) WHERE closed_back AND carried_to IS NULL;

-- +goose Down
DROP INDEX plan_units_to_carry;
ALTER TABLE plan_units DROP COLUMN carried_to;
ALTER TABLE plan_units DROP COLUMN closed_back;
