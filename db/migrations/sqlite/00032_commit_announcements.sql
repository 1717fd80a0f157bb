-- +goose Up
-- PostgreSQL's commit announcements changed (its migration 00032); SQLite has
-- no NOTIFY, and nothing changes here.
SELECT 1;

-- +goose Down
SELECT 1;
