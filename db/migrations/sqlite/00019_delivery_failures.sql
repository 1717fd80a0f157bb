-- +goose Up
-- The SQLite twin of migrations/postgres/00019_delivery_failures.sql.
ALTER TABLE events_deliveries ADD COLUMN deferred_ms INTEGER NOT NULL DEFAULT 0;

CREATE TABLE events_delivery_failures (
    event_id    INTEGER  NOT NULL REFERENCES events (id),
    subscriber  TEXT     NOT NULL,
    seq         INTEGER  NOT NULL,
    failed_at   DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    error       TEXT     NOT NULL,
    http_status INTEGER,
    spent       BOOLEAN  NOT NULL,
    PRIMARY KEY (event_id, subscriber, seq)
);

-- +goose Down
DROP TABLE events_delivery_failures;
ALTER TABLE events_deliveries DROP COLUMN deferred_ms;
