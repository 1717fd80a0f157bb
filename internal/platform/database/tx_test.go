package database_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// onePool opens a pool of one connection on a fresh PostgreSQL schema with a
// table t, so that a connection left in a bad state would break the next
// transaction.
func onePool(t *testing.T) *gorm.DB {
	t.Helper()
	opts := dbtest.Options(t, database.Postgres)
	opts.MaxConns = 1
	db, err := database.Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = database.Close(db) })
	require.NoError(t, db.Exec("CREATE TABLE t (n int PRIMARY KEY)").Error)
	return db
}

func rows(t *testing.T, db *gorm.DB) []int {
	t.Helper()
	var got []int
	require.NoError(t, database.Scan(db.Raw("SELECT n FROM t ORDER BY n"), &got))
	return got
}

func TestTx_HeldStatementsTravelWithTheCommit(t *testing.T) {
	db := onePool(t)
	err := db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, tx.Exec("INSERT INTO t VALUES (1)").Error)
		require.True(t, database.WithCommit(tx, "INSERT INTO t VALUES ($1)", 2))
		var n int64
		require.NoError(t, database.Scan(tx.Raw("SELECT count(*) FROM t"), &n))
		require.EqualValues(t, 1, n, "a held statement has not run before the commit")
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, rows(t, db))

	// Flush sends them early, so that the transaction sees what they wrote.
	err = db.Transaction(func(tx *gorm.DB) error {
		require.True(t, database.WithCommit(tx, "INSERT INTO t VALUES ($1)", 3))
		require.NoError(t, database.Flush(context.Background(), tx))
		var n int64
		require.NoError(t, database.Scan(tx.Raw("SELECT count(*) FROM t WHERE n = 3"), &n))
		require.EqualValues(t, 1, n)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3}, rows(t, db))

	// Outside a transaction there is nothing to hold statements for.
	require.False(t, database.WithCommit(db, "INSERT INTO t VALUES ($1)", 4))
}

func TestTx_RollbacksDropHeldStatements(t *testing.T) {
	db := onePool(t)
	boom := errors.New("boom")
	err := db.Transaction(func(tx *gorm.DB) error {
		require.True(t, database.WithCommit(tx, "INSERT INTO t VALUES ($1)", 1))
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Empty(t, rows(t, db))

	// A nested transaction is a savepoint: rolling back to it drops what was
	// held after it and keeps what was held before, however deep.
	err = db.Transaction(func(tx *gorm.DB) error {
		require.True(t, database.WithCommit(tx, "INSERT INTO t VALUES ($1)", 10))
		require.ErrorIs(t, tx.Transaction(func(sp *gorm.DB) error {
			require.True(t, database.WithCommit(sp, "INSERT INTO t VALUES ($1)", 11))
			require.NoError(t, sp.Transaction(func(sp2 *gorm.DB) error {
				require.True(t, database.WithCommit(sp2, "INSERT INTO t VALUES ($1)", 12))
				return nil
			}))
			require.True(t, database.WithCommit(sp, "INSERT INTO t VALUES ($1)", 13))
			return boom
		}), boom)
		require.NoError(t, tx.Transaction(func(sp *gorm.DB) error {
			require.True(t, database.WithCommit(sp, "INSERT INTO t VALUES ($1)", 14))
			return nil
		}))
		require.True(t, database.WithCommit(tx, "INSERT INTO t VALUES ($1)", 15))
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int{10, 14, 15}, rows(t, db))
}

func TestTx_AFailingHeldStatementFailsTheCommit(t *testing.T) {
	db := onePool(t)
	require.NoError(t, db.Exec("INSERT INTO t VALUES (1)").Error)
	err := db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, tx.Exec("INSERT INTO t VALUES (2)").Error)
		require.True(t, database.WithCommit(tx, "INSERT INTO t VALUES ($1)", 1)) // duplicate key
		require.True(t, database.WithCommit(tx, "INSERT INTO t VALUES ($1)", 3))
		return nil
	})
	require.Error(t, err)
	require.True(t, database.IsUniqueViolation(err), "the statement's own error comes back: %v", err)
	require.Equal(t, []int{1}, rows(t, db), "nothing of the transaction stays")

	// The pool's only connection is clean again.
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
		require.True(t, database.WithCommit(tx, "INSERT INTO t VALUES ($1)", 4))
		return nil
	}))
	require.Equal(t, []int{1, 4}, rows(t, db))
}

func TestTx_CommitOfAFailedTransactionIsAnError(t *testing.T) {
	db := onePool(t)
	for _, held := range []bool{false, true} {
		err := db.Transaction(func(tx *gorm.DB) error {
			if held {
				database.WithCommit(tx, "INSERT INTO t VALUES ($1)", 5)
			}
			_ = tx.Exec("INSERT INTO t VALUES ('not a number')").Error // ignored by mistake
			return nil
		})
		require.Error(t, err, "held=%v", held)
		require.Empty(t, rows(t, db))
	}
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error { return tx.Exec("INSERT INTO t VALUES (6)").Error }))
	require.Equal(t, []int{6}, rows(t, db))
}

// backendPID is the server process behind the pool's only connection. A
// connection that goes back to the pool inside a transaction is closed when
// it is next taken (pgx checks), so the same pid after a transaction means
// that the transaction was ended properly and its connection kept.
func backendPID(t *testing.T, db *gorm.DB) int {
	t.Helper()
	var pid int
	require.NoError(t, database.Scan(db.Raw("SELECT pg_backend_pid()"), &pid))
	return pid
}

func TestTx_BeginTravelsWithTheFirstStatement(t *testing.T) {
	db := onePool(t)
	pid := backendPID(t, db)
	notInTransaction := func(t *testing.T, db *gorm.DB) {
		t.Helper()
		require.Equal(t, pid, backendPID(t, db), "the connection was ended properly and kept")
	}
	xid := func(tx *gorm.DB) string {
		var x string
		require.NoError(t, database.Scan(tx.Raw("SELECT pg_current_xact_id()::text"), &x))
		return x
	}

	// A first statement without rows (the BEGIN goes with it) and one with
	// rows (the BEGIN goes first) both run inside the transaction.
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, tx.Exec("INSERT INTO t VALUES (1)").Error)
		var assigned *string
		require.NoError(t, database.Scan(tx.Raw("SELECT pg_current_xact_id_if_assigned()::text"), &assigned))
		require.NotNil(t, assigned, "the INSERT ran in this transaction")
		return nil
	}))
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
		first := xid(tx)
		require.Equal(t, first, xid(tx), "both statements ran in one transaction")
		return nil
	}))
	notInTransaction(t, db)

	// Rolled back, the first statement's write is gone.
	boom := errors.New("boom")
	require.ErrorIs(t, db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, tx.Exec("INSERT INTO t VALUES (2)").Error)
		return boom
	}), boom)
	require.Equal(t, []int{1}, rows(t, db))
	notInTransaction(t, db)

	// A transaction that sends nothing commits and rolls back without a
	// word to the server; one that only holds statements sends them all
	// with its BEGIN and COMMIT.
	require.NoError(t, db.Transaction(func(*gorm.DB) error { return nil }))
	require.ErrorIs(t, db.Transaction(func(*gorm.DB) error { return boom }), boom)
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
		require.True(t, database.WithCommit(tx, "INSERT INTO t VALUES ($1)", 3))
		return nil
	}))
	require.Equal(t, []int{1, 3}, rows(t, db))
	notInTransaction(t, db)

	// A first statement that fails when it runs (a duplicate key) and is
	// ignored by mistake still fails the commit.
	err := db.Transaction(func(tx *gorm.DB) error {
		_ = tx.Exec("INSERT INTO t VALUES (1)").Error
		return nil
	})
	require.Error(t, err)
	notInTransaction(t, db)
	require.Equal(t, []int{1, 3}, rows(t, db))
}
