-- +goose Up
-- Long work run in the background (internal/jobs): a cutting plan, say.
-- queued → running → done | failed | cancelled; a running job is held by
-- its replica's lease (owner, lease_until), renewed while it runs: a job
-- whose lease ran out (its replica died) is queued again, or failed with
-- the reason once it has been tried max_attempts times.
CREATE TABLE jobs_queue (
    id               bigserial   PRIMARY KEY,
    kind             text        NOT NULL,
    status           text        NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    input            text        NOT NULL DEFAULT '{}',
    result           text,
    error            text,
    progress         double precision NOT NULL DEFAULT 0,
    message          text        NOT NULL DEFAULT '',
    attempts         integer     NOT NULL DEFAULT 0,
    cancel_requested boolean     NOT NULL DEFAULT false,
    owner            text,
    lease_until      timestamptz,
    actor_id         bigint,
    actor_name       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz
);
CREATE INDEX jobs_queue_waiting ON jobs_queue (id) WHERE status = 'queued';
CREATE INDEX jobs_queue_running ON jobs_queue (lease_until) WHERE status = 'running';

-- +goose Down
DROP TABLE jobs_queue;
