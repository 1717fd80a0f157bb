package db

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"

	"github.com/tsekh/tsekh/internal/platform/textsearch"
)

// GoMigrations are the migrations that SQL cannot write, the same on both
// dialects; their versions are taken by no SQL file. Each call returns new
// values, as goose links the migrations of one provider together.
func GoMigrations() []*goose.Migration {
	return []*goose.Migration{
		goose.NewGoMigration(11, &goose.GoFunc{RunTx: customerSearchUp}, &goose.GoFunc{RunTx: customerSearchDown}),
		goose.NewGoMigration(34, &goose.GoFunc{RunTx: physicalStockUp}, &goose.GoFunc{RunTx: noDown}),
		goose.NewGoMigration(55, &goose.GoFunc{RunTx: planSchedulesUp}, &goose.GoFunc{RunTx: planSchedulesDown}),
	}
}

// customerSearchUp (00011) adds sales_orders.customer_search, the customer's
// name and phone folded for the orders list's customer filter
// (textsearch.Key, as sales writes it), and fills it for the orders there
// are: in Go, because neither database lowers Cyrillic reliably.
func customerSearchUp(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `ALTER TABLE sales_orders ADD COLUMN customer_search TEXT NOT NULL DEFAULT ''`); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, customer_name, customer_phone FROM sales_orders ORDER BY id`)
	if err != nil {
		return err
	}
	type order struct {
		id          int64
		name, phone string
	}
	var orders []order
	for rows.Next() {
		var o order
		if err := rows.Scan(&o.id, &o.name, &o.phone); err != nil {
			_ = rows.Close()
			return err
		}
		orders = append(orders, o)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, o := range orders {
		// $1 placeholders: both PostgreSQL and SQLite read them.
		if _, err := tx.ExecContext(ctx, `UPDATE sales_orders SET customer_search = $1 WHERE id = $2`,
			textsearch.Key(o.name, o.phone), o.id); err != nil {
			return fmt.Errorf("order %d: %w", o.id, err)
		}
	}
	return nil
}

func customerSearchDown(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `ALTER TABLE sales_orders DROP COLUMN customer_search`)
	return err
}
