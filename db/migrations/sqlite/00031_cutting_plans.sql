-- +goose Up
-- Cutting plans: the uncut parts of production orders laid out, board by
-- board, on the board's sheet formats and the offcuts in stock, as the panel
-- saw cuts them. A plan keeps its settings and totals; each sheet its layout
-- (parts with positions, cuts in saw order, waste, offcuts left) as JSON and
-- whether it is cut. Offcuts are the pieces worth keeping that cut sheets
-- left: available until a plan takes one (reserved), used once that sheet
-- is cut.
CREATE TABLE cutting_plans (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    prod_orders   text    NOT NULL,
    kerf_mm       REAL NOT NULL,
    stages        integer NOT NULL,
    min_offcut_mm integer NOT NULL,
    boards        text    NOT NULL DEFAULT '[]',
    sheets        integer NOT NULL,
    parts         integer NOT NULL,
    replaced_by   bigint,
    created_at    DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);

CREATE TABLE cutting_sheets (
    plan_id   bigint  NOT NULL REFERENCES cutting_plans (id),
    n         integer NOT NULL,
    board     text    NOT NULL,
    offcut_id bigint,
    layout    text    NOT NULL,
    cut_at    DATETIME,
    PRIMARY KEY (plan_id, n)
);

CREATE TABLE cutting_offcuts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    board       text    NOT NULL,
    length_mm   REAL NOT NULL,
    width_mm    REAL NOT NULL,
    plan_id     bigint  NOT NULL,
    sheet       integer NOT NULL,
    status      text    NOT NULL CHECK (status IN ('available', 'reserved', 'used')),
    reserved_by bigint,
    created_at  DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX cutting_offcuts_board ON cutting_offcuts (board, status, id);

-- +goose Down
DROP TABLE cutting_offcuts;
DROP TABLE cutting_sheets;
DROP TABLE cutting_plans;
