package dbtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// The journal check tells a committed change of owned data with no event
// from every change that keeps the rule: with its event, rolled back, of a
// table or column declared in contracts.Unjournaled, or a test's fixture.
func TestJournalCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := New(t, database.Postgres)
	var admin int64
	require.NoError(t, database.Scan(db.Raw("INSERT INTO auth_users (name, role) VALUES ('Проверка', 'admin') RETURNING id"), &admin))
	require.NoError(t, db.Exec("INSERT INTO auth_tokens (user_id, name, hash) VALUES (?, 'test', 'h1')", admin).Error)
	gap := func() string {
		t.Helper()
		err := checkJournal(ctx, db)
		if err == nil {
			return ""
		}
		return err.Error()
	}
	// The two statements above: a user and a token, and no event.
	msg := gap()
	require.Contains(t, msg, "2 committed transactions changed owned data and wrote no event")
	require.Contains(t, msg, "auth_users INSERT 1; e.g. auth_users: {")
	require.Contains(t, msg, `"name": "Проверка"`)
	require.Contains(t, msg, "auth_tokens INSERT 1")
	require.NoError(t, db.Exec("TRUNCATE "+quoteIdent(schemaOf(t, db)+checkSuffix)+".changes").Error)
	require.Empty(t, gap())

	// Kept: with its event; rolled back; the token's last_used_at alone;
	// the dispatcher's bookkeeping; a fixture.
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("UPDATE auth_users SET name = 'Проверка 2' WHERE id = ?", admin).Error; err != nil {
			return err
		}
		return events.Add(ctx, tx, events.New{Type: "test.renamed", AggregateType: "auth_users", AggregateID: admin, Payload: map[string]any{}})
	}))
	require.Error(t, db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, tx.Exec("UPDATE auth_users SET name = 'Проверка 3' WHERE id = ?", admin).Error)
		return context.Canceled
	}))
	require.NoError(t, db.Exec("UPDATE auth_tokens SET last_used_at = now() WHERE user_id = ?", admin).Error)
	require.NoError(t, db.Exec("INSERT INTO events_compaction (partition, upto) VALUES (0, 1)").Error)
	require.NoError(t, db.Exec("UPDATE auth_users SET name = name WHERE id = ?", admin).Error, "a no-op update changes nothing")
	require.NoError(t, Fixture(db, func(tx *gorm.DB) error {
		return tx.Exec("UPDATE auth_users SET created_at = created_at - interval '1 day' WHERE id = ?", admin).Error
	}))
	require.Empty(t, gap())

	// Broken: any other column of the token, a delete, with no event.
	require.NoError(t, db.Exec("UPDATE auth_tokens SET last_used_at = now(), revoked_at = now() WHERE user_id = ?", admin).Error)
	msg = gap()
	require.Contains(t, msg, "1 committed transactions")
	require.Contains(t, msg, "auth_tokens UPDATE 1")
	require.Contains(t, msg, `"revoked_at": "`)
	require.NotContains(t, msg, `"last_used_at"`, "the exempt column is left out of the sample")
	require.NoError(t, db.Exec("DELETE FROM auth_tokens").Error)
	require.Contains(t, gap(), "auth_tokens DELETE 1")
	require.NoError(t, db.Exec("TRUNCATE "+quoteIdent(schemaOf(t, db)+checkSuffix)+".changes").Error)

	// Columns a subscriber keeps as a copy of other modules' events: exempt
	// in a subscriber's transaction (it moves a lane), not in any other.
	require.NoError(t, Fixture(db, func(tx *gorm.DB) error {
		return tx.Exec(`INSERT INTO sales_orders (id, source, customer_name) VALUES (1, 'manual', 'x');
INSERT INTO sales_order_items (id, order_id, product_id, sku, qty) VALUES (1, 1, 1, 'X', 1);
INSERT INTO events_lanes (subscriber, partition, position, start_position) VALUES ('sales.production', 0, 0, 0)`).Error
	}))
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("UPDATE sales_order_items SET status = 'in_production', eta = '2026-12-20' WHERE id = 1").Error; err != nil {
			return err
		}
		return tx.Exec("UPDATE events_lanes SET position = 1").Error
	}))
	require.Empty(t, gap())
	require.NoError(t, db.Exec("UPDATE sales_order_items SET eta = '2026-12-21' WHERE id = 1").Error)
	require.Contains(t, gap(), "sales_order_items UPDATE 1")
	require.NoError(t, db.Exec("TRUNCATE "+quoteIdent(schemaOf(t, db)+checkSuffix)+".changes").Error)
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("UPDATE sales_order_items SET qty = 2, eta = '2026-12-22' WHERE id = 1").Error; err != nil {
			return err
		}
		return tx.Exec("UPDATE events_lanes SET position = 2").Error
	}))
	require.Contains(t, gap(), "sales_order_items UPDATE 1", "a subscriber that changes other columns writes its event")
	require.NoError(t, db.Exec("TRUNCATE "+quoteIdent(schemaOf(t, db)+checkSuffix)+".changes").Error)
}

// A request's transaction must name the request's user in one of its
// events; one by another user, or by no one, fails the test.
func TestJournalCheck_Requests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := New(t, database.Postgres)
	var users []int64
	require.NoError(t, Fixture(db, func(tx *gorm.DB) error {
		return database.Scan(tx.Raw("INSERT INTO auth_users (name, role) VALUES ('Мастер', 'master'), ('Плановик', 'planner') RETURNING id"), &users)
	}))
	n := 0
	request := func(as events.Actor) Request {
		n++
		from, ok := NextXid(ctx, db)
		require.True(t, ok)
		err := db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("UPDATE auth_users SET email = ? WHERE id = ?", fmt.Sprintf("%d@example.com", n), users[0]).Error; err != nil {
				return err
			}
			return events.Add(events.WithActor(ctx, as), tx, events.New{Type: "test.changed", AggregateType: "auth_users", AggregateID: users[0], Payload: map[string]any{}})
		})
		require.NoError(t, err)
		to, _ := NextXid(ctx, db)
		return Request{From: from, To: to, ActorID: users[0], What: "PATCH /test"}
	}
	var ok Requests
	ok.Add(request(events.Actor{ID: users[0], Name: "Мастер"}))
	byName := request(events.Actor{ID: users[0], Name: "Мастер"})
	byName.ActorID, byName.ActorName = 0, "Мастер"
	ok.Add(byName)
	rec := &recorder{TB: t}
	CheckRequests(rec, db, &ok)
	require.Empty(t, rec.errors)

	var bad Requests
	bad.Add(request(events.Actor{ID: users[1], Name: "Плановик"}))
	CheckRequests(rec, db, &bad)
	require.Len(t, rec.errors, 1)
	require.Contains(t, rec.errors[0], "of the request PATCH /test as user")
	require.Contains(t, rec.errors[0], "changed auth_users UPDATE and wrote no event naming that user")
}

func schemaOf(t *testing.T, db *gorm.DB) string {
	var s string
	require.NoError(t, database.Scan(db.Raw("SELECT current_schema()"), &s))
	return s
}

// recorder keeps the errors a check reports instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// CheckEvents runs on the checks' shared connections, each set to the
// test's own schema: a gap in one schema is reported for it, and not for
// another test's schema checked on the same connections right after.
func TestCheckEvents_EachSchemaOnTheSharedConnections(t *testing.T) {
	t.Parallel()
	gapped := Options(t, database.Postgres)
	clean := Options(t, database.Postgres)
	db, err := database.Open(context.Background(), gapped)
	require.NoError(t, err)
	defer func() { _ = database.Close(db) }()
	require.NoError(t, db.Exec("INSERT INTO auth_users (name, role) VALUES ('Без события', 'admin')").Error)

	for range 3 { // more than once: the connections' search_path is the schema's each time
		r := &recorder{TB: t}
		CheckEvents(r, gapped)
		require.Len(t, r.errors, 1)
		require.Contains(t, r.errors[0], "auth_users INSERT 1")
		r = &recorder{TB: t}
		CheckEvents(r, clean)
		require.Empty(t, r.errors)
	}
	require.NoError(t, db.Exec("TRUNCATE "+quoteIdent(schemaOf(t, db)+checkSuffix)+".changes").Error)
}
