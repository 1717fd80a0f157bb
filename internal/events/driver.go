package events

import (
	"context"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// driver holds every statement of the outbox: writing an event, the
// dispatcher's passes (survey, claim, the batch's read, the lane's move and
// its fence, release, renewal: statements, store.go), the announcements of
// commits and their listener (listener.go), the journal, the subscribers
// and their registration, compaction, the live stream and the leases of
// gone owners. One driver a dialect (pgDriver, sqliteDriver) is chosen by
// driverFor, the one place that asks which database it talks to; the logic
// files above it hold no SQL and no dialect branches. The statements both
// dialects share are sqlBase's, each group in a file of its own with its
// interface: the journal's (driver_journal.go), the subscribers' and their
// registration's (driver_subscribers.go), compaction's
// (driver_compaction.go), the deliveries' (driver_deliveries.go), and the
// rest (driver_shared.go). The conformance suite (driver_test.go and the
// driver_*_test.go files) runs every method against both drivers, and
// TestDriver_EveryMethodHasACase keeps it so.
type driver interface {
	writeStatements
	statements
	listenerStatements
	deliveryStatements
	journalStatements
	subscriberStatements
	registrationStatements
	compactionStatements
	streamStatements
}

// streamStatements serve the live journal.
type streamStatements interface {
	// streamSurvey reads the highest event id visible and, where commits
	// may come out of order, the transactions writing events and which of
	// pending still run, in one snapshot; where they may not (one writer
	// at a time), it says that what is visible is final.
	streamSurvey(ctx context.Context, db *gorm.DB, pending []string) (surveyed, error)
	// newestID reads the highest event id visible, 0 for an empty journal.
	newestID(ctx context.Context, db *gorm.DB) (int64, error)
}

// writeStatements write events.
type writeStatements interface {
	// insertEvent writes one event in its owner's transaction tx.
	insertEvent(ctx context.Context, tx *gorm.DB, row newEventRow) error
}

// newEventRow is an event as Add writes it: its id and creation time come from
// the database.
type newEventRow struct {
	typ, aggType            string
	aggID                   int64
	part                    int
	payload                 string
	actorID                 *int64
	actorName               *string
	causedBy                *int64
	correlation             *string
	traceparent, tracestate *string
}

// drivers are the two drivers: a driver depends on nothing but its
// dialect, so each is one value, and events.Add, on the owner's write path,
// takes it as it is.
var drivers = struct{ pg, sqlite driver }{
	pg:     pgDriver{sqlBase{database.Postgres}, pgStatements{}},
	sqlite: sqliteDriver{sqlBase{database.SQLite}, sqliteStatements{}},
}

// driverFor chooses the driver of db's dialect; it is the one place that
// asks which database db talks to.
func driverFor(db *gorm.DB) driver {
	if database.DialectOf(db) == database.Postgres {
		return drivers.pg
	}
	return drivers.sqlite
}
