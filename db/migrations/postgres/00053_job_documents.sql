-- +goose Up
-- The documents a done job made (internal/jobs), one a job: the labels of
-- a production order's or a cutting plan's parts asked for with Prefer:
-- respond-async, say. Written in the transaction that marks the job done;
-- removed by the maintenance job JOBS_DOCUMENT_RETENTION after it.
CREATE TABLE jobs_documents (
    job_id     bigint      PRIMARY KEY REFERENCES jobs_queue (id),
    media_type text        NOT NULL,
    filename   text        NOT NULL,
    body       bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_documents_created ON jobs_documents (created_at);

-- +goose Down
DROP TABLE jobs_documents;
