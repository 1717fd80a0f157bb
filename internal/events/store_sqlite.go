package events

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// sqliteStatements are the dispatcher's statements for SQLite, which has one
// writer at a time (so no commit horizon to compute) and one connection.
type sqliteStatements struct{}

// survey lists the lanes always: SQLite keeps no old row versions for a
// snapshot, so reading them costs little.
func (s sqliteStatements) survey(ctx context.Context, db *gorm.DB, q surveyQuery) (surveyed, error) {
	sv := surveyed{listed: true, final: true}
	err := db.WithContext(ctx).Raw(`SELECT coalesce(max(id), 0) AS visible,
  (SELECT (julianday(min(next_attempt_at)) - julianday('now')) * 86400.0 FROM events_deliveries WHERE status = 'retrying' AND subscriber IN @names) AS next_retry
FROM events`, map[string]any{"names": names(q.names)}).Row().Scan(&sv.visible, &sv.nextRetry)
	if err != nil {
		return sv, err
	}
	sv.lanes, err = s.lanesWithWork(ctx, db, q, sv.visible)
	return sv, err
}

func (sqliteStatements) lanesWithWork(ctx context.Context, db *gorm.DB, q surveyQuery, upto int64) ([]laneAt, error) {
	now := database.SQLite.Now()
	next := `EXISTS (SELECT 1 FROM events e WHERE e.partition = l.partition AND e.id > l.position AND e.id <= @upto)`
	return scanLanes(db.WithContext(ctx).Raw(lanesWithWorkSQL(now, "", next),
		map[string]any{"owner": q.owner, "names": names(q.names), "upto": upto}))
}

func (sqliteStatements) claim(ctx context.Context, db *gorm.DB, q claimQuery) ([]claimedLane, []Event, error) {
	rows, err := db.WithContext(ctx).Raw(claimUpdateSQL(database.SQLite.Now(), database.SQLite.NowPlus(q.lease)),
		map[string]any{"owner": q.owner, "p": q.part, "subs": names(q.subs), "pos": q.pos}).Rows()
	if err != nil {
		return nil, nil, err
	}
	var claimed []claimedLane
	for rows.Next() {
		var c claimedLane
		if err := rows.Scan(&c.sub, &c.open, &c.due); err != nil {
			_ = rows.Close()
			return nil, nil, err
		}
		claimed = append(claimed, c)
	}
	err = rows.Err()
	_ = rows.Close() // SQLite's one connection is needed for the read
	if err != nil || len(claimed) == 0 || q.limit == 0 {
		return claimed, nil, err
	}
	batch, err := selectBatch(ctx, db, q.part, q.pos, q.horizon, q.limit)
	return claimed, batch, err
}

func (sqliteStatements) moveLane(tx *gorm.DB, m laneMove) error {
	set := `lease_until = ` + database.SQLite.NowPlus(m.lease)
	if m.release {
		set = `owner = NULL, lease_until = NULL`
	}
	res := tx.Exec(moveLaneSQL(set), moveArgs(m))
	if res.Error == nil && res.RowsAffected == 1 && m.batch {
		res = tx.Exec(`INSERT INTO events_batches (partition, subscriber, first_id, last_id) VALUES (@p, @sub, @first, @next)`, moveArgs(m))
	}
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return errLeaseLost
	}
	return nil
}

// fenced checks the lane in the update itself: SQLite's one writer at a
// time keeps the lane as checked until the commit. The renewer extends the
// lease.
func (sqliteStatements) fenced(tx *gorm.DB, m laneMove, update string, args map[string]any) (int64, error) {
	res := tx.Exec(update+` AND EXISTS (SELECT 1 FROM events_lanes WHERE subscriber = @sub AND partition = @p AND owner = @owner AND position = @pos)`, args)
	return res.RowsAffected, res.Error
}

func (sqliteStatements) release(ctx context.Context, db *gorm.DB, k laneKey, owner string) error {
	return db.WithContext(ctx).Exec(`UPDATE events_lanes SET owner = NULL, lease_until = NULL WHERE subscriber = ? AND partition = ? AND owner = ?`,
		k.sub, k.part, owner).Error
}

// renew needs no care for locked rows on SQLite, whose one writer at a time
// holds no row locks.
func (sqliteStatements) renew(ctx context.Context, db *gorm.DB, owner string, lease time.Duration) error {
	return db.WithContext(ctx).Exec(`UPDATE events_lanes SET lease_until = `+database.SQLite.NowPlus(lease)+` WHERE owner = ?`, owner).Error
}
