package events

// The driver's conformance suite: every case runs against the PostgreSQL
// driver and the SQLite driver, on real, migrated databases, and checks what
// the statements read and write (TestDriver; TestStatements for the
// dispatcher's statements). The tests of the dispatcher's
// statements (store.go) are in driver_lanes_test.go.
//
// The suite is inside the package (the drivers are unexported), which
// cannot import dbtest (dbtest imports this package); driverDB makes the
// databases the way dbtest does, without its checks of the tests' events.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// driverCase is one case of the suite: fn runs on a database whose outbox
// tables are empty.
type driverCase struct {
	name string
	fn   func(t *testing.T, db *gorm.DB, drv driver)
}

// exercise runs the cases against each driver, as subtests "postgres/NAME"
// and "sqlite/NAME": one freshly migrated database a dialect, with the
// driver driverFor chooses for it, its outbox tables emptied before each case.
func exercise(t *testing.T, cases []driverCase) {
	t.Helper()
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			db := driverDB(t, d)
			drv := driverFor(db)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					emptyOutbox(t, db)
					c.fn(t, db, drv)
				})
			}
		})
	}
}

// outboxTables are the tables the suite writes, those referring to events first.
var outboxTables = []string{"events_delivery_failures", "events_deliveries", "events_batches", "events_compaction",
	"events_lanes", "events_replicas", "events_subscribers", "events"}

func emptyOutbox(t *testing.T, db *gorm.DB) {
	t.Helper()
	for _, table := range outboxTables {
		sqlExec(t, db, "DELETE FROM "+table)
	}
}

// driverDB returns a freshly migrated database of the dialect (a new
// PostgreSQL schema or a new SQLite file), removed when the test ends.
func driverDB(t *testing.T, d database.Dialect) *gorm.DB {
	t.Helper()
	ctx := context.Background()
	opts := database.Options{SQLitePath: filepath.Join(t.TempDir(), "tsekh.db")}
	if d == database.Postgres {
		base := testDatabaseURL()
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		schema := "t_" + hex.EncodeToString(b)
		admin, err := database.Open(ctx, database.Options{PostgresURL: base, MaxConns: 1})
		require.NoError(t, err, "PostgreSQL is required for this test")
		require.NoError(t, admin.Exec("CREATE SCHEMA "+schema).Error)
		t.Cleanup(func() {
			_ = admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error
			_ = database.Close(admin)
		})
		u, err := database.WithParams(base, "search_path", schema)
		require.NoError(t, err)
		opts = database.Options{PostgresURL: u}
	}
	db, err := database.Open(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = database.Close(db) })
	_, err = database.Migrate(ctx, db)
	require.NoError(t, err)
	return db
}

// writeEvent writes an event in a transaction of its own and returns its
// id and partition.
func writeEvent(t *testing.T, db *gorm.DB, ctx context.Context, ev New) (int64, int) {
	t.Helper()
	if ev.Payload == nil {
		ev.Payload = map[string]any{}
	}
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error { return Add(ctx, tx, ev) }))
	var row struct {
		ID        int64
		Partition int
	}
	require.NoError(t, database.Scan(db.Raw(`SELECT id, partition FROM events ORDER BY id DESC LIMIT 1`), &row))
	return row.ID, row.Partition
}

// writeEvents writes an event of each type about one object (so all in one
// partition) and returns their ids and the partition.
func writeEvents(t *testing.T, db *gorm.DB, types ...string) ([]int64, int) {
	t.Helper()
	var ids []int64
	part := 0
	for _, typ := range types {
		id, p := writeEvent(t, db, context.Background(), New{Type: typ, AggregateType: "things", AggregateID: 1})
		ids, part = append(ids, id), p
	}
	return ids, part
}

// times repeats typ n times.
func times(typ string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = typ
	}
	return out
}

func sqlExec(t *testing.T, db *gorm.DB, q string, args ...any) {
	t.Helper()
	require.NoError(t, db.Exec(q, args...).Error)
}

// at is a moment of the tests, whole milliseconds (both dialects keep them).
func at(minutes int) time.Time {
	return time.Date(2026, 3, 1, 12, minutes, 0, 0, time.UTC)
}

// addSubscriber records a registered subscriber of the types with a lane at
// position in every partition, through the driver.
func addSubscriber(t *testing.T, db *gorm.DB, drv driver, name string, position int64, types ...string) {
	t.Helper()
	ctx := context.Background()
	tl, err := json.Marshal(types)
	require.NoError(t, err)
	ok, err := drv.insertSubscriber(ctx, db, subscriberSpec{name: name, types: string(tl)})
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, drv.addLanes(ctx, db, name, position))
}

func addBatch(t *testing.T, db *gorm.DB, drv driver, part int, sub string, first, last int64, when time.Time) {
	t.Helper()
	sqlExec(t, db, `INSERT INTO events_batches (partition, subscriber, first_id, last_id, dispatched_at) VALUES (?, ?, ?, ?, ?)`,
		part, sub, first, last, sqlBaseOf(drv).timeArg(when))
}

func addDelivery(t *testing.T, db *gorm.DB, drv driver, id int64, part int, sub, status string, processed *time.Time) {
	t.Helper()
	var p any
	if processed != nil {
		p = sqlBaseOf(drv).timeArg(*processed)
	}
	sqlExec(t, db, `INSERT INTO events_deliveries (event_id, subscriber, partition, aggregate_type, aggregate_id, status, attempts, processed_at)
VALUES (?, ?, ?, 'things', 1, ?, 1, ?)`, id, sub, part, status, p)
}

func sqlBaseOf(drv driver) sqlBase {
	switch d := drv.(type) {
	case pgDriver:
		return d.sqlBase
	case sqliteDriver:
		return d.sqlBase
	}
	panic("unknown driver")
}

func testChosenByDialect(t *testing.T, db *gorm.DB, drv driver) {
	if database.DialectOf(db) == database.Postgres {
		require.IsType(t, pgDriver{}, drv)
		require.Zero(t, drv.maxWorkers(), "PostgreSQL serves as many batch transactions as the pool has connections")
	} else {
		require.IsType(t, sqliteDriver{}, drv)
		require.Equal(t, 1, drv.maxWorkers(), "SQLite has one writer")
	}
}

// TestDriver runs the cases against both drivers.
func TestDriver(t *testing.T) {
	exercise(t, []driverCase{
		{"ChosenByDialect", testChosenByDialect},
		{"ListFilters", testListFilters},
		{"ListCursor", testListCursor},
		{"ListStatus", testListStatus},
		{"HistoryIDs", testHistoryIDs},
		{"EventsWithPartition", testEventsWithPartition},
		{"WaitedSubscribersAndLanes", testWaitedSubscribersAndLanes},
		{"DeliveriesAndFailures", testDeliveriesAndFailures},
		{"ProcessedAt", testProcessedAt},
		{"ProcessedAtChunks", testProcessedAtChunks},
		{"RetryFailed", testRetryFailed},
		{"Backlog", testBacklog},
		{"Clock", testClock},
		{"SubscriberStats", testSubscriberStats},
		{"Rewind", testRewind},
		{"Retire", testRetire},
		{"Registration", testRegistration},
		{"Replicas", testReplicas},
		{"Leases", testLeases},
		{"Compaction", testCompaction},
		{"StreamSurvey", testStreamSurvey},
	})
}
