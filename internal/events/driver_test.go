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
	"os"
	"path/filepath"
	"strconv"
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
		base := os.Getenv("TEST_DATABASE_URL")
		if base == "" {
			base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
		}
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

// listed runs listIDs with the filter, newest first, and returns the ids.
func listed(t *testing.T, db *gorm.DB, drv driver, q listQuery) []int64 {
	t.Helper()
	if q.limit == 0 {
		q.limit = 100
	}
	ids, err := drv.listIDs(context.Background(), db, q)
	require.NoError(t, err)
	return ids
}

// Each filter of the journal keeps exactly the events it names: a filter
// the driver ignored would list every event and fail its case.
func testListFilters(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	a1, _ := writeEvent(t, db, ctx, New{Type: "thing.created", AggregateType: "things", AggregateID: 1})
	actx := WithActor(ctx, Actor{ID: 7, Name: "ann"})
	a2, _ := writeEvent(t, db, actx, New{Type: "thing.changed", AggregateType: "things", AggregateID: 1})
	b1, _ := writeEvent(t, db, ctx, New{Type: "thing.created", AggregateType: "gadgets", AggregateID: 2})
	sqlExec(t, db, `UPDATE events SET caused_by = ?, correlation_id = 'corr-1' WHERE id = ?`, a1, b1)
	for i, id := range []int64{a1, a2, b1} {
		sqlExec(t, db, `UPDATE events SET created_at = ? WHERE id = ?`, sqlBaseOf(drv).timeArg(at(10*(i+1))), id)
	}
	cases := []struct {
		name string
		f    Filter
		want []int64
	}{
		{"none", Filter{}, []int64{b1, a2, a1}},
		{"type", Filter{Type: "thing.created"}, []int64{b1, a1}},
		{"aggregate type", Filter{AggregateType: "things"}, []int64{a2, a1}},
		{"aggregate id", Filter{AggregateID: 2}, []int64{b1}},
		{"actor", Filter{ActorID: 7}, []int64{a2}},
		{"hidden aggregate types", Filter{HideAggregateTypes: []string{"gadgets"}}, []int64{a2, a1}},
		{"after id", Filter{AfterID: a1}, []int64{b1, a2}},
		{"up to id", Filter{UpToID: a2}, []int64{a2, a1}},
		{"caused by", Filter{CausedBy: a1}, []int64{b1}},
		{"correlation", Filter{CorrelationID: "corr-1"}, []int64{b1}},
		{"since", Filter{Since: at(20)}, []int64{b1, a2}},
		{"until", Filter{Until: at(20)}, []int64{a1}},
		{"since and until", Filter{Since: at(15), Until: at(25)}, []int64{a2}},
		{"oldest first", Filter{Oldest: true}, []int64{a1, a2, b1}},
		{"two filters", Filter{Type: "thing.created", AggregateType: "things"}, []int64{a1}},
	}
	for _, c := range cases {
		require.Equal(t, c.want, listed(t, db, drv, listQuery{Filter: c.f}), c.name)
	}
}

// The page's cursor lists the ids below it (above it, oldest first), and
// the limit cuts the list.
func testListCursor(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	var ids []int64
	for i := range 5 {
		id, _ := writeEvent(t, db, ctx, New{Type: "thing.created", AggregateType: "things", AggregateID: int64(i)})
		ids = append(ids, id)
	}
	require.Equal(t, []int64{ids[4], ids[3]}, listed(t, db, drv, listQuery{limit: 2}))
	require.Equal(t, []int64{ids[2], ids[1]}, listed(t, db, drv, listQuery{after: ids[3], limit: 2}))
	require.Equal(t, []int64{ids[0]}, listed(t, db, drv, listQuery{after: ids[1], limit: 2}))
	require.Equal(t, []int64{ids[2], ids[3]}, listed(t, db, drv, listQuery{Filter: Filter{Oldest: true}, after: ids[1], limit: 2}))
}

// The status filters weigh the subscribers the journal waits for: their
// lanes' positions, their open and failed deliveries, and where they start.
func testListStatus(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	ids, part := writeEvents(t, db, times("thing.created", 5)...)
	other, _ := writeEvent(t, db, ctx, New{Type: "thing.ignored", AggregateType: "things", AggregateID: 1})
	// The subscriber starts after ids[0], has passed ids[1..3] and
	// not ids[4]; ids[2] failed, ids[3] retries.
	addSubscriber(t, db, drv, "s", ids[0], "thing.created")
	sqlExec(t, db, `UPDATE events_lanes SET position = ? WHERE subscriber = 's'`, ids[3])
	addDelivery(t, db, drv, ids[2], part, "s", StatusFailed, nil)
	addDelivery(t, db, drv, ids[3], part, "s", StatusRetrying, nil)
	subs, err := drv.waitedSubscribers(ctx, db)
	require.NoError(t, err)
	status := func(s string) []int64 {
		return listed(t, db, drv, listQuery{Filter: Filter{Status: s, Oldest: true}, subs: subs})
	}
	require.Equal(t, []int64{ids[2]}, status(StatusFailed))
	require.Equal(t, []int64{ids[3], ids[4]}, status(StatusPending))
	require.Equal(t, []int64{ids[0], ids[1], other}, status(StatusProcessed))
	// With no subscriber waited for, every event is processed.
	require.Equal(t, append(append([]int64{}, ids...), other),
		listed(t, db, drv, listQuery{Filter: Filter{Status: StatusProcessed, Oldest: true}}))
	require.Empty(t, listed(t, db, drv, listQuery{Filter: Filter{Status: StatusFailed}}))
}

func testHistoryIDs(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	a, _ := writeEvent(t, db, ctx, New{Type: "thing.created", AggregateType: "things", AggregateID: 1})
	writeEvent(t, db, ctx, New{Type: "thing.created", AggregateType: "things", AggregateID: 2})
	b, _ := writeEvent(t, db, ctx, New{Type: "thing.created", AggregateType: "gadgets", AggregateID: 1})
	c, _ := writeEvent(t, db, ctx, New{Type: "thing.changed", AggregateType: "things", AggregateID: 1})
	objs := []Objects{{AggregateType: "things", IDs: []int64{1}}, {AggregateType: "gadgets", IDs: []int64{1}}, {AggregateType: "none"}}
	got, err := drv.historyIDs(ctx, db, objs, 0, 10)
	require.NoError(t, err)
	require.Equal(t, []int64{a, b, c}, got)
	got, err = drv.historyIDs(ctx, db, objs, a, 1)
	require.NoError(t, err)
	require.Equal(t, []int64{b}, got)
	got, err = drv.historyIDs(ctx, db, []Objects{{AggregateType: "things"}}, 0, 10)
	require.NoError(t, err)
	require.Empty(t, got)
}

// Events written with Add read back whole, with their partition.
func testEventsWithPartition(t *testing.T, db *gorm.DB, drv driver) {
	ctx := WithActor(context.Background(), Actor{ID: 3, Name: "bob"})
	id, part := writeEvent(t, db, ctx, New{Type: "thing.created", AggregateType: "things", AggregateID: 42, Payload: map[string]any{"n": 1}})
	require.Equal(t, PartitionOf("things", 42), part)
	ok, err := drv.eventExists(ctx, db, id)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = drv.eventExists(ctx, db, id+1)
	require.NoError(t, err)
	require.False(t, ok)
	evs, parts, err := drv.eventsWithPartition(ctx, db, []int64{id, id + 1})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	ev := evs[0]
	require.Equal(t, id, ev.ID)
	require.Equal(t, "thing.created", ev.Type)
	require.Equal(t, "things", ev.AggregateType)
	require.Equal(t, int64(42), ev.AggregateID)
	require.JSONEq(t, `{"n": 1}`, string(ev.Payload))
	require.Equal(t, &Actor{ID: 3, Name: "bob"}, ev.Actor)
	require.WithinDuration(t, time.Now(), ev.CreatedAt, time.Minute)
	require.Equal(t, map[int64]int{id: part}, parts)
}

// The journal waits for the registered subscribers that are not retired, in
// the order they were registered, and reads every lane.
func testWaitedSubscribersAndLanes(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	addSubscriber(t, db, drv, "zed", 5, "thing.created", "thing.changed")
	addSubscriber(t, db, drv, "amy", 0, "thing.created")
	addSubscriber(t, db, drv, "old", 0)
	require.NoError(t, drv.retire(ctx, db, "old"))
	sqlExec(t, db, `INSERT INTO events_subscribers (name, types) VALUES ('unregistered', '[]')`)
	subs, err := drv.waitedSubscribers(ctx, db)
	require.NoError(t, err)
	require.Len(t, subs, 2)
	require.Equal(t, "zed", subs[0].name)
	require.Equal(t, []string{"thing.created", "thing.changed"}, subs[0].typeList)
	require.True(t, subs[0].types["thing.changed"])
	require.Equal(t, "amy", subs[1].name)
	sqlExec(t, db, `UPDATE events_lanes SET position = 9 WHERE subscriber = 'zed' AND partition = 3`)
	lanes, err := drv.laneStates(ctx, db)
	require.NoError(t, err)
	require.Len(t, lanes, 2*Partitions)
	require.Equal(t, laneState{position: 9, start: 5}, lanes[laneKey{"zed", 3}])
	require.Equal(t, laneState{position: 5, start: 5}, lanes[laneKey{"zed", 4}])
	require.Equal(t, laneState{}, lanes[laneKey{"amy", 0}])
}

func testDeliveriesAndFailures(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	id, part := writeEvent(t, db, ctx, New{Type: "thing.created", AggregateType: "things", AggregateID: 1})
	id2, _ := writeEvent(t, db, ctx, New{Type: "thing.created", AggregateType: "things", AggregateID: 1})
	addDelivery(t, db, drv, id, part, "a", StatusFailed, nil)
	addDelivery(t, db, drv, id, part, "b", StatusHeld, nil)
	sqlExec(t, db, `UPDATE events_deliveries SET last_error = 'down', attempts = 3, blocked_by = ? WHERE subscriber = 'b'`, id2)
	for seq, status := range []any{503, nil} {
		sqlExec(t, db, `INSERT INTO events_delivery_failures (event_id, subscriber, seq, failed_at, error, http_status, spent) VALUES (?, 'a', ?, ?, ?, ?, ?)`,
			id, seq+1, sqlBaseOf(drv).timeArg(at(seq)), "fail", status, seq == 1)
	}
	got, err := drv.deliveries(ctx, db, []int64{id, id2})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, StatusFailed, got[id]["a"].Status)
	b := got[id]["b"]
	require.Equal(t, StatusHeld, b.Status)
	require.Equal(t, 3, b.Attempts)
	require.Equal(t, "down", b.LastError)
	require.Equal(t, &id2, b.BlockedBy)
	fs, err := drv.failures(ctx, db, []int64{id})
	require.NoError(t, err)
	require.Len(t, fs, 2)
	require.Equal(t, "a", fs[0].sub)
	require.Equal(t, at(0), fs[0].At)
	require.Equal(t, 503, *fs[0].HTTPStatus)
	require.False(t, fs[0].Spent)
	require.Nil(t, fs[1].HTTPStatus)
	require.True(t, fs[1].Spent)
}

// processedAt takes each delivery's time from its own source, in order:
// the delivery's row, the subscriber's batch, settled_at, a batch from
// before lanes.
func testProcessedAt(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	ids, part := writeEvents(t, db, times("thing.created", 6)...)
	// ids[0]: a recorded success; the batch also covering it does not count.
	// ids[1]: a recorded failure: no time, whatever the batch says.
	// ids[2]: the subscriber's own batch, before settled_at and the shared batch.
	// ids[3]: settled_at (compacted), before the shared batch.
	// ids[4]: only the batch from before lanes.
	// ids[5]: nothing: no time.
	done := at(1)
	addDelivery(t, db, drv, ids[0], part, "s", StatusProcessed, &done)
	addDelivery(t, db, drv, ids[1], part, "s", StatusFailed, nil)
	addBatch(t, db, drv, part, "s", ids[0], ids[2], at(2))
	addBatch(t, db, drv, part, "", ids[0], ids[4], at(4))
	require.NoError(t, drv.settle(ctx, db, part, ids[2], ids[3], at(3)))
	var ds []deliveryAt
	for _, id := range ids {
		ds = append(ds, deliveryAt{eventID: id, part: part, sub: "s"})
	}
	require.NoError(t, drv.processedAt(ctx, db, ds))
	want := []*time.Time{&done, nil, ptrTime(at(2)), ptrTime(at(3)), ptrTime(at(4)), nil}
	for i, d := range ds {
		require.Equal(t, want[i], d.at, "event %d", i)
	}
	// Another subscriber's batch is not this one's.
	other := []deliveryAt{{eventID: ids[2], part: part, sub: "t"}}
	require.NoError(t, drv.processedAt(ctx, db, other))
	require.Equal(t, ptrTime(at(3)), other[0].at)
}

// processedAt asks in chunks; every delivery of a long list gets its time.
func testProcessedAtChunks(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	id, part := writeEvent(t, db, ctx, New{Type: "thing.created", AggregateType: "things", AggregateID: 1})
	addBatch(t, db, drv, part, "", id, id, at(5))
	ds := make([]deliveryAt, processedAtChunk+3)
	for i := range ds {
		ds[i] = deliveryAt{eventID: id, part: part, sub: "s" + itoa(int64(i))}
	}
	require.NoError(t, drv.processedAt(ctx, db, ds))
	for _, d := range ds {
		require.Equal(t, ptrTime(at(5)), d.at)
	}
}

func ptrTime(t time.Time) *time.Time { return &t }

func testRetryFailed(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	id, part := writeEvent(t, db, ctx, New{Type: "thing.created", AggregateType: "things", AggregateID: 1})
	addDelivery(t, db, drv, id, part, "a", StatusFailed, nil)
	addDelivery(t, db, drv, id, part, "b", StatusFailed, nil)
	addDelivery(t, db, drv, id, part, "c", StatusHeld, nil)
	n, err := drv.retryFailed(ctx, db, id)
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	got, err := drv.deliveries(ctx, db, []int64{id})
	require.NoError(t, err)
	for _, s := range []string{"a", "b"} {
		require.Equal(t, StatusRetrying, got[id][s].Status)
		require.Equal(t, 0, got[id][s].Attempts)
		require.WithinDuration(t, time.Now(), *got[id][s].NextAttemptAt, time.Minute)
	}
	require.Equal(t, StatusHeld, got[id]["c"].Status)
	n, err = drv.retryFailed(ctx, db, id)
	require.NoError(t, err)
	require.Zero(t, n)
}

// The backlog counts the events past the slowest waited-for lane of their
// partition and the waited-for subscribers' open deliveries.
func testBacklog(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	ids, part := writeEvents(t, db, times("thing.created", 3)...)
	addSubscriber(t, db, drv, "fast", ids[2])
	addSubscriber(t, db, drv, "slow", ids[2])
	sqlExec(t, db, `UPDATE events_lanes SET position = ? WHERE subscriber = 'slow' AND partition = ?`, ids[0], part)
	addDelivery(t, db, drv, ids[0], part, "fast", StatusRetrying, nil)
	addDelivery(t, db, drv, ids[0], part, "gone", StatusFailed, nil) // no such subscriber: not waited for
	sqlExec(t, db, `UPDATE events SET created_at = ? WHERE id = ?`, sqlBaseOf(drv).timeArg(at(0)), ids[0])
	s, err := drv.backlog(ctx, db)
	require.NoError(t, err)
	require.Equal(t, int64(3), s.Pending) // ids[1], ids[2] past the slow lane, and fast's retry
	require.Equal(t, at(0), s.Oldest)
}

func testClock(t *testing.T, db *gorm.DB, drv driver) {
	now, err := drv.clock(context.Background(), db)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), now, time.Minute)
}

// The subscribers' list for operators: the registered ones by name, the
// retired ones included, and what each lane, delivery and replica says.
func testSubscriberStats(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	ids, part := writeEvents(t, db, []string{"thing.created", "thing.changed", "thing.created"}...)
	addSubscriber(t, db, drv, "b", 0, "thing.created")
	addSubscriber(t, db, drv, "a", ids[2])
	sqlExec(t, db, `INSERT INTO events_subscribers (name, types) VALUES ('unregistered', '[]')`)
	require.NoError(t, drv.retire(ctx, db, "a"))
	rows, err := drv.registeredSubscribers(ctx, db, "")
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, "a", rows[0].Name)
	require.True(t, rows[0].RetiredAt.valid)
	require.Equal(t, "b", rows[1].Name)
	require.Equal(t, `["thing.created"]`, rows[1].Types)
	one, err := drv.registeredSubscribers(ctx, db, "b")
	require.NoError(t, err)
	require.Len(t, one, 1)
	none, err := drv.registeredSubscribers(ctx, db, "unregistered")
	require.NoError(t, err)
	require.Empty(t, none)

	lanes, err := drv.laneBacklogs(ctx, db, "b", []string{"thing.created"})
	require.NoError(t, err)
	require.Len(t, lanes, Partitions)
	require.Equal(t, part, lanes[part].Partition)
	require.Equal(t, int64(2), lanes[part].N) // thing.changed is not its
	require.True(t, lanes[part].Oldest.valid)
	require.Zero(t, lanes[(part+1)%Partitions].N)
	untyped, err := drv.laneBacklogs(ctx, db, "b", nil)
	require.NoError(t, err)
	require.Zero(t, untyped[part].N, "a subscriber of no type has no backlog")

	addDelivery(t, db, drv, ids[0], part, "b", StatusRetrying, nil)
	addDelivery(t, db, drv, ids[2], part, "b", StatusRetrying, nil)
	addDelivery(t, db, drv, ids[1], part, "b", StatusProcessed, ptrTime(at(1)))
	open, err := drv.openDeliveries(ctx, db, "b")
	require.NoError(t, err)
	require.Len(t, open, 1)
	require.Equal(t, StatusRetrying, open[0].Status)
	require.Equal(t, int64(2), open[0].N)

	require.NoError(t, drv.seen(ctx, db, "r1", []string{"b"}))
	sqlExec(t, db, `UPDATE events_replicas SET seen_at = ? WHERE replica = 'r1'`, sqlBaseOf(drv).timeArg(time.Now().Add(-time.Hour)))
	require.NoError(t, drv.seen(ctx, db, "r2", []string{"b"}))
	reps, err := drv.replicasOf(ctx, db, "b")
	require.NoError(t, err)
	require.Len(t, reps, 2)
	require.Equal(t, "r2", reps[0].Replica)
	active, err := drv.activeReplicas(ctx, db, "b", time.Minute)
	require.NoError(t, err)
	require.Equal(t, []string{"r2"}, active)
}

// A replay moves the subscriber's lanes back (a lane already behind stays),
// drops its leases, and forgets its deliveries, failures and batches after
// the point; another subscriber's stay.
func testRewind(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	ids, part := writeEvents(t, db, times("thing.created", 4)...)
	addSubscriber(t, db, drv, "s", ids[3])
	addSubscriber(t, db, drv, "o", ids[3])
	sqlExec(t, db, `UPDATE events_lanes SET position = 0, start_position = 0 WHERE subscriber = 's' AND partition = ?`, (part+1)%Partitions)
	sqlExec(t, db, `UPDATE events_lanes SET owner = 'x', lease_until = ? WHERE subscriber = 's'`, sqlBaseOf(drv).timeArg(time.Now().Add(time.Hour)))
	for _, sub := range []string{"s", "o"} {
		addDelivery(t, db, drv, ids[0], part, sub, StatusProcessed, ptrTime(at(0)))
		addDelivery(t, db, drv, ids[2], part, sub, StatusFailed, nil)
		sqlExec(t, db, `INSERT INTO events_delivery_failures (event_id, subscriber, seq, error, spent) VALUES (?, ?, 1, 'x', true)`, ids[2], sub)
		addBatch(t, db, drv, part, sub, ids[0], ids[1], at(1))
		addBatch(t, db, drv, part, sub, ids[2], ids[3], at(2))
	}
	require.NoError(t, drv.rewind(ctx, db, "s", ids[0]))
	lanes, err := drv.laneStates(ctx, db)
	require.NoError(t, err)
	require.Equal(t, laneState{position: ids[0], start: ids[0]}, lanes[laneKey{"s", part}])
	require.Equal(t, laneState{}, lanes[laneKey{"s", (part + 1) % Partitions}], "a lane behind stays")
	require.Equal(t, laneState{position: ids[3], start: ids[3]}, lanes[laneKey{"o", part}])
	owners, err := drv.leaseOwners(ctx, db, "")
	require.NoError(t, err)
	require.Empty(t, owners)
	got, err := drv.deliveries(ctx, db, ids)
	require.NoError(t, err)
	require.Contains(t, got[ids[0]], "s")
	require.NotContains(t, got[ids[2]], "s")
	require.Contains(t, got[ids[2]], "o")
	fs, err := drv.failures(ctx, db, ids)
	require.NoError(t, err)
	require.Len(t, fs, 1)
	require.Equal(t, "o", fs[0].sub)
	batches, err := drv.subscriberBatches(ctx, db, part, 0, ids[3])
	require.NoError(t, err)
	var spans []string
	for _, b := range batches {
		spans = append(spans, b.Subscriber+":"+itoa(b.FirstID-ids[0])+"-"+itoa(b.LastID-ids[0]))
	}
	require.Equal(t, []string{"o:0-1", "o:2-3", "s:0-0"}, spans)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func testRetire(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	addSubscriber(t, db, drv, "s", 0)
	addSubscriber(t, db, drv, "o", 0)
	require.NoError(t, drv.seen(ctx, db, "r", []string{"s", "o"}))
	require.NoError(t, drv.retire(ctx, db, "s"))
	rec, ok, err := drv.subscriberRecord(ctx, db, "s")
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, rec.RetiredAt.valid)
	lanes, err := drv.laneStates(ctx, db)
	require.NoError(t, err)
	require.Len(t, lanes, Partitions, "only o's lanes stay")
	reps, err := drv.replicasOf(ctx, db, "s")
	require.NoError(t, err)
	require.Empty(t, reps)
	reps, err = drv.replicasOf(ctx, db, "o")
	require.NoError(t, err)
	require.Len(t, reps, 1)
}

// Registration: a subscriber is inserted once, its declaration updated, it
// comes back from retirement, and its lanes are added without moving those
// there.
func testRegistration(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	n, err := drv.subscribersKnown(ctx, db)
	require.NoError(t, err)
	require.Zero(t, n)
	_, ok, err := drv.subscriberRecord(ctx, db, "s")
	require.NoError(t, err)
	require.False(t, ok)
	spec := subscriberSpec{name: "s", types: `["a"]`, description: "one", local: true}
	ok, err = drv.insertSubscriber(ctx, db, spec)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = drv.insertSubscriber(ctx, db, spec)
	require.NoError(t, err)
	require.False(t, ok, "recorded already")
	n, err = drv.subscribersKnown(ctx, db)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	rec, ok, err := drv.subscriberRecord(ctx, db, "s")
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, rec.RegisteredAt.valid)
	require.False(t, rec.RetiredAt.valid)

	require.NoError(t, drv.retire(ctx, db, "s"))
	spec.types, spec.description, spec.replayable = `["a","b"]`, "two", true
	require.NoError(t, drv.updateSubscriber(ctx, db, spec))
	rows, err := drv.registeredSubscribers(ctx, db, "s")
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, subscriberRow{ID: rec.ID, Name: "s", Types: `["a","b"]`, Description: "two", Local: true, Replayable: true,
		RegisteredAt: rows[0].RegisteredAt}, rows[0], "back from retirement")
	// One from before lanes (not registered) is registered by the update.
	sqlExec(t, db, `INSERT INTO events_subscribers (name, types) VALUES ('old', '[]')`)
	require.NoError(t, drv.updateSubscriber(ctx, db, subscriberSpec{name: "old", types: `[]`}))
	rec, _, err = drv.subscriberRecord(ctx, db, "old")
	require.NoError(t, err)
	require.True(t, rec.RegisteredAt.valid)

	require.NoError(t, drv.addLanes(ctx, db, "s", 10))
	sqlExec(t, db, `UPDATE events_lanes SET position = 12 WHERE partition = 1`)
	require.NoError(t, drv.addLanes(ctx, db, "s", 20))
	lanes, err := drv.laneStates(ctx, db)
	require.NoError(t, err)
	require.Len(t, lanes, Partitions)
	require.Equal(t, laneState{position: 12, start: 10}, lanes[laneKey{"s", 1}])
	require.Equal(t, laneState{position: 10, start: 10}, lanes[laneKey{"s", 0}])
	require.NoError(t, drv.dropLanes(ctx, db, "s"))
	lanes, err = drv.laneStates(ctx, db)
	require.NoError(t, err)
	require.Empty(t, lanes)
}

func testReplicas(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	require.NoError(t, drv.seen(ctx, db, "r1", []string{"a", "b"}))
	require.NoError(t, drv.seen(ctx, db, "r2", []string{"a"}))
	sqlExec(t, db, `UPDATE events_replicas SET seen_at = ? WHERE replica = 'r1'`, sqlBaseOf(drv).timeArg(time.Now().Add(-2*time.Hour)))
	require.NoError(t, drv.seen(ctx, db, "r1", []string{"a"})) // seen again: a only
	require.NoError(t, drv.forgetReplicas(ctx, db, time.Hour))
	var rows []string
	require.NoError(t, database.Scan(db.Raw(`SELECT subscriber || '/' || replica FROM events_replicas ORDER BY 1`), &rows))
	require.Equal(t, []string{"a/r1", "a/r2"}, rows)
}

// The leases of owners other than self that are still live, and giving an
// owner's back.
func testLeases(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	addSubscriber(t, db, drv, "s", 0)
	arg := sqlBaseOf(drv).timeArg
	sqlExec(t, db, `UPDATE events_lanes SET owner = 'me', lease_until = ? WHERE partition = 0`, arg(time.Now().Add(time.Hour)))
	sqlExec(t, db, `UPDATE events_lanes SET owner = 'dead', lease_until = ? WHERE partition IN (1, 2)`, arg(time.Now().Add(time.Hour)))
	sqlExec(t, db, `UPDATE events_lanes SET owner = 'lapsed', lease_until = ? WHERE partition = 3`, arg(time.Now().Add(-time.Hour)))
	owners, err := drv.leaseOwners(ctx, db, "me")
	require.NoError(t, err)
	require.Equal(t, []string{"dead"}, owners)
	n, err := drv.dropLeases(ctx, db, "dead")
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	owners, err = drv.leaseOwners(ctx, db, "")
	require.NoError(t, err)
	require.Equal(t, []string{"me"}, owners)
}

// The compaction's statements: its mark, the events and batches of a
// range, settling, and removing only the batches within the range.
func testCompaction(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	ids, part := writeEvents(t, db, []string{"a", "b", "a", "b", "a"}...)
	writeEvent(t, db, ctx, New{Type: "a", AggregateType: "things", AggregateID: 2}) // most likely another partition
	low, err := drv.compactedUpTo(ctx, db, part)
	require.NoError(t, err)
	require.Zero(t, low)
	require.NoError(t, drv.markCompacted(ctx, db, part, ids[0]))
	require.NoError(t, drv.markCompacted(ctx, db, part, ids[1]))
	low, err = drv.compactedUpTo(ctx, db, part)
	require.NoError(t, err)
	require.Equal(t, ids[1], low)

	evs, err := drv.eventTypesIn(ctx, db, part, ids[0], ids[4], 3)
	require.NoError(t, err)
	require.Equal(t, []eventType{{ids[1], "b"}, {ids[2], "a"}, {ids[3], "b"}}, evs)

	addBatch(t, db, drv, part, "s", ids[0], ids[1], at(1))
	addBatch(t, db, drv, part, "s", ids[2], ids[2], at(2))
	addBatch(t, db, drv, part, "s", ids[3], ids[4], at(3)) // reaches beyond the range: stays
	addBatch(t, db, drv, part, "", ids[0], ids[2], at(0))  // from before lanes: stays
	batches, err := drv.subscriberBatches(ctx, db, part, ids[1], ids[3])
	require.NoError(t, err)
	require.Len(t, batches, 2)
	require.Equal(t, ids[2], batches[0].FirstID)
	require.Equal(t, at(2), batches[0].DispatchedAt.t)
	require.Equal(t, ids[3], batches[1].FirstID)

	addDelivery(t, db, drv, ids[2], part, "s", StatusFailed, nil)
	addDelivery(t, db, drv, ids[4], part, "s", StatusFailed, nil)
	rec, err := drv.recordedIn(ctx, db, part, ids[1], ids[3])
	require.NoError(t, err)
	require.Equal(t, map[deliveryKey]bool{{ids[2], "s"}: true}, rec)

	require.NoError(t, drv.settle(ctx, db, part, ids[1], ids[2], at(9)))
	var settled []int64
	require.NoError(t, database.Scan(db.Raw(`SELECT id FROM events WHERE settled_at IS NOT NULL ORDER BY id`), &settled))
	require.Equal(t, []int64{ids[1], ids[2]}, settled)

	n, err := drv.dropBatches(ctx, db, part, ids[1], ids[3])
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	var left []string
	require.NoError(t, database.Scan(db.Raw(`SELECT subscriber || ':' || CAST(first_id AS text) FROM events_batches ORDER BY subscriber, first_id`), &left))
	require.Equal(t, []string{":" + itoa(ids[0]), "s:" + itoa(ids[0]), "s:" + itoa(ids[3])}, left)
}

// The stream's survey sees the newest event; on PostgreSQL it also names
// the transactions writing events and which of the pending ones run.
func testStreamSurvey(t *testing.T, db *gorm.DB, drv driver) {
	ctx := context.Background()
	id, err := drv.newestID(ctx, db)
	require.NoError(t, err)
	require.Zero(t, id)
	last, _ := writeEvent(t, db, ctx, New{Type: "a", AggregateType: "things", AggregateID: 1})
	id, err = drv.newestID(ctx, db)
	require.NoError(t, err)
	require.Equal(t, last, id)
	sv, err := drv.streamSurvey(ctx, db, nil)
	require.NoError(t, err)
	require.Equal(t, last, sv.visible)
	require.Empty(t, sv.writers)
	if database.DialectOf(db) == database.SQLite {
		require.True(t, sv.final, "SQLite has one writer: what is visible is final")
		return
	}
	require.False(t, sv.final, "PostgreSQL commits out of id order")
	tx := db.Begin()
	defer tx.Rollback()
	require.NoError(t, tx.Exec(`INSERT INTO events (type, aggregate_type, aggregate_id, partition, payload) VALUES ('a', 'things', 1, 0, '{}')`).Error)
	var xid string
	require.NoError(t, database.Scan(tx.Raw(`SELECT pg_current_xact_id()::text`), &xid))
	sv, err = drv.streamSurvey(ctx, db, []string{xid, "1"})
	require.NoError(t, err)
	require.Equal(t, last, sv.visible, "the open transaction's event is not visible")
	require.Equal(t, []string{xid}, sv.writers)
	require.Equal(t, []string{xid}, sv.running)
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
