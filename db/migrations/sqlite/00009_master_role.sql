-- +goose NO TRANSACTION
-- +goose Up
-- The SQLite twin of migrations/postgres/00009_master_role.sql. SQLite cannot
-- change a CHECK constraint: the table is rebuilt (sqlite.org/lang_altertable.html,
-- "other kinds of table schema changes"), with foreign keys off so that
-- auth_tokens keeps pointing at auth_users. The service holds one connection
-- to SQLite, so the pragma and the transaction are on the same one.
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE auth_users_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT     NOT NULL,
    email          TEXT     UNIQUE,
    role           TEXT     NOT NULL CHECK (role IN ('admin', 'manager', 'planner', 'master', 'viewer')),
    created_at     DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    deactivated_at DATETIME
);
INSERT INTO auth_users_new (id, name, email, role, created_at, deactivated_at)
    SELECT id, name, email, role, created_at, deactivated_at FROM auth_users;
DROP TABLE auth_users;
ALTER TABLE auth_users_new RENAME TO auth_users;
PRAGMA foreign_key_check;
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
PRAGMA foreign_keys = OFF;
BEGIN;
UPDATE auth_users SET role = 'viewer' WHERE role = 'master';
CREATE TABLE auth_users_old (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT     NOT NULL,
    email          TEXT     UNIQUE,
    role           TEXT     NOT NULL CHECK (role IN ('admin', 'manager', 'planner', 'viewer')),
    created_at     DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    deactivated_at DATETIME
);
INSERT INTO auth_users_old (id, name, email, role, created_at, deactivated_at)
    SELECT id, name, email, role, created_at, deactivated_at FROM auth_users;
DROP TABLE auth_users;
ALTER TABLE auth_users_old RENAME TO auth_users;
COMMIT;
PRAGMA foreign_keys = ON;
