-- +goose Up

-- Lanes: each subscriber has its own position in each partition (see the
-- PostgreSQL migration for the meaning of each table).
CREATE TABLE events_subscribers (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT     NOT NULL UNIQUE,
    types         TEXT     NOT NULL DEFAULT '[]',
    description   TEXT     NOT NULL DEFAULT '',
    local         BOOLEAN  NOT NULL DEFAULT false,
    replayable    BOOLEAN  NOT NULL DEFAULT false,
    registered_at DATETIME,
    retired_at    DATETIME,
    updated_at    DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);

CREATE TABLE events_lanes (
    subscriber     TEXT    NOT NULL,
    partition      INTEGER NOT NULL,
    position       INTEGER NOT NULL,
    start_position INTEGER NOT NULL,
    owner          TEXT,
    lease_until    DATETIME,
    PRIMARY KEY (subscriber, partition)
);
-- No index beyond the key: every column of a lane changes as it moves, and
-- an index on one (owner) would make each of those updates write the index
-- too (no HOT update), which a session holding back the xmin horizon turns
-- into bloat. The table has subscribers x 16 rows.

CREATE TABLE events_replicas (
    subscriber TEXT     NOT NULL,
    replica    TEXT     NOT NULL,
    seen_at    DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    PRIMARY KEY (subscriber, replica)
);

CREATE TABLE events_batches_lanes (
    partition     INTEGER  NOT NULL,
    subscriber    TEXT     NOT NULL DEFAULT '',
    first_id      INTEGER  NOT NULL,
    last_id       INTEGER  NOT NULL,
    dispatched_at DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    PRIMARY KEY (partition, subscriber, last_id)
);
INSERT INTO events_batches_lanes (partition, subscriber, first_id, last_id, dispatched_at)
SELECT partition, '', first_id, last_id, dispatched_at FROM events_batches;
DROP TABLE events_batches;
ALTER TABLE events_batches_lanes RENAME TO events_batches;

CREATE INDEX events_deliveries_lane_due ON events_deliveries (subscriber, partition, next_attempt_at) WHERE status = 'retrying';
CREATE INDEX events_deliveries_subscriber_open ON events_deliveries (subscriber, status) WHERE status <> 'processed';

-- Compaction (the maintenance job) folds the subscribers' batch rows of the
-- events every lane has passed into the event itself: settled_at is then
-- the event's processed_at, and upto says how far each partition is done.
ALTER TABLE events ADD COLUMN settled_at DATETIME;
CREATE TABLE events_compaction (
    partition INTEGER PRIMARY KEY,
    upto      INTEGER NOT NULL
);

INSERT INTO events_subscribers (name)
SELECT n.column1 FROM (VALUES ('plan.backlog'), ('plan.backlog-cancel'), ('sales.production'),
    ('sales.shop-callback'), ('nats.relay')) AS n
WHERE EXISTS (SELECT 1 FROM events);
INSERT INTO events_lanes (subscriber, partition, position, start_position)
SELECT s.name, p.partition, p.position, 0 FROM events_partitions p CROSS JOIN events_subscribers s;

DROP TABLE events_partitions;

-- +goose Down
CREATE TABLE events_partitions (
    partition   INTEGER PRIMARY KEY,
    position    INTEGER NOT NULL DEFAULT 0,
    owner       TEXT,
    lease_until DATETIME
);
WITH RECURSIVE p(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM p WHERE n < 15)
INSERT INTO events_partitions (partition, position)
SELECT n, coalesce((SELECT min(l.position) FROM events_lanes l JOIN events_subscribers s ON s.name = l.subscriber
    WHERE l.partition = n AND s.retired_at IS NULL), 0) FROM p;
DROP INDEX events_deliveries_subscriber_open;
DROP INDEX events_deliveries_lane_due;
CREATE TABLE events_batches_old (
    partition     INTEGER  NOT NULL,
    first_id      INTEGER  NOT NULL,
    last_id       INTEGER  NOT NULL,
    dispatched_at DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    PRIMARY KEY (partition, last_id)
);
INSERT INTO events_batches_old (partition, first_id, last_id, dispatched_at)
SELECT partition, first_id, last_id, dispatched_at FROM events_batches WHERE subscriber = '';
DROP TABLE events_batches;
ALTER TABLE events_batches_old RENAME TO events_batches;
DROP TABLE events_replicas;
DROP TABLE events_lanes;
DROP TABLE events_subscribers;
DROP TABLE events_compaction;
ALTER TABLE events DROP COLUMN settled_at;
