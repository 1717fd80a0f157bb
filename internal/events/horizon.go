package events

import "sync"

// commitHorizon tracks the highest event id up to which the journal is
// final: no transaction still in flight can commit an event at or below it.
//
// Commit order is not id order: a transaction may take id 100, another 101
// and commit first. A reader that moved a position past 101 would skip 100
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
// writer at a time, so ids commit in order and everything visible is final:
// its driver's surveys say so (surveyed.final).
type commitHorizon struct {
	mu          sync.Mutex
	checkpoints []checkpoint
	safe        int64
	known       bool // safe has been established by this process
}

// checkpoint records the highest event id visible at one moment and the
// transactions that were writing events just after it.
type checkpoint struct {
	maxID int64
	xids  []string
}

// pendingXIDs lists the writers of the checkpoints not yet final, for the
// next survey to tell which of them still run.
func (h *commitHorizon) pendingXIDs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, c := range h.checkpoints {
		out = append(out, c.xids...)
	}
	return out
}

// advance takes a survey into account and returns the safe horizon and the
// highest id visible.
func (h *commitHorizon) advance(sv surveyed) (safe, visible int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sv.final {
		h.safe, h.known = max(h.safe, sv.visible), true
		return h.safe, sv.visible
	}
	running := map[string]bool{}
	for _, x := range sv.running {
		running[x] = true
	}
	// The checkpoints taken before this survey are final once none of their
	// writers was still running during it. A later checkpoint's list holds
	// every writer of an earlier one that was still running, so they need
	// not be passed in order.
	for _, c := range h.checkpoints {
		final := true
		for _, x := range c.xids {
			if running[x] {
				final = false
				break
			}
		}
		if final {
			h.safe, h.known = max(h.safe, c.maxID), true
		}
	}
	// This survey's writers were running during it: its own checkpoint is
	// final at once only when there were none.
	if len(sv.writers) == 0 {
		h.safe, h.known = max(h.safe, sv.visible), true
	} else if n := len(h.checkpoints); sv.visible > h.safe && (n == 0 || h.checkpoints[n-1].maxID < sv.visible) {
		h.checkpoints = append(h.checkpoints, checkpoint{maxID: sv.visible, xids: sv.writers})
	}
	kept := h.checkpoints[:0]
	for _, c := range h.checkpoints {
		if c.maxID > h.safe {
			kept = append(kept, c)
		}
	}
	h.checkpoints = kept
	return h.safe, sv.visible
}

// current returns the safe horizon and whether this process has established it.
func (h *commitHorizon) current() (int64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.safe, h.known
}
