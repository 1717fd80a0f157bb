-- +goose Up
-- Cutting plans: the uncut parts of production orders laid out, board by
-- board, on the board's sheet formats and the offcuts in stock, as the panel
-- saw cuts them. A plan keeps its settings and totals; each sheet its layout
-- (parts with positions, cuts in saw order, waste, offcuts left) as JSON and
-- whether it is cut. Offcuts are the pieces worth keeping that cut sheets
-- left: available until a plan takes one (reserved), used once that sheet
-- is cut.
CREATE TABLE cutting_plans (
    id            bigserial PRIMARY KEY,
    prod_orders   text    NOT NULL,
    kerf_mm       double precision NOT NULL,
    stages        integer NOT NULL,
    min_offcut_mm integer NOT NULL,
    boards        text    NOT NULL DEFAULT '[]',
    sheets        integer NOT NULL,
    parts         integer NOT NULL,
    replaced_by   bigint,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE cutting_sheets (
    plan_id   bigint  NOT NULL REFERENCES cutting_plans (id),
    n         integer NOT NULL,
    board     text    NOT NULL,
    offcut_id bigint,
    layout    text    NOT NULL,
    cut_at    timestamptz,
    PRIMARY KEY (plan_id, n)
);

CREATE TABLE cutting_offcuts (
    id          bigserial PRIMARY KEY,
    board       text    NOT NULL,
    length_mm   double precision NOT NULL,
    width_mm    double precision NOT NULL,
    plan_id     bigint  NOT NULL,
    sheet       integer NOT NULL,
    status      text    NOT NULL CHECK (status IN ('available', 'reserved', 'used')),
    reserved_by bigint,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cutting_offcuts_board ON cutting_offcuts (board, status, id);

-- +goose Down
DROP TABLE cutting_offcuts;
DROP TABLE cutting_sheets;
DROP TABLE cutting_plans;
