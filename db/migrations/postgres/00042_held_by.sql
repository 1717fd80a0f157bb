-- +goose Up
-- Materials in the schedule (docs/planning.md, "Materials in the
-- schedule"): the materials that hold a live production order back,
-- [{"code", "needed", "available_on"}], as its launch or the last re-plan
-- found them; and a re-plan's new reason, materials (a purchase order
-- sent, received or cancelled).
ALTER TABLE plan_prod_orders ADD COLUMN held_by text NOT NULL DEFAULT '[]';
ALTER TABLE plan_replans DROP CONSTRAINT plan_replans_reason_check;
ALTER TABLE plan_replans ADD CONSTRAINT plan_replans_reason_check CHECK (reason IN ('replan', 'priority', 'materials'));

-- +goose Down
DELETE FROM plan_replans WHERE reason = 'materials';
ALTER TABLE plan_replans DROP CONSTRAINT plan_replans_reason_check;
ALTER TABLE plan_replans ADD CONSTRAINT plan_replans_reason_check CHECK (reason IN ('replan', 'priority'));
ALTER TABLE plan_prod_orders DROP COLUMN held_by;
