package events_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

// A delivery keeps its latest 20 failures, oldest first, also once it has
// succeeded, for an outside subscriber and for a local one alike; the
// successes before and after write none.
func TestRetries_FailureHistoryIsBounded(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		const n = 25
		var outside atomic.Int64
		f := newFixture(t, db,
			events.Subscriber{Name: "callback", Types: []string{"thing.created"},
				Handle: func(ctx context.Context, ev events.Event) error {
					if ev.AggregateID == 1 {
						if k := outside.Add(1); k <= n {
							return events.HTTPStatus(502, fmt.Errorf("callback answered 502 (try %d)", k))
						}
					}
					return nil
				}},
			events.Subscriber{Name: "ledger", Types: []string{"thing.created"},
				HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
					if ev.AggregateID != 1 {
						return nil
					}
					// Fail the first n attempts as the journal counts them (a
					// batch may call it twice for its first attempt).
					var attempts int
					if err := database.Scan(tx.Raw("SELECT coalesce(max(attempts), 0) FROM events_deliveries WHERE event_id = ? AND subscriber = 'ledger'", ev.ID), &attempts); err != nil {
						return err
					}
					if attempts < n {
						return fmt.Errorf("ledger refused (try %d)", attempts+1)
					}
					return nil
				}},
		)
		d := events.NewDispatcher(db, f.reg, fastRetries(n+1))
		id := add(t, db, "thing.created", 1)
		other := add(t, db, "thing.created", 2)
		settle(t, d, "both delivered after 25 failures", func() bool { return statusOf(t, f.journal, id) == events.StatusProcessed })
		for _, sub := range []string{"callback", "ledger"} {
			dl := deliveryOf(t, f.journal, id, sub)
			require.Equal(t, n+1, dl.Attempts, sub)
			require.Len(t, dl.Failures, 20, sub)
			for i, fl := range dl.Failures {
				require.Contains(t, fl.Error, fmt.Sprintf("(try %d)", n-20+1+i), sub)
				require.True(t, fl.Spent)
				if sub == "callback" {
					require.Equal(t, 502, *fl.HTTPStatus)
				} else {
					require.Nil(t, fl.HTTPStatus)
				}
			}
			require.Empty(t, deliveryOf(t, f.journal, other, sub).Failures)
		}
		var rows int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM events_delivery_failures"), &rows))
		require.EqualValues(t, 40, rows)

		// A replay starts the callback's records afresh, its failures with them.
		outside.Store(n - 1) // the replayed delivery fails once more
		_, err := f.journal.Replay(context.Background(), "callback", id)
		require.NoError(t, err)
		settle(t, d, "the replay delivered", func() bool { return deliveryOf(t, f.journal, id, "callback").Status == events.StatusProcessed })
		dl := deliveryOf(t, f.journal, id, "callback")
		require.Len(t, dl.Failures, 1)
		require.Contains(t, dl.Failures[0].Error, fmt.Sprintf("(try %d)", n))
		require.Len(t, deliveryOf(t, f.journal, id, "ledger").Failures, 20, "the other subscriber's stay")
	})
}

// An error that names a URL (a net/http client's *url.Error does) is
// recorded without the URL's user, password and query string, in the last
// error and in the history alike.
func TestRetries_RecordedErrorsHideURLSecrets(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db, events.Subscriber{Name: "callback", Types: []string{"thing.created"},
			Handle: func(ctx context.Context, ev events.Event) error {
				return fmt.Errorf("callback: %w", &url.Error{Op: "Post", URL: "https://shop:pw-s3cret@shop.example/cb?token=q-s3cret#f",
					Err: errors.New("connection refused")})
			}})
		d := events.NewDispatcher(db, f.reg, fastRetries(3))
		id := add(t, db, "thing.created", 1)
		settle(t, d, "the callback failed", func() bool { return deliveryOf(t, f.journal, id, "callback").Status == events.StatusFailed })
		dl := deliveryOf(t, f.journal, id, "callback")
		require.Equal(t, `callback: Post "https://shop.example/cb": connection refused`, dl.LastError)
		require.Equal(t, events.StatusFailed, dl.Status)
		require.Len(t, dl.Failures, 3)
		for _, fl := range dl.Failures {
			require.Equal(t, dl.LastError, fl.Error)
		}
	})
}
