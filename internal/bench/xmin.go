package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// XminResult is the delay from commit to the local subscriber before and
// while another session holds a snapshot open, which holds PostgreSQL's
// xmin horizon back: no row version deleted or updated after the snapshot
// was taken can be cleaned up (by VACUUM or by pruning a page) until it
// ends. Every batch moves its lane's row, so the dispatcher must not slow
// down as dead versions of its rows pile up.
type XminResult struct {
	TargetPerS float64   `json:"target_per_s"`
	Seconds    float64   `json:"seconds_per_phase"`
	Before     XminPhase `json:"before"`
	During     XminPhase `json:"during"`
	Ratio      float64   `json:"p99_ratio"` // During.P99Ms / Before.P99Ms
	Snapshot   string    `json:"snapshot"`  // what the holding session did
	// LanesKB is the size of events_lanes with its indexes at the start,
	// when the snapshot was taken and at the end.
	LanesKB [3]float64 `json:"events_lanes_kb"`
	// LanesHOTPct is the share of the updates of events_lanes in each phase
	// that were HOT (heap-only: no new index entry, and prunable within
	// the page once no snapshot needs the old version), from
	// pg_stat_user_tables (whose counts may lag by a second or so).
	LanesHOTPct [2]float64 `json:"events_lanes_hot_update_pct"`
	// SnapshotAge is how many transactions the held snapshot was behind the
	// server's newest when the phase ended (age(backend_xmin)).
	SnapshotAge int64 `json:"snapshot_xmin_age"`
	// OtherSnapshotS is the age of the oldest snapshot held elsewhere on the
	// server when the phase before ended, in seconds: another session's
	// (other work on a shared server) holds the horizon back too.
	OtherSnapshotS float64 `json:"other_snapshot_age_s_before"`
	From           string  `json:"from"`
	To             string  `json:"to"`
}

// XminPhase is one phase of the xmin figure.
type XminPhase struct {
	LatencyStats
	Written int     `json:"written"`
	PerS    float64 `json:"written_per_s"`
}

const holdSnapshot = "a REPEATABLE READ, READ ONLY transaction that read SELECT count(*) FROM events, open through the phase"

// xmin writes events one by one at a steady rate (150 a second), each in
// its own transaction, to a local and an outside subscriber dispatched by
// the real Runner, for the phase's duration without any snapshot held by
// the bench, then again for as long while another session holds a
// snapshot (a REPEATABLE READ transaction that has read the journal), and
// compares the local subscriber's p99 in the two phases.
func (r *runner) xmin(ctx context.Context, res *Result) error {
	dur := r.opt.XminDuration
	pace := time.Duration(float64(time.Second) / r.opt.XminRate)
	out := XminResult{TargetPerS: r.opt.XminRate, Seconds: dur.Seconds(), Snapshot: holdSnapshot, From: latencyFrom, To: latencyTo}
	s, err := r.startStream(ctx, twoSubs(nil))
	if err != nil {
		return err
	}
	defer s.close()
	local := subName("local", 0)

	phase := func(i int, label string) (XminPhase, error) {
		r.p.set(label, 0, int64(dur.Seconds()*r.opt.XminRate))
		upd0, hot0, err := r.lanesUpdates(ctx)
		if err != nil {
			return XminPhase{}, err
		}
		start := time.Now()
		k, err := s.write(ctx, i, 0, start.Add(dur), pace)
		if err != nil {
			return XminPhase{}, err
		}
		took := time.Since(start)
		if err := s.catchUp(ctx, local, 30*time.Second); err != nil {
			return XminPhase{}, err
		}
		upd1, hot1, err := r.lanesUpdates(ctx)
		if err != nil {
			return XminPhase{}, err
		}
		if upd1 > upd0 {
			out.LanesHOTPct[i] = round(float64(hot1-hot0)*100/float64(upd1-upd0), 1)
		}
		return XminPhase{LatencyStats: latencyStats(s.latencies(i)), Written: k, PerS: round(float64(k)/took.Seconds(), 1)}, nil
	}
	if out.LanesKB[0], err = r.relationKB(ctx, "events_lanes"); err != nil {
		return err
	}
	if out.Before, err = phase(0, "xmin: events at a steady rate, no snapshot held"); err != nil {
		return err
	}
	if err := database.Scan(r.db.WithContext(ctx).Raw(`SELECT coalesce(max(extract(epoch FROM clock_timestamp() - xact_start)), 0) FROM pg_stat_activity
WHERE backend_xmin IS NOT NULL AND pid <> pg_backend_pid()`), &out.OtherSnapshotS); err != nil {
		return err
	}
	out.OtherSnapshotS = round(out.OtherSnapshotS, 1)

	// The holding session: a transaction whose snapshot is taken by its
	// first read and kept until it ends.
	conn, err := database.WaitForRoom(ctx, func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, r.url) })
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	var count, pid int64
	if err := tx.QueryRow(ctx, "SELECT count(*), pg_backend_pid() FROM events").Scan(&count, &pid); err != nil {
		return err
	}
	var held bool
	if err := tx.QueryRow(ctx, "SELECT backend_xmin IS NOT NULL FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&held); err != nil {
		return err
	}
	if !held {
		return fmt.Errorf("the holding session (pid %d) holds no xmin", pid)
	}
	if out.LanesKB[1], err = r.relationKB(ctx, "events_lanes"); err != nil {
		return err
	}
	if out.During, err = phase(1, "xmin: events at a steady rate, a snapshot held"); err != nil {
		return err
	}
	if err := database.Scan(r.db.WithContext(ctx).Raw("SELECT coalesce(age(backend_xmin), 0) FROM pg_stat_activity WHERE pid = ?", pid),
		&out.SnapshotAge); err != nil {
		return err
	}
	if out.LanesKB[2], err = r.relationKB(ctx, "events_lanes"); err != nil {
		return err
	}
	if err := tx.Rollback(ctx); err != nil {
		return err
	}
	out.Ratio = ratio(out.During.P99Ms, out.Before.P99Ms)
	res.Xmin = out
	res.XminP99Ratio = out.Ratio
	return nil
}

// lanesUpdates returns the updates of events_lanes so far, and how many of
// them were HOT.
func (r *runner) lanesUpdates(ctx context.Context) (updates, hot int64, err error) {
	err = r.db.WithContext(ctx).Raw("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'events_lanes'::regclass").
		Row().Scan(&updates, &hot)
	return updates, hot, err
}

// relationKB is the size of a table with its indexes, in kB.
func (r *runner) relationKB(ctx context.Context, table string) (float64, error) {
	var b int64
	err := database.Scan(r.db.WithContext(ctx).Raw("SELECT pg_total_relation_size(?::regclass)", table), &b)
	return round(float64(b)/1024, 0), err
}
