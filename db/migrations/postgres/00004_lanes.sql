-- +goose Up

-- Lanes: each subscriber has its own position in each partition, so that a
-- slow, failing or absent subscriber delays only itself, and replicas that run
-- different subscribers (any rolling deploy) lose nothing.

-- The subscribers the dispatchers have run. registered_at is NULL for a
-- subscriber known from before lanes that no replica has run since: its lanes
-- keep the old position, and no event waits for it until a replica runs it.
CREATE TABLE events_subscribers (
    id            bigserial PRIMARY KEY,
    name          text        NOT NULL UNIQUE,
    types         text        NOT NULL DEFAULT '[]',
    description   text        NOT NULL DEFAULT '',
    local         boolean     NOT NULL DEFAULT false,
    replayable    boolean     NOT NULL DEFAULT false,
    registered_at timestamptz,
    retired_at    timestamptz,
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- One row per (subscriber, partition): every event of the partition with
-- start_position < id <= position has reached the subscriber, or has a
-- delivery row; events at or below start_position came before the subscriber.
CREATE TABLE events_lanes (
    subscriber     text     NOT NULL,
    partition      smallint NOT NULL,
    position       bigint   NOT NULL,
    start_position bigint   NOT NULL,
    owner          text,
    lease_until    timestamptz,
    PRIMARY KEY (subscriber, partition)
);
-- No index beyond the key: every column of a lane changes as it moves, and
-- an index on one (owner) would make each of those updates write the index
-- too (no HOT update), which a session holding back the xmin horizon turns
-- into bloat. The table has subscribers x 16 rows.

-- The replicas that ran each subscriber, and when last.
CREATE TABLE events_replicas (
    subscriber text        NOT NULL,
    replica    text        NOT NULL,
    seen_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (subscriber, replica)
);

-- A batch now moves one lane; subscriber '' marks the batches that reached
-- every subscriber at once (those from before lanes, and compacted ones).
ALTER TABLE events_batches ADD COLUMN subscriber text NOT NULL DEFAULT '';
ALTER TABLE events_batches DROP CONSTRAINT events_batches_pkey;
ALTER TABLE events_batches ADD PRIMARY KEY (partition, subscriber, last_id);

CREATE INDEX events_deliveries_lane_due ON events_deliveries (subscriber, partition, next_attempt_at) WHERE status = 'retrying';
CREATE INDEX events_deliveries_subscriber_open ON events_deliveries (subscriber, status) WHERE status <> 'processed';

-- Compaction (the maintenance job) folds the subscribers' batch rows of the
-- events every lane has passed into the event itself: settled_at is then
-- the event's processed_at, and upto says how far each partition is done.
ALTER TABLE events ADD COLUMN settled_at timestamptz;
CREATE TABLE events_compaction (
    partition smallint PRIMARY KEY,
    upto      bigint NOT NULL
);

-- An existing journal: the subscribers of the version before lanes continue
-- from the shared positions, with their open deliveries.
INSERT INTO events_subscribers (name)
SELECT n.name FROM (VALUES ('plan.backlog'), ('plan.backlog-cancel'), ('sales.production'),
    ('sales.shop-callback'), ('nats.relay')) AS n(name)
WHERE EXISTS (SELECT 1 FROM events);
INSERT INTO events_lanes (subscriber, partition, position, start_position)
SELECT s.name, p.partition, p.position, 0 FROM events_partitions p CROSS JOIN events_subscribers s;

DROP TABLE events_partitions;

-- +goose Down
CREATE TABLE events_partitions (
    partition   smallint PRIMARY KEY,
    position    bigint   NOT NULL DEFAULT 0,
    owner       text,
    lease_until timestamptz
);
INSERT INTO events_partitions (partition, position)
SELECT g, coalesce((SELECT min(l.position) FROM events_lanes l JOIN events_subscribers s ON s.name = l.subscriber
    WHERE l.partition = g AND s.retired_at IS NULL), 0) FROM generate_series(0, 15) g;
DROP INDEX events_deliveries_subscriber_open;
DROP INDEX events_deliveries_lane_due;
DELETE FROM events_batches WHERE subscriber <> '';
ALTER TABLE events_batches DROP CONSTRAINT events_batches_pkey;
ALTER TABLE events_batches DROP COLUMN subscriber;
ALTER TABLE events_batches ADD PRIMARY KEY (partition, last_id);
DROP TABLE events_replicas, events_lanes, events_subscribers, events_compaction;
ALTER TABLE events DROP COLUMN settled_at;
