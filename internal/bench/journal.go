package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/tsekh/tsekh/internal/app"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// JournalResult is the time of a deep journal page.
type JournalResult struct {
	Events    int     `json:"events"`
	Query     string  `json:"query"`
	Requests  int     `json:"requests"`
	MedianMs  float64 `json:"median_ms"`
	P90Ms     float64 `json:"p90_ms"`
	FirstMs   float64 `json:"first_page_median_ms"` // the same filter, no cursor
	Generated float64 `json:"generate_seconds"`
}

// ClaimResult shows the dispatcher's reads with few and with many processed
// events in the journal: their plans and times should not change.
type ClaimResult struct {
	Empty   []QueryPlan `json:"at_0_processed"`
	Full    []QueryPlan `json:"at_journal_processed"`
	EmptyMs float64     `json:"batch_read_ms_at_0_processed"`
	FullMs  float64     `json:"batch_read_ms_at_journal_processed"`
	Plan    string      `json:"batch_read_plan"` // at the journal's size
}

// QueryPlan is one of the dispatcher's SELECTs, explained with ANALYZE.
type QueryPlan struct {
	Query  string  `json:"query"`
	Ms     float64 `json:"execution_ms"`
	Top    string  `json:"plan"` // the plan's node lines
	Shared int     `json:"shared_buffers"`
}

const journalTypes = `ARRAY['order.received', 'order.status_changed', 'prod_order.launched', 'prod_order.started', 'prod_order.completed']`

// journal fills the journal with processed events through INSERT ... SELECT
// generate_series, as if the dispatcher had handled them in batches of
// about 1,000 per partition, then times GET /api/v1/events with a type filter
// and a cursor deep in it, through the real HTTP app; and it explains the
// dispatcher's reads on an empty and on the full journal.
func (r *runner) journal(ctx context.Context, res *Result) error {
	var err error
	if res.Claim.Empty, err = r.explainPass(ctx, "claim plan: empty journal"); err != nil {
		return err
	}
	if err := r.reset(ctx); err != nil {
		return err
	}
	n := r.opt.Journal
	db := r.db.WithContext(ctx)
	r.p.set(fmt.Sprintf("journal: generating %d events", n), 0, 0)
	start := time.Now()
	err = db.Exec(`INSERT INTO events (type, aggregate_type, aggregate_id, partition, payload, actor_id, actor_name, created_at)
SELECT (`+journalTypes+`)[1 + i % 5], 'sales_orders', i / 5 + 1, (i / 5) % 16,
       jsonb_build_object('order_id', i / 5 + 1, 'lines', 2, 'source', 'shop', 'sync_id', 'shop-' || md5(i::text)),
       CASE WHEN i % 3 = 0 THEN 1 END, CASE WHEN i % 3 = 0 THEN 'Администратор' END,
       now() - make_interval(secs => (? - i) / 20.0)
FROM generate_series(1, ?) AS i`, n, n).Error
	if err != nil {
		return err
	}
	r.p.set("journal: recording it as dispatched", 0, 0)
	// Batches of about 1,000 events per partition (16 partitions: ids span 16,000).
	if err := db.Exec(`INSERT INTO events_batches (partition, first_id, last_id, dispatched_at)
SELECT partition, min(id), max(id), max(created_at) FROM events GROUP BY partition, id / 16000`).Error; err != nil {
		return err
	}
	// The bench's subscribers have passed all of it: their lanes stand at
	// each partition's last event.
	for _, s := range benchRegistry(twoSubs(nil)).Subscribers() {
		if err := db.Exec(`INSERT INTO events_subscribers (name, types, local, registered_at) VALUES (?, ?, ?, now())`,
			s.Name, `["`+benchType+`"]`, s.Local()).Error; err != nil {
			return err
		}
		if err := db.Exec(`INSERT INTO events_lanes (subscriber, partition, position, start_position)
SELECT ?, p, coalesce((SELECT max(id) FROM events e WHERE e.partition = p), 0), 0 FROM generate_series(0, ?) AS p`,
			s.Name, events.Partitions-1).Error; err != nil {
			return err
		}
	}
	if err := db.Exec("VACUUM ANALYZE events").Error; err != nil {
		return err
	}
	if err := db.Exec("VACUUM ANALYZE events_batches").Error; err != nil {
		return err
	}
	out := JournalResult{Events: n, Generated: round(time.Since(start).Seconds(), 1)}

	var maxID, minID int64
	if err := db.Raw("SELECT coalesce(max(id), 0), coalesce(min(id), 0) FROM events").Row().Scan(&maxID, &minID); err != nil {
		return err
	}
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		return err
	}
	a, err := app.New(r.db, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	token := "bench-admin-" + randomHex(12)
	if _, err := a.Auth.EnsureAdmin(ctx, token); err != nil {
		return err
	}
	h := a.HTTP()
	// A cursor 90% of the way down: most of the journal is newer than it.
	deep := minID + (maxID-minID)/10
	out.Query = "/api/v1/events?type=order.status_changed&limit=50&cursor=" + page.ForList("/api/v1/events", page.Cursor(deep))
	get := func(path string) (time.Duration, error) {
		req := httptest.NewRequest(http.MethodGet, path, nil).WithContext(ctx)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		t0 := time.Now()
		h.ServeHTTP(rec, req)
		d := time.Since(t0)
		if rec.Code != http.StatusOK {
			return 0, fmt.Errorf("GET %s: %d %s", path, rec.Code, rec.Body.String())
		}
		if !strings.Contains(rec.Body.String(), `"next_cursor"`) {
			return 0, fmt.Errorf("GET %s: no page in %.200s", path, rec.Body.String())
		}
		return d, nil
	}
	const requests = 30
	out.Requests = requests
	r.p.set("journal: deep pages", 0, requests)
	var deepTimes, firstTimes []time.Duration
	for i := range requests + 3 {
		d, err := get(out.Query)
		if err != nil {
			return err
		}
		f, err := get("/api/v1/events?type=order.status_changed&limit=50")
		if err != nil {
			return err
		}
		if i >= 3 { // the first requests warm the caches
			deepTimes, firstTimes = append(deepTimes, d), append(firstTimes, f)
			r.p.add(1)
		}
	}
	slices.Sort(deepTimes)
	slices.Sort(firstTimes)
	out.MedianMs, out.P90Ms, out.FirstMs = percentile(deepTimes, 50), percentile(deepTimes, 90), percentile(firstTimes, 50)
	res.JournalR = out
	res.JournalPageMs = out.MedianMs

	if res.Claim.Full, err = r.explainPass(ctx, "claim plan: full journal"); err != nil {
		return err
	}
	res.Claim.EmptyMs, _ = batchRead(res.Claim.Empty)
	res.Claim.FullMs, res.Claim.Plan = batchRead(res.Claim.Full)
	return nil
}

// batchRead picks the dispatcher's read of the next batch among its queries
// (the first one, which claims the partition too).
func batchRead(qs []QueryPlan) (float64, string) {
	for _, q := range qs {
		if strings.Contains(q.Query, "payload") && strings.Contains(q.Query, "LIMIT") {
			return q.Ms, q.Top
		}
	}
	return 0, ""
}

// explainPass adds 1,000 pending events, runs one dispatcher pass over them
// while recording its SQL, and explains (with ANALYZE) each query the pass
// made on the events tables, so that the plans shown are those of the
// dispatcher's own queries, whatever they are. The claim is a query too; its
// EXPLAIN ANALYZE runs in a transaction that is rolled back.
func (r *runner) explainPass(ctx context.Context, label string) ([]QueryPlan, error) {
	r.p.set(label, 0, 0)
	const k = 1000
	err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for i := range k {
			if err := events.Add(ctx, tx, events.New{Type: benchType, AggregateType: benchAggType, AggregateID: int64(i + 1),
				Payload: map[string]any{"n": i}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rec := &sqlRecorder{}
	traced := r.db.Session(&gorm.Session{Logger: rec})
	d := events.NewDispatcher(traced, benchRegistry(twoSubs(nil)), events.DispatcherOptions{Logger: r.opt.Logger})
	for deadline := time.Now().Add(30 * time.Second); ; {
		st, err := d.RunOnce(ctx)
		if err != nil {
			return nil, err
		}
		if st.Events > 0 || time.Now().After(deadline) {
			break
		}
		rec.reset()
		time.Sleep(time.Millisecond)
	}
	seen := map[string]bool{}
	var out []QueryPlan
	for _, q := range rec.all() {
		norm := strings.TrimSpace(q)
		upper := strings.ToUpper(norm)
		query := strings.HasPrefix(upper, "SELECT") || strings.HasPrefix(upper, "WITH")
		if !query || !strings.Contains(norm, "events") {
			continue
		}
		key := shape(norm)
		if seen[key] {
			continue
		}
		seen[key] = true
		qp, err := r.explain(ctx, norm)
		if err != nil {
			return nil, err
		}
		out = append(out, qp)
	}
	return out, nil
}

// shape is a query with its numbers blanked, to explain each query once.
func shape(q string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '#'
		}
		return r
	}, q)
}

func (r *runner) explain(ctx context.Context, q string) (QueryPlan, error) {
	var lines []string
	errRollback := errors.New("rolled back")
	err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := database.Scan(tx.Raw("EXPLAIN (ANALYZE, BUFFERS) "+q), &lines); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		return QueryPlan{}, fmt.Errorf("explain %q: %w", q, err)
	}
	qp := QueryPlan{Query: strings.Join(strings.Fields(q), " ")}
	var nodes []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "Execution Time:"):
			_, _ = fmt.Sscanf(t, "Execution Time: %f ms", &qp.Ms)
		case strings.HasPrefix(t, "Buffers: shared hit="):
			if qp.Shared == 0 {
				_, _ = fmt.Sscanf(t, "Buffers: shared hit=%d", &qp.Shared)
			}
		case strings.HasPrefix(t, "Planning"), strings.HasPrefix(t, "Buffers:"):
		default:
			nodes = append(nodes, l)
		}
	}
	qp.Top = strings.Join(nodes, "\n")
	return qp, nil
}

// sqlRecorder is a GORM logger that keeps the SQL of every statement.
type sqlRecorder struct {
	mu   sync.Mutex
	stmt []string
}

func (s *sqlRecorder) LogMode(logger.LogLevel) logger.Interface { return s }
func (s *sqlRecorder) Info(context.Context, string, ...any)     {}
func (s *sqlRecorder) Warn(context.Context, string, ...any)     {}
func (s *sqlRecorder) Error(context.Context, string, ...any)    {}
func (s *sqlRecorder) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	q, _ := fc()
	s.mu.Lock()
	s.stmt = append(s.stmt, q)
	s.mu.Unlock()
}

func (s *sqlRecorder) reset() {
	s.mu.Lock()
	s.stmt = nil
	s.mu.Unlock()
}

func (s *sqlRecorder) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.stmt)
}
