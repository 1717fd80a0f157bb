package events

// The conformance cases of the journal's statements (driver.go's
// journalStatements, driver_journal.go), run by TestDriver.

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
)

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
