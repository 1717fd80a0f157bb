-- +goose Up
-- Commits of the journal are announced by the writing process after the
-- commit, coalesced (internal/platform/database/announce.go), no longer by
-- a NOTIFY inside every writing transaction: PostgreSQL holds a NOTIFY's
-- lock, one for the whole server, across the commit.
DROP TRIGGER events_notify ON events;
DROP FUNCTION events_notify();

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('tsekh_events', '');
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify();
