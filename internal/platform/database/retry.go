package database

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// TxAttempts is how many times Transaction runs a transaction that PostgreSQL
// aborted as a deadlock victim or a serialization failure.
const TxAttempts = 5

// txRetryBase is the delay before Transaction's second run; it doubles per
// run, and a random half of it is jitter, so that the transactions that
// collided do not collide again in step.
const txRetryBase = 10 * time.Millisecond

// IsTxConflict tells whether err is PostgreSQL aborting the transaction
// because it collided with another: a deadlock (40P01) or a serialization
// failure (40001). Such a transaction has been rolled back whole, and running
// it again from the start is safe.
func IsTxConflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// Transaction runs fn in a transaction of db, as db.Transaction does, and
// runs it again from the start, up to TxAttempts times in all with a short
// jittered back-off, when PostgreSQL aborts it as a deadlock victim or a
// serialization failure: a collision of two transactions is not the
// client's fault and must not reach it. fn must do nothing outside the
// database that cannot be repeated. Inside a transaction already (db is a
// tx), fn runs once in a savepoint and nothing is retried here: half a
// transaction cannot be run again, the outermost one is.
func Transaction(ctx context.Context, db *gorm.DB, fn func(tx *gorm.DB) error) error {
	db = db.WithContext(ctx)
	if InTx(db) {
		return db.Transaction(fn)
	}
	delay := txRetryBase
	for attempt := 1; ; attempt++ {
		err := db.Transaction(fn)
		if err == nil || attempt >= TxAttempts || !IsTxConflict(err) {
			return err
		}
		half := delay / 2
		t := time.NewTimer(half + rand.N(half+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay *= 2
	}
}
