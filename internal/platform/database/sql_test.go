package database_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// DeleteBatch deletes at most a batch, the first rows by its order among
// those its condition keeps, on both dialects.
func TestDeleteBatch(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.Exec("CREATE TABLE t_keys (a integer NOT NULL, b text NOT NULL, n integer NOT NULL, PRIMARY KEY (a, b))").Error)
		for i := 1; i <= 7; i++ {
			require.NoError(t, db.Exec("INSERT INTO t_keys (a, b, n) VALUES (?, ?, ?)", i%2, string(rune('a'+i)), 10-i).Error)
		}
		q := database.DeleteBatch(db, "t_keys", "(a, b)", "n < ?", "n")
		res := db.Exec(q, 8, 2) // n 3..7 match; the two smallest go
		require.NoError(t, res.Error)
		require.EqualValues(t, 2, res.RowsAffected)
		var left []int
		require.NoError(t, database.Scan(db.Raw("SELECT n FROM t_keys ORDER BY n"), &left))
		require.Equal(t, []int{5, 6, 7, 8, 9}, left)
	})
}

// BigReads holds for the rest of the transaction, and only for it.
func TestBigReads(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		if database.DialectOf(db) != database.Postgres {
			require.NoError(t, db.Transaction(database.BigReads))
			return
		}
		settings := func(db *gorm.DB) [2]string {
			var v [2]string
			require.NoError(t, db.Raw("SELECT current_setting('plan_cache_mode'), current_setting('max_parallel_workers_per_gather')").Row().Scan(&v[0], &v[1]))
			return v
		}
		before := settings(db)
		require.NotEqual(t, [2]string{"force_custom_plan", "0"}, before)
		require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
			require.NoError(t, database.BigReads(tx))
			require.Equal(t, [2]string{"force_custom_plan", "0"}, settings(tx))
			return nil
		}))
		require.Equal(t, before, settings(db))
	})
}

// NowText reads as RFC 3339 time, the database clock's (this machine's).
func TestNowText(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var v string
		require.NoError(t, database.Scan(db.Raw("SELECT "+database.NowText(db)), &v))
		at, err := time.Parse(time.RFC3339Nano, v)
		require.NoError(t, err, v)
		require.Equal(t, time.UTC, at.Location())
		require.WithinDuration(t, time.Now(), at, time.Minute)
	})
}

func TestTableExists(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		ok, err := database.TableExists(ctx, db, "events")
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = database.TableExists(ctx, db, "no_such_table")
		require.NoError(t, err)
		require.False(t, ok)
	})
}

// The lock helpers lock on PostgreSQL (a second transaction cannot take what
// the first holds) and do nothing, without error, on SQLite.
func TestLocks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		require.NoError(t, db.Exec("CREATE TABLE t_rows (id bigint PRIMARY KEY)").Error)
		require.NoError(t, db.Exec("INSERT INTO t_rows (id) VALUES (1), (2)").Error)
		pg := database.LocksRows(db)
		require.Equal(t, database.DialectOf(db) == database.Postgres, pg)

		tx := db.WithContext(ctx).Begin()
		require.NoError(t, tx.Error)
		defer tx.Rollback()
		var ids []int64
		require.NoError(t, database.ForUpdate(tx.Table("t_rows").Where("id = 1")).Pluck("id", &ids).Error)
		require.Equal(t, []int64{1}, ids)
		require.NoError(t, database.LockRows(tx, "SELECT id FROM t_rows WHERE id = 2 FOR UPDATE"))
		require.NoError(t, database.LockKey(tx, 0x7465737401))
		require.NoError(t, database.LockName(tx, "test.name"))
		require.NoError(t, database.LockClassName(tx, 0x74657374, "test.key"))
		if !pg {
			return
		}
		// Another session finds each of them taken.
		other := db.WithContext(ctx) // the pool's other connections
		for _, q := range []string{
			"SELECT id FROM t_rows WHERE id = 1 FOR UPDATE NOWAIT",
			"SELECT id FROM t_rows WHERE id = 2 FOR UPDATE NOWAIT",
		} {
			err := other.Transaction(func(o *gorm.DB) error { return o.Exec(q).Error })
			require.Error(t, err, q)
		}
		locks := []string{
			"SELECT pg_try_advisory_xact_lock(hashtextextended(current_schema(), 499918271489))",
			"SELECT pg_try_advisory_xact_lock(hashtextextended(current_schema() || '/' || 'test.name', 0))",
			"SELECT pg_try_advisory_xact_lock(1952805748, hashtext(current_schema() || '/' || 'test.key'))",
		}
		for _, q := range locks {
			var got bool
			require.NoError(t, other.Transaction(func(o *gorm.DB) error { return database.Scan(o.Raw(q), &got) }))
			require.False(t, got, q)
		}
		// A session on another schema of the database takes each: the
		// locks are the schema's, as its data is.
		elsewhere := dbtest.New(t, database.Postgres)
		for _, q := range locks {
			var got bool
			require.NoError(t, elsewhere.Transaction(func(o *gorm.DB) error { return database.Scan(o.Raw(q), &got) }))
			require.True(t, got, q)
		}
	})
}

// A schema lock is one holder's at a time, until Release.
func TestTryLockSchema(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		l, ok, err := database.TryLockSchema(ctx, db, 0x74657374)
		require.NoError(t, err)
		require.True(t, ok)
		if database.DialectOf(db) == database.Postgres {
			_, ok, err = database.TryLockSchema(ctx, db, 0x74657374)
			require.NoError(t, err)
			require.False(t, ok, "taken twice")
		}
		require.NoError(t, l.Release())
		l, ok, err = database.TryLockSchema(ctx, db, 0x74657374)
		require.NoError(t, err)
		require.True(t, ok, "not released")
		require.NoError(t, l.Release())
	})
}

// InBatches hands every id over once, in order, IDBatch at a time, and
// stops at the first error.
func TestInBatches(t *testing.T) {
	ids := make([]int64, 2*database.IDBatch+7)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	var sizes []int
	var seen []int64
	require.NoError(t, database.InBatches(ids, func(b []int64) error {
		sizes = append(sizes, len(b))
		seen = append(seen, b...)
		return nil
	}))
	require.Equal(t, []int{database.IDBatch, database.IDBatch, 7}, sizes)
	require.Equal(t, ids, seen)
	calls := 0
	err := database.InBatches(ids, func([]int64) error { calls++; return context.Canceled })
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, calls)
	require.NoError(t, database.InBatches(nil, func([]int64) error { t.Fatal("no ids, no call"); return nil }))
}
