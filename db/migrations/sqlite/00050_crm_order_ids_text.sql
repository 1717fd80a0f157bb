-- +goose Up
-- The SQLite twin of migrations/postgres/00050_crm_order_ids_text.sql. A
-- column of INTEGER affinity turns the text "005001" into the number 5001,
-- so crm_order_id must be declared TEXT. SQLite cannot change a column's
-- type, and sales_orders' inline UNIQUE on it keeps it from being dropped;
-- rebuilding the table would have to list every column other migrations
-- give it. A declared type changes nothing stored on disk, so the schema's
-- text is edited in place (SQLite's documented procedure for such changes,
-- https://sqlite.org/lang_altertable.html section 7), the schema reloaded,
-- and every id rewritten as text; a check then refuses to go on unless both
-- columns read as TEXT.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, 'crm_order_id   INTEGER  UNIQUE', 'crm_order_id   TEXT     UNIQUE')
    WHERE type = 'table' AND name = 'sales_orders';
UPDATE sqlite_schema SET sql = replace(sql, 'crm_order_id   INTEGER,', 'crm_order_id   TEXT,')
    WHERE type = 'table' AND name = 'sales_intake_rejections';
PRAGMA writable_schema = RESET;
UPDATE sales_orders SET crm_order_id = CAST(crm_order_id AS TEXT) WHERE crm_order_id IS NOT NULL;
UPDATE sales_intake_rejections SET crm_order_id = CAST(crm_order_id AS TEXT) WHERE crm_order_id IS NOT NULL;
CREATE TEMP TABLE crm_order_ids_text_check (ok INTEGER NOT NULL CHECK (ok = 1));
INSERT INTO crm_order_ids_text_check
    SELECT (SELECT type FROM pragma_table_info('sales_orders') WHERE name = 'crm_order_id') = 'TEXT'
       AND (SELECT type FROM pragma_table_info('sales_intake_rejections') WHERE name = 'crm_order_id') = 'TEXT';
DROP TABLE crm_order_ids_text_check;

-- +goose Down
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, 'crm_order_id   TEXT     UNIQUE', 'crm_order_id   INTEGER  UNIQUE')
    WHERE type = 'table' AND name = 'sales_orders';
UPDATE sqlite_schema SET sql = replace(sql, 'crm_order_id   TEXT,', 'crm_order_id   INTEGER,')
    WHERE type = 'table' AND name = 'sales_intake_rejections';
PRAGMA writable_schema = RESET;
UPDATE sales_orders SET crm_order_id = CAST(crm_order_id AS INTEGER) WHERE crm_order_id IS NOT NULL;
UPDATE sales_intake_rejections SET crm_order_id = CAST(crm_order_id AS INTEGER) WHERE crm_order_id IS NOT NULL;
