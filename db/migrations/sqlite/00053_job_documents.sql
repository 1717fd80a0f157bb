-- +goose Up
-- The SQLite twin of migrations/postgres/00053_job_documents.sql.
CREATE TABLE jobs_documents (
    job_id     INTEGER  PRIMARY KEY REFERENCES jobs_queue (id),
    media_type TEXT     NOT NULL,
    filename   TEXT     NOT NULL,
    body       BLOB     NOT NULL,
    created_at DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX jobs_documents_created ON jobs_documents (created_at);

-- +goose Down
DROP TABLE jobs_documents;
