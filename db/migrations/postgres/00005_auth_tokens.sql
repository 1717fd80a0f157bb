-- +goose Up

-- auth: tokens that expire and can be revoked, users that can be deactivated.
-- A token works while it is not revoked, not expired and its user is active;
-- last_used_at is refreshed at most once a minute per token.
ALTER TABLE auth_users ADD COLUMN deactivated_at timestamptz;
ALTER TABLE auth_tokens ADD COLUMN expires_at timestamptz;
ALTER TABLE auth_tokens ADD COLUMN revoked_at timestamptz;
ALTER TABLE auth_tokens ADD COLUMN last_used_at timestamptz;
-- bootstrap: made from BOOTSTRAP_ADMIN_TOKEN; a changed setting revokes it.
ALTER TABLE auth_tokens ADD COLUMN bootstrap boolean NOT NULL DEFAULT false;
CREATE INDEX auth_tokens_user ON auth_tokens (user_id, id);

-- Until now the setting's tokens were the administrator's tokens named
-- "bootstrap"; the next start with BOOTSTRAP_ADMIN_TOKEN revokes all of them
-- but the configured one.
UPDATE auth_tokens SET bootstrap = true
WHERE name = 'bootstrap'
  AND user_id = (SELECT min(id) FROM auth_users WHERE name = 'Администратор' AND role = 'admin');

-- +goose Down
DROP INDEX auth_tokens_user;
ALTER TABLE auth_tokens DROP COLUMN bootstrap;
ALTER TABLE auth_tokens DROP COLUMN last_used_at;
ALTER TABLE auth_tokens DROP COLUMN revoked_at;
ALTER TABLE auth_tokens DROP COLUMN expires_at;
ALTER TABLE auth_users DROP COLUMN deactivated_at;
