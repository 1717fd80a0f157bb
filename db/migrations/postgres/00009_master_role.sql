-- +goose Up
-- The shop floor's master: reports progress, reads the plan, launches nothing.
ALTER TABLE auth_users DROP CONSTRAINT auth_users_role_check;
ALTER TABLE auth_users ADD CONSTRAINT auth_users_role_check
    CHECK (role IN ('admin', 'manager', 'planner', 'master', 'viewer'));

-- +goose Down
UPDATE auth_users SET role = 'viewer' WHERE role = 'master';
ALTER TABLE auth_users DROP CONSTRAINT auth_users_role_check;
ALTER TABLE auth_users ADD CONSTRAINT auth_users_role_check
    CHECK (role IN ('admin', 'manager', 'planner', 'viewer'));
