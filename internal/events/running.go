package events

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"time"
)

// runningLanes are the lanes with a goroutine in this process, by key. A
// pass asks a running lane to look again under their lock, and a lane
// leaves them under the same lock (leave), so that no request is lost
// between the lane's last look and its leaving. While any lane runs, their
// leases are renewed (renew).
type runningLanes struct {
	lease time.Duration // renewed every third of it
	// renew extends the leases of every lane of this dispatcher.
	renew func(ctx context.Context) error
	log   *slog.Logger
	// renewals counts the renewals done, for the tests (milestone).
	renewals milestone

	mu       sync.Mutex
	lanes    map[laneKey]*lane
	renewing bool               // the renewer runs
	onEnd    func(st PassStats) // hears what each lane did when it ends (SetLaneDone)
}

func newRunningLanes(lease time.Duration, renew func(ctx context.Context) error, log *slog.Logger) *runningLanes {
	return &runningLanes{lease: lease, renew: renew, log: log, lanes: map[laneKey]*lane{}}
}

// nudge calls ask with the lane running under k, under the lanes' lock, so
// that the lane cannot leave meanwhile; false when none runs.
func (r *runningLanes) nudge(k laneKey, ask func(l *lane)) (*lane, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.lanes[k]
	if ok {
		ask(l)
	}
	return l, ok
}

// add makes l a running lane and starts the renewer if it is not running.
// When a lane of the same key runs already (started meanwhile by another
// pass, which owns it), that lane is asked to look again up to rerunUpTo
// instead and returned, with false.
func (r *runningLanes) add(l *lane, rerunUpTo int64) (*lane, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.lanes[l.key]; ok {
		prev.lookAgain(rerunUpTo)
		return prev, false
	}
	r.lanes[l.key] = l
	r.ensureRenewer()
	return l, true
}

// leave removes a lane that ends from the running lanes, unless (when it is
// live) a pass has asked it to look again meanwhile: false then, and the
// lane goes on.
func (r *runningLanes) leave(l *lane, live bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if live && l.requested() {
		return false
	}
	delete(r.lanes, l.key)
	return true
}

// setOnEnd sets the function that hears what each lane did when it ends.
func (r *runningLanes) setOnEnd(f func(PassStats)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onEnd = f
}

// ended tells the function set by setOnEnd what a lane that ended did.
func (r *runningLanes) ended(st PassStats) {
	r.mu.Lock()
	f := r.onEnd
	r.mu.Unlock()
	if f != nil {
		f(st)
	}
}

// count returns how many lanes run.
func (r *runningLanes) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lanes)
}

// lookAgainWhereDue asks the running lanes to look again, up to the
// horizon, when their partition has an event past the position they have
// committed (sv.last), and for their retries when one is due (sv.due).
func (r *runningLanes) lookAgainWhereDue(sv surveyed, horizon int64) []*lane {
	r.mu.Lock()
	defer r.mu.Unlock()
	var asked []*lane
	for k, l := range r.lanes {
		switch {
		case sv.due[k]:
			l.lookAgain(math.MaxInt64)
		case l.behind(sv.last[k.part]):
			l.lookAgain(horizon)
		default:
			continue
		}
		asked = append(asked, l)
	}
	return asked
}

// wait blocks until no lane runs.
func (r *runningLanes) wait() {
	for {
		r.mu.Lock()
		var l *lane
		for _, x := range r.lanes {
			l = x
			break
		}
		r.mu.Unlock()
		if l == nil {
			return
		}
		<-l.done
	}
}

// ensureRenewer starts the goroutine that renews the leases of the lanes
// this dispatcher holds, every third of their length, while any lane runs;
// r.mu is held. A dispatcher that stalls (or dies) stops renewing, and
// another one takes its lanes once their leases have run out; the fence in
// every batch transaction keeps the stalled one from committing afterwards.
func (r *runningLanes) ensureRenewer() {
	if r.renewing {
		return
	}
	r.renewing = true
	go func() {
		t := time.NewTicker(r.lease / 3)
		defer t.Stop()
		for range t.C {
			r.mu.Lock()
			if len(r.lanes) == 0 {
				r.renewing = false
				r.mu.Unlock()
				return
			}
			r.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), r.lease/3)
			err := r.renew(ctx)
			cancel()
			if err != nil {
				r.log.Warn("renew lane leases", "err", err, "lanes", r.keys())
				continue
			}
			r.renewals.add()
		}
	}()
}

// keys names the running lanes, for a log line.
func (r *runningLanes) keys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ks := make([]string, 0, len(r.lanes))
	for k := range r.lanes {
		ks = append(ks, k.String())
	}
	return ks
}
