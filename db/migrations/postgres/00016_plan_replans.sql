-- +goose Up

-- plan: every re-plan of the whole plan is an object of its own, which its
-- plan.replanned event is about: it belongs to no one production order, and
-- it is journalled also when it moved nothing.
CREATE TABLE plan_replans (
    id            bigserial PRIMARY KEY,
    reason        text        NOT NULL CHECK (reason IN ('replan', 'priority')),
    prod_order_id bigint,
    planned_from  timestamptz NOT NULL,
    replanned     integer     NOT NULL,
    moved         integer     NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE plan_replans;
