package events

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// subscriberStatements read the subscribers for operators and carry out
// their replay and retirement.
type subscriberStatements interface {
	// clock reads the database clock.
	clock(ctx context.Context, db *gorm.DB) (time.Time, error)
	// registeredSubscribers reads the subscribers a replica has registered,
	// the retired ones included, by name; name "" reads them all.
	registeredSubscribers(ctx context.Context, db *gorm.DB, name string) ([]subscriberRow, error)
	// laneBacklogs reads the subscriber's lanes, each with the count and
	// the oldest creation of its events of the types past its position.
	laneBacklogs(ctx context.Context, db *gorm.DB, name string, types []string) ([]laneBacklog, error)
	// openDeliveries counts the subscriber's deliveries by status, those
	// processed left out, with the oldest creation of their events.
	openDeliveries(ctx context.Context, db *gorm.DB, name string) ([]statusCount, error)
	// replicasOf reads the replicas that ran the subscriber, last seen first.
	replicasOf(ctx context.Context, db *gorm.DB, name string) ([]replicaRow, error)
	// activeReplicas names the replicas that ran the subscriber within the
	// window, by name.
	activeReplicas(ctx context.Context, tx *gorm.DB, name string, window time.Duration) ([]string, error)
	// rewind moves the subscriber's lanes back to before (a lane behind it
	// stays) without their leases and forgets its deliveries, failures and
	// batches after before.
	rewind(ctx context.Context, tx *gorm.DB, name string, before int64) error
	// retire marks the subscriber retired and drops its lanes and replicas.
	retire(ctx context.Context, tx *gorm.DB, name string) error
}

// laneBacklog is one of a subscriber's lanes with its events past the position.
type laneBacklog struct {
	Partition  int
	Position   int64
	Owner      *string
	LeaseUntil nullTime
	N          int64
	Oldest     nullTime
}

// statusCount counts a subscriber's deliveries of one status.
type statusCount struct {
	Status string
	N      int64
	Oldest nullTime
}

// replicaRow is a replica that ran a subscriber, and when last.
type replicaRow struct {
	Replica string
	SeenAt  nullTime
}

func (b sqlBase) clock(ctx context.Context, db *gorm.DB) (time.Time, error) {
	var now time.Time
	err := database.Scan(db.WithContext(ctx).Raw("SELECT "+b.now()), (*dbTime)(&now))
	return now, err
}

func (sqlBase) registeredSubscribers(ctx context.Context, db *gorm.DB, name string) ([]subscriberRow, error) {
	q, args := `SELECT id, name, types, description, local, replayable, registered_at, retired_at FROM events_subscribers
WHERE registered_at IS NOT NULL`, []any(nil)
	if name != "" {
		q, args = q+" AND name = ?", append(args, name)
	}
	var rows []subscriberRow
	err := database.Scan(db.WithContext(ctx).Raw(q+" ORDER BY name", args...), &rows)
	return rows, err
}

func (sqlBase) laneBacklogs(ctx context.Context, db *gorm.DB, name string, types []string) ([]laneBacklog, error) {
	if len(types) == 0 {
		types = []string{""}
	}
	var lanes []laneBacklog
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT l.partition, l.position, l.owner, l.lease_until, count(e.id) AS n, min(e.created_at) AS oldest
FROM events_lanes l LEFT JOIN events e ON e.partition = l.partition AND e.id > l.position AND e.type IN ?
WHERE l.subscriber = ? GROUP BY l.partition, l.position, l.owner, l.lease_until ORDER BY l.partition`, types, name), &lanes)
	return lanes, err
}

func (sqlBase) openDeliveries(ctx context.Context, db *gorm.DB, name string) ([]statusCount, error) {
	var out []statusCount
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT d.status, count(*) AS n, min(e.created_at) AS oldest FROM events_deliveries d JOIN events e ON e.id = d.event_id
WHERE d.subscriber = ? AND d.status <> 'processed' GROUP BY d.status`, name), &out)
	return out, err
}

func (sqlBase) replicasOf(ctx context.Context, db *gorm.DB, name string) ([]replicaRow, error) {
	var out []replicaRow
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT replica, seen_at FROM events_replicas WHERE subscriber = ? ORDER BY seen_at DESC`, name), &out)
	return out, err
}

func (b sqlBase) activeReplicas(ctx context.Context, tx *gorm.DB, name string, window time.Duration) ([]string, error) {
	var active []string
	err := database.Scan(tx.WithContext(ctx).Raw(`SELECT replica FROM events_replicas WHERE subscriber = ? AND seen_at > `+b.nowPlus(-window)+
		` ORDER BY replica`, name), &active)
	return active, err
}

// rewindSteps are rewind's statements, in order; they take @s, the
// subscriber, and @b, the last event it keeps.
var rewindSteps = []string{
	`UPDATE events_lanes SET position = CASE WHEN position > @b THEN @b ELSE position END,
start_position = CASE WHEN start_position > @b THEN @b ELSE start_position END, owner = NULL, lease_until = NULL WHERE subscriber = @s`,
	`DELETE FROM events_deliveries WHERE subscriber = @s AND event_id > @b`,
	`DELETE FROM events_delivery_failures WHERE subscriber = @s AND event_id > @b`,
	`DELETE FROM events_batches WHERE subscriber = @s AND first_id > @b`,
	`UPDATE events_batches SET last_id = @b WHERE subscriber = @s AND first_id <= @b AND last_id > @b`,
}

func (sqlBase) rewind(ctx context.Context, tx *gorm.DB, name string, before int64) error {
	tx = tx.WithContext(ctx)
	for _, q := range rewindSteps {
		if err := tx.Exec(q, map[string]any{"s": name, "b": before}).Error; err != nil {
			return err
		}
	}
	return nil
}

func (b sqlBase) retire(ctx context.Context, tx *gorm.DB, name string) error {
	tx = tx.WithContext(ctx)
	if err := tx.Exec(`UPDATE events_subscribers SET retired_at = `+b.now()+`, updated_at = `+b.now()+` WHERE name = ?`, name).Error; err != nil {
		return err
	}
	if err := tx.Exec(`DELETE FROM events_lanes WHERE subscriber = ?`, name).Error; err != nil {
		return err
	}
	return tx.Exec(`DELETE FROM events_replicas WHERE subscriber = ?`, name).Error
}

// registrationStatements record this process's subscribers and replicas.
type registrationStatements interface {
	// subscribersKnown counts the subscribers ever recorded.
	subscribersKnown(ctx context.Context, tx *gorm.DB) (int64, error)
	// subscriberRecord reads a subscriber's record; false when there is none.
	subscriberRecord(ctx context.Context, tx *gorm.DB, name string) (subscriberRecord, bool, error)
	// insertSubscriber records a new subscriber as registered now; false
	// when another replica recorded it first.
	insertSubscriber(ctx context.Context, tx *gorm.DB, s subscriberSpec) (bool, error)
	// updateSubscriber writes the subscriber's declaration, brings it back
	// from retirement and registers it if it was not.
	updateSubscriber(ctx context.Context, tx *gorm.DB, s subscriberSpec) error
	// dropLanes removes the subscriber's lanes.
	dropLanes(ctx context.Context, tx *gorm.DB, name string) error
	// addLanes gives the subscriber a lane at start in every partition
	// (a lane that is there stays).
	addLanes(ctx context.Context, tx *gorm.DB, name string, start int64) error
	// seen records that the replica runs the subscribers now.
	seen(ctx context.Context, tx *gorm.DB, replica string, subs []string) error
	// forgetReplicas removes the replicas not seen within keep.
	forgetReplicas(ctx context.Context, tx *gorm.DB, keep time.Duration) error
	// leaseOwners names the owners other than self holding a live lease.
	leaseOwners(ctx context.Context, db *gorm.DB, self string) ([]string, error)
	// dropLeases gives back every lease of the owner and returns how many.
	dropLeases(ctx context.Context, db *gorm.DB, owner string) (int64, error)
}

// subscriberRecord is what registration reads of a subscriber's record.
type subscriberRecord struct {
	ID           int64
	RegisteredAt nullTime
	RetiredAt    nullTime
}

// subscriberSpec is a subscriber's declaration as recorded.
type subscriberSpec struct {
	name, types, description string // types: the JSON list
	local, replayable        bool
}

func (sqlBase) subscribersKnown(ctx context.Context, tx *gorm.DB) (int64, error) {
	var n int64
	err := database.Scan(tx.WithContext(ctx).Raw(`SELECT count(*) FROM events_subscribers`), &n)
	return n, err
}

func (sqlBase) subscriberRecord(ctx context.Context, tx *gorm.DB, name string) (subscriberRecord, bool, error) {
	var rows []subscriberRecord
	if err := database.Scan(tx.WithContext(ctx).Raw(`SELECT id, registered_at, retired_at FROM events_subscribers WHERE name = ?`, name), &rows); err != nil {
		return subscriberRecord{}, false, err
	}
	if len(rows) == 0 {
		return subscriberRecord{}, false, nil
	}
	return rows[0], true, nil
}

func (b sqlBase) insertSubscriber(ctx context.Context, tx *gorm.DB, s subscriberSpec) (bool, error) {
	res := tx.WithContext(ctx).Exec(`INSERT INTO events_subscribers (name, types, description, local, replayable, registered_at, updated_at)
VALUES (?, ?, ?, ?, ?, `+b.now()+`, `+b.now()+`) ON CONFLICT (name) DO NOTHING`, s.name, s.types, s.description, s.local, s.replayable)
	return res.RowsAffected == 1, res.Error
}

func (b sqlBase) updateSubscriber(ctx context.Context, tx *gorm.DB, s subscriberSpec) error {
	return tx.WithContext(ctx).Exec(`UPDATE events_subscribers SET types = ?, description = ?, local = ?, replayable = ?, retired_at = NULL,
registered_at = coalesce(registered_at, `+b.now()+`), updated_at = `+b.now()+` WHERE name = ?`,
		s.types, s.description, s.local, s.replayable, s.name).Error
}

func (sqlBase) dropLanes(ctx context.Context, tx *gorm.DB, name string) error {
	return tx.WithContext(ctx).Exec(`DELETE FROM events_lanes WHERE subscriber = ?`, name).Error
}

// addLanes writes every partition's lane in one statement.
func (sqlBase) addLanes(ctx context.Context, tx *gorm.DB, name string, start int64) error {
	rows := make([]string, 0, Partitions)
	args := make([]any, 0, 4*Partitions)
	for p := range Partitions {
		rows = append(rows, "(?, ?, ?, ?)")
		args = append(args, name, p, start, start)
	}
	return tx.WithContext(ctx).Exec(`INSERT INTO events_lanes (subscriber, partition, position, start_position) VALUES `+
		strings.Join(rows, ", ")+` ON CONFLICT (subscriber, partition) DO NOTHING`, args...).Error
}

// seen marks the replica as running the subscribers, in one statement.
func (b sqlBase) seen(ctx context.Context, tx *gorm.DB, replica string, subs []string) error {
	if len(subs) == 0 {
		return nil
	}
	rows := make([]string, 0, len(subs))
	args := make([]any, 0, 2*len(subs))
	for _, s := range subs {
		rows = append(rows, "(?, ?, "+b.now()+")")
		args = append(args, s, replica)
	}
	return tx.WithContext(ctx).Exec(`INSERT INTO events_replicas (subscriber, replica, seen_at) VALUES `+strings.Join(rows, ", ")+`
ON CONFLICT (subscriber, replica) DO UPDATE SET seen_at = excluded.seen_at`, args...).Error
}

func (b sqlBase) forgetReplicas(ctx context.Context, tx *gorm.DB, keep time.Duration) error {
	return tx.WithContext(ctx).Exec(`DELETE FROM events_replicas WHERE seen_at < ` + b.nowPlus(-keep)).Error
}

func (b sqlBase) leaseOwners(ctx context.Context, db *gorm.DB, self string) ([]string, error) {
	var owners []string
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT DISTINCT owner FROM events_lanes WHERE owner IS NOT NULL AND owner <> ? AND lease_until > `+b.now()+
		` ORDER BY owner`, self), &owners)
	return owners, err
}

func (sqlBase) dropLeases(ctx context.Context, db *gorm.DB, owner string) (int64, error) {
	res := db.WithContext(ctx).Exec(`UPDATE events_lanes SET owner = NULL, lease_until = NULL WHERE owner = ?`, owner)
	return res.RowsAffected, res.Error
}
