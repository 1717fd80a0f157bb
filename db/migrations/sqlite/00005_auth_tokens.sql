-- +goose Up
-- The SQLite twin of migrations/postgres/00005_auth_tokens.sql.

ALTER TABLE auth_users ADD COLUMN deactivated_at DATETIME;
ALTER TABLE auth_tokens ADD COLUMN expires_at DATETIME;
ALTER TABLE auth_tokens ADD COLUMN revoked_at DATETIME;
ALTER TABLE auth_tokens ADD COLUMN last_used_at DATETIME;
ALTER TABLE auth_tokens ADD COLUMN bootstrap INTEGER NOT NULL DEFAULT 0;
CREATE INDEX auth_tokens_user ON auth_tokens (user_id, id);

UPDATE auth_tokens SET bootstrap = 1
WHERE name = 'bootstrap'
  AND user_id = (SELECT min(id) FROM auth_users WHERE name = 'Администратор' AND role = 'admin');

-- +goose Down
DROP INDEX auth_tokens_user;
ALTER TABLE auth_tokens DROP COLUMN bootstrap;
ALTER TABLE auth_tokens DROP COLUMN last_used_at;
ALTER TABLE auth_tokens DROP COLUMN revoked_at;
ALTER TABLE auth_tokens DROP COLUMN expires_at;
ALTER TABLE auth_users DROP COLUMN deactivated_at;
