-- +goose Up
-- The SQLite twin of migrations/postgres/00046_jobs.sql.
CREATE TABLE jobs_queue (
    id               INTEGER  PRIMARY KEY AUTOINCREMENT,
    kind             TEXT     NOT NULL,
    status           TEXT     NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    input            TEXT     NOT NULL DEFAULT '{}',
    result           TEXT,
    error            TEXT,
    progress         REAL     NOT NULL DEFAULT 0,
    message          TEXT     NOT NULL DEFAULT '',
    attempts         INTEGER  NOT NULL DEFAULT 0,
    cancel_requested BOOLEAN  NOT NULL DEFAULT false,
    owner            TEXT,
    lease_until      DATETIME,
    actor_id         INTEGER,
    actor_name       TEXT,
    created_at       DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    started_at       DATETIME,
    finished_at      DATETIME
);
CREATE INDEX jobs_queue_waiting ON jobs_queue (id) WHERE status = 'queued';
CREATE INDEX jobs_queue_running ON jobs_queue (lease_until) WHERE status = 'running';

-- +goose Down
DROP TABLE jobs_queue;
