-- +goose Up
-- A re-plan rewrites the planned slots of every operation it moves (tens
-- of thousands when an order goes to the front of a big plan). Room left
-- on each page lets PostgreSQL write the new version beside the old one
-- without touching the indexes when the days stay (a HOT update), about
-- twice as fast. New pages keep the room; VACUUM FULL would give it to the
-- old ones too.
ALTER TABLE plan_operations SET (fillfactor = 70);

-- +goose Down
ALTER TABLE plan_operations RESET (fillfactor);
