package events

// The conformance cases of the subscribers', registration's, compaction's
// and the stream's statements (driver_subscribers.go, driver_compaction.go),
// run by TestDriver.

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

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
