package events

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// sqlBase holds the statements both dialects share (this file's and those
// of driver_journal.go, driver_subscribers.go, driver_compaction.go and
// driver_deliveries.go). Where a statement needs the database clock or a
// time to compare with a column the clock wrote, it takes the dialect's
// expression from these methods.
type sqlBase struct{ dialect database.Dialect }

// now is the database clock's current time.
func (b sqlBase) now() string { return b.dialect.Now() }

// nowPlus is the database clock's time d from now.
func (b sqlBase) nowPlus(d time.Duration) string { return b.dialect.NowPlus(d) }

// timeArg is t as an argument to compare with created_at.
func (b sqlBase) timeArg(t time.Time) any { return b.dialect.TimeArg(t) }

// sqlWhere gathers the conditions of a query and their arguments, in order.
type sqlWhere struct {
	conds []string
	args  []any
}

func (w *sqlWhere) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *sqlWhere) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// The stream's statement both dialects share.

func (sqlBase) newestID(ctx context.Context, db *gorm.DB) (int64, error) {
	var id int64
	err := db.WithContext(ctx).Raw("SELECT coalesce(max(id), 0) FROM events").Row().Scan(&id)
	return id, err
}
