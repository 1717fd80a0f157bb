-- +goose Up

-- plan: production orders launched for sales-order items along a route,
-- exploded into physical parts and operations with their planned slots.
CREATE TABLE plan_prod_orders (
    id           bigserial PRIMARY KEY,
    status       text        NOT NULL DEFAULT 'launched' CHECK (status IN ('launched', 'in_progress', 'done', 'cancelled')),
    route_id     bigint      NOT NULL,
    route_name   text        NOT NULL,
    parts_count  integer     NOT NULL,
    ops_count    integer     NOT NULL,
    eta          date        NOT NULL,
    planned_eta  date        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    started_at   timestamptz,
    completed_at timestamptz,
    cancelled_at timestamptz
);
CREATE INDEX plan_prod_orders_status ON plan_prod_orders (status, id);

-- The sales-order items of a production order, with what the backlog knew of
-- them (so that a cancellation can put them back). An item is in at most one
-- live production order: the partial unique index is what makes exactly one
-- of two racing launches win; a cancelled order releases its items.
CREATE TABLE plan_prod_order_items (
    prod_order_id bigint      NOT NULL REFERENCES plan_prod_orders (id),
    item_id       bigint      NOT NULL,
    order_id      bigint      NOT NULL,
    product_id    bigint      NOT NULL,
    sku           text        NOT NULL,
    qty           integer     NOT NULL,
    due_date      date,
    received_at   timestamptz NOT NULL,
    event_id      bigint      NOT NULL,
    released      boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (prod_order_id, item_id)
);
CREATE UNIQUE INDEX plan_prod_order_items_live ON plan_prod_order_items (item_id) WHERE NOT released;

-- One row per physical part: unit n of an item, line seq of the product's parts.
CREATE TABLE plan_parts (
    id            bigserial PRIMARY KEY,
    prod_order_id bigint  NOT NULL REFERENCES plan_prod_orders (id),
    item_id       bigint  NOT NULL,
    unit          integer NOT NULL,
    seq           integer NOT NULL,
    name          text    NOT NULL,
    material      text    NOT NULL,
    length_mm     integer NOT NULL,
    width_mm      integer NOT NULL,
    thickness_mm  integer NOT NULL,
    edging        text    NOT NULL DEFAULT ''
);
CREATE INDEX plan_parts_prod_order ON plan_parts (prod_order_id, id);

-- One row per operation to do: a part-scope route operation for every
-- physical part, an item-scope one for every unit. The planned slot runs from
-- start_min of start_day to end_min of end_day, in minutes of the work
-- centre's daily capacity.
CREATE TABLE plan_operations (
    id             bigserial PRIMARY KEY,
    prod_order_id  bigint           NOT NULL REFERENCES plan_prod_orders (id),
    item_id        bigint           NOT NULL,
    unit           integer          NOT NULL,
    part_id        bigint           REFERENCES plan_parts (id),
    seq            integer          NOT NULL,
    name           text             NOT NULL,
    work_center_id bigint           NOT NULL,
    scope          text             NOT NULL CHECK (scope IN ('part', 'item')),
    minutes        double precision NOT NULL,
    status         text             NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'in_progress', 'done')),
    start_day      date             NOT NULL,
    start_min      double precision NOT NULL,
    end_day        date             NOT NULL,
    end_min        double precision NOT NULL,
    started_at     timestamptz,
    completed_at   timestamptz
);
CREATE INDEX plan_operations_prod_order ON plan_operations (prod_order_id, id);
CREATE INDEX plan_operations_open ON plan_operations (work_center_id, end_day) WHERE status <> 'done';
CREATE INDEX plan_operations_days ON plan_operations (end_day, start_day);

-- Sales orders the plan has seen cancelled: their items never return to the backlog.
CREATE TABLE plan_cancelled_orders (
    order_id bigint PRIMARY KEY,
    event_id bigint NOT NULL
);

-- +goose Down
DROP TABLE plan_cancelled_orders, plan_operations, plan_parts, plan_prod_order_items, plan_prod_orders;
