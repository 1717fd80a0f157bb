-- +goose NO TRANSACTION
-- +goose Up
-- The SQLite twin of migrations/postgres/00033_physical_stock.sql. SQLite
-- cannot change a CHECK constraint: stock_documents and stock_movements are
-- rebuilt, foreign keys off so that the movements keep pointing at their
-- documents (as in 00014).
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE stock_documents_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          text   NOT NULL CHECK (kind IN ('receipt', 'count', 'write_off', 'reservation', 'consumption')),
    prod_order_id bigint,
    reason        text   NOT NULL DEFAULT '',
    created_at    DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    source        text   NOT NULL DEFAULT '{}'
);
INSERT INTO stock_documents_new (id, kind, prod_order_id, reason, created_at)
    SELECT id, kind, prod_order_id, reason, created_at FROM stock_documents;
DROP TABLE stock_documents;
ALTER TABLE stock_documents_new RENAME TO stock_documents;
CREATE INDEX stock_documents_prod_order ON stock_documents (prod_order_id, id) WHERE prod_order_id IS NOT NULL;

CREATE TABLE stock_movements_new (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id bigint NOT NULL REFERENCES stock_documents (id),
    code        text   NOT NULL,
    kind        text   NOT NULL CHECK (kind IN ('receipt', 'count', 'write_off', 'reserve', 'consume', 'release')),
    qty         REAL NOT NULL,
    created_at  DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
INSERT INTO stock_movements_new (id, document_id, code, kind, qty, created_at)
    SELECT id, document_id, code, kind, qty, created_at FROM stock_movements;
DROP TABLE stock_movements;
ALTER TABLE stock_movements_new RENAME TO stock_movements;
CREATE INDEX stock_movements_code ON stock_movements (code, id);

CREATE TABLE stock_needs (
    prod_order_id bigint NOT NULL,
    code          text   NOT NULL,
    needed        REAL   NOT NULL DEFAULT 0 CHECK (needed >= 0),
    consumed      REAL   NOT NULL DEFAULT 0,
    PRIMARY KEY (prod_order_id, code)
);
CREATE INDEX stock_needs_live ON stock_needs (code, prod_order_id) WHERE needed > 0;
INSERT INTO stock_needs (prod_order_id, code, needed, consumed)
    SELECT prod_order_id, code, CASE WHEN released THEN 0 ELSE max(needed - consumed, 0) END, consumed
    FROM stock_reservations;
DROP TABLE stock_reservations;

CREATE TABLE stock_offcuts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    code        text    NOT NULL UNIQUE,
    board       text    NOT NULL,
    length_mm   REAL    NOT NULL,
    width_mm    REAL    NOT NULL,
    plan_id     bigint  NOT NULL,
    sheet       integer NOT NULL,
    status      text    NOT NULL CHECK (status IN ('available', 'reserved', 'used', 'written_off')),
    reserved_by bigint,
    reason      text    NOT NULL DEFAULT '',
    created_at  DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX stock_offcuts_board ON stock_offcuts (board, status, id);
CREATE INDEX stock_offcuts_sheet ON stock_offcuts (plan_id, sheet);
INSERT INTO stock_offcuts (id, code, board, length_mm, width_mm, plan_id, sheet, status, reserved_by, created_at)
    SELECT id, 'O' || plan_id || '-' || sheet || '-' || row_number() OVER (PARTITION BY plan_id, sheet ORDER BY id),
        board, length_mm, width_mm, plan_id, sheet, status, reserved_by, created_at
    FROM cutting_offcuts;
DROP TABLE cutting_offcuts;

CREATE TABLE stock_plan_sheets (
    plan_id     bigint  NOT NULL,
    n           integer NOT NULL,
    board       text    NOT NULL,
    offcut_id   bigint,
    keep        text    NOT NULL DEFAULT '[]',
    document_id bigint,
    PRIMARY KEY (plan_id, n)
);

ALTER TABLE plan_parts ADD COLUMN board_need REAL NOT NULL DEFAULT 0;
ALTER TABLE plan_parts ADD COLUMN sheet_plan_id bigint;
ALTER TABLE plan_parts ADD COLUMN sheet_n integer;
ALTER TABLE plan_prod_orders ADD COLUMN edge_overhang_mm integer NOT NULL DEFAULT 30;
-- The route steps whose work uses materials up, as the order's route had
-- them at its launch: cutting (the first part-scope step) a part's board,
-- edge banding (the second) its bands, assembly (the first item-scope step)
-- a unit's fittings; 0 when it had none. An order launched before is given
-- them from its operations.
ALTER TABLE plan_prod_orders ADD COLUMN cut_seq integer NOT NULL DEFAULT 0;
ALTER TABLE plan_prod_orders ADD COLUMN band_seq integer NOT NULL DEFAULT 0;
ALTER TABLE plan_prod_orders ADD COLUMN assemble_seq integer NOT NULL DEFAULT 0;
UPDATE plan_prod_orders SET cut_seq = COALESCE((SELECT min(op.seq) FROM plan_operations op
    WHERE op.prod_order_id = plan_prod_orders.id AND op.scope = 'part'), 0);
UPDATE plan_prod_orders SET band_seq = COALESCE((SELECT min(op.seq) FROM plan_operations op
    WHERE op.prod_order_id = plan_prod_orders.id AND op.scope = 'part' AND op.seq > plan_prod_orders.cut_seq), 0);
UPDATE plan_prod_orders SET assemble_seq = COALESCE((SELECT min(op.seq) FROM plan_operations op
    WHERE op.prod_order_id = plan_prod_orders.id AND op.scope = 'item'), 0);
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
PRAGMA foreign_keys = OFF;
BEGIN;
ALTER TABLE plan_prod_orders DROP COLUMN assemble_seq;
ALTER TABLE plan_prod_orders DROP COLUMN band_seq;
ALTER TABLE plan_prod_orders DROP COLUMN cut_seq;
ALTER TABLE plan_prod_orders DROP COLUMN edge_overhang_mm;
ALTER TABLE plan_parts DROP COLUMN sheet_n;
ALTER TABLE plan_parts DROP COLUMN sheet_plan_id;
ALTER TABLE plan_parts DROP COLUMN board_need;
DROP TABLE stock_plan_sheets;
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
INSERT INTO cutting_offcuts (id, board, length_mm, width_mm, plan_id, sheet, status, reserved_by, created_at)
    SELECT id, board, length_mm, width_mm, plan_id, sheet, CASE status WHEN 'written_off' THEN 'used' ELSE status END, reserved_by, created_at
    FROM stock_offcuts;
DROP TABLE stock_offcuts;
CREATE TABLE stock_reservations (
    prod_order_id bigint  NOT NULL,
    code          text    NOT NULL,
    kind          text    NOT NULL,
    step          integer NOT NULL,
    total         integer NOT NULL,
    done          integer NOT NULL DEFAULT 0,
    needed        REAL NOT NULL,
    consumed      REAL NOT NULL DEFAULT 0,
    released      boolean NOT NULL DEFAULT false,
    PRIMARY KEY (prod_order_id, code)
);
INSERT INTO stock_reservations (prod_order_id, code, kind, step, total, needed, consumed, released)
    SELECT prod_order_id, code, '', 0, 0, needed + consumed, consumed, needed = 0 FROM stock_needs;
DROP TABLE stock_needs;
CREATE TABLE stock_movements_old (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id bigint NOT NULL REFERENCES stock_documents (id),
    code        text   NOT NULL,
    kind        text   NOT NULL CHECK (kind IN ('receipt', 'count', 'reserve', 'consume', 'release')),
    qty         REAL NOT NULL,
    created_at  DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
INSERT INTO stock_movements_old (id, document_id, code, kind, qty, created_at)
    SELECT id, document_id, code, CASE kind WHEN 'write_off' THEN 'consume' ELSE kind END, qty, created_at FROM stock_movements;
DROP TABLE stock_movements;
ALTER TABLE stock_movements_old RENAME TO stock_movements;
CREATE INDEX stock_movements_code ON stock_movements (code, id);
CREATE TABLE stock_documents_old (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          text   NOT NULL CHECK (kind IN ('receipt', 'count', 'reservation')),
    prod_order_id bigint,
    reason        text   NOT NULL DEFAULT '',
    created_at    DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
INSERT INTO stock_documents_old (id, kind, prod_order_id, reason, created_at)
    SELECT id, CASE WHEN kind IN ('write_off', 'consumption') THEN 'reservation' ELSE kind END, prod_order_id, reason, created_at FROM stock_documents;
DROP TABLE stock_documents;
ALTER TABLE stock_documents_old RENAME TO stock_documents;
CREATE INDEX stock_documents_prod_order ON stock_documents (prod_order_id) WHERE kind = 'reservation';
COMMIT;
PRAGMA foreign_keys = ON;
