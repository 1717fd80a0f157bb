-- +goose Up
-- Stock follows what physically moved (docs/planning.md, "Materials and
-- stock"):
--   - stock_needs replaces stock_reservations: what each production order
--     still needs of each material (pooled into stock_levels.reserved) and
--     what it has used up; the floor, the plan and the cutting plans book
--     it in their own transactions, so it has no step or count of its own;
--   - every booking is a stock document of its own, naming its source (the
--     parts, units or cutting-plan sheet); write-offs are documents too;
--   - offcuts are stock items (stock_offcuts, with codes), moved from
--     cutting_offcuts with their ids; stock_plan_sheets is what stock knows
--     of each cutting plan's sheet: what it uses up and leaves, and whether
--     it went to the saw;
--   - a part keeps what it needs of its board until it is cut (board_need)
--     and the cutting-plan sheet it lies on; an order keeps the edge
--     overhang its bands are counted with.
-- The old stock.reservations subscriber finds no stock_reservations and
-- fails without an effect, so that a replica of the version before this one
-- cannot book anything twice while a deploy runs.
ALTER TABLE stock_documents DROP CONSTRAINT stock_documents_kind_check;
ALTER TABLE stock_documents ADD CONSTRAINT stock_documents_kind_check
    CHECK (kind IN ('receipt', 'count', 'write_off', 'reservation', 'consumption'));
DROP INDEX stock_documents_prod_order;
CREATE INDEX stock_documents_prod_order ON stock_documents (prod_order_id, id) WHERE prod_order_id IS NOT NULL;
ALTER TABLE stock_documents ADD COLUMN source text NOT NULL DEFAULT '{}';
ALTER TABLE stock_movements DROP CONSTRAINT stock_movements_kind_check;
ALTER TABLE stock_movements ADD CONSTRAINT stock_movements_kind_check
    CHECK (kind IN ('receipt', 'count', 'write_off', 'reserve', 'consume', 'release'));

CREATE TABLE stock_needs (
    prod_order_id bigint NOT NULL,
    code          text   NOT NULL,
    needed        double precision NOT NULL DEFAULT 0 CHECK (needed >= 0),
    consumed      double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (prod_order_id, code)
);
CREATE INDEX stock_needs_live ON stock_needs (code, prod_order_id) WHERE needed > 0;
INSERT INTO stock_needs (prod_order_id, code, needed, consumed)
    SELECT prod_order_id, code, CASE WHEN released THEN 0 ELSE GREATEST(needed - consumed, 0) END, consumed
    FROM stock_reservations;
DROP TABLE stock_reservations;

CREATE TABLE stock_offcuts (
    id          bigserial PRIMARY KEY,
    code        text    NOT NULL UNIQUE,
    board       text    NOT NULL,
    length_mm   double precision NOT NULL,
    width_mm    double precision NOT NULL,
    plan_id     bigint  NOT NULL,
    sheet       integer NOT NULL,
    status      text    NOT NULL CHECK (status IN ('available', 'reserved', 'used', 'written_off')),
    reserved_by bigint,
    reason      text    NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stock_offcuts_board ON stock_offcuts (board, status, id);
CREATE INDEX stock_offcuts_sheet ON stock_offcuts (plan_id, sheet);
INSERT INTO stock_offcuts (id, code, board, length_mm, width_mm, plan_id, sheet, status, reserved_by, created_at)
    SELECT id, 'O' || plan_id || '-' || sheet || '-' || row_number() OVER (PARTITION BY plan_id, sheet ORDER BY id),
        board, length_mm, width_mm, plan_id, sheet, status, reserved_by, created_at
    FROM cutting_offcuts;
SELECT setval(pg_get_serial_sequence('stock_offcuts', 'id'), COALESCE((SELECT max(id) FROM stock_offcuts), 0) + 1, false);
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

ALTER TABLE plan_parts ADD COLUMN board_need double precision NOT NULL DEFAULT 0;
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

-- +goose Down
ALTER TABLE plan_prod_orders DROP COLUMN assemble_seq;
ALTER TABLE plan_prod_orders DROP COLUMN band_seq;
ALTER TABLE plan_prod_orders DROP COLUMN cut_seq;
ALTER TABLE plan_prod_orders DROP COLUMN edge_overhang_mm;
ALTER TABLE plan_parts DROP COLUMN sheet_n;
ALTER TABLE plan_parts DROP COLUMN sheet_plan_id;
ALTER TABLE plan_parts DROP COLUMN board_need;
DROP TABLE stock_plan_sheets;
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
INSERT INTO cutting_offcuts (id, board, length_mm, width_mm, plan_id, sheet, status, reserved_by, created_at)
    SELECT id, board, length_mm, width_mm, plan_id, sheet, CASE status WHEN 'written_off' THEN 'used' ELSE status END, reserved_by, created_at
    FROM stock_offcuts;
SELECT setval(pg_get_serial_sequence('cutting_offcuts', 'id'), COALESCE((SELECT max(id) FROM cutting_offcuts), 0) + 1, false);
DROP TABLE stock_offcuts;
CREATE TABLE stock_reservations (
    prod_order_id bigint  NOT NULL,
    code          text    NOT NULL,
    kind          text    NOT NULL,
    step          integer NOT NULL,
    total         integer NOT NULL,
    done          integer NOT NULL DEFAULT 0,
    needed        double precision NOT NULL,
    consumed      double precision NOT NULL DEFAULT 0,
    released      boolean NOT NULL DEFAULT false,
    PRIMARY KEY (prod_order_id, code)
);
INSERT INTO stock_reservations (prod_order_id, code, kind, step, total, needed, consumed, released)
    SELECT prod_order_id, code, '', 0, 0, needed + consumed, consumed, needed = 0 FROM stock_needs;
DROP TABLE stock_needs;
-- Write-offs and consumption documents become the kinds the version before
-- knew; a production order may keep several documents.
UPDATE stock_movements SET kind = 'consume' WHERE kind = 'write_off';
ALTER TABLE stock_movements DROP CONSTRAINT stock_movements_kind_check;
ALTER TABLE stock_movements ADD CONSTRAINT stock_movements_kind_check
    CHECK (kind IN ('receipt', 'count', 'reserve', 'consume', 'release'));
ALTER TABLE stock_documents DROP COLUMN source;
UPDATE stock_documents SET kind = 'reservation' WHERE kind IN ('write_off', 'consumption');
ALTER TABLE stock_documents DROP CONSTRAINT stock_documents_kind_check;
ALTER TABLE stock_documents ADD CONSTRAINT stock_documents_kind_check CHECK (kind IN ('receipt', 'count', 'reservation'));
DROP INDEX stock_documents_prod_order;
CREATE INDEX stock_documents_prod_order ON stock_documents (prod_order_id) WHERE kind = 'reservation';
