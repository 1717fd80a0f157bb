package events

import (
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOwnerGone(t *testing.T) {
	self, ok := selfMark()
	if !ok {
		t.Skip("no /proc: owners cannot be proven gone here")
	}
	owner := func(m procMark) string { return "host-" + strconv.Itoa(m.pid) + "-beef" + markSep + m.String() }
	require.False(t, ownerGone(owner(self), self), "this process")
	require.False(t, ownerGone("host-1-beef", self), "no mark: cannot tell")

	live := exec.Command("sleep", "30")
	require.NoError(t, live.Start())
	t.Cleanup(func() { _ = live.Process.Kill(); _ = live.Wait() })
	start, _, ok := processStart(live.Process.Pid)
	require.True(t, ok)
	m := procMark{boot: self.boot, pidns: self.pidns, pid: live.Process.Pid, start: start}
	require.False(t, ownerGone(owner(m), self), "a live process")
	restarted := m
	restarted.start = start + "0"
	require.True(t, ownerGone(owner(restarted), self), "the pid runs another process")
	elsewhere := m
	elsewhere.boot = "00000000"
	elsewhere.pid = 1 << 22
	require.False(t, ownerGone(owner(elsewhere), self), "another machine's lease is honoured")

	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	gone := procMark{boot: self.boot, pidns: self.pidns, pid: dead.Process.Pid, start: "1"}
	require.True(t, ownerGone(owner(gone), self), "a pid that runs no more")
	require.Equal(t, self, mustParse(t, defaultOwner(7)))
}

func mustParse(t *testing.T, owner string) procMark {
	m, ok := parseMark(owner)
	require.True(t, ok, owner)
	return m
}
