package events

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// A dispatcher's name in the lanes' leases (DispatcherOptions.Owner) is
// "<host>-<pid>-<random>~<mark>", where the mark says which process it is
// in a way another process on the same machine can check: the machine's
// boot id, the process's pid namespace, its pid and its start time, as
// Linux tells them in /proc. A dispatcher that starts takes back at once the
// lanes of an owner it can prove gone: one of the same boot and pid
// namespace whose pid runs no more, or runs a process started at another
// time (the pid was given again). Any other owner's lease, another
// machine's or one it cannot check, is honoured until it runs out.

// procMark identifies a process on its machine.
type procMark struct {
	boot  string // the first 8 characters of the boot id
	pidns string // the pid namespace's inode
	pid   int
	start string // the start time, in clock ticks since boot
}

func (m procMark) String() string {
	return m.boot + "/" + m.pidns + "/" + strconv.Itoa(m.pid) + "/" + m.start
}

// markSep separates a dispatcher's name from its process's mark.
const markSep = "~"

// selfMark is this process's mark; false where /proc cannot tell it.
func selfMark() (procMark, bool) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil || len(boot) < 8 {
		return procMark{}, false
	}
	ns, err := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	if err != nil {
		return procMark{}, false
	}
	ns = strings.TrimSuffix(strings.TrimPrefix(ns, "pid:["), "]")
	pid := os.Getpid()
	start, _, ok := processStart(pid)
	if !ok || ns == "" {
		return procMark{}, false
	}
	return procMark{boot: string(boot[:8]), pidns: ns, pid: pid, start: start}, true
}

// processStart reads the start time and the state of the process pid from
// /proc; false when there is no such process.
func processStart(pid int) (start string, state string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", "", false
	}
	// "pid (comm) state ppid …": comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", "", false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", "", false
	}
	return f[19], f[0], true // fields 22 and 3 of proc(5)
}

func parseMark(owner string) (procMark, bool) {
	i := strings.LastIndex(owner, markSep)
	if i < 0 {
		return procMark{}, false
	}
	f := strings.Split(owner[i+len(markSep):], "/")
	if len(f) != 4 {
		return procMark{}, false
	}
	pid, err := strconv.Atoi(f[2])
	if err != nil || pid <= 0 {
		return procMark{}, false
	}
	return procMark{boot: f[0], pidns: f[1], pid: pid, start: f[3]}, true
}

// ownerGone tells whether the dispatcher named owner is proven gone, as seen
// from the process self.
func ownerGone(owner string, self procMark) bool {
	m, ok := parseMark(owner)
	if !ok || m.boot != self.boot || m.pidns != self.pidns {
		return false // another machine, another boot or namespace: unknown
	}
	if m.pid == self.pid {
		return m.start != self.start // this very process is not gone
	}
	if err := syscall.Kill(m.pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	start, state, ok := processStart(m.pid)
	if !ok {
		return true
	}
	return start != m.start || state == "Z" || state == "X" // another process with the pid, or a dead one not yet reaped
}

// defaultOwner names this dispatcher: host, pid, a random part (several
// dispatchers may run in one process) and, where /proc tells it, the mark.
func defaultOwner(random int) string {
	host, _ := os.Hostname()
	name := fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), random)
	if m, ok := selfMark(); ok {
		name += markSep + m.String()
	}
	return name
}

// takeBackFromDead gives back the leases held by dispatchers of this
// machine that are proven gone (a replica killed with kill -9 and started
// again), so that this pass claims their lanes at once instead of after
// their lease. The fence of every batch keeps a dispatcher wrongly thought
// gone from committing afterwards.
func (r *registration) takeBackFromDead(ctx context.Context) {
	self, ok := parseMark(r.owner)
	if !ok {
		return
	}
	drv := r.sql
	owners, err := drv.leaseOwners(ctx, r.db, r.owner)
	if err != nil {
		r.log.Warn("look for the lanes of dead dispatchers", "err", err)
		return
	}
	for _, o := range owners {
		if !ownerGone(o, self) {
			continue
		}
		n, err := drv.dropLeases(ctx, r.db, o)
		if err != nil {
			r.log.Warn("take back the lanes of a dead dispatcher", "owner", o, "err", err)
			continue
		}
		r.log.Info("took back the lanes of a dispatcher of this machine that is gone", "owner", o, "lanes", n)
	}
}
