-- +goose Up
-- A re-plan's new reason, capacity: a work centre's capacity, shift or
-- calendar changed (the plan.capacity subscriber).
ALTER TABLE plan_replans DROP CONSTRAINT plan_replans_reason_check;
ALTER TABLE plan_replans ADD CONSTRAINT plan_replans_reason_check CHECK (reason IN ('replan', 'priority', 'materials', 'capacity'));

-- +goose Down
DELETE FROM plan_replans WHERE reason = 'capacity';
ALTER TABLE plan_replans DROP CONSTRAINT plan_replans_reason_check;
ALTER TABLE plan_replans ADD CONSTRAINT plan_replans_reason_check CHECK (reason IN ('replan', 'priority', 'materials'));
