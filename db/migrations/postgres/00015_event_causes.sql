-- +goose Up

-- events: what an event followed from. caused_by is the id of the event
-- whose handling wrote it (null for a request, a command or the scheduler);
-- correlation_id ties together everything one request (or one command)
-- set going: the request's X-Request-Id, inherited by the events its
-- subscribers write; traceparent and tracestate are the W3C trace context
-- of the span that wrote it. caused_by has no foreign key: it would cost
-- every event's insert a look-up of its cause, and the cause is always an
-- earlier event of the same table.
ALTER TABLE events ADD COLUMN caused_by bigint;
ALTER TABLE events ADD COLUMN correlation_id text;
ALTER TABLE events ADD COLUMN traceparent text;
ALTER TABLE events ADD COLUMN tracestate text;

-- The journal filters on both, newest first; only the events that have one
-- are indexed.
CREATE INDEX events_caused_by ON events (caused_by, id) WHERE caused_by IS NOT NULL;
CREATE INDEX events_correlation_id ON events (correlation_id, id) WHERE correlation_id IS NOT NULL;

-- +goose Down
DROP INDEX events_correlation_id;
DROP INDEX events_caused_by;
ALTER TABLE events DROP COLUMN tracestate;
ALTER TABLE events DROP COLUMN traceparent;
ALTER TABLE events DROP COLUMN correlation_id;
ALTER TABLE events DROP COLUMN caused_by;
