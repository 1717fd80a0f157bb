package dbtest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// A test's PostgreSQL sessions commit without waiting for the disk and
// compile no query, unless TEST_DATABASE_URL sets options of its own.
func TestPostgresURL_CommitsWithoutWaitingForTheDisk(t *testing.T) {
	db := New(t, database.Postgres)
	var sc, jit string
	require.NoError(t, database.Scan(db.Raw("SHOW synchronous_commit"), &sc))
	require.Equal(t, "off", sc)
	require.NoError(t, database.Scan(db.Raw("SHOW jit"), &jit))
	require.Equal(t, "off", jit)

	t.Setenv("TEST_DATABASE_URL", DefaultPostgresURL+"&options=-c%20work_mem%3D1234kB")
	require.Equal(t, DefaultPostgresURL+"&options=-c%20work_mem%3D1234kB", PostgresURL(), "the URL's own options are kept")
}

// TEST_DIALECTS picks the dialects of a test process: both when unset, the
// one it names, and a clear refusal of anything else.
func TestDialects_FromTheEnvironment(t *testing.T) {
	t.Setenv("TEST_DIALECTS", "")
	require.Equal(t, []database.Dialect{database.Postgres, database.SQLite}, Dialects())
	t.Setenv("TEST_DIALECTS", "sqlite")
	require.Equal(t, []database.Dialect{database.SQLite}, Dialects())
	t.Setenv("TEST_DIALECTS", "postgres")
	require.Equal(t, []database.Dialect{database.Postgres}, Dialects())
	t.Setenv("TEST_DIALECTS", "mysql")
	require.PanicsWithValue(t, `dbtest: TEST_DIALECTS is "mysql": give postgres, sqlite or nothing (both)`, func() { Dialects() })
}
