package dbtest

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

func TestMain(m *testing.M) {
	os.Exit(Run(m))
}

// state is what a test can see of its schema: its name, its row counts,
// the next values of its sequences and its journal check's records.
type state struct {
	Schema            string
	Users, Goose      int64
	NextUser, Changes int64
}

func stateOf(t *testing.T, db *gorm.DB) state {
	t.Helper()
	var s state
	require.NoError(t, database.Scan(db.Raw(`SELECT current_schema() AS schema,
		(SELECT count(*) FROM auth_users) AS users,
		(SELECT count(*) FROM goose_db_version) AS goose,
		(SELECT count(*) FROM `+quoteIdent(schemaOf(t, db)+checkSuffix)+`.changes) AS changes`), &s))
	require.NoError(t, database.Scan(db.Raw("SELECT nextval(pg_get_serial_sequence('auth_users', 'id'))"), &s.NextUser))
	return s
}

// A schema a test is done with is given to the next test as the template
// left it: its rows and its journal check's records gone, the migrations'
// rows back, its sequences where they were. One whose structure a test
// changed is dropped instead.
func TestPool_SchemaGivenBackAsTheTemplateLeftIt(t *testing.T) {
	// Not parallel: the three subtests take the pool's schemas in turn.
	var fresh state
	t.Run("writes", func(t *testing.T) {
		db := New(t, database.Postgres)
		fresh = stateOf(t, db)
		require.NoError(t, Fixture(db, func(tx *gorm.DB) error {
			for range 3 {
				if err := tx.Exec("INSERT INTO auth_users (name, role) VALUES ('x', 'admin')").Error; err != nil {
					return err
				}
			}
			return tx.Exec("DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)").Error
		}))
		changed := stateOf(t, db)
		require.Equal(t, fresh.Users+3, changed.Users)
		require.NotZero(t, changed.Changes, "the journal check recorded the fixture")
	})
	var reused state
	t.Run("reuses", func(t *testing.T) {
		db := New(t, database.Postgres)
		reused = stateOf(t, db)
		require.Equal(t, fresh, reused, "the same schema, as the template left it")
		// A test that changes the structure: its schema is not given again.
		require.NoError(t, db.Exec("ALTER TABLE auth_users DISABLE TRIGGER USER").Error)
	})
	t.Run("after a change of structure", func(t *testing.T) {
		db := New(t, database.Postgres)
		s := stateOf(t, db)
		require.NotEqual(t, reused.Schema, s.Schema, "a schema whose structure changed is dropped")
		var n int64
		require.NoError(t, database.Scan(db.Raw("SELECT count(*) FROM pg_namespace WHERE nspname IN (?, ?)", reused.Schema, reused.Schema+checkSuffix), &n))
		require.Zero(t, n, "dropped with its journal check")
	})
}

// When the binary's tests end, Run drops every schema the pool made.
func TestPool_DropAll(t *testing.T) {
	p := &schemaPool{on: true}
	ctx := context.Background()
	opts, schema, _ := target(t, database.Postgres)
	ok, err := copyTemplate(ctx, opts, schema)
	require.NoError(t, err)
	require.True(t, ok)
	ps, ok := p.adopt(ctx, schema)
	require.True(t, ok)
	p.giveBack(ctx, ps)
	require.Len(t, p.free, 1)
	p.dropAll()
	require.Empty(t, p.free)
	admin := New(t, database.Postgres)
	var n int64
	require.NoError(t, database.Scan(admin.Raw("SELECT count(*) FROM pg_namespace WHERE nspname IN (?, ?)", schema, schema+checkSuffix), &n))
	require.Zero(t, n)
}
