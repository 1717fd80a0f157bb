package events

import "context"

// What the tests of package events_test wait for instead of sleeping for a
// time tuned to a fast machine: the milestones of a runner, a dispatcher's
// lanes and their leases' renewal (milestone.go).

// RunnerReady waits until r hears of other processes' commits (its
// listener has connected, or its poll has taken its first look at the
// journal) and has answered every wake-up given so far with a pass that
// ended with none pending or set for later: an event committed afterwards
// reaches a subscriber only through a new wake-up.
func RunnerReady(ctx context.Context, r *Runner) error {
	switch {
	case r.d.sql.supportsListener() && r.opt.ListenURL != "":
		if err := r.listening.wait(ctx, 1); err != nil {
			return err
		}
	case r.opt.Poll > 0:
		if err := r.looked.wait(ctx, 1); err != nil {
			return err
		}
	}
	return r.answered.wait(ctx, r.wakes.Load())
}

// LanesLingered is how many times a lane of d has begun to linger: done
// with what it was given, holding its lease.
func LanesLingered(d *Dispatcher) uint64 { return d.lingered.load() }

// WaitLanesLingered waits until lanes of d have begun to linger n times.
func WaitLanesLingered(ctx context.Context, d *Dispatcher, n uint64) error {
	return d.lingered.wait(ctx, n)
}

// LeaseRenewals is how many times d has renewed its lanes' leases.
func LeaseRenewals(d *Dispatcher) uint64 { return d.lanes.renewals.load() }
