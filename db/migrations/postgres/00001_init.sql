-- +goose Up

-- auth: users, roles and API tokens (stored as SHA-256 hashes).
CREATE TABLE auth_users (
    id         bigserial PRIMARY KEY,
    name       text        NOT NULL,
    email      text        UNIQUE,
    role       text        NOT NULL CHECK (role IN ('admin', 'manager', 'planner', 'viewer')),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE auth_tokens (
    id           bigserial PRIMARY KEY,
    user_id      bigint      NOT NULL REFERENCES auth_users (id),
    name         text        NOT NULL DEFAULT '',
    hash         text        NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- catalog: work centres, route templates, products and their parts.
CREATE TABLE catalog_work_centers (
    id                   bigserial PRIMARY KEY,
    code                 text    NOT NULL UNIQUE,
    name                 text    NOT NULL,
    capacity_min_per_day integer NOT NULL CHECK (capacity_min_per_day > 0),
    weekdays             text    NOT NULL DEFAULT '[1,2,3,4,5]',
    holidays             text    NOT NULL DEFAULT '[]'
);
CREATE TABLE catalog_routes (
    id   bigserial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    kind text NOT NULL CHECK (kind IN ('case', 'upholstered'))
);
CREATE TABLE catalog_route_operations (
    route_id       bigint  NOT NULL REFERENCES catalog_routes (id) ON DELETE CASCADE,
    seq            integer NOT NULL,
    name           text    NOT NULL,
    work_center_id bigint  NOT NULL REFERENCES catalog_work_centers (id),
    scope          text    NOT NULL CHECK (scope IN ('part', 'item')),
    minutes        numeric(10, 2) NOT NULL CHECK (minutes > 0),
    PRIMARY KEY (route_id, seq)
);
CREATE TABLE catalog_products (
    id       bigserial PRIMARY KEY,
    sku      text   NOT NULL UNIQUE,
    name     text   NOT NULL,
    kind     text   NOT NULL CHECK (kind IN ('case', 'upholstered')),
    route_id bigint NOT NULL REFERENCES catalog_routes (id)
);
CREATE TABLE catalog_product_parts (
    product_id   bigint  NOT NULL REFERENCES catalog_products (id) ON DELETE CASCADE,
    seq          integer NOT NULL,
    name         text    NOT NULL,
    material     text    NOT NULL,
    length_mm    integer NOT NULL CHECK (length_mm > 0),
    width_mm     integer NOT NULL CHECK (width_mm > 0),
    thickness_mm integer NOT NULL CHECK (thickness_mm > 0),
    edging       text    NOT NULL DEFAULT '',
    qty          integer NOT NULL CHECK (qty > 0),
    PRIMARY KEY (product_id, seq)
);

-- sales: orders and their items.
CREATE TABLE sales_orders (
    id             bigserial PRIMARY KEY,
    status         text        NOT NULL DEFAULT 'received',
    source         text        NOT NULL CHECK (source IN ('shop', 'crm', 'manual')),
    sync_id        text        UNIQUE,
    crm_order_id   bigint      UNIQUE,
    customer_name  text        NOT NULL,
    customer_phone text        NOT NULL DEFAULT '',
    customer_email text        NOT NULL DEFAULT '',
    due_date       date,
    eta            date,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE sales_order_items (
    id         bigserial PRIMARY KEY,
    order_id   bigint  NOT NULL REFERENCES sales_orders (id),
    product_id bigint  NOT NULL,
    sku        text    NOT NULL,
    qty        integer NOT NULL CHECK (qty > 0),
    note       text    NOT NULL DEFAULT '',
    status     text    NOT NULL DEFAULT 'new'
);
CREATE INDEX sales_order_items_order_id ON sales_order_items (order_id);

-- plan: the backlog of sales-order items waiting for production, fed by events.
CREATE TABLE plan_backlog (
    item_id    bigint PRIMARY KEY,
    order_id   bigint      NOT NULL,
    sku        text        NOT NULL,
    qty        integer     NOT NULL,
    due_date   date,
    received_at timestamptz NOT NULL,
    event_id   bigint      NOT NULL
);

-- events: the outbox and journal. partition groups the events of one object so
-- that they are dispatched in order; several dispatchers share partitions.
CREATE TABLE events (
    id             bigserial PRIMARY KEY,
    type           text        NOT NULL,
    aggregate_type text        NOT NULL,
    aggregate_id   bigint      NOT NULL,
    partition      smallint    NOT NULL,
    payload        jsonb       NOT NULL,
    actor_id       bigint,
    actor_name     text,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_partition_id ON events (partition, id);
CREATE INDEX events_type_id ON events (type, id);
CREATE INDEX events_aggregate_id ON events (aggregate_type, aggregate_id, id);
CREATE INDEX events_actor_id ON events (actor_id, id) WHERE actor_id IS NOT NULL;
CREATE INDEX events_created_at ON events (created_at);

-- One row per partition: the dispatch position (every event of the partition
-- with id <= position has been handed to every subscriber, or has a delivery
-- row below) and the lease of the dispatcher working on it.
CREATE TABLE events_partitions (
    partition   smallint PRIMARY KEY,
    position    bigint   NOT NULL DEFAULT 0,
    owner       text,
    lease_until timestamptz
);
INSERT INTO events_partitions (partition) SELECT generate_series(0, 15);

-- One row per dispatched batch: the events of the partition in (first_id..last_id)
-- reached every subscriber at dispatched_at, except those with delivery rows.
CREATE TABLE events_batches (
    partition     smallint    NOT NULL,
    first_id      bigint      NOT NULL,
    last_id       bigint      NOT NULL,
    dispatched_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partition, last_id)
);

-- The exceptions: one row per (event, subscriber) that did not simply succeed
-- in its batch (failed and retrying, held behind an earlier failure of the same
-- object, given up), and the successful deliveries of events that have one.
CREATE TABLE events_deliveries (
    event_id        bigint      NOT NULL REFERENCES events (id),
    subscriber      text        NOT NULL,
    partition       smallint    NOT NULL,
    aggregate_type  text        NOT NULL,
    aggregate_id    bigint      NOT NULL,
    status          text        NOT NULL CHECK (status IN ('retrying', 'held', 'failed', 'processed')),
    attempts        integer     NOT NULL DEFAULT 0,
    last_error      text        NOT NULL DEFAULT '',
    blocked_by      bigint,
    next_attempt_at timestamptz,
    processed_at    timestamptz,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, subscriber)
);
CREATE INDEX events_deliveries_open ON events_deliveries (partition, subscriber, aggregate_type, aggregate_id, event_id)
    WHERE status <> 'processed';
CREATE INDEX events_deliveries_due ON events_deliveries (partition, next_attempt_at) WHERE status = 'retrying';

-- Wake dispatchers as soon as events commit (delivered at commit, coalesced per transaction).
-- +goose StatementBegin
CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('tsekh_events', '');
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify();

-- +goose Down
DROP TABLE events_deliveries, events_batches, events_partitions, events,
    plan_backlog, sales_order_items, sales_orders,
    catalog_product_parts, catalog_products, catalog_route_operations, catalog_routes, catalog_work_centers,
    auth_tokens, auth_users;
DROP FUNCTION events_notify();
