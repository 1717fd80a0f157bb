-- +goose Up

-- plan: nothing made is lost when a production order is closed short. A unit
-- not made that went back to the planning backlog keeps its parts and what
-- was done on them (closed_back); the production order that launches its
-- item again takes them over (carried_to) and does only the rest.
ALTER TABLE plan_units ADD COLUMN closed_back boolean NOT NULL DEFAULT false;
ALTER TABLE plan_units ADD COLUMN carried_to bigint REFERENCES plan_prod_orders (id);
CREATE INDEX plan_units_to_carry ON plan_units (item_id, id) WHERE closed_back AND carried_to IS NULL;

-- +goose Down
DROP INDEX plan_units_to_carry;
ALTER TABLE plan_units DROP COLUMN carried_to;
ALTER TABLE plan_units DROP COLUMN closed_back;
