package events

// The conformance tests of the dispatcher's statements (store.go,
// store_postgres.go, store_sqlite.go), on both dialects, as driver_test.go's
// (TestStatements).

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// laneFixture is a subscriber "s" with its lanes at 0 and three events in
// one partition.
type laneFixture struct {
	db   *gorm.DB
	drv  driver
	st   statements
	ids  []int64
	part int
}

func newLaneFixture(t *testing.T, db *gorm.DB, drv driver) laneFixture {
	t.Helper()
	f := laneFixture{db: db, drv: drv, st: drv}
	addSubscriber(t, db, drv, "s", 0, "a")
	for range 3 {
		id, p := writeEvent(t, db, context.Background(), New{Type: "a", AggregateType: "things", AggregateID: 1})
		f.ids, f.part = append(f.ids, id), p
	}
	return f
}

func (f laneFixture) lane(t *testing.T) (position int64, owner *string) {
	t.Helper()
	var row struct {
		Position int64
		Owner    *string
	}
	require.NoError(t, database.Scan(f.db.Raw(`SELECT position, owner FROM events_lanes WHERE subscriber = 's' AND partition = ?`, f.part), &row))
	return row.Position, row.Owner
}

func (f laneFixture) lease(t *testing.T, owner string, d time.Duration) {
	t.Helper()
	sqlExec(t, f.db, `UPDATE events_lanes SET owner = ?, lease_until = ? WHERE subscriber = 's' AND partition = ?`,
		owner, sqlBaseOf(f.drv).timeArg(time.Now().Add(d)), f.part)
}

// The survey sees the newest event and the lane with work (on PostgreSQL,
// when asked to list the lanes); a lane with a retry due has work too.
func testSurvey(t *testing.T, db *gorm.DB, drv driver) {
	f := newLaneFixture(t, db, drv)
	ctx := context.Background()
	sv, err := f.st.survey(ctx, db, surveyQuery{names: []string{"s"}, owner: "me"})
	require.NoError(t, err)
	require.Equal(t, f.ids[2], sv.visible)
	require.True(t, sv.listed)
	require.Equal(t, []laneAt{{laneKey{"s", f.part}, 0, false}}, sv.lanes)
	require.False(t, sv.nextRetry.Valid)

	other := (f.part + 1) % Partitions
	sqlExec(t, db, `UPDATE events_lanes SET position = ? WHERE partition = ?`, f.ids[2], f.part)
	addDelivery(t, db, drv, f.ids[0], other, "s", StatusRetrying, nil)
	sqlExec(t, db, `UPDATE events_deliveries SET next_attempt_at = ?`, sqlBaseOf(drv).timeArg(time.Now().Add(-time.Minute)))
	sv, err = f.st.survey(ctx, db, surveyQuery{names: []string{"s"}, owner: "me"})
	require.NoError(t, err)
	require.Equal(t, []laneAt{{laneKey{"s", other}, 0, false}}, sv.lanes)
	require.True(t, sv.nextRetry.Valid)
	require.Less(t, sv.nextRetry.Float64, 0.0, "the retry is due")

	// Every lane runs here: the partitions' last events and the lanes with
	// a retry due, not the lanes' rows (SQLite, one writer and no old
	// snapshot to fear, lists its lanes as ever).
	sv, err = f.st.survey(ctx, db, surveyQuery{names: []string{"s"}, owner: "me", skipLanes: true})
	require.NoError(t, err)
	if sv.listed {
		require.Equal(t, []laneAt{{laneKey{"s", other}, 0, false}}, sv.lanes)
	} else {
		require.Empty(t, sv.lanes)
		require.Equal(t, map[laneKey]bool{{"s", other}: true}, sv.due, "the lane with a retry due")
		require.Equal(t, f.ids[2], sv.last[f.part], "the partition's last event")
	}
	sv, err = f.st.survey(ctx, db, surveyQuery{names: []string{"nobody"}, owner: "me"})
	require.NoError(t, err)
	require.Empty(t, sv.lanes)
}

// lanesWithWork counts events up to upto only, leaves out a lane another
// dispatcher holds and says which lanes are this dispatcher's.
func testLanesWithWork(t *testing.T, db *gorm.DB, drv driver) {
	f := newLaneFixture(t, db, drv)
	ctx := context.Background()
	q := surveyQuery{names: []string{"s"}, owner: "me"}
	lanes, err := f.st.lanesWithWork(ctx, db, q, f.ids[0]-1)
	require.NoError(t, err)
	require.Empty(t, lanes, "no event up to upto")
	lanes, err = f.st.lanesWithWork(ctx, db, q, f.ids[0])
	require.NoError(t, err)
	require.Equal(t, []laneAt{{laneKey{"s", f.part}, 0, false}}, lanes)
	f.lease(t, "other", time.Hour)
	lanes, err = f.st.lanesWithWork(ctx, db, q, f.ids[2])
	require.NoError(t, err)
	require.Empty(t, lanes, "another's live lease")
	f.lease(t, "other", -time.Hour)
	lanes, err = f.st.lanesWithWork(ctx, db, q, f.ids[2])
	require.NoError(t, err)
	require.Len(t, lanes, 1, "a lapsed lease")
	f.lease(t, "me", time.Hour)
	lanes, err = f.st.lanesWithWork(ctx, db, q, f.ids[2])
	require.NoError(t, err)
	require.Equal(t, []laneAt{{laneKey{"s", f.part}, 0, true}}, lanes)
}

// claim takes the lease of a lane at the position and reads the batch after
// it up to the horizon; a lane elsewhere or held by another is not claimed.
func testClaim(t *testing.T, db *gorm.DB, drv driver) {
	f := newLaneFixture(t, db, drv)
	ctx := context.Background()
	c := claimQuery{part: f.part, subs: []string{"s"}, pos: 0, horizon: f.ids[1], limit: 10, owner: "me", lease: time.Minute}
	claimed, batch, err := f.st.claim(ctx, db, c)
	require.NoError(t, err)
	require.Equal(t, []claimedLane{{sub: "s"}}, claimed)
	require.Len(t, batch, 2)
	require.Equal(t, f.ids[0], batch[0].ID)
	require.Equal(t, f.ids[1], batch[1].ID)
	_, owner := f.lane(t)
	require.Equal(t, "me", *owner)

	other := c
	other.owner = "other"
	claimed, batch, err = f.st.claim(ctx, db, other)
	require.NoError(t, err)
	require.Empty(t, claimed, "held by me")
	require.Empty(t, batch)
	moved := c
	moved.pos = f.ids[0]
	claimed, _, err = f.st.claim(ctx, db, moved)
	require.NoError(t, err)
	require.Empty(t, claimed, "the lane is not at that position")

	addDelivery(t, db, drv, f.ids[0], f.part, "s", StatusRetrying, nil)
	sqlExec(t, db, `UPDATE events_deliveries SET next_attempt_at = ?`, sqlBaseOf(drv).timeArg(time.Now().Add(-time.Minute)))
	c.limit = 1
	claimed, batch, err = f.st.claim(ctx, db, c)
	require.NoError(t, err)
	require.Equal(t, []claimedLane{{sub: "s", open: true, due: true}}, claimed)
	require.Len(t, batch, 1)
}

// moveLane's fence refuses a batch whose lease is another's or whose lane
// has moved; with the lease it moves the lane, records the batch and, for
// the last batch, gives the lease back.
func testMoveLane(t *testing.T, db *gorm.DB, drv driver) {
	f := newLaneFixture(t, db, drv)
	f.lease(t, "me", time.Minute)
	key := laneKey{"s", f.part}
	move := func(m laneMove) error {
		return db.Transaction(func(tx *gorm.DB) error { return f.st.moveLane(tx, m) })
	}
	require.ErrorIs(t, move(laneMove{key: key, owner: "other", pos: 0, next: f.ids[1], batch: true, lease: time.Minute}), errLeaseLost)
	require.ErrorIs(t, move(laneMove{key: key, owner: "me", pos: f.ids[0], next: f.ids[1], batch: true, lease: time.Minute}), errLeaseLost)
	pos, owner := f.lane(t)
	require.Zero(t, pos, "the fence moved nothing")
	require.Equal(t, "me", *owner)
	batches, err := drv.subscriberBatches(context.Background(), db, f.part, 0, f.ids[2])
	require.NoError(t, err)
	require.Empty(t, batches, "nor recorded a batch")

	require.NoError(t, move(laneMove{key: key, owner: "me", pos: 0, next: f.ids[1], batch: true, lease: time.Minute}))
	pos, owner = f.lane(t)
	require.Equal(t, f.ids[1], pos)
	require.Equal(t, "me", *owner)
	require.NoError(t, move(laneMove{key: key, owner: "me", pos: f.ids[1], next: f.ids[2], release: true, lease: time.Minute}))
	pos, owner = f.lane(t)
	require.Equal(t, f.ids[2], pos)
	require.Nil(t, owner, "the last batch gives the lease back")
	batches, err = drv.subscriberBatches(context.Background(), db, f.part, 0, f.ids[2])
	require.NoError(t, err)
	require.Len(t, batches, 1, "only the batch that carried events is recorded")
	require.Equal(t, int64(1), batches[0].FirstID, "the batch covers (pos, next]")
	require.Equal(t, f.ids[1], batches[0].LastID)
}

// readBatch reads a partition's events after a position, up to the
// horizon, in order, at most limit, and no other partition's.
func testReadBatch(t *testing.T, db *gorm.DB, drv driver) {
	f := newLaneFixture(t, db, drv)
	ctx := context.Background()
	var elsewhere int64 = 2
	for PartitionOf("things", elsewhere) == f.part {
		elsewhere++
	}
	other, otherPart := writeEvent(t, db, ctx, New{Type: "a", AggregateType: "things", AggregateID: elsewhere})
	read := func(part int, pos, horizon int64, limit int) []int64 {
		t.Helper()
		evs, err := drv.readBatch(ctx, db, part, pos, horizon, limit)
		require.NoError(t, err)
		ids := make([]int64, 0, len(evs))
		for _, ev := range evs {
			require.Equal(t, "a", ev.Type)
			ids = append(ids, ev.ID)
		}
		return ids
	}
	require.Equal(t, f.ids, read(f.part, 0, other, 10), "the partition's events, in order")
	require.Equal(t, f.ids[1:], read(f.part, f.ids[0], other, 10), "after the position")
	require.Equal(t, f.ids[:2], read(f.part, 0, f.ids[1], 10), "up to the horizon")
	require.Equal(t, f.ids[:2], read(f.part, 0, other, 2), "at most limit")
	require.Equal(t, []int64{other}, read(otherPart, 0, other, 10), "another partition's")
}

// release gives back only the owner's lease; renew extends only the
// owner's leases.
func testReleaseAndRenew(t *testing.T, db *gorm.DB, drv driver) {
	f := newLaneFixture(t, db, drv)
	ctx := context.Background()
	key := laneKey{"s", f.part}
	f.lease(t, "me", time.Second)
	require.NoError(t, f.st.release(ctx, db, key, "other"))
	_, owner := f.lane(t)
	require.Equal(t, "me", *owner)

	require.NoError(t, f.st.renew(ctx, db, "me", time.Hour))
	require.NoError(t, f.st.renew(ctx, db, "other", -time.Hour))
	var until nullTime
	require.NoError(t, database.Scan(db.Raw(`SELECT lease_until FROM events_lanes WHERE subscriber = 's' AND partition = ?`, f.part), &until))
	require.WithinDuration(t, time.Now().Add(time.Hour), until.t, time.Minute)

	require.NoError(t, f.st.release(ctx, db, key, "me"))
	_, owner = f.lane(t)
	require.Nil(t, owner)
}

// TestStatements runs the cases against both drivers.
func TestStatements(t *testing.T) {
	exercise(t, []driverCase{
		{"Survey", testSurvey},
		{"LanesWithWork", testLanesWithWork},
		{"Claim", testClaim},
		{"MoveLane", testMoveLane},
		{"ReadBatch", testReadBatch},
		{"ReleaseAndRenew", testReleaseAndRenew},
	})
}
