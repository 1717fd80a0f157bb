package events

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// These tests pin the commit horizon (horizon.go) survey by survey, the way
// the dispatcher feeds it on PostgreSQL: each survey gives the highest id
// visible, the transactions writing events just after it (writers) and
// which of the pending checkpoints' writers still run (running). They make
// every mutant of horizon.go that changes what the horizon answers fail;
// docs/outbox.md ("Mutation testing") tells how they are run.

// survey is what one pass hands the horizon.
func survey(visible int64, writers, running []string) surveyed {
	return surveyed{visible: visible, writers: writers, running: running}
}

func TestMutants_HorizonWithoutWritersIsWhatIsVisible(t *testing.T) {
	h := &commitHorizon{}
	_, known := h.current()
	require.False(t, known, "no survey yet")

	safe, visible := h.advance(survey(10, nil, nil))
	require.Equal(t, int64(10), safe, "no transaction writes events: all that is visible is final")
	require.Equal(t, int64(10), visible)
	safe, known = h.current()
	require.Equal(t, int64(10), safe)
	require.True(t, known)
	require.Empty(t, h.pendingXIDs())
}

func TestMutants_HorizonWaitsForTheWritersOfACheckpoint(t *testing.T) {
	h := &commitHorizon{}
	safe, visible := h.advance(survey(10, []string{"a"}, nil))
	require.Equal(t, int64(0), safe, "a writes events: 10 is not final while it runs")
	require.Equal(t, int64(10), visible)
	_, known := h.current()
	require.False(t, known, "no checkpoint is final yet")
	require.Equal(t, []string{"a"}, h.pendingXIDs())

	// a still runs; b has started writing too, and 12 is visible.
	safe, _ = h.advance(survey(12, []string{"a", "b"}, []string{"a"}))
	require.Equal(t, int64(0), safe)
	require.ElementsMatch(t, []string{"a", "a", "b"}, h.pendingXIDs(), "both checkpoints wait")

	// a has ended, b runs: the first checkpoint is final, the second not.
	safe, _ = h.advance(survey(12, []string{"b"}, []string{"b"}))
	require.Equal(t, int64(10), safe)
	require.Equal(t, []string{"a", "b"}, h.pendingXIDs(), "only the checkpoint at 12 is left")
	_, known = h.current()
	require.True(t, known)

	// b has ended; c writes now, after 15: 12 is final, 15 not.
	safe, visible = h.advance(survey(15, []string{"c"}, nil))
	require.Equal(t, int64(12), safe)
	require.Equal(t, int64(15), visible)
	require.Equal(t, []string{"c"}, h.pendingXIDs())
}

func TestMutants_HorizonTakesOneCheckpointPerVisibleID(t *testing.T) {
	h := &commitHorizon{}
	h.advance(survey(10, []string{"a"}, nil))
	// Nothing new is visible: the writers after 10 are those of the
	// checkpoint taken at 10 or later ones, which cannot commit at or below 10.
	h.advance(survey(10, []string{"a", "b"}, []string{"a"}))
	require.Equal(t, []string{"a"}, h.pendingXIDs(), "no second checkpoint at 10")

	// Later checkpoints are taken in order, each past the one before.
	h.advance(survey(20, []string{"b"}, []string{"a"}))
	require.Equal(t, []string{"a", "b"}, h.pendingXIDs())
	h.advance(survey(30, []string{"c"}, []string{"a", "b"}))
	require.Equal(t, []string{"a", "b", "c"}, h.pendingXIDs())

	// All of them end: every checkpoint is final, the last one included.
	safe, _ := h.advance(survey(30, nil, nil))
	require.Equal(t, int64(30), safe)
	require.Empty(t, h.pendingXIDs())
}

func TestMutants_HorizonDropsTheCheckpointsItPassed(t *testing.T) {
	h := &commitHorizon{}
	h.advance(survey(10, []string{"a"}, nil))
	require.Equal(t, []string{"a"}, h.pendingXIDs())
	// A survey without writers makes 10 final: the checkpoint at 10 is
	// passed and a's end no longer matters.
	safe, _ := h.advance(survey(10, nil, []string{"a"}))
	require.Equal(t, int64(10), safe)
	require.Empty(t, h.pendingXIDs())
	// No checkpoint is taken at or below the safe horizon.
	safe, _ = h.advance(survey(10, []string{"b"}, nil))
	require.Equal(t, int64(10), safe)
	require.Empty(t, h.pendingXIDs())
}

func TestMutants_HorizonNeverMovesBack(t *testing.T) {
	h := &commitHorizon{}
	h.advance(survey(20, nil, nil))
	// A checkpoint below the horizon (a survey of an older snapshot) does
	// not lower it when it becomes final.
	safe, visible := h.advance(survey(15, nil, nil))
	require.Equal(t, int64(20), safe)
	require.Equal(t, int64(15), visible)

	// SQLite's surveys say that what is visible is final.
	final := func(visible int64, writers []string) surveyed {
		sv := survey(visible, writers, nil)
		sv.final = true
		return sv
	}
	ordered := &commitHorizon{}
	safe, _ = ordered.advance(final(7, []string{"ignored"}))
	require.Equal(t, int64(7), safe, "SQLite: what is visible is final")
	safe, visible = ordered.advance(final(5, nil))
	require.Equal(t, int64(7), safe)
	require.Equal(t, int64(5), visible)
	_, known := ordered.current()
	require.True(t, known)
}

// The survey and the claim hand lists back as text on PostgreSQL (one row,
// one round trip); these read them.

func TestMutants_SurveyListsParse(t *testing.T) {
	lanes, err := parseLanes("a 3 10 1,b 4 20 0")
	require.NoError(t, err)
	require.Equal(t, []laneAt{{laneKey{"a", 3}, 10, true}, {laneKey{"b", 4}, 20, false}}, lanes)
	for _, bad := range []string{"a 3 10", "a 3 10 1 x", "a x 10 1", "a 3 x 1"} {
		_, err := parseLanes(bad)
		require.Error(t, err, bad)
	}
	lanes, err = parseLanes("")
	require.NoError(t, err)
	require.Empty(t, lanes)

	claimed, err := parseClaimed("a 1 0,b 0 1,c true false,d false true")
	require.NoError(t, err)
	require.Equal(t, []claimedLane{{"a", true, false}, {"b", false, true}, {"c", true, false}, {"d", false, true}}, claimed)
	for _, bad := range []string{"a 1", "a 1 0 0"} {
		_, err := parseClaimed(bad)
		require.Error(t, err, bad)
	}

	last, err := parseLast("0 5,3 9")
	require.NoError(t, err)
	require.Equal(t, map[int]int64{0: 5, 3: 9}, last)
	for _, bad := range []string{"0", "0 5 1", "x 5", "0 x"} {
		_, err := parseLast(bad)
		require.Error(t, err, bad)
	}

	due, err := parseDue("a 2,b 3")
	require.NoError(t, err)
	require.Equal(t, map[laneKey]bool{{"a", 2}: true, {"b", 3}: true}, due)
	for _, bad := range []string{"a", "a 2 3", "a x"} {
		_, err := parseDue(bad)
		require.Error(t, err, bad)
	}

	require.Nil(t, splitList(""))
	require.Equal(t, []string{"a", "b"}, splitList("a,b"))
	require.Equal(t, []string{""}, names(nil), "IN () is not SQL")
	require.Equal(t, []string{"a"}, names([]string{"a"}))
}

// What a failed attempt leaves (afterFailure): a delay the other side asked
// for puts the attempt off without spending it, within the policy's cap
// and, in all, within RetryAfterCap; past that, attempts are spent again. A
// call the lane stopped waiting for is tried again no sooner than it asks,
// whatever the cap.
func TestMutants_AfterFailure(t *testing.T) {
	d := rulesOf(DispatcherOptions{MaxAttempts: 3, BackoffBase: time.Second, BackoffMax: time.Hour, RetryAfterCap: 30 * time.Second})
	s := &Subscriber{Name: "shop"}
	asked := func(after time.Duration) error { return RetryAfter(after, errors.New("answered 429")) }

	f := d.afterFailure(s, 0, 0, asked(10*time.Second))
	require.Equal(t, failure{status: StatusRetrying, retryIn: 10 * time.Second, deferred: 10 * time.Second}, f, "put off, no attempt spent")

	f = d.afterFailure(s, 0, 20*time.Second, asked(10*time.Second))
	require.Equal(t, failure{status: StatusRetrying, retryIn: 10 * time.Second, deferred: 30 * time.Second}, f, "up to RetryAfterCap in all, that included")

	f = d.afterFailure(s, 0, 25*time.Second, asked(10*time.Second))
	require.Equal(t, StatusRetrying, f.status)
	require.True(t, f.spent, "past RetryAfterCap the attempt is spent")
	require.Equal(t, 25*time.Second, f.deferred, "and the deferral stays what it was")
	require.Equal(t, 10*time.Second, f.retryIn, "the delay asked for, still")

	f = d.afterFailure(&Subscriber{Name: "capped", Retry: RetryPolicy{Cap: 5 * time.Second}}, 0, 0, asked(time.Hour))
	require.Equal(t, 5*time.Second, f.retryIn, "within the policy's cap")
	require.False(t, f.spent)

	f = d.afterFailure(s, 2, 0, errors.New("refused"))
	require.Equal(t, StatusFailed, f.status, "the third attempt of three")

	f = d.afterFailure(s, 0, 0, Permanent(errors.New("gone")))
	require.Equal(t, StatusFailed, f.status)

	capped := &Subscriber{Name: "capped", Retry: RetryPolicy{Cap: 20 * time.Millisecond}}
	left := &leftCallError{after: 31 * time.Second, err: errNoAnswer}
	f = d.afterFailure(capped, 0, 0, left)
	require.Equal(t, StatusRetrying, f.status)
	require.Equal(t, 31*time.Second, f.retryIn, "after the left call's timeout, whatever the cap")
	require.True(t, f.spent, "a call with no answer spends an attempt, as a timed-out one does")
	require.Zero(t, f.deferred, "and is no deferral asked for by the other side")
	f = d.afterFailure(capped, 2, 40*time.Second, &leftCallError{after: 31 * time.Second, err: errNoAnswer})
	require.Equal(t, StatusFailed, f.status, "its attempts used up: no retry to put off")
	require.Zero(t, f.retryIn)
}

// The journal keeps a delivery's error up to 2,000 bytes, and says where it
// cut one.
func TestMutants_ErrorTextBound(t *testing.T) {
	long := strings.Repeat("x", 2000)
	require.Equal(t, long, truncate(long), "2,000 bytes are kept whole")
	require.Equal(t, long+"…", truncate(long+"y"), "beyond, cut at 2,000")
}
