package dbtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// The journal check (docs/outbox.md, "Delivery guarantees": no change without its event): on PostgreSQL, every test schema
// New and Options prepare gets, after its migrations, test-only triggers that
// record the transaction id (pg_current_xact_id) of every statement that
// changed rows, per table, and of every event written. They live in a
// schema of their own beside the test's (its name + checkSuffix), so that
// the test's schema holds exactly what the migrations made. When the test
// ends, CheckEvents fails it for every committed transaction that changed a
// module's owned data (any table contracts.Unjournaled does not declare)
// and wrote no event. A rolled-back transaction leaves no record: its
// records roll back with it.
//
// A request's transactions must also write an event naming the request's
// user: apptest records the span of transaction ids of each request it
// sends and checks that with CheckRequests. A local subscriber's work (its
// transaction moves a lane, contracts.Exemption.Progress) is the system's:
// its events name no actor.

// checkSuffix names the schema of the check's records beside a test schema.
const checkSuffix = "_journal"

// installJournalCheck creates the check's schema and its triggers on every
// table of the test's schema.
func installJournalCheck(ctx context.Context, db *gorm.DB) error {
	var schema string
	if err := database.Scan(db.WithContext(ctx).Raw("SELECT current_schema()"), &schema); err != nil {
		return err
	}
	cs := quoteIdent(schema + checkSuffix)
	stmts := []string{
		"CREATE SCHEMA " + cs,
		// One row per statement that changed rows of a table: how many, and
		// one of them, to name it in the report. scope is 'row' for a change
		// of owned data, 'columns' for an UPDATE of exempt columns only,
		// 'table' for any change of a table exempt as a whole.
		"CREATE TABLE " + cs + ".changes (xid xid8 NOT NULL, tbl text NOT NULL, op text NOT NULL, scope text NOT NULL, n bigint NOT NULL, sample text)",
		"CREATE INDEX ON " + cs + ".changes (xid)",
		// One row per statement that wrote events: their types and actors.
		"CREATE TABLE " + cs + ".events (xid xid8 NOT NULL, n bigint NOT NULL, types text[] NOT NULL, actor_ids bigint[] NOT NULL)",
		"CREATE INDEX ON " + cs + ".events (xid)",
		// Transactions a test wrote as fixtures (Fixture).
		"CREATE TABLE " + cs + ".fixtures (xid xid8 PRIMARY KEY)",
		// TG_ARGV[0]: '*' for a table exempt as a whole (its changes are only
		// counted), else the columns exempt, as a text[] literal.
		`CREATE FUNCTION ` + cs + `.record_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	exempt text[];
	k bigint;
	s text;
	sc text := 'row';
BEGIN
	IF TG_ARGV[0] = '*' THEN
		sc := 'table';
		IF TG_OP = 'DELETE' THEN
			SELECT count(*) INTO k FROM o;
		ELSE
			SELECT count(*) INTO k FROM n;
		END IF;
	ELSIF TG_OP = 'INSERT' THEN
		SELECT count(*), left((array_agg(to_jsonb(r)::text))[1], 300) INTO k, s FROM n r;
	ELSIF TG_OP = 'DELETE' THEN
		SELECT count(*), left((array_agg(to_jsonb(r)::text))[1], 300) INTO k, s FROM o r;
	ELSE
		exempt := TG_ARGV[0]::text[];
		SELECT count(*), left((array_agg(j::text))[1], 300) INTO k, s
		FROM (SELECT to_jsonb(r) - exempt AS j FROM n r EXCEPT ALL SELECT to_jsonb(r) - exempt FROM o r) d;
		IF k = 0 AND cardinality(exempt) > 0 THEN
			sc := 'columns';
			SELECT count(*), left((array_agg(j::text))[1], 300) INTO k, s
			FROM (SELECT to_jsonb(r) AS j FROM n r EXCEPT ALL SELECT to_jsonb(r) FROM o r) d;
		END IF;
	END IF;
	IF k > 0 THEN
		INSERT INTO ` + cs + `.changes VALUES (pg_current_xact_id(), TG_TABLE_NAME, TG_OP, sc, k, s);
	END IF;
	RETURN NULL;
END $$`,
		`CREATE FUNCTION ` + cs + `.record_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO ` + cs + `.events
	SELECT pg_current_xact_id(), count(*), array_agg(DISTINCT type),
		coalesce(array_agg(DISTINCT actor_id) FILTER (WHERE actor_id IS NOT NULL), '{}')
	FROM n HAVING count(*) > 0;
	RETURN NULL;
END $$`,
	}
	var tables []string
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'goose_db_version' ORDER BY tablename`),
		&tables)
	if err != nil {
		return err
	}
	for name, ex := range contracts.Unjournaled {
		if !slices.Contains(tables, name) {
			return fmt.Errorf("contracts.Unjournaled declares the table %s, which the migrations do not create", name)
		}
		for _, c := range ex.Columns {
			var n int
			if err := database.Scan(db.WithContext(ctx).Raw(`SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?`, name, c),
				&n); err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("contracts.Unjournaled declares the column %s.%s, which the migrations do not create", name, c)
			}
		}
	}
	for _, tbl := range tables {
		arg := "{}"
		if ex, ok := contracts.Unjournaled[tbl]; ok {
			arg = "*"
			if len(ex.Columns) > 0 {
				arg = "{" + strings.Join(ex.Columns, ",") + "}"
			}
		}
		q := quoteIdent(tbl)
		for _, op := range []struct{ name, ref string }{
			{"INSERT", "NEW TABLE AS n"}, {"UPDATE", "OLD TABLE AS o NEW TABLE AS n"}, {"DELETE", "OLD TABLE AS o"},
		} {
			if tbl == "events" && op.name != "INSERT" {
				continue // the dispatcher's bookkeeping of a journal that may be large
			}
			stmts = append(stmts, fmt.Sprintf(`CREATE TRIGGER journal_check_%s AFTER %s ON %s REFERENCING %s FOR EACH STATEMENT EXECUTE FUNCTION %s.record_change('%s')`,
				strings.ToLower(op.name), op.name, q, op.ref, cs, arg))
		}
		if tbl == "events" {
			stmts = append(stmts, `CREATE TRIGGER journal_check_events AFTER INSERT ON events REFERENCING NEW TABLE AS n FOR EACH STATEMENT EXECUTE FUNCTION `+cs+`.record_events()`)
		}
	}
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, s := range stmts {
			if err := tx.Exec(s).Error; err != nil {
				return fmt.Errorf("%w: %s", err, s)
			}
		}
		return nil
	})
}

// dropJournalCheck removes the check's schema of the test schema.
func dropJournalCheck(db *gorm.DB, schema string) {
	_ = db.Exec("DROP SCHEMA IF EXISTS " + quoteIdent(schema+checkSuffix) + " CASCADE").Error
}

// checkSchema returns the check's schema of db's test schema, or "" when it
// has none (SQLite; a database migrated by At).
func checkSchema(ctx context.Context, db *gorm.DB) (string, error) {
	if database.DialectOf(db) != database.Postgres {
		return "", nil
	}
	var s *string
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT nspname FROM pg_namespace WHERE nspname = current_schema() || ?`, checkSuffix), &s)
	if err != nil || s == nil {
		return "", err
	}
	return quoteIdent(*s), nil
}

// owned is the condition on the check's changes row c that it changed a
// module's owned data: a row, or columns exempt only in a local subscriber's
// transaction outside of one. It takes two arguments: the tables with such
// columns, then the tables that mark a subscriber's transaction.
func owned(cs string) string {
	return `(c.scope = 'row' OR (c.scope = 'columns' AND c.tbl IN ? AND NOT EXISTS (
	SELECT 1 FROM ` + cs + `.changes p WHERE p.xid = c.xid AND p.tbl IN ?)))`
}

// ownedArgs are owned's arguments.
func ownedArgs() []any {
	var bySubscriber, progress []string
	for name, ex := range contracts.Unjournaled {
		if ex.BySubscriber {
			bySubscriber = append(bySubscriber, name)
		}
		if ex.Progress {
			progress = append(progress, name)
		}
	}
	sort.Strings(bySubscriber)
	sort.Strings(progress)
	// IN () is not SQL: a name no table has stands for none.
	return []any{append(bySubscriber, "-"), append(progress, "-")}
}

// maxGaps is how many transactions the report describes.
const maxGaps = 10

// checkJournal returns an error describing every committed transaction that
// changed owned data and wrote no event.
func checkJournal(ctx context.Context, db *gorm.DB) error {
	cs, err := checkSchema(ctx, db)
	if err != nil || cs == "" {
		return err
	}
	var gaps []struct {
		Xid     string
		Changes string
		Sample  string
	}
	err = database.Scan(db.WithContext(ctx).Raw(`SELECT c.xid::text AS xid,
	string_agg(c.tbl || ' ' || c.op || ' ' || c.n, ', ' ORDER BY c.tbl, c.op) AS changes,
	(array_agg(c.tbl || ': ' || c.sample ORDER BY c.tbl) FILTER (WHERE c.sample IS NOT NULL))[1] AS sample
FROM `+cs+`.changes c
WHERE c.xid IN (SELECT c.xid FROM `+cs+`.changes c WHERE `+owned(cs)+`)
	AND NOT EXISTS (SELECT 1 FROM `+cs+`.events e WHERE e.xid = c.xid)
	AND NOT EXISTS (SELECT 1 FROM `+cs+`.fixtures f WHERE f.xid = c.xid)
GROUP BY c.xid ORDER BY c.xid`, ownedArgs()...), &gaps)
	if err != nil {
		return err
	}
	if len(gaps) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d committed transactions changed owned data and wrote no event (declare tables that are not owned data in contracts.Unjournaled):", len(gaps))
	for i, g := range gaps {
		if i == maxGaps {
			fmt.Fprintf(&b, "\n  … and %d more", len(gaps)-maxGaps)
			break
		}
		fmt.Fprintf(&b, "\n  transaction %s changed %s; e.g. %s", g.Xid, g.Changes, g.Sample)
	}
	return errors.New(b.String())
}

// Fixture runs fn in a transaction that the journal check does not hold to
// the rule, and returns its error: for a test that writes owned rows
// directly, as an older tsekh or another clock would have left them (a
// back-dated created_at, an expired token), or that tries the schema's own
// constraints. Services never write through it.
func Fixture(db *gorm.DB, fn func(tx *gorm.DB) error) error {
	ctx := db.Statement.Context
	if ctx == nil {
		ctx = context.Background()
	}
	cs, err := checkSchema(ctx, db)
	if err != nil {
		return err
	}
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if cs != "" {
			if err := tx.Exec("INSERT INTO " + cs + ".fixtures VALUES (pg_current_xact_id())").Error; err != nil {
				return err
			}
		}
		return fn(tx)
	})
}

// Request is a request a test sent: the transactions that started while it
// ran (from the next transaction id when it began up to, not including, the
// next one when it ended), and the user it was sent as, by id or by name
// (an integration's user, such as the shop's).
type Request struct {
	From, To  uint64
	ActorID   int64
	ActorName string
	What      string // method and path, to name it
}

// Requests records the requests sent to a test's service, for
// CheckRequests. It is safe for concurrent use.
type Requests struct {
	mu   sync.Mutex
	list []Request
}

// Add records a request.
func (r *Requests) Add(req Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, req)
}

// NextXid returns the next transaction id the server will assign, and false
// when db has no journal check (SQLite, a database migrated by At).
func NextXid(ctx context.Context, db *gorm.DB) (uint64, bool) {
	if database.DialectOf(db) != database.Postgres {
		return 0, false
	}
	var s string
	if err := database.Scan(db.WithContext(ctx).Raw("SELECT pg_snapshot_xmax(pg_current_snapshot())::text"), &s); err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// CheckRequests fails the test for every transaction a request ran that
// changed owned data and wrote no event naming the request's user (or the
// user of another request running at the same time). A local subscriber's
// transaction (a dispatcher pass during the request) is the system's and
// is left to the check of every transaction.
func CheckRequests(t testing.TB, db *gorm.DB, r *Requests) {
	t.Helper()
	r.mu.Lock()
	reqs := slices.Clone(r.list)
	r.mu.Unlock()
	if len(reqs) == 0 {
		return
	}
	ctx := context.Background()
	cs, err := checkSchema(ctx, db)
	if err != nil || cs == "" {
		return // the test closed the database itself, or it has no check
	}
	var txs []struct {
		Xid     string
		Changes string
		Actors  string // the actor ids of its events, comma-separated
	}
	err = database.Scan(db.WithContext(ctx).Raw(`SELECT c.xid::text AS xid,
	string_agg(DISTINCT c.tbl || ' ' || c.op, ', ') AS changes,
	coalesce((SELECT string_agg(a::text, ',') FROM `+cs+`.events e, unnest(e.actor_ids) a WHERE e.xid = c.xid), '') AS actors
FROM `+cs+`.changes c
WHERE `+owned(cs)+`
	AND NOT EXISTS (SELECT 1 FROM `+cs+`.changes p WHERE p.xid = c.xid AND p.tbl IN ?)
	AND NOT EXISTS (SELECT 1 FROM `+cs+`.fixtures f WHERE f.xid = c.xid)
GROUP BY c.xid`, append(ownedArgs(), ownedArgs()[1])...), &txs)
	if err != nil {
		t.Errorf("dbtest: the journal check of requests: %v", err)
		return
	}
	names := map[string]int64{}
	for i, q := range reqs {
		if q.ActorID == 0 && q.ActorName != "" {
			id, ok := names[q.ActorName]
			if !ok {
				_ = database.Scan(db.WithContext(ctx).Raw("SELECT id FROM auth_users WHERE name = ? ORDER BY id LIMIT 1", q.ActorName), &id)
				names[q.ActorName] = id
			}
			reqs[i].ActorID = id
		}
	}
	bad := 0
	for _, tx := range txs {
		xid, err := strconv.ParseUint(tx.Xid, 10, 64)
		if err != nil {
			t.Errorf("dbtest: transaction id %q: %v", tx.Xid, err)
			return
		}
		var in []Request
		for _, q := range reqs {
			if xid >= q.From && xid < q.To {
				in = append(in, q)
			}
		}
		if len(in) == 0 {
			continue // not a request's: a test's own call, a dispatcher pass
		}
		actors := strings.Split(tx.Actors, ",")
		ok := false
		for _, q := range in {
			if q.ActorID != 0 && slices.Contains(actors, strconv.FormatInt(q.ActorID, 10)) {
				ok = true
			}
		}
		if ok {
			continue
		}
		if bad++; bad > maxGaps {
			continue
		}
		who := make([]string, len(in))
		for i, q := range in {
			who[i] = fmt.Sprintf("%s as user %d", q.What, q.ActorID)
		}
		t.Errorf("dbtest: transaction %s of the request %s changed %s and wrote no event naming that user (its events' actors: %q)",
			tx.Xid, strings.Join(who, " or "), tx.Changes, tx.Actors)
	}
	if bad > maxGaps {
		t.Errorf("dbtest: … and %d more transactions of requests with no event naming their user", bad-maxGaps)
	}
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
