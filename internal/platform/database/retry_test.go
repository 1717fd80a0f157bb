package database_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// Two transactions that lock two rows the other way round deadlock on their
// first run; PostgreSQL aborts one, and Transaction runs it again from the
// start: both succeed, each row's count is bumped once per transaction. A
// transaction inside another is not retried on its own.
func TestTransaction_RetriesDeadlocks(t *testing.T) {
	db := dbtest.New(t, database.Postgres)
	ctx := context.Background()
	require.NoError(t, db.Exec(`CREATE TABLE pair (id int PRIMARY KEY, n int NOT NULL)`).Error)
	require.NoError(t, db.Exec(`INSERT INTO pair VALUES (1, 0), (2, 0)`).Error)
	var runs atomic.Int32
	var first sync.WaitGroup // both hold their first row before either takes its second
	first.Add(2)
	var once [2]sync.Once
	lock := func(i int, a, b int) error {
		return database.Transaction(ctx, db, func(tx *gorm.DB) error {
			runs.Add(1)
			if err := tx.Exec("UPDATE pair SET n = n + 1 WHERE id = ?", a).Error; err != nil {
				return err
			}
			once[i].Do(func() { first.Done(); first.Wait() })
			return tx.Exec("UPDATE pair SET n = n + 1 WHERE id = ?", b).Error
		})
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = lock(0, 1, 2) }()
	go func() { defer wg.Done(); errs[1] = lock(1, 2, 1) }()
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.GreaterOrEqual(t, runs.Load(), int32(3), "the deadlock victim ran again")
	var ns []int
	require.NoError(t, database.Scan(db.Raw("SELECT n FROM pair ORDER BY id"), &ns))
	require.Equal(t, []int{2, 2}, ns)

	// Inside a transaction, the conflict goes to the outermost one.
	var inner int
	err := db.Transaction(func(tx *gorm.DB) error {
		return database.Transaction(ctx, tx, func(tx *gorm.DB) error {
			inner++
			return tx.Exec("SELECT 1/0").Error
		})
	})
	require.Error(t, err)
	require.Equal(t, 1, inner)
}
