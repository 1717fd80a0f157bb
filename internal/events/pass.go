package events

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// A pass surveys the journal, advances the commit horizon, registers this
// process's subscribers once the horizon is known, claims the lanes with
// work that do not run here and starts a goroutine for each, and asks the
// lanes running here that have work to look again.

// start runs one pass; the lanes it starts keep their lease for linger once
// they have nothing left. It returns the lanes it started or asked to look
// again.
func (d *Dispatcher) start(ctx, stop context.Context, linger time.Duration) (PassStats, []*lane, error) {
	d.passMu.Lock()
	defer d.passMu.Unlock()
	var st PassStats
	sv, err := d.survey(ctx)
	if err != nil {
		return st, nil, err
	}
	horizon, visible := d.horizon.advance(sv)
	if !d.members.done() {
		if _, known := d.horizon.current(); !known {
			st.Lagging = true // registration waits for a horizon it can trust
			return st, nil, nil
		}
		if err := d.members.register(ctx, horizon); err != nil {
			return st, nil, fmt.Errorf("events: register subscribers: %w", err)
		}
		d.members.takeBackFromDead(ctx)
		if sv, err = d.survey(ctx); err != nil {
			return st, nil, err
		}
		horizon, visible = d.horizon.advance(sv)
	}
	d.members.heartbeat(ctx, false)
	st.Lagging = visible > horizon
	st.RetryWaiting, st.NextRetry = sv.nextRetry.Valid, time.Duration(sv.nextRetry.Float64*float64(time.Second))
	lanes := sv.lanes
	// The survey listed lanes with events up to the visible id: keep those
	// with work up to the horizon. When it listed none, as every lane runs
	// here, list them all the same after a replay, which takes the leases
	// of the lanes it moves back (see startLanes).
	replay := sv.replayed > d.replaySeen
	d.replaySeen = max(d.replaySeen, sv.replayed)
	if sv.listed && st.Lagging || !sv.listed && replay {
		if lanes, err = d.sql.lanesWithWork(ctx, d.db, d.surveyQuery(), horizon); err != nil {
			return st, nil, err
		}
		sv.listed = true
	}
	// A lane running here is asked to look again up to the horizon, or in
	// any case when a retry is due (which the survey does not place).
	rerunUpTo := horizon
	if st.RetryWaiting && st.NextRetry <= 0 {
		rerunUpTo = math.MaxInt64
	}
	var runs []*lane
	if !sv.listed {
		runs = d.lanes.lookAgainWhereDue(sv, horizon)
	}
	more, err := d.startLanes(ctx, stop, lanes, sv.seq, horizon, rerunUpTo, linger)
	return st, append(runs, more...), err
}

func (d *Dispatcher) surveyQuery() surveyQuery {
	ns := make([]string, 0, len(d.reg.Subscribers()))
	for _, s := range d.reg.Subscribers() {
		ns = append(ns, s.Name)
	}
	// When every lane of this process's subscribers runs here, the survey
	// need not list them.
	all := d.members.done() && d.lanes.count() == len(d.reg.Subscribers())*Partitions
	return surveyQuery{names: ns, owner: d.opt.Owner, pending: d.horizon.pendingXIDs(), skipLanes: all}
}

func (d *Dispatcher) survey(ctx context.Context) (surveyed, error) {
	seq := d.surveys.Add(1)
	sv, err := d.sql.survey(ctx, d.db, d.surveyQuery())
	sv.seq = seq
	return sv, err
}

// claimGroup is the lanes of one partition standing at one position: one
// statement claims them all and reads their first batch.
type claimGroup struct {
	part int
	pos  int64
	subs []string
}

// claimKey names a claimGroup.
type claimKey struct {
	part int
	pos  int64
}

// startLanes claims the lanes with work, grouped by partition and position
// so that each group is claimed and its first batch read in one statement,
// and starts a goroutine for each lane claimed. Lanes already running here
// are asked to look again instead.
func (d *Dispatcher) startLanes(ctx, stop context.Context, lanes []laneAt, seq uint64, horizon, rerunUpTo int64, linger time.Duration) ([]*lane, error) {
	var runs []*lane
	groups := map[claimKey]*claimGroup{}
	var order []*claimGroup
	for _, l := range lanes {
		r, running := d.lanes.nudge(l.laneKey, func(r *lane) {
			if !l.mine {
				// The lane lost its lease (a replay moved it back): if it
				// lingers, it claims itself again where it stands now.
				r.leaseTaken(l.position, seq)
			}
			r.lookAgain(rerunUpTo)
		})
		if running {
			runs = append(runs, r)
			continue
		}
		if d.reg.Subscriber(l.sub) == nil {
			continue
		}
		k := claimKey{l.part, l.position}
		g := groups[k]
		if g == nil {
			g = &claimGroup{part: l.part, pos: l.position}
			groups[k] = g
			order = append(order, g)
		}
		g.subs = append(g.subs, l.sub)
	}
	sort.Slice(order, func(i, j int) bool { return order[i].part < order[j].part })
	var errs []error
	for i, g := range order {
		if stop.Err() != nil {
			break
		}
		// The claim reads the group's first batch, but only for the first
		// groups: the lanes of the others wait for a batch slot, and their
		// batch would wait in memory with them.
		limit := d.opt.BatchSize
		if i >= d.lanesAtOnce() {
			limit = 0
		}
		claimed, batch, err := d.sql.claim(ctx, d.db, claimQuery{part: g.part, subs: g.subs, pos: g.pos, horizon: horizon,
			limit: limit, owner: d.opt.Owner, lease: d.opt.Lease})
		if err != nil {
			errs = append(errs, fmt.Errorf("claim partition %d: %w", g.part, err))
			continue
		}
		if len(claimed) == 0 {
			continue
		}
		d.cache.put(g.part, g.pos, horizon, batch)
		for _, c := range claimed {
			l := newLane(d.env, d.env.cfg, laneKey{c.sub, g.part}, d.reg.Subscriber(c.sub), c, g.pos, linger, d.surveys.Load())
			r, added := d.lanes.add(l, rerunUpTo)
			runs = append(runs, r)
			if added {
				go l.run(ctx, stop)
			}
		}
	}
	return runs, errors.Join(errs...)
}
