package database

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// countingAnnouncer is an announcer whose NOTIFYs are counted, each with the
// number of commits announced before it was sent.
type countingAnnouncer struct {
	*announcer
	commits atomic.Int64
	mu      sync.Mutex
	sent    []int64 // per NOTIFY: the commits before it
}

func newCountingAnnouncer() *countingAnnouncer {
	c := &countingAnnouncer{announcer: newAnnouncer(nil)}
	c.notifies = func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.sent = append(c.sent, c.commits.Load())
	}
	return c
}

func (c *countingAnnouncer) commit() {
	c.commits.Add(1)
	c.committed()
}

func (c *countingAnnouncer) sentNotifies() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int64(nil), c.sent...)
}

// A burst of commits shares NOTIFYs, at most one per AnnounceSpacing, and
// the last NOTIFY follows the last commit: none is left unannounced.
func TestAnnouncer_BurstSharesNotifiesAndLeavesNoneOut(t *testing.T) {
	c := newCountingAnnouncer()
	var watched atomic.Int64
	stop := c.watch(func() { watched.Add(1) })
	defer stop()
	const writers, each = 4, 500
	start := time.Now()
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				c.commit()
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	c.close()
	sent := c.sentNotifies()
	require.Equal(t, int64(writers*each), watched.Load(), "every commit reaches the watchers")
	require.NotEmpty(t, sent)
	require.Equal(t, int64(writers*each), sent[len(sent)-1], "a NOTIFY is sent after the last commit")
	require.LessOrEqual(t, len(sent), int(took/AnnounceSpacing)+2,
		"%d commits in %s: at most one NOTIFY per %s", writers*each, took, AnnounceSpacing)
}

// The first commit after a quiet spell is announced at once, without
// waiting for a spacing; a commit during the spacing gets a NOTIFY of its
// own at the spacing's end.
func TestAnnouncer_QuietCommitAtOnceNextAfterTheSpacing(t *testing.T) {
	c := newCountingAnnouncer()
	defer c.close()
	t0 := time.Now()
	c.commit()
	require.Eventually(t, func() bool { return len(c.sentNotifies()) == 1 }, 5*time.Second, time.Millisecond)
	c.commit()
	require.Eventually(t, func() bool { return len(c.sentNotifies()) == 2 }, 5*time.Second, time.Millisecond)
	require.GreaterOrEqual(t, time.Since(t0), AnnounceSpacing, "the second NOTIFY waited for the spacing")
	require.Equal(t, []int64{1, 2}, c.sentNotifies())
	// After a quiet spell longer than the spacing, at once again.
	require.Eventually(t, func() bool {
		c.announcer.mu.Lock()
		defer c.announcer.mu.Unlock()
		return !c.sending
	}, 5*time.Second, time.Millisecond)
	c.commit()
	require.Eventually(t, func() bool { return len(c.sentNotifies()) == 3 }, 5*time.Second, time.Millisecond)
}

// Close sends what is pending at once, and nothing after it; the watchers
// still hear of commits.
func TestAnnouncer_CloseFlushesThenSendsNothing(t *testing.T) {
	c := newCountingAnnouncer()
	var watched atomic.Int64
	c.watch(func() { watched.Add(1) })
	c.commit()
	c.commit() // within the first NOTIFY's spacing: pending
	c.close()
	require.Equal(t, int64(2), c.sentNotifies()[len(c.sentNotifies())-1], "the pending commit was announced before close returned")
	n := len(c.sentNotifies())
	c.commit()
	require.Equal(t, int64(3), watched.Load())
	require.Len(t, c.sentNotifies(), n, "no NOTIFY after close")
}
