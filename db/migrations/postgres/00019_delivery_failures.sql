-- +goose Up
-- Deferral by Retry-After: the time a delivery's next attempts were put off
-- at the other side's request (HTTP 429 or 503 with Retry-After) without
-- spending an attempt, up to DISPATCH_RETRY_AFTER_CAP.
ALTER TABLE events_deliveries ADD COLUMN deferred_ms bigint NOT NULL DEFAULT 0;

-- The failed attempts of each delivery, the latest 20 of them, kept after the
-- delivery has succeeded: the journal shows them under the delivery. seq
-- counts a delivery's failures from 1; spent is false for an answer with
-- Retry-After that did not spend an attempt.
CREATE TABLE events_delivery_failures (
    event_id    bigint      NOT NULL REFERENCES events (id),
    subscriber  text        NOT NULL,
    seq         integer     NOT NULL,
    failed_at   timestamptz NOT NULL DEFAULT now(),
    error       text        NOT NULL,
    http_status integer,
    spent       boolean     NOT NULL,
    PRIMARY KEY (event_id, subscriber, seq)
);

-- +goose Down
DROP TABLE events_delivery_failures;
ALTER TABLE events_deliveries DROP COLUMN deferred_ms;
