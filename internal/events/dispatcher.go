package events

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// DispatcherOptions tune the dispatcher; zero values take the defaults.
type DispatcherOptions struct {
	BatchSize   int           // events read per partition and batch (1000)
	MaxAttempts int           // attempts before a delivery is failed (10)
	Timeout     time.Duration // per delivery (30s)
	Lease       time.Duration // how long a partition stays claimed without renewal (1m)
	Workers     int           // partitions dispatched in parallel (2 on PostgreSQL, 1 on SQLite)
	BackoffBase time.Duration // first retry delay (1s), doubled per attempt, with jitter
	BackoffMax  time.Duration // retry delay cap (1h)
	Owner       string        // this dispatcher's name in leases (host-pid-random)
	Logger      *slog.Logger
}

func (o *DispatcherOptions) defaults(d database.Dialect) {
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Lease <= 0 {
		o.Lease = time.Minute
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if d == database.SQLite {
		o.Workers = 1
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = time.Second
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = time.Hour
	}
	if o.Owner == "" {
		host, _ := os.Hostname()
		o.Owner = fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), rand.IntN(0x10000))
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Dispatcher hands committed events to their subscribers.
//
// The journal is split into partitions by object. Each partition has a
// position: every event up to it has reached every subscriber, except the
// deliveries recorded in events_deliveries (failed and retrying ones, events
// held back behind an earlier failure of the same object, and the successful
// deliveries of such events). A pass claims a partition with a lease, reads the
// next batch after its position, calls the subscribers and, in one
// transaction, applies the local subscribers' effects, records the exceptions
// and the batch, and moves the position. A pass therefore writes a few rows per
// batch, however many events and subscribers it covers.
type Dispatcher struct {
	db      *gorm.DB
	reg     *Registry
	opt     DispatcherOptions
	dialect database.Dialect
	metrics *Metrics

	mu          sync.Mutex
	checkpoints []checkpoint // PostgreSQL only: see horizon
	safe        int64

	passMu sync.Mutex // one pass at a time in this process
	stuck  sync.Map   // [2]any{event id, subscriber} → error: local calls abandoned, not to be called again
}

// NewDispatcher returns a dispatcher over the registry's subscribers.
func NewDispatcher(db *gorm.DB, reg *Registry, opt DispatcherOptions) *Dispatcher {
	d := database.DialectOf(db)
	opt.defaults(d)
	return &Dispatcher{db: db, reg: reg, opt: opt, dialect: d}
}

// SetMetrics makes the dispatcher report to m.
func (d *Dispatcher) SetMetrics(m *Metrics) { d.metrics = m }

// Owner is the dispatcher's name in partition leases.
func (d *Dispatcher) Owner() string { return d.opt.Owner }

// PassStats counts what one pass did.
type PassStats struct {
	Events    int  // events read from the journal
	Delivered int  // successful deliveries
	Failed    int  // failed attempts
	Lagging   bool // events were visible beyond the safe horizon: run again soon
	// RetryWaiting tells that a delivery of a registered subscriber waits for
	// a retry, due in NextRetry (zero or less: due already), as seen when
	// the pass began.
	RetryWaiting bool
	NextRetry    time.Duration
}

func (s *PassStats) add(o PassStats) {
	s.Events += o.Events
	s.Delivered += o.Delivered
	s.Failed += o.Failed
}

// RunOnce dispatches everything that is due: every committed event past the
// partitions' positions and every retry whose time has come. Partitions
// claimed by another dispatcher are left to it. Passes in one process never
// overlap; a call made during a pass waits for it.
func (d *Dispatcher) RunOnce(ctx context.Context) (PassStats, error) {
	return d.RunUntil(ctx, ctx)
}

// RunUntil is RunOnce for a process that is shutting down gracefully: the
// deliveries in hand use ctx, while stop ends the pass between batches, so
// that a batch whose subscribers have been called is always recorded.
func (d *Dispatcher) RunUntil(ctx, stop context.Context) (PassStats, error) {
	d.passMu.Lock()
	defer d.passMu.Unlock()
	var total PassStats
	sv, err := d.survey(ctx)
	if err != nil {
		return total, err
	}
	horizon, visible := d.horizon(sv)
	total.Lagging = visible > horizon
	total.RetryWaiting, total.NextRetry = sv.nextRetry.Valid, time.Duration(sv.nextRetry.Float64*float64(time.Second))
	parts := sv.parts
	if total.Lagging {
		// The survey listed partitions with events up to the visible id;
		// keep those with work up to the horizon.
		if parts, err = d.partitionsWithWork(ctx, horizon); err != nil {
			return total, err
		}
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  []error
		queue = make(chan int)
	)
	for range min(d.opt.Workers, len(parts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range queue {
				st, err := d.drainPartition(ctx, stop, p, horizon)
				mu.Lock()
				total.add(st)
				if err != nil {
					errs = append(errs, fmt.Errorf("partition %d: %w", p, err))
				}
				mu.Unlock()
			}
		}()
	}
	for _, p := range parts {
		if stop.Err() != nil {
			break
		}
		queue <- p
	}
	close(queue)
	wg.Wait()
	return total, errors.Join(errs...)
}

// checkpoint records the highest event id visible at one moment and the
// transactions that were writing events just after it.
type checkpoint struct {
	maxID int64
	xids  []string
}

// surveyed is what a pass starts from, read in one statement.
type surveyed struct {
	visible   int64           // the highest event id visible
	writers   []string        // PostgreSQL: transactions holding a write lock on events, read after visible
	running   []string        // PostgreSQL: those of the checkpoints' transactions still running
	parts     []int           // partitions with events past their position up to visible, or a retry due, not leased by another
	nextRetry sql.NullFloat64 // seconds until the earliest retry of a registered subscriber
}

// survey reads, in one round trip, the journal's newest id, the
// transactions that may still commit events below it (PostgreSQL), the
// partitions with work, and when the next retry is due.
func (d *Dispatcher) survey(ctx context.Context) (surveyed, error) {
	var sv surveyed
	names := make([]string, 0, len(d.reg.Subscribers()))
	for _, s := range d.reg.Subscribers() {
		names = append(names, s.Name)
	}
	d.mu.Lock()
	var pending []string
	for _, c := range d.checkpoints {
		pending = append(pending, c.xids...)
	}
	d.mu.Unlock()
	parts := `(` + d.partitionsWithWorkSQL("v.visible") + `) AS w`
	var q string
	if d.dialect == database.Postgres {
		// One statement, one snapshot: pg_locks is read (once) after the
		// snapshot that gave visible, as the horizon needs.
		q = `WITH l AS MATERIALIZED (SELECT locktype, relation, mode, virtualtransaction, transactionid::text AS xid FROM pg_locks
  WHERE locktype IN ('relation', 'transactionid'))
SELECT v.visible,
  coalesce((SELECT string_agg(DISTINCT t.xid, ',') FROM l r JOIN l t ON t.virtualtransaction = r.virtualtransaction AND t.locktype = 'transactionid'
    WHERE r.locktype = 'relation' AND r.relation = 'events'::regclass AND r.mode = 'RowExclusiveLock'), '') AS writers,
  coalesce((SELECT string_agg(DISTINCT xid, ',') FROM l WHERE locktype = 'transactionid' AND xid = ANY (string_to_array(@pending, ','))), '') AS running,
  coalesce((SELECT string_agg(w.partition::text, ',') FROM ` + parts + `), '') AS parts,
  (SELECT extract(epoch FROM min(next_attempt_at) - now()) FROM events_deliveries WHERE status = 'retrying' AND subscriber IN @names) AS next_retry
FROM (SELECT coalesce(max(id), 0) AS visible FROM events) v`
	} else {
		q = `SELECT v.visible, '' AS writers, '' AS running,
  coalesce((SELECT group_concat(w.partition, ',') FROM ` + parts + `), '') AS parts,
  (SELECT (julianday(min(next_attempt_at)) - julianday('now')) * 86400.0 FROM events_deliveries WHERE status = 'retrying' AND subscriber IN @names) AS next_retry
FROM (SELECT coalesce(max(id), 0) AS visible FROM events) v`
	}
	if len(names) == 0 {
		names = append(names, "") // no subscriber has that name
	}
	var writers, running, partList string
	err := d.db.WithContext(ctx).Raw(q, map[string]any{"owner": d.opt.Owner, "pending": strings.Join(pending, ","), "names": names}).
		Row().Scan(&sv.visible, &writers, &running, &partList, &sv.nextRetry)
	if err != nil {
		return sv, err
	}
	sv.writers, sv.running = splitList(writers), splitList(running)
	for _, x := range splitList(partList) {
		var p int
		if _, err := fmt.Sscan(x, &p); err != nil {
			return sv, fmt.Errorf("events: survey: partition %q: %w", x, err)
		}
		sv.parts = append(sv.parts, p)
	}
	return sv, nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// horizon returns the highest event id up to which the journal is final (no
// transaction still in flight can commit an event at or below it) and the
// highest id visible now.
//
// Commit order is not id order: a transaction may take id 100, another 101
// and commit first. A reader that moved its position past 101 would skip 100
// for ever. On PostgreSQL every event's transaction takes its xid before its
// event id (see Add), and holds a RowExclusiveLock on this schema's events
// table from before that until it ends. So when the journal shows max id M
// and the dispatcher then lists the transactions holding that lock, every
// transaction that may still commit an id <= M is in the list; once all of
// them have ended (their transactionid lock is gone), ids <= M are final.
// Only writers of this events table count: a long transaction elsewhere on
// the cluster (another schema, another database, a bulk load) does not hold
// dispatch back. No xid is stored in the journal, so a dump restored into a
// new cluster, where xids start again, dispatches as before. SQLite has one
// writer at a time, so ids commit in order and everything visible is final.
func (d *Dispatcher) horizon(sv surveyed) (safe, visible int64) {
	if d.dialect == database.SQLite {
		return sv.visible, sv.visible
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	running := map[string]bool{}
	for _, x := range sv.running {
		running[x] = true
	}
	// The checkpoints taken before this survey are final once none of their
	// writers was still running during it. A later checkpoint's list holds
	// every writer of an earlier one that was still running, so they need
	// not be passed in order.
	for _, c := range d.checkpoints {
		final := true
		for _, x := range c.xids {
			if running[x] {
				final = false
				break
			}
		}
		if final {
			d.safe = max(d.safe, c.maxID)
		}
	}
	// This survey's writers were running during it: its own checkpoint is
	// final at once only when there were none.
	if sv.visible > d.safe {
		if len(sv.writers) == 0 {
			d.safe = sv.visible
		} else if n := len(d.checkpoints); n == 0 || d.checkpoints[n-1].maxID < sv.visible {
			d.checkpoints = append(d.checkpoints, checkpoint{maxID: sv.visible, xids: sv.writers})
		}
	}
	kept := d.checkpoints[:0]
	for _, c := range d.checkpoints {
		if c.maxID > d.safe {
			kept = append(kept, c)
		}
	}
	d.checkpoints = kept
	return d.safe, sv.visible
}

func (d *Dispatcher) now() string { return database.Now(d.db) }

// partitionsWithWork lists the partitions that have events past their
// position up to the horizon, or a retry due, and no live lease of another
// dispatcher.
func (d *Dispatcher) partitionsWithWork(ctx context.Context, horizon int64) ([]int, error) {
	var parts []int
	err := d.db.WithContext(ctx).Raw(d.partitionsWithWorkSQL("@upto"), map[string]any{"owner": d.opt.Owner, "upto": horizon}).Scan(&parts).Error
	return parts, err
}

// partitionsWithWorkSQL is partitionsWithWork's query, with events counted
// up to the SQL expression upto; it takes the named argument @owner.
func (d *Dispatcher) partitionsWithWorkSQL(upto string) string {
	now := d.now()
	// On PostgreSQL the next event of each partition is found through the
	// (partition, id) index: a row comparison in an ordered LIMIT 1 can use no
	// other. With "partition = ? AND id > position" the planner may walk the
	// primary key from the position on, which reads the whole journal after
	// it when a partition has had no event for a while.
	next := `EXISTS (SELECT 1 FROM events e WHERE e.partition = p.partition AND e.id > p.position AND e.id <= ` + upto + `)`
	join := ``
	if d.dialect == database.Postgres {
		join = `
LEFT JOIN LATERAL (SELECT e.partition, e.id FROM events e WHERE (e.partition, e.id) > (p.partition, p.position)
  ORDER BY e.partition, e.id LIMIT 1) nx ON true`
		next = `(nx.partition = p.partition AND nx.id <= ` + upto + `)`
	}
	return `SELECT p.partition FROM events_partitions p` + join + `
WHERE (p.owner IS NULL OR p.owner = @owner OR p.lease_until < ` + now + `)
  AND (` + next + `
    OR EXISTS (SELECT 1 FROM events_deliveries r WHERE r.partition = p.partition AND r.status = 'retrying' AND r.next_attempt_at <= ` + now + `))
ORDER BY p.partition`
}

var errLeaseLost = errors.New("events: partition lease lost to another dispatcher")

// claimed is a partition this dispatcher holds the lease of.
type claimed struct {
	position int64
	open     bool    // some delivery of the partition is still open (retrying, held or failed)
	retryDue bool    // some retry of the partition is due
	batch    []Event // the first batch after position, up to the horizon
}

// noSyncCommit, as a statement's first CTE, lets the statement's own
// transaction commit without waiting for its WAL to reach the disk. Only the
// lease bookkeeping uses it: a claim or release lost in a crash changes
// nothing that matters (the batch transaction that follows commits
// synchronously, which flushes the claim's WAL before it, and checks the
// lease as its fence), and it spares a disk flush before the first
// subscriber is called.
const noSyncCommit = `async AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))`

// claim takes the partition's lease and reads the first batch after its
// position; ok is false when another dispatcher holds it. On PostgreSQL the
// claim and the read are one statement.
func (d *Dispatcher) claim(ctx context.Context, p int, horizon int64) (c claimed, ok bool, err error) {
	now := d.now()
	update := `UPDATE events_partitions SET owner = @owner, lease_until = ` + database.NowPlus(d.db, d.opt.Lease) + `
WHERE partition = @p AND (owner IS NULL OR owner = @owner OR lease_until < ` + now + `)
RETURNING position,
  EXISTS (SELECT 1 FROM events_deliveries r WHERE r.partition = events_partitions.partition AND r.status <> 'processed') AS open,
  EXISTS (SELECT 1 FROM events_deliveries r WHERE r.partition = events_partitions.partition AND r.status = 'retrying' AND r.next_attempt_at <= ` + now + `) AS due`
	args := map[string]any{"owner": d.opt.Owner, "p": p, "horizon": horizon, "n": d.opt.BatchSize}
	if d.dialect == database.SQLite {
		rows, err := d.db.WithContext(ctx).Raw(update, args).Rows()
		if err != nil {
			return c, false, err
		}
		defer func() { _ = rows.Close() }()
		if !rows.Next() {
			return c, false, rows.Err()
		}
		if err := rows.Scan(&c.position, &c.open, &c.retryDue); err != nil {
			return c, false, err
		}
		_ = rows.Close() // SQLite's one connection is needed for the read
		c.batch, err = d.readBatch(ctx, p, c.position, horizon)
		return c, err == nil, err
	}
	rows, err := d.db.WithContext(ctx).Raw(`WITH `+noSyncCommit+`, c AS (`+update+`)
SELECT c.position, c.open, c.due, e.id, e.type, e.aggregate_type, e.aggregate_id, e.payload, e.actor_id, e.actor_name, e.created_at
FROM async, c LEFT JOIN LATERAL (SELECT * FROM events
  WHERE (partition, id) > (@p, c.position) AND (partition, id) <= (@p, @horizon) ORDER BY partition, id LIMIT @n) e ON true
ORDER BY e.id`, args).Rows()
	if err != nil {
		return c, false, err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var r eventRow
		if err := rows.Scan(append([]any{&c.position, &c.open, &c.retryDue}, r.dest()...)...); err != nil {
			return c, false, err
		}
		ok = true
		if r.id.Valid { // else claimed, nothing to read
			c.batch = append(c.batch, r.event())
		}
	}
	return c, ok, rows.Err()
}

// readBatch reads the next batch of the partition after pos, up to the horizon.
func (d *Dispatcher) readBatch(ctx context.Context, p int, pos, horizon int64) ([]Event, error) {
	// The range is written as row comparisons on (partition, id) so that only
	// the events_partition_id index can serve it, in order: with "partition =
	// ? AND id > ?" PostgreSQL prefers the primary key (well correlated with
	// the table) and filters out the other partitions' events, reading sixteen
	// times the batch.
	return d.readEvents(ctx, d.db.WithContext(ctx).Raw(`SELECT id, type, aggregate_type, aggregate_id, payload, actor_id, actor_name, created_at
FROM events WHERE (partition, id) > (?, ?) AND (partition, id) <= (?, ?) ORDER BY partition, id LIMIT ?`, p, pos, p, horizon, d.opt.BatchSize))
}

func (d *Dispatcher) release(p int) {
	// A fresh context: the lease is released even when the pass was cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	q := `UPDATE events_partitions SET owner = NULL, lease_until = NULL WHERE partition = ? AND owner = ?`
	if d.dialect == database.Postgres {
		q = `WITH ` + noSyncCommit + ` ` + q + ` AND EXISTS (SELECT 1 FROM async)`
	}
	err := d.db.WithContext(ctx).Exec(q, p, d.opt.Owner).Error
	if err != nil {
		d.opt.Logger.Warn("release partition lease", "partition", p, "err", err)
	}
}

// renewLease extends the lease inside tx and fails with errLeaseLost when
// another dispatcher has taken the partition meanwhile, so that a dispatcher
// that stalled past its lease cannot commit work a second time.
func (d *Dispatcher) renewLease(tx *gorm.DB, p int) error {
	res := tx.Exec(`UPDATE events_partitions SET lease_until = `+database.NowPlus(d.db, d.opt.Lease)+` WHERE partition = ? AND owner = ?`, p, d.opt.Owner)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return errLeaseLost
	}
	return nil
}

// recordBatch is a batch transaction's first statement: the fence (the
// lease must still be this dispatcher's and the position where the batch
// began), the new position, the batch's row and, for the partition's last
// batch, the lease given back. On PostgreSQL it is one statement.
func (d *Dispatcher) recordBatch(tx *gorm.DB, p int, pos, last int64, release bool) error {
	set := `lease_until = ` + database.NowPlus(d.db, d.opt.Lease)
	if release {
		set = `owner = NULL, lease_until = NULL`
	}
	update := `UPDATE events_partitions SET ` + set + `, position = @last WHERE partition = @p AND owner = @owner AND position = @pos`
	args := map[string]any{"p": p, "pos": pos, "first": pos + 1, "last": last, "owner": d.opt.Owner}
	var res *gorm.DB
	if d.dialect == database.Postgres {
		res = tx.Exec(`WITH fence AS (`+update+` RETURNING partition)
INSERT INTO events_batches (partition, first_id, last_id) SELECT partition, @first, @last FROM fence`, args)
	} else if res = tx.Exec(update, args); res.Error == nil && res.RowsAffected == 1 {
		res = tx.Exec(`INSERT INTO events_batches (partition, first_id, last_id) VALUES (@p, @first, @last)`, args)
	}
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return errLeaseLost
	}
	return nil
}

// drainPartition dispatches one partition until it has nothing due.
func (d *Dispatcher) drainPartition(ctx, stop context.Context, p int, horizon int64) (PassStats, error) {
	var total PassStats
	c, ok, err := d.claim(ctx, p, horizon)
	if err != nil || !ok {
		return total, err
	}
	released := false
	defer func() {
		if !released {
			d.release(p)
		}
	}()
	defer d.keepLease(ctx, p)()
	pos, batch := c.position, c.batch
	for len(batch) > 0 && stop.Err() == nil {
		b, err := d.dispatchBatch(ctx, p, pos, batch, c.open, !c.retryDue)
		total.add(b.PassStats)
		if err != nil {
			return total, err
		}
		c.open = c.open || b.recorded
		pos, released = b.next, b.released
		if released {
			break
		}
		if batch, err = d.readBatch(ctx, p, pos, horizon); err != nil {
			return total, err
		}
	}
	if released || !c.retryDue || stop.Err() != nil {
		return total, nil
	}
	st, err := d.retryDue(ctx, stop, p)
	total.add(st)
	return total, err
}

// keepLease renews the partition's lease every third of its length while
// the partition is being dispatched, so that slow subscribers in a long batch
// do not let the lease run out; it returns the function that stops renewing.
// A dispatcher that stalls (or dies) stops renewing, and another one takes the
// partition once the lease has run out; the fencing in renewLease keeps the
// stalled one from committing afterwards.
func (d *Dispatcher) keepLease(ctx context.Context, p int) (stopRenewing func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d.opt.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			res := d.db.WithContext(ctx).Exec(`UPDATE events_partitions SET lease_until = `+database.NowPlus(d.db, d.opt.Lease)+`
WHERE partition = ? AND owner = ?`, p, d.opt.Owner)
			if res.Error == nil && res.RowsAffected == 0 {
				return // taken over: the commit will fail on its fence
			}
		}
	}()
	return func() { cancel(); <-done }
}

type objectKey struct {
	sub     string
	aggType string
	aggID   int64
}

// outcome is one delivery that did not simply succeed in its batch.
type outcome struct {
	ev        *Event
	sub       string
	status    string // retrying, held
	err       string
	blockedBy int64
	stuck     bool // a local call that did not return: its transaction must go
}

// batchDone is what dispatchBatch did.
type batchDone struct {
	PassStats
	next     int64 // the partition's new position
	recorded bool  // delivery rows were written
	released bool  // the batch was the partition's last one and gave the lease back
}

// dispatchBatch dispatches a batch, the events of the partition that follow
// pos. open says whether the partition may have open deliveries (else there
// is nothing to hold events behind); mayRelease lets a batch that reaches the
// horizon give the lease back in its own transaction.
func (d *Dispatcher) dispatchBatch(ctx context.Context, p int, pos int64, batch []Event, open, mayRelease bool) (batchDone, error) {
	done := batchDone{next: pos}
	st := &done.PassStats
	st.Events = len(batch)
	last := batch[len(batch)-1].ID
	release := mayRelease && len(batch) < d.opt.BatchSize
	blocked := map[objectKey]int64{}
	if open {
		var err error
		if blocked, err = d.blockedObjects(ctx, p); err != nil {
			return done, err
		}
	}

	// Outside subscribers first, outside any transaction: a crash before the
	// commit below delivers them again (at least once).
	var outcomes []outcome
	extBlocked := cloneBlocked(blocked)
	for i := range batch {
		ev := &batch[i]
		for _, s := range d.reg.SubscribersOf(ev.Type) {
			if s.Local() {
				continue
			}
			oc, ok := d.deliverOrHold(ctx, nil, s, ev, extBlocked, false)
			if ok {
				st.Delivered++
			} else {
				if oc.status == statusRetrying {
					st.Failed++
				}
				outcomes = append(outcomes, oc)
			}
		}
	}

	// Local subscribers, the exceptions, the batch record and the new position
	// commit together. The fast path runs the batch without savepoints; when a
	// local subscriber fails it is run again with one savepoint per delivery.
	var localOutcomes []outcome
	var localDelivered, localFailed int
	run := func(savepoints bool) error {
		localOutcomes, localDelivered, localFailed = nil, 0, 0
		return d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			// The fence first: a dispatcher whose lease has run out (and
			// whose partition someone else has dispatched meanwhile) applies
			// no effect at all. It also locks the partition's row until the
			// commit.
			if err := d.recordBatch(tx, p, pos, last, release); err != nil {
				return err
			}
			locBlocked := cloneBlocked(blocked)
			for i := range batch {
				ev := &batch[i]
				for _, s := range d.reg.SubscribersOf(ev.Type) {
					if !s.Local() {
						continue
					}
					oc, ok := d.deliverOrHold(ctx, tx, s, ev, locBlocked, savepoints)
					if ok {
						localDelivered++
						continue
					}
					if oc.stuck {
						return errStuck
					}
					if oc.status == statusRetrying {
						if !savepoints {
							return errSlowPath
						}
						localFailed++
					}
					localOutcomes = append(localOutcomes, oc)
				}
			}
			return d.recordOutcomes(tx, batch, append(outcomes, localOutcomes...))
		})
	}
	err := run(false)
	// Each run that hit a stuck subscriber marked it, so this ends.
	for errors.Is(err, errSlowPath) || errors.Is(err, errStuck) {
		err = run(true)
	}
	for i := range batch {
		for _, s := range d.reg.SubscribersOf(batch[i].Type) {
			d.stuck.Delete([2]any{batch[i].ID, s.Name})
		}
	}
	if err != nil {
		return done, err
	}
	st.Delivered += localDelivered
	st.Failed += localFailed
	d.countLocal(batch, localOutcomes)
	d.metrics.observeBatch(batch, *st)
	done.next, done.released = last, release
	done.recorded = len(outcomes)+len(localOutcomes) > 0
	return done, nil
}

// countLocal counts the committed outcomes of the local subscribers' deliveries of a batch.
func (d *Dispatcher) countLocal(batch []Event, outcomes []outcome) {
	if d.metrics == nil {
		return
	}
	failed := map[[2]any]outcome{}
	for _, oc := range outcomes {
		failed[[2]any{oc.ev.ID, oc.sub}] = oc
	}
	for i := range batch {
		for _, s := range d.reg.SubscribersOf(batch[i].Type) {
			if !s.Local() {
				continue
			}
			oc, ok := failed[[2]any{batch[i].ID, s.Name}]
			switch {
			case !ok:
				d.metrics.countDelivery(s.Name, nil)
			case oc.status == statusRetrying:
				d.metrics.countDelivery(s.Name, errors.New(oc.err))
			}
		}
	}
}

var errSlowPath = errors.New("events: a local subscriber failed; retry the batch with savepoints")

const (
	statusRetrying  = "retrying"
	statusHeld      = "held"
	statusFailed    = "failed"
	statusProcessed = "processed"
)

func cloneBlocked(m map[objectKey]int64) map[objectKey]int64 {
	out := make(map[objectKey]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// deliverOrHold delivers ev to s unless an earlier event of the same object
// is still open for s, in which case the delivery is held behind it. On
// failure the object becomes blocked for s. ok is true for a success.
func (d *Dispatcher) deliverOrHold(ctx context.Context, tx *gorm.DB, s *Subscriber, ev *Event, blocked map[objectKey]int64, savepoint bool) (outcome, bool) {
	key := objectKey{s.Name, ev.AggregateType, ev.AggregateID}
	if by, ok := blocked[key]; ok {
		return outcome{ev: ev, sub: s.Name, status: statusHeld, blockedBy: by}, false
	}
	if msg, ok := d.stuck.Load([2]any{ev.ID, s.Name}); ok {
		// It hung in an earlier run of this batch: a failure, not called again.
		blocked[key] = ev.ID
		return outcome{ev: ev, sub: s.Name, status: statusRetrying, err: msg.(string)}, false
	}
	if err := d.deliver(ctx, tx, s, ev, savepoint); err != nil {
		blocked[key] = ev.ID
		return outcome{ev: ev, sub: s.Name, status: statusRetrying, err: err.Error(), stuck: errors.Is(err, errStuck)}, false
	}
	return outcome{}, true
}

// stuckGrace is how long a local subscriber may take to return once its
// timeout has passed, before its transaction is abandoned.
const stuckGrace = 2 * time.Second

// errStuck aborts a transaction in which a local subscriber did not return.
var errStuck = errors.New("events: a local subscriber did not return; the transaction is abandoned")

// deliver calls the subscriber with a timeout, turning a panic into an error.
// For a local subscriber it runs in tx, inside a savepoint when asked.
func (d *Dispatcher) deliver(ctx context.Context, tx *gorm.DB, s *Subscriber, ev *Event, savepoint bool) (err error) {
	start := time.Now()
	defer func() {
		d.metrics.observeDuration(s.Name, time.Since(start))
		if tx == nil {
			d.metrics.countDelivery(s.Name, err)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, d.opt.Timeout)
	defer cancel()
	call := func(tx *gorm.DB) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("subscriber panicked: %v", r)
				d.opt.Logger.Error("subscriber panicked", "subscriber", s.Name, "event_id", ev.ID, "panic", r, "stack", string(debug.Stack()))
			}
		}()
		if tx != nil {
			return s.HandleTx(ctx, tx.WithContext(ctx), *ev)
		}
		return s.Handle(ctx, *ev)
	}
	switch {
	case !s.Local():
		// An outside call that ignores its context still gets cut off.
		done := make(chan error, 1)
		go func() { done <- call(nil) }()
		select {
		case err = <-done:
		case <-ctx.Done():
			err = fmt.Errorf("subscriber timed out after %s", d.opt.Timeout)
		}
	default:
		// A local call runs aside too, so that one that does not return even
		// after its statements fail (it ignores ctx) can be abandoned with
		// the transaction it holds, which the caller then rolls back.
		done := make(chan error, 1)
		go func() {
			if savepoint {
				done <- tx.Transaction(func(sp *gorm.DB) error { return call(sp) })
			} else {
				done <- call(tx)
			}
		}()
		select {
		case err = <-done:
		case <-ctx.Done():
			select {
			case err = <-done:
			case <-time.After(stuckGrace):
				err = fmt.Errorf("subscriber timed out after %s and did not return", d.opt.Timeout)
				d.stuck.Store([2]any{ev.ID, s.Name}, err.Error())
				d.opt.Logger.Error("subscriber does not return after its timeout; its transaction is abandoned", "subscriber", s.Name, "event_id", ev.ID)
				return errStuck
			}
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && (err == nil || !strings.Contains(err.Error(), "timed out")) {
		// Past its time, whatever it answered: the journal says so.
		if err == nil {
			err = errors.New("no error")
		}
		err = fmt.Errorf("subscriber timed out after %s: %w", d.opt.Timeout, err)
	}
	return err
}

// recordOutcomes writes the delivery rows of the batch's exceptional events:
// the failures and held deliveries, and for the same events the successful
// deliveries of the other subscribers, so that the journal can tell each
// subscriber's state of such an event.
func (d *Dispatcher) recordOutcomes(tx *gorm.DB, batch []Event, outcomes []outcome) error {
	if len(outcomes) == 0 {
		return nil
	}
	bySubEvent := map[[2]any]outcome{}
	for _, oc := range outcomes {
		bySubEvent[[2]any{oc.ev.ID, oc.sub}] = oc
	}
	var sb strings.Builder
	var args []any
	sb.WriteString(`INSERT INTO events_deliveries (event_id, subscriber, partition, aggregate_type, aggregate_id, status, attempts, last_error, blocked_by, next_attempt_at, processed_at) VALUES `)
	n := 0
	for i := range batch {
		ev := &batch[i]
		subs := d.reg.SubscribersOf(ev.Type)
		exceptional := false
		for _, s := range subs {
			if _, ok := bySubEvent[[2]any{ev.ID, s.Name}]; ok {
				exceptional = true
				break
			}
		}
		if !exceptional {
			continue
		}
		part := PartitionOf(ev.AggregateType, ev.AggregateID)
		for _, s := range subs {
			if n > 0 {
				sb.WriteString(", ")
			}
			n++
			oc, ok := bySubEvent[[2]any{ev.ID, s.Name}]
			switch {
			case !ok:
				sb.WriteString("(?, ?, ?, ?, ?, 'processed', 1, '', NULL, NULL, " + d.now() + ")")
				args = append(args, ev.ID, s.Name, part, ev.AggregateType, ev.AggregateID)
			case oc.status == statusRetrying:
				status, next := d.afterFailure(1)
				sb.WriteString("(?, ?, ?, ?, ?, ?, 1, ?, NULL, " + next + ", NULL)")
				args = append(args, ev.ID, s.Name, part, ev.AggregateType, ev.AggregateID, status, truncate(oc.err))
			default:
				sb.WriteString("(?, ?, ?, ?, ?, 'held', 0, '', ?, NULL, NULL)")
				args = append(args, ev.ID, s.Name, part, ev.AggregateType, ev.AggregateID, oc.blockedBy)
			}
		}
	}
	return tx.Exec(sb.String(), args...).Error
}

// afterFailure returns the status and the SQL for the next attempt's time of
// a delivery that has failed attempts times: exponential back-off with
// jitter, or failed (no next attempt) once the attempts are used up.
func (d *Dispatcher) afterFailure(attempts int) (status, next string) {
	if attempts >= d.opt.MaxAttempts {
		return statusFailed, "NULL"
	}
	return statusRetrying, database.NowPlus(d.db, Backoff(attempts, d.opt.BackoffBase, d.opt.BackoffMax))
}

// Backoff is the delay before the attempt after the given number of failed
// ones: base doubled per attempt up to maxDelay, with "equal jitter" (a random
// half), so that many failing deliveries do not retry in lockstep.
func Backoff(attempts int, base, maxDelay time.Duration) time.Duration {
	delay := maxDelay
	if attempts < 32 {
		if d := base << (attempts - 1); d > 0 && d < maxDelay {
			delay = d
		}
	}
	half := delay / 2
	return half + rand.N(half+1)
}

func truncate(s string) string {
	const maxLen = 2000
	if len(s) > maxLen {
		return s[:maxLen] + "…"
	}
	return s
}

// blockedObjects returns, per subscriber and object of the partition, the
// oldest delivery that is still open (retrying, held or failed).
func (d *Dispatcher) blockedObjects(ctx context.Context, p int) (map[objectKey]int64, error) {
	rows, err := d.db.WithContext(ctx).Raw(`SELECT subscriber, aggregate_type, aggregate_id, min(event_id) FROM events_deliveries
WHERE partition = ? AND status <> 'processed' GROUP BY subscriber, aggregate_type, aggregate_id`, p).Rows()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := map[objectKey]int64{}
	for rows.Next() {
		var k objectKey
		var id int64
		if err := rows.Scan(&k.sub, &k.aggType, &k.aggID, &id); err != nil {
			return nil, err
		}
		out[k] = id
	}
	return out, rows.Err()
}

// readEvents scans events selected as id, type, aggregate_type, aggregate_id,
// payload, actor_id, actor_name, created_at.
func (d *Dispatcher) readEvents(_ context.Context, q *gorm.DB) ([]Event, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []Event
	for rows.Next() {
		var r eventRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, err
		}
		out = append(out, r.event())
	}
	return out, rows.Err()
}

// eventRow scans the columns id, type, aggregate_type, aggregate_id,
// payload, actor_id, actor_name, created_at; all may be NULL (the claim's
// outer join gives a row without an event when there is none to read).
type eventRow struct {
	id, aggID, actorID      sql.NullInt64
	typ, aggType, actorName sql.NullString
	payload                 []byte
	createdAt               sql.NullTime
}

func (r *eventRow) dest() []any {
	return []any{&r.id, &r.typ, &r.aggType, &r.aggID, &r.payload, &r.actorID, &r.actorName, &r.createdAt}
}

func (r *eventRow) event() Event {
	ev := Event{ID: r.id.Int64, Type: r.typ.String, AggregateType: r.aggType.String, AggregateID: r.aggID.Int64,
		Payload: r.payload, CreatedAt: r.createdAt.Time.UTC()}
	if r.actorID.Valid {
		ev.Actor = &Actor{ID: r.actorID.Int64, Name: r.actorName.String}
	}
	return ev
}

// retryDue runs the partition's retries whose time has come, and after each
// success the deliveries held behind it, in order.
func (d *Dispatcher) retryDue(ctx, stop context.Context, p int) (PassStats, error) {
	var st PassStats
	type due struct {
		EventID  int64
		Sub      string
		Attempts int
	}
	var dues []due
	err := d.db.WithContext(ctx).Raw(`SELECT event_id, subscriber AS sub, attempts FROM events_deliveries
WHERE partition = ? AND status = 'retrying' AND next_attempt_at <= `+d.now()+` ORDER BY event_id LIMIT ?`, p, d.opt.BatchSize).Scan(&dues).Error
	if err != nil {
		return st, err
	}
	for _, du := range dues {
		if stop.Err() != nil {
			break
		}
		s := d.reg.Subscriber(du.Sub)
		if s == nil {
			continue // a subscriber that no longer exists: left for an operator to see
		}
		ok, err := d.retryOne(ctx, p, s, du.EventID, du.Attempts, &st)
		if err != nil {
			return st, err
		}
		if !ok {
			continue
		}
		// Release what was held behind it, in order, until one fails.
		ev, err := d.event(ctx, du.EventID)
		if err != nil {
			return st, err
		}
		var held []int64
		err = d.db.WithContext(ctx).Raw(`SELECT event_id FROM events_deliveries WHERE subscriber = ? AND aggregate_type = ? AND aggregate_id = ?
AND status = 'held' ORDER BY event_id`, s.Name, ev.AggregateType, ev.AggregateID).Scan(&held).Error
		if err != nil {
			return st, err
		}
		for _, id := range held {
			ok, err := d.retryOne(ctx, p, s, id, 0, &st)
			if err != nil {
				return st, err
			}
			if !ok {
				break
			}
		}
	}
	return st, nil
}

// retryOne attempts one recorded delivery and records the outcome; for a
// local subscriber, effect and record commit together. When it fails, the
// deliveries still held behind the same object point at it.
func (d *Dispatcher) retryOne(ctx context.Context, p int, s *Subscriber, eventID int64, attempts int, st *PassStats) (bool, error) {
	ev, err := d.event(ctx, eventID)
	if err != nil {
		return false, err
	}
	var deliverErr error
	if !s.Local() {
		deliverErr = d.deliver(ctx, nil, s, &ev, false)
	}
	err = d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := d.renewLease(tx, p); err != nil {
			return err
		}
		if s.Local() {
			if msg, ok := d.stuck.LoadAndDelete([2]any{ev.ID, s.Name}); ok {
				deliverErr = errors.New(msg.(string))
			} else if deliverErr = d.deliver(ctx, tx, s, &ev, true); errors.Is(deliverErr, errStuck) {
				return errStuck
			}
		}
		var res *gorm.DB
		if deliverErr == nil {
			res = tx.Exec(`UPDATE events_deliveries SET status = 'processed', attempts = attempts + 1, last_error = '', blocked_by = NULL,
next_attempt_at = NULL, processed_at = `+d.now()+`, updated_at = `+d.now()+`
WHERE event_id = ? AND subscriber = ? AND status IN ('retrying', 'held') AND attempts = ?`, ev.ID, s.Name, attempts)
		} else {
			status, next := d.afterFailure(attempts + 1)
			res = tx.Exec(`UPDATE events_deliveries SET status = ?, attempts = attempts + 1, last_error = ?, blocked_by = NULL,
next_attempt_at = `+next+`, updated_at = `+d.now()+`
WHERE event_id = ? AND subscriber = ? AND status IN ('retrying', 'held') AND attempts = ?`, status, truncate(deliverErr.Error()), ev.ID, s.Name, attempts)
			if res.Error == nil {
				if err := tx.Exec(`UPDATE events_deliveries SET blocked_by = ? WHERE subscriber = ? AND aggregate_type = ? AND aggregate_id = ?
AND status = 'held' AND event_id > ?`, ev.ID, s.Name, ev.AggregateType, ev.AggregateID, ev.ID).Error; err != nil {
					return err
				}
			}
		}
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return errLeaseLost // someone else recorded it meanwhile
		}
		return nil
	})
	if errors.Is(err, errLeaseLost) {
		return false, nil
	}
	if errors.Is(err, errStuck) {
		// Rolled back; record the failure without calling it again.
		return d.retryOne(ctx, p, s, eventID, attempts, st)
	}
	if err != nil {
		return false, err
	}
	if s.Local() {
		d.metrics.countDelivery(s.Name, deliverErr)
	}
	if deliverErr != nil {
		st.Failed++
		return false, nil
	}
	st.Delivered++
	return true, nil
}

func (d *Dispatcher) event(ctx context.Context, id int64) (Event, error) {
	evs, err := d.readEvents(ctx, d.db.WithContext(ctx).Raw(`SELECT id, type, aggregate_type, aggregate_id, payload, actor_id, actor_name, created_at
FROM events WHERE id = ?`, id))
	if err != nil {
		return Event{}, err
	}
	if len(evs) == 0 {
		return Event{}, fmt.Errorf("events: event %d not found", id)
	}
	return evs[0], nil
}
