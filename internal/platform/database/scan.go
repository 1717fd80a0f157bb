package database

import (
	"errors"

	"gorm.io/gorm"
)

// Scan runs the query q (a Raw statement, or a query built with Model,
// Select, Where, …) and scans its result into dest as gorm's own Scan does:
// every row into a slice, the first row into a struct or a single value,
// dest left as it was when there is no row.
//
// Every read of tsekh's that scans goes through here rather than through
// gorm's (*DB).Scan (make lint forbids that one): gorm's Scan has a
// recording logger trace the statement, and the recorder renders the SQL
// with its arguments written in (the dialect's Explain, a regular
// expression over the whole statement) on every call, whether or not
// anything is logged. Here the statement goes through the database's own
// logger, as a Find does, which renders it only when it logs it (Open's
// logger never does).
func Scan(q *gorm.DB, dest any) error {
	rows, err := q.Rows()
	if err != nil {
		return err
	}
	if rows.Next() {
		err = q.ScanRows(rows, dest)
	} else {
		err = rows.Err()
	}
	return errors.Join(err, rows.Close())
}
