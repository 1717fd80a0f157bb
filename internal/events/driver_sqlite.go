package events

import (
	"context"

	"gorm.io/gorm"
)

// sqliteDriver is the outbox's driver for SQLite, which has one writer at a
// time: events commit in the order of their ids.
type sqliteDriver struct{ sqlBase }

func (sqliteDriver) ordered() bool { return true }

// streamSurvey reads the highest id visible; with one writer, every event
// below it has committed.
func (s sqliteDriver) streamSurvey(ctx context.Context, db *gorm.DB, _ []string) (surveyed, error) {
	visible, err := s.newestID(ctx, db)
	return surveyed{visible: visible}, err
}
