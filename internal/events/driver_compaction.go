package events

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// compactionStatements fold the batches of the events every lane has
// passed into the events (settled_at).
type compactionStatements interface {
	// compactedUpTo reads up to which event the partition is compacted.
	compactedUpTo(ctx context.Context, tx *gorm.DB, part int) (int64, error)
	// eventTypesIn reads the ids and types of the partition's events in
	// (low, high], in order, at most limit of them.
	eventTypesIn(ctx context.Context, tx *gorm.DB, part int, low, high int64, limit int) ([]eventType, error)
	// subscriberBatches reads the subscribers' batches of the partition
	// that reach into (low, high], by subscriber and first id.
	subscriberBatches(ctx context.Context, tx *gorm.DB, part int, low, high int64) ([]batchSpan, error)
	// recordedIn names the recorded deliveries of the partition's events in
	// (low, high].
	recordedIn(ctx context.Context, tx *gorm.DB, part int, low, high int64) (map[deliveryKey]bool, error)
	// settle writes at as settled_at on the partition's events in [first, last].
	settle(ctx context.Context, tx *gorm.DB, part int, first, last int64, at time.Time) error
	// dropBatches removes the subscribers' batches of the partition that lie
	// within (low, high] and returns how many.
	dropBatches(ctx context.Context, tx *gorm.DB, part int, low, high int64) (int64, error)
	// markCompacted records that the partition is compacted up to upto.
	markCompacted(ctx context.Context, tx *gorm.DB, part int, upto int64) error
}

// eventType is an event's id and type.
type eventType struct {
	ID   int64
	Type string
}

// batchSpan is a subscriber's batch: events first to last of a partition,
// dispatched at.
type batchSpan struct {
	Subscriber   string
	FirstID      int64
	LastID       int64
	DispatchedAt nullTime
}

// The compaction's statements. The ranges of a partition are written as row
// comparisons on (partition, id), as readBatch's are, so that the
// events_partition_id index serves them.

func (sqlBase) compactedUpTo(ctx context.Context, tx *gorm.DB, part int) (int64, error) {
	var done []int64
	if err := database.Scan(tx.WithContext(ctx).Raw(`SELECT upto FROM events_compaction WHERE partition = ?`, part), &done); err != nil {
		return 0, err
	}
	if len(done) == 0 {
		return 0, nil
	}
	return done[0], nil
}

func (sqlBase) eventTypesIn(ctx context.Context, tx *gorm.DB, part int, low, high int64, limit int) ([]eventType, error) {
	var evs []eventType
	err := database.Scan(tx.WithContext(ctx).Raw(`SELECT id, type FROM events WHERE (partition, id) > (?, ?) AND (partition, id) <= (?, ?) ORDER BY partition, id LIMIT ?`,
		part, low, part, high, limit), &evs)
	return evs, err
}

func (sqlBase) subscriberBatches(ctx context.Context, tx *gorm.DB, part int, low, high int64) ([]batchSpan, error) {
	var rows []batchSpan
	err := database.Scan(tx.WithContext(ctx).Raw(`SELECT subscriber, first_id, last_id, dispatched_at FROM events_batches
WHERE partition = ? AND subscriber <> '' AND last_id > ? AND first_id <= ? ORDER BY subscriber, first_id`, part, low, high), &rows)
	return rows, err
}

func (sqlBase) recordedIn(ctx context.Context, tx *gorm.DB, part int, low, high int64) (map[deliveryKey]bool, error) {
	var recs []struct {
		EventID    int64
		Subscriber string
	}
	if err := database.Scan(tx.WithContext(ctx).Raw(`SELECT event_id, subscriber FROM events_deliveries WHERE partition = ? AND event_id > ? AND event_id <= ?`,
		part, low, high), &recs); err != nil {
		return nil, err
	}
	out := make(map[deliveryKey]bool, len(recs))
	for _, r := range recs {
		out[deliveryKey{r.EventID, r.Subscriber}] = true
	}
	return out, nil
}

func (sqlBase) settle(ctx context.Context, tx *gorm.DB, part int, first, last int64, at time.Time) error {
	return tx.WithContext(ctx).Exec(`UPDATE events SET settled_at = ? WHERE (partition, id) >= (?, ?) AND (partition, id) <= (?, ?)`,
		at, part, first, part, last).Error
}

func (sqlBase) dropBatches(ctx context.Context, tx *gorm.DB, part int, low, high int64) (int64, error) {
	res := tx.WithContext(ctx).Exec(`DELETE FROM events_batches WHERE partition = ? AND subscriber <> '' AND first_id > ? AND last_id <= ?`,
		part, low, high)
	return res.RowsAffected, res.Error
}

func (sqlBase) markCompacted(ctx context.Context, tx *gorm.DB, part int, upto int64) error {
	return tx.WithContext(ctx).Exec(`INSERT INTO events_compaction (partition, upto) VALUES (?, ?)
ON CONFLICT (partition) DO UPDATE SET upto = excluded.upto`, part, upto).Error
}
