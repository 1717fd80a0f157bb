-- +goose Up

-- catalog: a work centre's shift starts at a time of day in the factory's
-- time zone (FACTORY_TIMEZONE); its daily capacity runs from there, so the
-- schedule knows how much of today is left.
ALTER TABLE catalog_work_centers ADD COLUMN shift_start text NOT NULL DEFAULT '08:00'
    CHECK (shift_start ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$');

-- plan: a production order's priority (higher first) places it ahead of
-- lower-priority work in the finite-capacity plan; eta_given remembers that
-- a planner gave the ETA, which a re-plan keeps.
ALTER TABLE plan_prod_orders ADD COLUMN priority integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100);
ALTER TABLE plan_prod_orders ADD COLUMN eta_given boolean NOT NULL DEFAULT false;
UPDATE plan_prod_orders SET eta_given = (eta <> planned_eta);

-- +goose Down
ALTER TABLE plan_prod_orders DROP COLUMN eta_given;
ALTER TABLE plan_prod_orders DROP COLUMN priority;
ALTER TABLE catalog_work_centers DROP COLUMN shift_start;
