package apptest

import (
	"fmt"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// FailInserts makes every insert into table fail with "injected failure"
// (when column = value, if column is not empty), through a trigger in the
// test's own database, so a test can break a transaction half-way.
func (e *Env) FailInserts(table, column, value string) {
	e.T.Helper()
	cond := ""
	if column != "" {
		cond = fmt.Sprintf("NEW.%s = '%s'", column, value)
	}
	db := e.App.DB
	name := "fail_" + table
	if e.Dialect == database.SQLite {
		when := ""
		if cond != "" {
			when = " WHEN " + cond
		}
		require.NoError(e.T, db.Exec(fmt.Sprintf(`CREATE TRIGGER %s BEFORE INSERT ON %s%s BEGIN SELECT RAISE(ABORT, 'injected failure'); END`, name, table, when)).Error)
		return
	}
	check := ""
	if cond != "" {
		check = "IF " + cond + " THEN "
	}
	end := ""
	if cond != "" {
		end = " END IF;"
	}
	require.NoError(e.T, db.Exec(fmt.Sprintf(`CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN %s RAISE EXCEPTION 'injected failure';%s RETURN NEW; END; $$`, name, check, end)).Error)
	require.NoError(e.T, db.Exec(fmt.Sprintf(`CREATE TRIGGER %s BEFORE INSERT ON %s FOR EACH ROW EXECUTE FUNCTION %s()`, name, table, name)).Error)
}

// Count returns the number of rows of a table.
func (e *Env) Count(table string) int64 {
	e.T.Helper()
	var n int64
	require.NoError(e.T, database.Scan(e.App.DB.Raw("SELECT count(*) FROM "+table), &n))
	return n
}
