package events_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// A journal dispatched by the version before lanes (one position per
// partition, shared by every subscriber) migrates to lanes at its positions,
// with its open deliveries: nothing is delivered twice, nothing skipped, a
// failed delivery stays failed, and the old events keep their processed_at.
func TestMigrate_SharedPositionsBecomeLanes(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.At(t, d, 3)

			// Six orders, each its own object. The old dispatcher had passed
			// the first four: the second one's delivery to plan.backlog was
			// retrying (due now), the third's had failed for good.
			var ids []int64
			// They are written as that version wrote them, with its columns.
			for i := range 6 {
				require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
					payload := fmt.Sprintf(`{"order_id": %d, "lines": 1, "source": "manual", "items": [{"item_id": %d, "sku": "SHK-KUPE-1600", "qty": 1}]}`, i+1, i+1)
					if err := tx.Exec(`INSERT INTO events (type, aggregate_type, aggregate_id, partition, payload) VALUES (?, ?, ?, ?, ?)`,
						contracts.OrderReceived.Name(), "sales_orders", i+1, events.PartitionOf("sales_orders", int64(i+1)), payload).Error; err != nil {
						return err
					}
					id, err := dbtest.LastEventID(tx)
					ids = append(ids, id)
					return err
				}))
			}
			hourAgo := database.NowPlus(db, -time.Hour)
			require.NoError(t, db.Exec("UPDATE events SET created_at = "+database.NowPlus(db, -2*time.Hour)).Error)
			require.NoError(t, db.Exec(`UPDATE events_partitions SET position = coalesce((SELECT max(e.id) FROM events e
WHERE e.partition = events_partitions.partition AND e.id <= ?), 0)`, ids[3]).Error)
			require.NoError(t, db.Exec(`INSERT INTO events_batches (partition, first_id, last_id, dispatched_at)
SELECT partition, 1, position, `+hourAgo+` FROM events_partitions WHERE position > 0`).Error)
			old := func(id int64, sub, status string, attempts int, next string) {
				require.NoError(t, db.Exec(`INSERT INTO events_deliveries (event_id, subscriber, partition, aggregate_type, aggregate_id, status, attempts,
last_error, next_attempt_at, processed_at)
SELECT id, ?, partition, aggregate_type, aggregate_id, ?, ?, 'refused', `+next+`, CASE WHEN ? = 'processed' THEN `+hourAgo+` END
FROM events WHERE id = ?`, sub, status, attempts, status, id).Error)
			}
			old(ids[1], "plan.backlog", "retrying", 1, database.NowPlus(db, -time.Second))
			old(ids[1], "nats.relay", "processed", 1, "NULL")
			old(ids[2], "plan.backlog", "failed", 10, "NULL")
			old(ids[2], "nats.relay", "processed", 1, "NULL")

			_, err := database.Migrate(ctx, db)
			require.NoError(t, err)

			require.NoError(t, db.Exec(`CREATE TABLE test_effects (event_id bigint NOT NULL, subscriber text NOT NULL)`).Error)
			var mu sync.Mutex
			relayed := map[int64]int{}
			audited := 0
			reg := events.NewRegistry()
			reg.AddTypes(events.Type{Type: "order.received", Owner: "sales", AggregateType: "sales_orders"})
			reg.MustSubscribe(events.Subscriber{Name: "plan.backlog", Types: []string{"order.received"},
				HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
					return tx.Exec("INSERT INTO test_effects (event_id, subscriber) VALUES (?, 'plan.backlog')", ev.ID).Error
				}})
			reg.MustSubscribe(events.Subscriber{Name: "nats.relay", Types: []string{"order.received"},
				Handle: func(ctx context.Context, ev events.Event) error { mu.Lock(); relayed[ev.ID]++; mu.Unlock(); return nil }})
			reg.MustSubscribe(events.Subscriber{Name: "audit", Types: []string{"order.received"},
				Handle: func(ctx context.Context, ev events.Event) error { mu.Lock(); audited++; mu.Unlock(); return nil }})
			disp := events.NewDispatcher(db, reg, events.DispatcherOptions{BackoffBase: time.Hour, BackoffMax: time.Hour})
			drain(t, disp)

			var backlog []int64
			require.NoError(t, database.Scan(db.Raw("SELECT event_id FROM test_effects ORDER BY event_id"), &backlog))
			require.Equal(t, []int64{ids[1], ids[4], ids[5]}, backlog, "the due retry and the two events the old dispatcher had not reached, once each")
			mu.Lock()
			require.Equal(t, map[int64]int{ids[4]: 1, ids[5]: 1}, relayed, "the relay continues from the old position")
			require.Zero(t, audited, "a subscriber new to this database starts at its end")
			mu.Unlock()

			j := events.NewJournal(db, reg)
			e, err := j.Get(ctx, ids[0])
			require.NoError(t, err)
			require.Equal(t, events.StatusProcessed, e.Status)
			require.NotNil(t, e.ProcessedAt)
			require.Greater(t, time.Since(*e.ProcessedAt), 50*time.Minute, "processed an hour ago, by the old dispatcher: %+v", e.Deliveries)
			require.Equal(t, events.StatusFailed, statusOf(t, j, ids[2]))
			require.Equal(t, events.StatusFailed, deliveryOf(t, j, ids[2], "plan.backlog").Status)
			for _, id := range []int64{ids[1], ids[3], ids[4], ids[5]} {
				require.Equal(t, events.StatusProcessed, statusOf(t, j, id), "event %d", id)
			}
		})
	}
}
