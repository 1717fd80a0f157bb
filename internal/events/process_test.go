package events_test

// The dispatcher processes of the process tests (crash_test.go): this
// test binary run again with TSEKH_EVENTS_HELPER set, their database, the
// outside subscriber's sink they all call, and the waits for what they
// deliver.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

const helperEnv = "TSEKH_EVENTS_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	os.Exit(dbtest.Run(m))
}

// helperMain is a dispatcher process: a local subscriber "ledger" that adds a
// row to crash_effects per event (no unique key: a second application would
// show), and an outside subscriber "sink" that reports each event to the
// test's HTTP server, after HELPER_SLOW. It prints "ready" once dispatching
// and stops gracefully on SIGTERM.
func helperMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	opts := database.Options{PostgresURL: os.Getenv("HELPER_PG_URL"), SQLitePath: os.Getenv("HELPER_SQLITE_PATH"), MaxConns: 4}
	db, err := database.Open(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	slow, _ := time.ParseDuration(os.Getenv("HELPER_SLOW"))
	batch, _ := strconv.Atoi(os.Getenv("HELPER_BATCH"))
	sink := os.Getenv("HELPER_SINK")
	pid := os.Getpid()
	client := &http.Client{Timeout: 10 * time.Second}
	reg := events.NewRegistry()
	reg.AddTypes(events.Type{Type: "thing.created", Owner: "test", AggregateType: "things"})
	subs := os.Getenv("HELPER_SUBS")
	if subs == "" {
		subs = "ledger,sink"
	}
	// HELPER_HOLD_AFTER=n: the ledger's n-th call in this process applies
	// its effect, prints "holding", and never returns, its batch
	// transaction open, until the process is killed.
	holdAfter, _ := strconv.ParseInt(os.Getenv("HELPER_HOLD_AFTER"), 10, 64)
	var ledgerCalls atomic.Int64
	if strings.Contains(subs, "ledger") {
		reg.MustSubscribe(events.Subscriber{Name: "ledger", Types: []string{"thing.created"},
			HandleTx: func(ctx context.Context, tx *gorm.DB, ev events.Event) error {
				if err := tx.Exec("INSERT INTO crash_effects (event_id, pid) VALUES (?, ?)", ev.ID, pid).Error; err != nil {
					return err
				}
				if n := ledgerCalls.Add(1); n == holdAfter {
					fmt.Printf("holding %d\n", ev.ID)
					select {}
				}
				return nil
			}})
	}
	if !strings.Contains(subs, "sink") {
		return runHelper(ctx, db, reg, opts, batch)
	}
	reg.MustSubscribe(events.Subscriber{Name: "sink", Types: []string{"thing.created"},
		Handle: func(ctx context.Context, ev events.Event) error {
			time.Sleep(slow)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s/?id=%d&pid=%d", sink, ev.ID, pid), nil)
			if err != nil {
				return err
			}
			res, err := client.Do(req)
			if err != nil {
				return err
			}
			_ = res.Body.Close()
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("sink answered %d", res.StatusCode)
			}
			return nil
		}})
	return runHelper(ctx, db, reg, opts, batch)
}

// runHelper dispatches the registry's subscribers until ctx ends.
func runHelper(ctx context.Context, db *gorm.DB, reg *events.Registry, opts database.Options, batch int) int {
	lease, err := time.ParseDuration(os.Getenv("HELPER_LEASE"))
	if err != nil {
		lease = 2 * time.Second
	}
	d := events.NewDispatcher(db, reg, events.DispatcherOptions{BatchSize: batch, Lease: lease, Timeout: 10 * time.Second,
		BackoffBase: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond, MaxAttempts: 1000})
	ropt := events.RunnerOptions{Interval: time.Second, ListenURL: opts.PostgresURL}
	if opts.PostgresURL == "" {
		ropt.Poll = 20 * time.Millisecond
	}
	r := events.NewRunner(d, ropt)
	if err := r.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	fmt.Println("ready")
	<-ctx.Done()
	t0 := time.Now()
	r.Wait()
	fmt.Fprintln(os.Stderr, "helper: runner stopped in", time.Since(t0))
	_ = database.Close(db)
	fmt.Println("stopped")
	return 0
}

// sink counts the outside subscriber's deliveries per event id.
type sink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen map[int64]int
	n    int
}

func newSink(t *testing.T) *sink {
	s := &sink{seen: map[int64]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64)
		if err != nil {
			http.Error(w, "no id", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.seen[id]++
		s.n++
		s.mu.Unlock()
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *sink) snapshot() map[int64]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int64]int, len(s.seen))
	for k, v := range s.seen {
		out[k] = v
	}
	return out
}

// proc is one helper process.
type proc struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	err     error         // its exit status, once done
	holding chan int64    // the event whose call the ledger holds (HELPER_HOLD_AFTER)
}

type procDB struct {
	dialect database.Dialect
	opts    database.Options
	db      *gorm.DB
}

func newProcDB(t *testing.T, d database.Dialect) procDB {
	t.Helper()
	opts := dbtest.Options(t, d)
	db, err := database.Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = database.Close(db) })
	_, err = database.Migrate(context.Background(), db)
	require.NoError(t, err)
	require.NoError(t, db.Exec("CREATE TABLE crash_effects (event_id bigint NOT NULL, pid integer NOT NULL)").Error)
	return procDB{dialect: d, opts: opts, db: db}
}

func startHelper(t *testing.T, pdb procDB, s *sink, slow time.Duration, batch int) *proc {
	t.Helper()
	return startHelperWith(t, pdb, s, slow, batch, "ledger,sink")
}

// startHelperWith starts a helper process that runs the named subscribers
// ("ledger", "sink" or both, comma-separated).
func startHelperWith(t *testing.T, pdb procDB, s *sink, slow time.Duration, batch int, subs string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), helperEnv+"=1", "HELPER_PG_URL="+pdb.opts.PostgresURL, "HELPER_SQLITE_PATH="+pdb.opts.SQLitePath,
		"HELPER_SINK="+s.srv.URL, "HELPER_SLOW="+slow.String(), "HELPER_BATCH="+strconv.Itoa(batch), "HELPER_SUBS="+subs)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	p := &proc{cmd: cmd, done: make(chan struct{}), holding: make(chan int64, 1)}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				close(ready)
			}
			if n, ok := strings.CutPrefix(sc.Text(), "holding "); ok {
				v, _ := strconv.ParseInt(n, 10, 64)
				p.holding <- v
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
	})
	select {
	case <-ready:
	case <-p.done:
		t.Fatalf("helper process exited before it was ready: %v", p.err)
	case <-time.After(30 * time.Second):
		t.Fatal("helper process not ready in 30s")
	}
	return p
}

// stop sends SIGTERM and waits for a clean exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.done:
		require.NoError(t, p.err, "a clean exit after SIGTERM")
	case <-time.After(60 * time.Second):
		t.Fatal("the process did not stop in 60s after SIGTERM")
	}
}

// kill9 kills the process outright.
func (p *proc) kill9(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the killed process did not go away")
	}
}

// writeEvents adds n events over the objects, a few per transaction, and
// returns their ids.
func writeEvents(t *testing.T, db *gorm.DB, n, objects int) []int64 {
	t.Helper()
	ids := make([]int64, 0, n)
	for i := 0; i < n; {
		require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
			for k := 0; k < 25 && i < n; k, i = k+1, i+1 {
				if err := events.Add(context.Background(), tx, events.New{Type: "thing.created", AggregateType: "things",
					AggregateID: int64(i % objects), Payload: map[string]any{"i": i}}); err != nil {
					return err
				}
				id, err := dbtest.LastEventID(tx)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return nil
		}))
	}
	return ids
}

// waitAllDone waits until every event has its local effect and its outside
// delivery, and nothing is pending.
func waitAllDone(t *testing.T, pdb procDB, s *sink, ids []int64) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		var effects int64
		require.NoError(t, database.Scan(pdb.db.Raw("SELECT count(DISTINCT event_id) FROM crash_effects"), &effects))
		seen := s.snapshot()
		missing := 0
		for _, id := range ids {
			if seen[id] == 0 {
				missing++
			}
		}
		if effects == int64(len(ids)) && missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not all delivered in 120s: %d of %d local effects, %d outside deliveries missing", effects, len(ids), missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// requireExactlyOnce checks that every event's local effect exists once, and
// that the journal has nothing pending.
func requireExactlyOnce(t *testing.T, pdb procDB, ids []int64) {
	t.Helper()
	var n, distinct int64
	require.NoError(t, pdb.db.Raw("SELECT count(*), count(DISTINCT event_id) FROM crash_effects").Row().Scan(&n, &distinct))
	require.EqualValues(t, len(ids), distinct, "every event's local effect was applied")
	require.Equal(t, distinct, n, "and none twice")
	reg := events.NewRegistry()
	reg.AddTypes(events.Type{Type: "thing.created", Owner: "test", AggregateType: "things"})
	// The outside subscriber's lane commits its batch after its calls: wait
	// for the last commit, not for ever.
	var sum events.Summary
	require.Eventually(t, func() bool {
		var err error
		sum, err = events.NewJournal(pdb.db, reg).Pending(context.Background())
		return err == nil && sum.Pending == 0
	}, 30*time.Second, 10*time.Millisecond, "nothing left pending in the journal: %+v", sum)
}

// sinkPassed counts the events the outside subscriber's lanes have passed.
func sinkPassed(t *testing.T, pdb procDB) int64 {
	t.Helper()
	var n int64
	require.NoError(t, database.Scan(pdb.db.Raw(`SELECT count(*) FROM events e JOIN events_lanes l ON l.subscriber = 'sink' AND l.partition = e.partition
WHERE e.id <= l.position`), &n))
	return n
}

// eachProcDB runs fn on PostgreSQL and on SQLite, in parallel, each with a
// database of its own for the helper processes and a sink for their
// outside deliveries.
func eachProcDB(t *testing.T, fn func(t *testing.T, pdb procDB, s *sink)) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, newProcDB(t, d), newSink(t))
		})
	}
}
