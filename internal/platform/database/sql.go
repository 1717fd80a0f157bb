package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// The helpers below say what a service needs of the database (a row lock,
// a lock of a name, a batch deletion, …) and write it in the dialect of the
// database behind gdb, so that no service branches on the dialect itself.
//
// Locks: PostgreSQL serves many writers at once, whose transactions take
// row and advisory locks to take turns; SQLite runs on one connection (see
// Open), one writer at a time, so it needs none and the lock helpers do
// nothing there.

// ForUpdate adds FOR UPDATE to the query q: the rows it reads stay locked
// until its transaction ends (PostgreSQL).
func ForUpdate(q *gorm.DB) *gorm.DB {
	if DialectOf(q) != Postgres {
		return q
	}
	return q.Clauses(clause.Locking{Strength: "UPDATE"})
}

// LockRows runs query, a SELECT … FOR UPDATE, for the row locks it takes
// until tx ends (PostgreSQL).
func LockRows(tx *gorm.DB, query string, args ...any) error {
	if DialectOf(tx) != Postgres {
		return nil
	}
	return tx.Exec(query, args...).Error
}

// LocksRows tells whether transactions on gdb lock the rows they are about
// to change (PostgreSQL): a caller that must read something only to know
// which rows to lock can skip the read where nothing is locked.
func LocksRows(gdb *gorm.DB) bool { return DialectOf(gdb) == Postgres }

// LockKey takes the transaction's lock of key in the current schema, held
// until tx ends: transactions that lock the same key take turns
// (PostgreSQL's pg_advisory_xact_lock). The lock is the schema's, as the
// data it guards is: a service on another schema of the same database (a
// test's, another factory's) has its own.
func LockKey(tx *gorm.DB, key int64) error {
	if DialectOf(tx) != Postgres {
		return nil
	}
	return tx.Exec("SELECT pg_advisory_xact_lock(hashtextextended(current_schema(), ?))", key).Error
}

// BigReads readies the rest of the transaction, on PostgreSQL, for
// statements that read a large share of big tables under a lock others
// wait for (the plan's whole live load), until tx ends:
//   - each statement is planned for its own arguments
//     (plan_cache_mode = force_custom_plan): after five runs of a prepared
//     statement PostgreSQL may keep a generic plan, and the generic plan of
//     the plan's load guessed that one operation was not done and looked
//     its order up 100,000 times (175 ms where a hash join takes 37);
//   - without parallel workers (max_parallel_workers_per_gather = 0):
//     their start and gathering cost more than they save on such scans on
//     a small machine (118 ms against 37), and they take the cores the
//     waiting requests need.
//
// Nothing to do on SQLite.
func BigReads(tx *gorm.DB) error {
	if DialectOf(tx) != Postgres {
		return nil
	}
	if err := tx.Exec("SET LOCAL plan_cache_mode = force_custom_plan").Error; err != nil {
		return err
	}
	return tx.Exec("SET LOCAL max_parallel_workers_per_gather = 0").Error
}

// LockName is LockKey for a lock named by text (hashed by the database).
func LockName(tx *gorm.DB, name string) error {
	if DialectOf(tx) != Postgres {
		return nil
	}
	return tx.Exec("SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '/' || ?, 0))", name).Error
}

// LockClassName is LockName for a name within a class of locks (a number
// of the package that takes them), so that classes never share a lock.
func LockClassName(tx *gorm.DB, class int32, name string) error {
	if DialectOf(tx) != Postgres {
		return nil
	}
	return tx.Exec("SELECT pg_advisory_xact_lock(?, hashtext(current_schema() || '/' || ?))", class, name).Error
}

// SchemaLock is a lock of one class in the current schema, held by a
// database session of its own (see TryLockSchema).
type SchemaLock struct {
	conn  *sql.Conn // nil on SQLite
	class int32
}

// errNotReleased says that the database did not hold a lock it was asked to
// release.
var errNotReleased = errors.New("the lock was not held")

// TryLockSchema takes, without waiting, the lock of class in the current
// schema, for work that one process at a time does on a database: ok is
// false when another session holds it. On PostgreSQL it is a session
// advisory lock on a connection kept out of the pool until Release; on
// SQLite, a database of one process, there is nothing to take (ok is true,
// and the process's own exclusion is the lock).
func TryLockSchema(ctx context.Context, gdb *gorm.DB, class int32) (l *SchemaLock, ok bool, err error) {
	if DialectOf(gdb) != Postgres {
		return &SchemaLock{class: class}, true, nil
	}
	pool, err := gdb.DB()
	if err != nil {
		return nil, false, err
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, false, err
	}
	err = conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1, hashtext(current_schema()))", class).Scan(&ok)
	if err != nil || !ok {
		_ = conn.Close()
		return nil, false, err
	}
	return &SchemaLock{conn: conn, class: class}, true, nil
}

// Release releases the lock and gives its connection back. When the release
// cannot be confirmed it returns why, and closes the connection instead: the
// session's end releases the lock, and a pooled session must never keep it.
func (l *SchemaLock) Release() error {
	if l.conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var released bool
	err := l.conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1, hashtext(current_schema()))", l.class).Scan(&released)
	if err == nil && !released {
		err = errNotReleased
	}
	if err != nil {
		_ = l.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = l.conn.Close()
	return err
}

// DeleteBatch returns a DELETE of at most a batch of table's rows that match
// where, the first by order: the batch size is the statement's last
// argument (after where's own). key names the table's key columns, as
// "(a, b)" or "id". On PostgreSQL the rows other transactions hold locked
// are skipped, so that deleters at once never wait for each other; SQLite
// picks the rows by rowid.
func DeleteBatch(gdb *gorm.DB, table, key, where, order string) string {
	if DialectOf(gdb) == SQLite {
		return `DELETE FROM ` + table + ` WHERE rowid IN (
SELECT rowid FROM ` + table + ` WHERE ` + where + `
ORDER BY ` + order + ` LIMIT ?)`
	}
	return `DELETE FROM ` + table + ` WHERE ` + key + ` IN (
SELECT ` + strings.Trim(key, "()") + ` FROM ` + table + ` WHERE ` + where + `
ORDER BY ` + order + ` LIMIT ? FOR UPDATE SKIP LOCKED)`
}

// NowText is the SQL expression for the database clock's current time as
// RFC 3339 text in UTC ("2026-11-15T09:30:00.123456Z"; milliseconds on
// SQLite).
func NowText(gdb *gorm.DB) string {
	if DialectOf(gdb) == Postgres {
		return `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
	}
	return "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
}

// TableExists tells whether the current schema has the table.
func TableExists(ctx context.Context, gdb *gorm.DB, table string) (bool, error) {
	q := "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	if DialectOf(gdb) == Postgres {
		q = "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = ?"
	}
	var n int
	err := Scan(gdb.WithContext(ctx).Raw(q, table), &n)
	return n > 0, err
}

// Embedded tells whether gdb is the embedded SQLite file, a database of one
// process (a trial or a small shop), rather than a PostgreSQL server.
func Embedded(gdb *gorm.DB) bool { return DialectOf(gdb) == SQLite }

// IDBatch is the most ids one statement's IN list takes: well inside
// SQLite's bound on a statement's parameters and PostgreSQL's on a
// message's.
const IDBatch = 500

// InBatches calls fn with the ids IDBatch at a time, in order, and stops
// at its first error.
func InBatches(ids []int64, fn func([]int64) error) error {
	for len(ids) > 0 {
		n := min(len(ids), IDBatch)
		if err := fn(ids[:n]); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}
